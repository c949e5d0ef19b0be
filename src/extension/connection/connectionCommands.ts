import * as vscode from 'vscode';
import {
  CLOUD_BASE_URL,
  COMPANION_BASE_URL,
  DEFAULT_CONNECTION_NAME,
  DEPLOYMENT_ID,
  MAX_CONNECTION_NAME,
  connectionBaseUrl,
  deploymentBaseUrl,
  discoverCompanion,
  parseConnections,
  surfaceFromBaseUrl,
  type ActiveConnection,
  type CompanionState,
  type ConnectionApi,
  type ConnectionEntry,
  type ConnectionKind,
} from '../../core/connection';
import type { Config } from '../platform/config';
import {
  COMFYUI_BASE_URL,
  COMFYUI_CONNECTION_NAME,
  COMPANION_CONNECTION_NAME,
  CONFIG_SECTION,
  Commands,
  EMULATOR_CONNECTION_NAME,
  LEGACY_NOTICE_STATE_KEY,
  Settings,
  V1_NOTICE_STATE_KEY,
} from '../platform/constants';
import type { Display } from '../platform/display';
import { apiWords } from './apiWords';
import { freeName } from './connectionNames';
import type { EmulatorCommands } from './emulatorCommands';
import type { Log } from '../platform/log';

interface PickItem extends vscode.QuickPickItem {
  run?: () => Thenable<unknown>;
  /** The active connection's item. */
  active?: boolean;
}

/** One choice of "Add Connection": the kind of server it adds. */
export interface AddConnectionChoice extends vscode.QuickPickItem {
  surface: ConnectionKind;
  /** The API the connection will speak, when not the default v2 (the "ComfyUI server" choice: `comfyui`). */
  api?: ConnectionApi;
  /** The name offered for the new connection, when not the kind's own ({@link DEFAULT_NAMES}). */
  suggestedName?: string;
  /** The prompt of the base URL's input box, when not the kind's own. */
  urlPrompt?: string;
}

/** The name a new connection of each kind is offered (a number is added when it is taken). */
const DEFAULT_NAMES: Record<Exclude<ConnectionKind, 'emulator' | 'deployment'>, string> = {
  cloud: 'Comfy Cloud',
  companion: COMPANION_CONNECTION_NAME,
};

/**
 * The connection commands: "Switch Connection" (the status bar item's quick pick: switch to
 * any connection, or a running self-hosted companion found from its state file; add one; set the active one's API
 * key; start the local emulator) and "Start Local Emulator". Connections are written to the user's settings only.
 */
export class ConnectionCommands {
  constructor(
    private readonly config: Pick<
      Config,
      'connection' | 'connectionsRaw' | 'defaultBaseUrl' | 'deploymentDomain' | 'addConnection' | 'setActiveConnection'
    >,
    /** The local emulator's commands: whether it runs, shown in the quick pick; starting and stopping it. */
    private readonly emulator: EmulatorCommands,
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
    items.push({
      active: activeName === DEFAULT_CONNECTION_NAME,
      label: `${mark(DEFAULT_CONNECTION_NAME)}${DEFAULT_CONNECTION_NAME}`,
      description: defaultUrl,
      detail: 'comfyCloud.baseUrl',
      run: () => this.activate(''),
    });
    let list: ConnectionEntry[] = [];
    try {
      list = parseConnections(this.config.connectionsRaw());
    } catch (err) {
      items.push({
        label: `$(error) ${vscode.l10n.t('{0} is not usable', 'comfyCloud.connections')}`,
        detail: this.display.text(err instanceof Error ? err.message : String(err)),
      });
    }
    // The emulator another window runs, or an earlier window started: the menu says whether it runs.
    await this.emulator.refresh();
    for (const entry of list) {
      let description: string;
      try {
        description = connectionBaseUrl(entry, this.config.deploymentDomain());
      } catch (err) {
        description = err instanceof Error ? err.message : String(err);
      }
      // The API it speaks, when not the default v2 (e.g. "companion · ComfyUI server"); the local emulator's state.
      const local = entry.surface === 'emulator' && entry.name === EMULATOR_CONNECTION_NAME;
      const words = local ? this.emulator.stateWords(description) : apiWords(entry.api ?? 'v2');
      items.push({
        active: entry.name === activeName,
        label: `${mark(entry.name)}${this.display.text(entry.name)}`,
        description: this.display.text(description),
        detail: words ? `${entry.surface} · ${words}` : entry.surface,
        run: () => (local ? this.emulator.use() : this.activate(entry.name)),
      });
    }
    // The active connection first: the quick pick highlights its first item, and Enter must not switch to another.
    const active = items.findIndex((i) => i.active);
    if (active > 1) items.splice(1, 0, ...items.splice(active, 1));
    const companion = await discoverCompanion().catch(() => undefined);
    if (companion && !list.some((c) => c.baseUrl && safeBase(c.baseUrl) === companion.url)) {
      items.push({
        label: `$(server) ${vscode.l10n.t('{0} (running)', COMPANION_CONNECTION_NAME)}`,
        description: companion.url,
        detail: vscode.l10n.t('Found from its state file (pid {0})', companion.pid),
        run: () =>
          this.config.addConnection({ name: COMPANION_CONNECTION_NAME, surface: 'companion', baseUrl: companion.url }),
      });
    }
    items.push({ label: vscode.l10n.t('Actions'), kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: `$(add) ${vscode.l10n.t('Add Connection…')}`, run: () => this.addConnection(list) });
    items.push({
      label: `$(key) ${vscode.l10n.t('Set API Key for {0}…', this.display.text(activeName || vscode.l10n.t('the active connection')))}`,
      run: () => vscode.commands.executeCommand(Commands.setApiKey),
    });
    items.push({
      label: `$(server-process) ${this.emulator.baseUrl ? vscode.l10n.t('Restart Local Emulator') : vscode.l10n.t('Start Local Emulator')}`,
      description: this.emulator.baseUrl,
      run: () => this.emulator.start(),
    });
    if (this.emulator.baseUrl)
      items.push({
        label: `$(debug-stop) ${vscode.l10n.t('Stop Local Emulator')}`,
        description: this.emulator.baseUrl,
        run: () => this.emulator.stop(),
      });
    return items;
  }

