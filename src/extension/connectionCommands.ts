import * as vscode from 'vscode';
import {
  CONNECTION_KINDS,
  DEFAULT_CONNECTION_NAME,
  DEPLOYMENT_ID,
  MAX_CONNECTION_NAME,
  connectionBaseUrl,
  discoverCompanion,
  parseConnections,
  surfaceFromBaseUrl,
  type ConnectionEntry,
  type ConnectionKind,
} from '../core';
import type { Config } from './config';
import { COMPANION_CONNECTION_NAME, CONFIG_SECTION, Commands, EMULATOR_CONNECTION_NAME, Settings, V1_NOTICE_STATE_KEY } from './constants';
import type { Display } from './display';
import type { EmulatorProcess } from './emulatorProcess';
import type { Log } from './log';

interface PickItem extends vscode.QuickPickItem {
  run?: () => Thenable<unknown>;
}

/** What each kind of server is, in the "Add Connection" quick pick (translated when shown, so a function). */
const KIND_WORDS: Record<ConnectionKind, () => string> = {
  cloud: () => vscode.l10n.t('The managed cloud (its base URL)'),
  deployment: () => vscode.l10n.t('A serverless deployment (its deployment id, under a cloud base URL)'),
  companion: () => vscode.l10n.t('A self-hosted companion (its base URL, e.g. {0})', 'http://127.0.0.1:8189'),
  emulator: () => vscode.l10n.t('A local emulator (its base URL)'),
};

/**
 * The connection commands: "Switch Connection" (the status bar item's quick pick: switch to
 * any connection, or a running self-hosted companion found from its state file; add one; set the active one's API
 * key; start the local emulator) and "Start Local Emulator". Connections are written to the user's settings only.
 */
export class ConnectionCommands {
  constructor(
    private readonly config: Pick<Config, 'connection' | 'connectionsRaw' | 'defaultBaseUrl' | 'addConnection' | 'setActiveConnection'>,
    /** The emulator child: started by "Start Local Emulator", its base URL shown in the quick pick. */
    private readonly emulator: Pick<EmulatorProcess, 'baseUrl' | 'start'>,
    private readonly log: Log,
    private readonly display: Display,
  ) {}

  /**
   * `comfyCloud.switchConnection`: with a string (tests, keybindings), makes that connection active ('' or
   * "Default": the default one) and resolves true; without, shows the quick pick. False when cancelled or refused.
   */
  async switchConnection(name?: unknown): Promise<boolean> {
    if (typeof name === 'string') return this.activate(name);
    const item = await vscode.window.showQuickPick(this.items(), {
      title: vscode.l10n.t('Comfy Cloud: Connections'),
      placeHolder: vscode.l10n.t('Switch connection, add one, set the API key, or start the local emulator'),
      matchOnDescription: true,
    });
    if (!item?.run) return false;
    return (await item.run()) !== false;
  }

  /**
   * `comfyCloud.startEmulator`: starts (or restarts) the bundled emulator as the extension's child and makes the
   * connection "Local emulator" active with its base URL. Resolves the base URL, or undefined when it failed (said
   * to the user).
   */
  async startEmulator(): Promise<string | undefined> {
    let baseUrl: string;
    try {
      baseUrl = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Comfy Cloud: starting the local emulator…') },
        () => this.emulator.start(),
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error('emulator', message);
      const showLog = vscode.l10n.t('Show Log');
      void this.display.error(vscode.l10n.t('Comfy Cloud: the local emulator did not start: {0}', message), showLog).then((a) => {
        if (a === showLog) void vscode.commands.executeCommand(Commands.showLog);
      });
      return undefined;
    }
    await this.config.addConnection({ name: EMULATOR_CONNECTION_NAME, surface: 'emulator', baseUrl });
    void this.display.info(vscode.l10n.t('Comfy Cloud: the local emulator runs at {0} and is the active connection.', baseUrl));
    return baseUrl;
  }

