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
import { COMPANION_CONNECTION_NAME, Commands, EMULATOR_CONNECTION_NAME } from './constants';
import type { Display } from './display';
import type { EmulatorProcess } from './emulatorProcess';
import type { Log } from './log';

interface PickItem extends vscode.QuickPickItem {
  run?: () => Thenable<unknown>;
}

const KIND_WORDS: Record<ConnectionKind, string> = {
  cloud: 'The managed cloud (its base URL)',
  deployment: 'A serverless deployment (its deployment id, under a cloud base URL)',
  companion: 'A self-hosted companion (its base URL, e.g. http://127.0.0.1:8189)',
  emulator: 'A local emulator (its base URL)',
};

/**
 * The connection commands (issue 9, "Connections"): "Switch Connection" (the status bar item's quick pick: switch to
 * any connection, or a running self-hosted companion found from its state file; add one; set the active one's API
 * key; start the local emulator) and "Start Local Emulator". Connections are written to the user's settings only.
 */
export class ConnectionCommands {
  constructor(
    private readonly config: Config,
    private readonly emulator: EmulatorProcess,
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
      title: 'Comfy Cloud: Connections',
      placeHolder: 'Switch connection, add one, set the API key, or start the local emulator',
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
        { location: vscode.ProgressLocation.Notification, title: 'Comfy Cloud: starting the local emulator…' },
        () => this.emulator.start(),
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error('emulator', message);
      void this.display.error(`Comfy Cloud: the local emulator did not start: ${message}`, 'Show Log').then((a) => {
        if (a) void vscode.commands.executeCommand(Commands.showLog);
      });
      return undefined;
    }
    await this.config.addConnection({ name: EMULATOR_CONNECTION_NAME, surface: 'emulator', baseUrl });
    void this.display.info(`Comfy Cloud: the local emulator runs at ${baseUrl} and is the active connection.`);
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
        void this.display.error(`Comfy Cloud: there is no connection named "${target}".`);
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
    const items: PickItem[] = [{ label: 'Connections', kind: vscode.QuickPickItemKind.Separator }];
    let defaultUrl: string;
    try {
      defaultUrl = surfaceFromBaseUrl(this.config.defaultBaseUrl()).baseUrl;
    } catch {
      defaultUrl = 'comfyCloud.baseUrl is not a valid URL';
    }
    items.push({ label: `${mark(DEFAULT_CONNECTION_NAME)}${DEFAULT_CONNECTION_NAME}`, description: defaultUrl, detail: 'comfyCloud.baseUrl', run: () => this.activate('') });
    let list: ConnectionEntry[] = [];
    try {
      list = parseConnections(this.config.connectionsRaw());
    } catch (err) {
      items.push({ label: '$(error) comfyCloud.connections is not usable', detail: this.display.text(err instanceof Error ? err.message : String(err)) });
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
        label: `$(server) ${COMPANION_CONNECTION_NAME} (running)`,
        description: companion.url,
        detail: `Found from its state file (pid ${companion.pid})`,
        run: () => this.config.addConnection({ name: COMPANION_CONNECTION_NAME, surface: 'companion', baseUrl: companion.url }),
      });
    }
    items.push({ label: 'Actions', kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: '$(add) Add Connection…', run: () => this.addConnection(list) });
    items.push({ label: `$(key) Set API Key for ${this.display.text(activeName || 'the active connection')}…`, run: () => vscode.commands.executeCommand(Commands.setApiKey) });
    items.push({
      label: `$(server-process) ${this.emulator.baseUrl ? 'Restart' : 'Start'} Local Emulator`,
      description: this.emulator.baseUrl,
      run: () => this.startEmulator(),
    });
    return items;
  }

  /** Input boxes: name, kind, then the URL or the deployment id; then the new connection is active. */
  private async addConnection(list: ConnectionEntry[]): Promise<boolean> {
    const names = new Set(list.map((c) => c.name));
    const name = await vscode.window.showInputBox({
      title: 'Comfy Cloud: Add Connection (1/3)',
      prompt: 'A name for the connection',
      ignoreFocusOut: true,
      validateInput: (v) => {
        const n = v.trim();
        if (!n) return 'Enter a name.';
        if (n.length > MAX_CONNECTION_NAME) return `At most ${MAX_CONNECTION_NAME} characters.`;
        if (n === DEFAULT_CONNECTION_NAME || names.has(n)) return `A connection named "${n}" exists.`;
        return undefined;
      },
    });
    if (!name?.trim()) return false;
    const kind = await vscode.window.showQuickPick(
      CONNECTION_KINDS.map((k) => ({ label: k, detail: KIND_WORDS[k] })),
      { title: 'Comfy Cloud: Add Connection (2/3)', placeHolder: 'What kind of server?', ignoreFocusOut: true },
    );
    if (!kind) return false;
    const entry: ConnectionEntry = { name: name.trim(), surface: kind.label };
    if (kind.label === 'deployment') {
      const id = await vscode.window.showInputBox({
        title: 'Comfy Cloud: Add Connection (3/3)',
        prompt: 'The deployment id (lowercase letters, digits and dashes)',
        ignoreFocusOut: true,
        validateInput: (v) => (DEPLOYMENT_ID.test(v.trim()) ? undefined : 'A deployment id is a lowercase DNS label: letters, digits and dashes, up to 63.'),
      });
      if (!id?.trim()) return false;
      entry.deploymentId = id.trim();
      if (!list.some((c) => c.surface === 'cloud')) {
        const cloud = await this.askUrl('The cloud base URL the deployment is under');
        if (!cloud) return false;
        entry.baseUrl = cloud;
      }
    } else {
      const url = await this.askUrl(`The base URL of the ${kind.label}`);
      if (!url) return false;
      entry.baseUrl = url;
    }
    try {
      await this.config.addConnection(entry);
    } catch (err) {
      void this.display.error(err instanceof Error ? err.message : String(err));
      return false;
    }
    void this.display.info(`Comfy Cloud: "${entry.name}" is the active connection. Set its API key from the status bar if it needs one.`);
    return true;
  }

  private async askUrl(prompt: string): Promise<string | undefined> {
    const url = await vscode.window.showInputBox({
      title: 'Comfy Cloud: Add Connection (3/3)',
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