  /**
   * The choices of "Add Connection", each with the address it will have (Job and Asset API v2 OpenAPI document,
   * `servers`): Comfy Cloud at its public address, a serverless deployment by its id at its own host (under
   * `comfyCloud.deploymentDomain`), the self-hosted companion (the running one found from its state file, else its
   * default address), the local emulator (started by choosing it), and a ComfyUI server spoken to in its own API
   * (ComfyUI server API (observed)), at its default address on this machine.
   */
  addConnectionChoices(companion?: CompanionState): AddConnectionChoice[] {
    let deploymentUrl: string;
    try {
      // Built with a sample id, shown with a placeholder for it.
      deploymentUrl = deploymentBaseUrl('id', this.config.deploymentDomain()).replace('://id.', '://<id>.');
    } catch (err) {
      deploymentUrl = err instanceof Error ? err.message : String(err);
    }
    return [
      {
        surface: 'cloud',
        label: `$(cloud) ${vscode.l10n.t('Comfy Cloud')}`,
        description: CLOUD_BASE_URL,
        detail: vscode.l10n.t('The managed cloud at its public address; it needs an API key from your account.'),
      },
      {
        surface: 'deployment',
        label: `$(rocket) ${vscode.l10n.t('Serverless deployment')}`,
        description: this.display.text(deploymentUrl),
        detail: vscode.l10n.t(
          'One deployed workflow, by its deployment id: it has a host of its own. It needs an API key.',
        ),
      },
      {
        surface: 'companion',
        label: `$(server) ${vscode.l10n.t('Self-hosted companion')}`,
        description: companion?.url ?? COMPANION_BASE_URL,
        detail: companion
          ? vscode.l10n.t('Running on this machine: found from its state file (pid {0}).', companion.pid)
          : vscode.l10n.t('The companion process in front of your own engine, on this machine by default.'),
      },
      {
        surface: 'emulator',
        label: `$(server-process) ${vscode.l10n.t('Local emulator')}`,
        description: this.emulator.baseUrl ?? vscode.l10n.t('Start Local Emulator'),
        detail: vscode.l10n.t('Starts the bundled emulator on this machine: demo nodes, no account needed.'),
      },
      {
        // A self-hosted server on this machine (or the network): the surface of one, in the server's own API.
        surface: 'companion',
        api: 'comfyui',
        suggestedName: COMFYUI_CONNECTION_NAME,
        urlPrompt: vscode.l10n.t("The ComfyUI server's base URL (Enter: its default address on this machine)"),
        label: `$(server-environment) ${vscode.l10n.t('ComfyUI server')}`,
        description: COMFYUI_BASE_URL,
        detail: vscode.l10n.t(
          'A ComfyUI server in its own API (its queue and history): no key asked; set one later with Set API Key if it wants one.',
        ),
      },
    ];
  }

