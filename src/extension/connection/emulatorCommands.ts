import * as vscode from 'vscode';
import type { Config } from '../platform/config';
import { Commands, EMULATOR_CONNECTION_NAME } from '../platform/constants';
import type { Display } from '../platform/display';
import type { Log } from '../platform/log';
import type { EmulatorProcess } from './emulatorProcess';

/**
 * "Start Local Emulator" and "Stop Local Emulator", and what the connections menu says of the local emulator: whether
 * it runs (this window started it, or holds the one an earlier or another window started) at the address of the
 * connection "Local emulator".
 */
export class EmulatorCommands {
  constructor(
    private readonly config: Pick<Config, 'addConnection'>,
    private readonly emulator: Pick<EmulatorProcess, 'baseUrl' | 'pid' | 'start' | 'stop' | 'attach'>,
    private readonly log: Log,
    private readonly display: Display,
  ) {}

  /** The running emulator's base URL, or undefined when none runs (as far as this window knows). */
  get baseUrl(): string | undefined {
    return this.emulator.baseUrl;
  }

  /** Looks for the emulator another window runs, so that what is shown next is true. Never throws. */
  async refresh(): Promise<void> {
    await this.emulator.attach().catch(() => false);
  }

  /**
   * What the connections menu says of the connection "Local emulator" at `baseUrl`: running there (with its pid), or
   * not running (choosing it starts it).
   */
  stateWords(baseUrl: string): string {
    return this.emulator.baseUrl === baseUrl
      ? vscode.l10n.t('running (pid {0})', this.emulator.pid ?? '?')
      : vscode.l10n.t('not running: choose it to start it');
  }

  /**
   * Makes the connection "Local emulator" active: the running emulator as it is, else one started now. False when it
   * did not start (said to the user).
   */
  async use(): Promise<boolean> {
    const running = this.emulator.baseUrl;
    if (running === undefined) return (await this.start()) !== undefined;
    await this.activate(running);
    return true;
  }

  /** Writes the connection "Local emulator" at `baseUrl` and makes it active. */
  private activate(baseUrl: string): Promise<void> {
    return this.config.addConnection({ name: EMULATOR_CONNECTION_NAME, surface: 'emulator', baseUrl });
  }

  /**
   * `comfyCloud.startEmulator`: starts (or restarts) the bundled emulator and makes the connection "Local emulator"
   * active with its base URL. Resolves the base URL, or undefined when it failed (said to the user).
   */
  async start(): Promise<string | undefined> {
    let baseUrl: string;
    try {
      baseUrl = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: vscode.l10n.t('Comfy Cloud: starting the local emulator…'),
        },
        () => this.emulator.start(),
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error('emulator', message);
      const showLog = vscode.l10n.t('Show Log');
      void this.display
        .error(vscode.l10n.t('Comfy Cloud: the local emulator did not start: {0}', message), showLog)
        .then((a) => {
          if (a === showLog) void vscode.commands.executeCommand(Commands.showLog);
        });
      return undefined;
    }
    await this.activate(baseUrl);
    void this.display.info(
      vscode.l10n.t('Comfy Cloud: the local emulator runs at {0} and is the active connection.', baseUrl),
    );
    return baseUrl;
  }

  /**
   * `comfyCloud.stopEmulator`: stops the local emulator, whichever window started it (its jobs and outputs stay in
   * its data folder for the next start). Resolves true when one was stopped; says so either way.
   */
  async stop(): Promise<boolean> {
    await this.refresh();
    const running = this.emulator.baseUrl;
    if (running === undefined) {
      void this.display.info(vscode.l10n.t('Comfy Cloud: the local emulator is not running.'));
      return false;
    }
    await this.emulator.stop();
    void this.display.info(
      vscode.l10n.t('Comfy Cloud: the local emulator at {0} stopped; its jobs are kept for its next start.', running),
    );
    return true;
  }
}
