import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActiveConnection } from '../../core/connection';
import {
  Commands,
  ContextKeys,
  EMULATOR_DATA_FOLDER,
  EMULATOR_RECORD_FILE,
  EMULATOR_PORT_KEY,
  EMULATOR_RETENTION_MS,
  Settings,
} from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once } from '../platform/lazy';
import type { Services } from '../platform/services';
import { ComfyUIOffer } from './comfyuiOffer';
import { ConnectionCommands } from './connectionCommands';
import { ConnectionStatus, type RunningJobs } from './connectionStatus';
import { EmulatorProcess } from './emulatorProcess';
import { EmulatorCommands } from './emulatorCommands';
import { SampleWorkflows, WelcomeContext } from './welcome';

export type { ConnectionStatus } from './connectionStatus';
export type { EmulatorProcess } from './emulatorProcess';
export type { WelcomeContext } from './welcome';
export type { ComfyUIOffer, ComfyUIOfferOutcome } from './comfyuiOffer';

/**
 * The connection feature: the status bar item of the active connection (its health and running count), the local
 * emulator child ("Start Local Emulator"; stopped on dispose), the welcome context key, the API key commands, the
 * connection commands (switch, add, samples) and the one-time notices (a v1 connection, an old-form deployment
 * address). Built before the features that follow the connection's health (`status.onDidReconnect`).
 */
export class ConnectionFeature extends Disposable {
  /** The status bar item of the active connection. */
  readonly status: ConnectionStatus;
  readonly emulator: EmulatorProcess;
  /** The context key the welcome views and the walkthrough follow. */
  readonly welcome: WelcomeContext;
  /** The v1 connections the deprecation notice was shown for in this session (at most one per machine). */
  readonly v1NoticesShown: string[] = [];
  /** The old-form deployment addresses explained in this session, `<name> <old URL>` (each once per machine). */
  readonly legacyNoticesShown: string[] = [];
  private readonly legacyNoticeShown = this.register(new vscode.EventEmitter<string>());
  /** Fires with `<name> <old URL>` when an old-form deployment address was explained (after {@link legacyNoticesShown} grew). */
  readonly onDidShowLegacyNotice = this.legacyNoticeShown.event;
  /**
   * The offer of a ComfyUI server running on this machine: checked once in the background at start-up (not in an
   * extension test run, whose tests call {@link ComfyUIOffer.check} with their own server's address).
   */
  readonly comfyuiOffer: ComfyUIOffer;

  constructor(
    private readonly services: Services,
    running: RunningJobs,
  ) {
    super();
    const { context, config, log, display } = services;
    this.emulator = this.register(
      new EmulatorProcess({
        cliPath: context.asAbsolutePath('dist/cli.js'),
        log,
        dataDir: path.join(context.globalStorageUri.fsPath, EMULATOR_DATA_FOLDER),
        recordFile: path.join(context.globalStorageUri.fsPath, EMULATOR_RECORD_FILE),
        retentionMs: EMULATOR_RETENTION_MS,
        nodeDelayMs: () => config.emulatorNodeDelayMs(),
        ports: {
          get: () => {
            const port = context.globalState.get<unknown>(EMULATOR_PORT_KEY);
            return typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
          },
          set: (port) => context.globalState.update(EMULATOR_PORT_KEY, port),
        },
      }),
    );
    const emulatorCommands = new EmulatorCommands(config, this.emulator, log, display);
    const connections = once(() => new ConnectionCommands(config, emulatorCommands, log, display));
    // A v1 connection made active: the deprecation notice, once on this machine.
    const onV1Connection = (name: string): unknown =>
      connections()
        .v1Notice(context.globalState, name)
        .then((shown) => shown && this.v1NoticesShown.push(name));
    this.status = this.register(
      new ConnectionStatus(config, services.keys, running, display, { emulator: this.emulator, onV1Connection }),
    );
    // The status bar hears each request's outcome (its health where the surface has no probe).
    this.register(services.onDidRequest((entry) => this.status.requestDone(entry)));
    this.welcome = this.register(new WelcomeContext(this.status, log));
    // A deployment's address in the old form (`<cloud URL>/deployment/<id>`) in the active connection: its own host is
    // used, and that is said once (connectionCommands.ts legacyNotice).
    const noteLegacy = (): void => this.noteLegacy(() => connections());
    this.register(
      config.onDidChange(
        noteLegacy,
        Settings.baseUrl,
        Settings.connections,
        Settings.activeConnection,
        Settings.deploymentDomain,
      ),
    );
    noteLegacy();
    // The context key of the active connection's API ("Open in ComfyUI" shows where it is `comfyui`).
    const setApiContext = (): void => this.setApiContext();
    this.register(config.onDidChange(setApiContext, Settings.baseUrl, Settings.connections, Settings.activeConnection));
    setApiContext();
    // The local emulator an earlier window started (a reload) or another window runs: held, so it is not lost.
    void this.emulator.attach();
    this.comfyuiOffer = new ComfyUIOffer(config, context.globalState, display, log);
    // In the background: activation never waits for the probe.
    if (context.extensionMode !== vscode.ExtensionMode.Test) {
      this.comfyuiOffer.check().catch((err: unknown) => log.warn('connections', `ComfyUI offer: ${String(err)}`));
    }
    this.register(vscode.commands.registerCommand(Commands.openInComfyUI, () => this.openInComfyUI()));
    const samples = new SampleWorkflows(context.extensionUri, log, display);
    this.register(
      vscode.commands.registerCommand(Commands.openSample, (name?: unknown) =>
        samples.open(typeof name === 'string' ? name : undefined),
      ),
    );
    this.register(
      vscode.commands.registerCommand(Commands.switchConnection, (name?: unknown) =>
        connections().switchConnection(name),
      ),
    );
    this.register(vscode.commands.registerCommand(Commands.startEmulator, () => emulatorCommands.start()));
    this.register(vscode.commands.registerCommand(Commands.stopEmulator, () => emulatorCommands.stop()));
    this.register(vscode.commands.registerCommand(Commands.addConnection, () => connections().addConnection()));
    this.register(vscode.commands.registerCommand(Commands.setApiKey, (key?: string) => this.setApiKey(key)));
    this.register(vscode.commands.registerCommand(Commands.clearApiKey, () => this.clearApiKey()));
    this.register(vscode.commands.registerCommand(Commands.showLog, () => log.show()));
  }