  private async activate(name: string): Promise<boolean> {
    const target = name.trim() === DEFAULT_CONNECTION_NAME ? '' : name.trim();
    if (target) {
      let list: ConnectionEntry[];
      try {
        list = parseConnections(this.config.connectionsRaw());
      } catch (err) {
        void this.display.error(err instanceof Error ? err.message : String(err));
        return false;
      }
      if (!list.some((c) => c.name === target)) {
        void this.display.error(vscode.l10n.t('Comfy Cloud: there is no connection named "{0}".', target));
        return false;
      }
    }
    await this.config.setActiveConnection(target);
    this.log.info('connections', `active connection: ${target || DEFAULT_CONNECTION_NAME}`);
    return true;
  }

  private async items(): Promise<PickItem[]> {
    let activeName = '';
    try {
      activeName = this.config.connection().name;
    } catch {
      // unusable settings: nothing is marked active
    }
    const mark = (name: string): string => (name === activeName ? '$(check) ' : '');
    const items: PickItem[] = [{ label: vscode.l10n.t('Connections'), kind: vscode.QuickPickItemKind.Separator }];
    let defaultUrl: string;
    try {
      defaultUrl = surfaceFromBaseUrl(this.config.defaultBaseUrl()).baseUrl;
    } catch {
      defaultUrl = vscode.l10n.t('{0} is not a valid URL', 'comfyCloud.baseUrl');
    }
    items.push({ label: `${mark(DEFAULT_CONNECTION_NAME)}${DEFAULT_CONNECTION_NAME}`, description: defaultUrl, detail: 'comfyCloud.baseUrl', run: () => this.activate('') });
    let list: ConnectionEntry[] = [];
    try {
      list = parseConnections(this.config.connectionsRaw());
    } catch (err) {
      items.push({ label: `$(error) ${vscode.l10n.t('{0} is not usable', 'comfyCloud.connections')}`, detail: this.display.text(err instanceof Error ? err.message : String(err)) });
    }
    for (const entry of list) {
      let description: string;
      try {
        description = connectionBaseUrl(entry, list);
      } catch (err) {
        description = err instanceof Error ? err.message : String(err);
      }
      items.push({ label: `${mark(entry.name)}${this.display.text(entry.name)}`, description: this.display.text(description), detail: entry.surface, run: () => this.activate(entry.name) });
    }
    const companion = await discoverCompanion().catch(() => undefined);
    if (companion && !list.some((c) => c.baseUrl && safeBase(c.baseUrl) === companion.url)) {
      items.push({
        label: `$(server) ${vscode.l10n.t('{0} (running)', COMPANION_CONNECTION_NAME)}`,
        description: companion.url,
        detail: vscode.l10n.t('Found from its state file (pid {0})', companion.pid),
        run: () => this.config.addConnection({ name: COMPANION_CONNECTION_NAME, surface: 'companion', baseUrl: companion.url }),
      });
    }
    items.push({ label: vscode.l10n.t('Actions'), kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: `$(add) ${vscode.l10n.t('Add Connection…')}`, run: () => this.addConnection(list) });
    items.push({ label: `$(key) ${vscode.l10n.t('Set API Key for {0}…', this.display.text(activeName || vscode.l10n.t('the active connection')))}`, run: () => vscode.commands.executeCommand(Commands.setApiKey) });
    items.push({
      label: `$(server-process) ${this.emulator.baseUrl ? vscode.l10n.t('Restart Local Emulator') : vscode.l10n.t('Start Local Emulator')}`,
      description: this.emulator.baseUrl,
      run: () => this.startEmulator(),
    });
    return items;
  }