  /**
   * `comfyCloud.addConnection` (also the quick pick's "Add Connection…" and the welcome view's button): the kind of
   * server ({@link addConnectionChoices}); then its address, prefilled (the cloud's public one, the companion's), or a
   * deployment's id; then a name, prefilled. What is written
   * to `comfyCloud.connections`: `{name, surface: 'cloud' | 'companion', baseUrl}`, `{name, surface: 'deployment',
   * deploymentId}` (its URL is built from the id when used), or for a ComfyUI server `{name: 'ComfyUI', surface:
   * 'companion', baseUrl, api: 'comfyui'}` (no key asked); then the new connection is active. The emulator choice
   * starts it, or makes the one running active. False when cancelled or refused (said to the user).
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
    const companion = await discoverCompanion().catch(() => undefined);
    const choice = await vscode.window.showQuickPick(this.addConnectionChoices(companion), {
      title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 1, 3),
      placeHolder: vscode.l10n.t('Where should workflows run?'),
      ignoreFocusOut: true,
      matchOnDescription: true,
    });
    if (!choice) return false;
    // Already running: made active as it is, not restarted.
    if (choice.surface === 'emulator') return this.emulator.use();
    let entry: Omit<ConnectionEntry, 'name'>;
    let suggested: string;
    if (choice.surface === 'deployment') {
      const domain = this.config.deploymentDomain();
      const id = await vscode.window.showInputBox({
        title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 2, 3),
        prompt: vscode.l10n.t(
          'The deployment id (lowercase letters, digits and dashes): the deployment is reached at {0}',
          choice.description ?? '',
        ),
        ignoreFocusOut: true,
        validateInput: (v) => {
          const value = v.trim();
          if (!DEPLOYMENT_ID.test(value))
            return vscode.l10n.t(
              'A deployment id is a lowercase DNS label: letters, digits and dashes, up to {0}.',
              63,
            );
          try {
            return {
              message: vscode.l10n.t('Reached at {0}', deploymentBaseUrl(value, domain)),
              severity: vscode.InputBoxValidationSeverity.Info,
            };
          } catch (err) {
            return err instanceof Error ? err.message : String(err);
          }
        },
      });
      if (!id?.trim()) return false;
      entry = { surface: 'deployment', deploymentId: id.trim() };
      suggested = id.trim();
    } else {
      const url = await this.askUrl(
        choice.urlPrompt ??
          (choice.surface === 'cloud'
            ? vscode.l10n.t("The managed cloud's base URL (Enter: its public address)")
            : vscode.l10n.t("The companion's base URL")),
        choice.description ?? '',
      );
      if (!url) return false;
      entry = { surface: choice.surface, baseUrl: url, ...(choice.api ? { api: choice.api } : {}) };
      suggested = choice.suggestedName ?? DEFAULT_NAMES[choice.surface];
    }
    const names = new Set(list.map((c) => c.name));
    const name = await vscode.window.showInputBox({
      title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 3, 3),
      prompt: vscode.l10n.t('A name for the connection, shown in the status bar'),
      value: freeName(suggested, names),
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
    const added: ConnectionEntry = { name: name.trim(), ...entry };
    try {
      await this.config.addConnection(added);
    } catch (err) {
      void this.display.error(err instanceof Error ? err.message : String(err));
      return false;
    }
    this.log.info('connections', `added "${added.name}" (${added.surface})`);
    // The cloud and a deployment always need a key: asked now (a password input; Escape leaves it for later).
    const keyed =
      (added.surface === 'cloud' || added.surface === 'deployment') &&
      (await vscode.commands.executeCommand<boolean>(Commands.setApiKey)) === true;
    if (!keyed)
      void this.display.info(
        vscode.l10n.t(
          'Comfy Cloud: "{0}" is the active connection. Set its API key from the status bar if it needs one.',
          added.name,
        ),
      );
    return true;
  }

  /**
   * Says once on this machine (an information message, never modal) that the active connection's setting holds a
   * deployment's address in the old form and what is used instead ({@link ActiveConnection.legacy}: the public
   * contract gives a deployment a host of its own, so `<cloud URL>/deployment/<id>` is no address of it). Logged once
   * per session. "Open Settings" opens `comfyCloud.connections` (or `comfyCloud.baseUrl` for the default connection).
   * Resolves true when the notification was shown now (`state` is the extension's globalState).
   */
  async legacyNotice(state: vscode.Memento, active: ActiveConnection): Promise<boolean> {
    const legacy = active.legacy;
    if (!legacy) return false;
    const key = `${active.name}\n${legacy.before}`;
    if (!this.legacyLogged.has(key)) {
      this.legacyLogged.add(key);
      this.log.info(
        'connections',
        `"${active.name}": ${legacy.before} is the old form of a deployment's address (a deployment has a host of its own); requests go to ${legacy.now}`,
      );
    }
    const shown = state.get<string[]>(LEGACY_NOTICE_STATE_KEY, []);
    if (shown.includes(key)) return false;
    // Marked before it shows: a settings change meanwhile does not say it again.
    await state.update(LEGACY_NOTICE_STATE_KEY, [...shown, key].slice(-50));
    const open = vscode.l10n.t('Open Settings');
    const setting = active.kind === 'default' ? Settings.baseUrl : Settings.connections;
    void this.display
      .info(
        vscode.l10n.t(
          'Comfy Cloud: the connection "{0}" reaches the deployment "{1}" at {2}, its own host, no longer at {3} (an address the service does not have). Nothing to do; you can update the setting.',
          active.name,
          legacy.deploymentId,
          legacy.now,
          legacy.before,
        ),
        open,
      )
      .then(
        (choice) =>
          choice === open &&
          vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.${setting}`),
      );
    return true;
  }

  /** The old-form addresses logged in this session (`<name>\n<old URL>`). */
  private readonly legacyLogged = new Set<string>();

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
      .then(
        (choice) =>
          choice === open &&
          vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.${Settings.connections}`),
      );
    return true;
  }

  private async askUrl(prompt: string, value: string): Promise<string | undefined> {
    const url = await vscode.window.showInputBox({
      title: vscode.l10n.t('Comfy Cloud: Add Connection ({0}/{1})', 2, 3),
      prompt,
      value,
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