  private noteLegacy(connections: () => ConnectionCommands): void {
    let active: ActiveConnection;
    try {
      active = this.services.config.connection();
    } catch {
      return; // unusable settings are the status bar's to say
    }
    const said = `${active.name} ${active.legacy?.before}`;
    if (!active.legacy) return;
    void connections()
      .legacyNotice(this.services.context.globalState, active)
      .then((shown) => {
        if (!shown) return;
        this.legacyNoticesShown.push(said);
        this.legacyNoticeShown.fire(said);
      });
  }

  private setApiContext(): void {
    let api = '';
    try {
      api = this.services.config.connection().api;
    } catch {
      // unusable settings: no API
    }
    vscode.commands
      .executeCommand('setContext', ContextKeys.api, api)
      .then(undefined, (err: unknown) => this.services.log.warn('connections', `setContext failed: ${String(err)}`));
  }

  /**
   * `comfyCloud.openInComfyUI` (a job's context menu, a workflow editor's title, the palette, where the active
   * connection speaks `comfyui`): opens the ComfyUI server's own page, its base URL, in the browser. The URL is the
   * connection's base URL as resolved (it never carries credentials: a base URL with a user name or password is
   * refused, and the API key stays in SecretStorage). Resolves true when it was handed to the browser.
   */
  private async openInComfyUI(): Promise<boolean> {
    const { config, display } = this.services;
    let active: ActiveConnection;
    try {
      active = config.connection();
    } catch (err) {
      void display.error(err instanceof Error ? err.message : String(err));
      return false;
    }
    if (active.api !== 'comfyui') {
      void display.error(
        vscode.l10n.t(
          'Comfy Cloud: the connection "{0}" is not a ComfyUI server; Open in ComfyUI opens a ComfyUI server\'s own page. Switch to a ComfyUI connection first.',
          active.name,
        ),
      );
      return false;
    }
    return vscode.env.openExternal(vscode.Uri.parse(active.surface.baseUrl, true));
  }

  /** Stores the API key for the configured origin (a password input unless `key` is given, as tests do). */
  private async setApiKey(key?: string): Promise<boolean> {
    const { config, keys, log, display } = this.services;
    const { origin } = config.surface();
    const value =
      typeof key === 'string'
        ? key
        : await vscode.window.showInputBox({
            title: vscode.l10n.t('Comfy Cloud: Set API Key'),
            prompt: vscode.l10n.t(
              "API key for {0} (stored in the OS keychain via VS Code's SecretStorage, never in settings)",
              origin,
            ),
            password: true,
            ignoreFocusOut: true,
            validateInput: (v) =>
              v.trim() ? undefined : vscode.l10n.t('Enter the API key, or press Escape to cancel.'),
          });
    if (!value?.trim()) return false;
    await keys.set(origin, value.trim());
    log.info('auth', `API key set for ${origin}`);
    void display.info(vscode.l10n.t('Comfy Cloud: API key saved for {0}.', origin));
    return true;
  }

  private async clearApiKey(): Promise<void> {
    const { config, keys, log, display } = this.services;
    const { origin } = config.surface();
    await keys.clear(origin);
    log.info('auth', `API key cleared for ${origin}`);
    void display.info(vscode.l10n.t('Comfy Cloud: API key cleared for {0}.', origin));
  }
}

/** Registers the connection feature: its status bar, emulator, welcome context and commands. */
export function register(services: Services, running: RunningJobs): ConnectionFeature {
  return new ConnectionFeature(services, running);
}