  /**
   * `comfyCloud.addConnection` (also the quick pick's "Add Connection…" and the welcome view's button): input boxes
   * for the name, the kind, then the URL or the deployment id; then the new connection is active. False when
   * cancelled or refused (said to the user).
   */
  async addConnection(known?: ConnectionEntry[]): Promise<boolean> {
    let list = known;
    if (!list) {
      try {
        list = parseConnections(this.config.connectionsRaw());
      } catch (err) {
        void this.display.error(err instanceof Error ? err.message : String(err));
        return false;
      }
    }
    const names = new Set(list.map((c) => c.name));
    const name = await vscode.window.showInputBox({
      title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 1, 3),
      prompt: vscode.l10n.t('A name for the connection'),
      ignoreFocusOut: true,
      validateInput: (v) => {
        const n = v.trim();
        if (!n) return vscode.l10n.t('Enter a name.');
        if (n.length > MAX_CONNECTION_NAME) return vscode.l10n.t('At most {0} characters.', MAX_CONNECTION_NAME);
        if (n === DEFAULT_CONNECTION_NAME || names.has(n)) return vscode.l10n.t('A connection named "{0}" exists.', n);
        return undefined;
      },
    });
    if (!name?.trim()) return false;
    const kind = await vscode.window.showQuickPick(
      CONNECTION_KINDS.map((k) => ({ label: k, detail: KIND_WORDS[k]() })),
      { title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 2, 3), placeHolder: vscode.l10n.t('What kind of server?'), ignoreFocusOut: true },
    );
    if (!kind) return false;
    const entry: ConnectionEntry = { name: name.trim(), surface: kind.label };
    if (kind.label === 'deployment') {
      const id = await vscode.window.showInputBox({
        title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 3, 3),
        prompt: vscode.l10n.t('The deployment id (lowercase letters, digits and dashes)'),
        ignoreFocusOut: true,
        validateInput: (v) => (DEPLOYMENT_ID.test(v.trim()) ? undefined : vscode.l10n.t('A deployment id is a lowercase DNS label: letters, digits and dashes, up to {0}.', 63)),
      });
      if (!id?.trim()) return false;
      entry.deploymentId = id.trim();
      if (!list.some((c) => c.surface === 'cloud')) {
        const cloud = await this.askUrl(vscode.l10n.t('The cloud base URL the deployment is under'));
        if (!cloud) return false;
        entry.baseUrl = cloud;
      }
    } else {
      const url = await this.askUrl(vscode.l10n.t('The base URL of the {0}', kind.label));
      if (!url) return false;
      entry.baseUrl = url;
    }
    try {
      await this.config.addConnection(entry);
    } catch (err) {
      void this.display.error(err instanceof Error ? err.message : String(err));
      return false;
    }
    void this.display.info(vscode.l10n.t('Comfy Cloud: "{0}" is the active connection. Set its API key from the status bar if it needs one.', entry.name));
    return true;
  }

  /**
   * Says once on this machine, unobtrusively (an information message, never modal), that the connection `name` speaks
   * the deprecated v1 API and how to move to v2 (Cloud API v1 (deprecated), Versioning: deprecated in favor of v2).
   * "Open Settings" opens `comfyCloud.connections`. Resolves true when the notice was shown now, false when it had been
   * shown before (`state` is the extension's globalState).
   */
  async v1Notice(state: vscode.Memento, name: string): Promise<boolean> {
    if (state.get<boolean>(V1_NOTICE_STATE_KEY)) return false;
    // Marked before it shows: a second v1 connection made active meanwhile does not say it again.
    await state.update(V1_NOTICE_STATE_KEY, true);
    this.log.info('connections', `"${name}" speaks the deprecated v1 API: told once`);
    const open = vscode.l10n.t('Open Settings');
    void this.display
      .info(
        vscode.l10n.t(
          'Comfy Cloud: the connection "{0}" speaks the v1 API, which is deprecated. Submit, the Jobs view and the monitor work on it; assets need v2. To move, remove "api": "v1" from it in comfyCloud.connections.',
          name,
        ),
        open,
      )
      .then((choice) => choice === open && vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.${Settings.connections}`));
    return true;
  }

  private async askUrl(prompt: string): Promise<string | undefined> {
    const url = await vscode.window.showInputBox({
      title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 3, 3),
      prompt,
      ignoreFocusOut: true,
      validateInput: (v) => {
        try {
          surfaceFromBaseUrl(v);
          return undefined;
        } catch (err) {
          return err instanceof Error ? err.message : String(err);
        }
      },
    });
    return url?.trim() || undefined;
  }
}

function safeBase(url: string): string | undefined {
  try {
    return surfaceFromBaseUrl(url).baseUrl;
  } catch {
    return undefined;
  }
}
