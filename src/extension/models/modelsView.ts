import * as vscode from 'vscode';
import { neutralize } from '../../core/util';
import {
  groupModels,
  modelFilterDescription,
  presentModel,
  presentProvider,
  type ModelGroup,
  type RouterClient,
  type RouterService,
  type ModelEntry,
} from '../../core/router';
import { routerOrigin, type Config } from '../platform/config';
import { Commands, ContextKeys, ROUTER_SECRET_PREFIX, Settings } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';

/** A node of the Models view: a provider with its models, or one model. */
export type ModelNode = { kind: 'provider'; group: ModelGroup } | { kind: 'model'; entry: ModelEntry };

/**
 * The Models view (`comfyCloud.models`): the router catalog loaded page by page in the
 * background, shown as providers → models in the order served (src/core/modelTree.ts), filtered by text. Built at
 * the view's first display (extension.ts); the router key lives in SecretStorage per router origin
 * (`comfyCloud.routerKey:<origin>`), never in settings.
 */
export class ModelsView extends Disposable {
  private entries: ModelEntry[] = [];
  private filter = '';
  private loading: AbortController | undefined;
  private started = false;

  /**
   * @param router the model router's client (leased per load, never built here).
   * @param config `comfyCloud.routerUrl`: read, set by "Set Router Key", and followed.
   * @param secrets where the router key of each origin is stored (`comfyCloud.routerKey:<origin>`).
   */
  constructor(
    private readonly changed: vscode.EventEmitter<void>,
    private readonly view: () => vscode.TreeView<unknown>,
    private readonly router: Pick<RouterService, 'lease'>,
    private readonly config: Pick<Config, 'routerUrl' | 'setRouterUrl' | 'onDidChange'>,
    private readonly secrets: Pick<vscode.SecretStorage, 'store' | 'onDidChange'>,
    private readonly log: Log,
  ) {
    super();
    this.register(config.onDidChange(() => void this.refresh(), Settings.routerUrl));
    this.register(
      secrets.onDidChange((e) => {
        if (e.key.startsWith(ROUTER_SECRET_PREFIX)) void this.refresh();
      }),
    );
    this.register({ dispose: () => this.loading?.abort() });
  }

  /** The catalog entries loaded so far, in the order served (tests read it). */
  get loaded(): readonly ModelEntry[] {
    return this.entries;
  }

  /** Resolves when the current load ends. */
  done: Promise<void> = Promise.resolve();

  /** Where the current load is: `idle` (none yet, or no router set), `loading`, `done`, `failed` (tests read it). */
  state: 'idle' | 'loading' | 'done' | 'failed' = 'idle';

  /** Fires when the view's content changes. */
  get onDidChange(): vscode.Event<void> {
    return this.changed.event;
  }

  /** Stores `key` for the router at `origin` (SecretStorage; the view reloads on the change). */
  storeKey(origin: string, key: string): Thenable<void> {
    return this.secrets.store(ROUTER_SECRET_PREFIX + origin, key);
  }

  getChildren(node?: unknown): ModelNode[] {
    if (!this.started) {
      this.started = true;
      void this.refresh();
    }
    const n = node as ModelNode | undefined;
    if (!n) return groupModels(this.entries, this.filter).map((group) => ({ kind: 'provider', group }));
    return n.kind === 'provider' ? n.group.models.map((entry) => ({ kind: 'model', entry })) : [];
  }

  getTreeItem(node: unknown): vscode.TreeItem {
    const n = node as ModelNode;
    const model =
      n.kind === 'provider' ? presentProvider(n.group, vscode.l10n.t) : presentModel(n.entry, vscode.l10n.t);
    const item = new vscode.TreeItem(
      model.label,
      n.kind === 'provider' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.description = model.description;
    item.tooltip = new vscode.MarkdownString(model.tooltip);
    item.contextValue = n.kind === 'provider' ? 'modelProvider' : 'model';
    item.id = n.kind === 'provider' ? `provider:${n.group.provider}` : `model:${n.entry.id}`;
    if (n.kind === 'model') item.iconPath = new vscode.ThemeIcon('symbol-method');
    return item;
  }

  /** Reloads the catalog from its first page, in the background; the view shows each page as it arrives. */
  refresh(): Promise<void> {
    this.loading?.abort();
    const controller = (this.loading = new AbortController());
    this.entries = [];
    this.done = this.load(controller);
    return this.done;
  }

  private async load(controller: AbortController): Promise<void> {
    // A lease that fails (the service closed at deactivation, a bad router URL) shows as no router, logged.
    const lease = await this.router
      .lease()
      .catch(
        (e: unknown) =>
          void this.log.warn('models', `no router client: ${neutralize(e instanceof Error ? e.message : String(e))}`),
      );
    try {
      await this.show(controller, lease?.client);
    } finally {
      lease?.release();
    }
  }

  /** Shows the catalog `client` serves (nothing, when no router is configured), page by page. */
  private async show(controller: AbortController, client: RouterClient | undefined): Promise<void> {
    await vscode.commands.executeCommand('setContext', ContextKeys.routerReady, client !== undefined);
    const view = this.view();
    if (this.loading !== controller) return;
    if (!client) {
      this.state = 'idle';
      view.message = undefined;
      this.changed.fire();
      return;
    }
    this.state = 'loading';
    view.message = vscode.l10n.t('Loading models…');
    this.changed.fire();
    const batch: ModelEntry[] = [];
    try {
      for await (const entry of client.models({
        signal: controller.signal,
        onPage: () => this.flush(batch, controller),
      }))
        batch.push(entry);
      this.flush(batch, controller);
      if (this.loading !== controller) return;
      view.message = this.entries.length === 0 ? vscode.l10n.t('The router lists no models.') : undefined;
      this.state = 'done';
    } catch (e) {
      if (this.loading !== controller) return;
      this.flush(batch, controller);
      const message = neutralize(e instanceof Error ? e.message : String(e));
      this.log.warn('models', `loading the model catalog failed: ${message}`);
      view.message = vscode.l10n.t('Could not load the models: {0}', message);
      this.state = 'failed';
    }
    this.changed.fire();
  }

  /** Moves the entries received so far into the view (one change event per page). */
  private flush(batch: ModelEntry[], controller: AbortController): void {
    if (this.loading !== controller || batch.length === 0) return;
    this.entries.push(...batch.splice(0));
    if (this.view().message !== undefined)
      this.view().message = vscode.l10n.t('Loading models… {0} so far', this.entries.length);
    this.changed.fire();
  }

  /** Sets the text filter (empty clears it) and the view's "filtered: x" description. */
  setFilter(text: string): void {
    this.filter = text.trim();
    this.view().description = modelFilterDescription(this.filter, vscode.l10n.t) || undefined;
    this.changed.fire();
  }

  /** Asks for the router URL (when unset or invalid) and its key, then stores the key for that origin. */
  async setRouterKey(): Promise<void> {
    let url = this.config.routerUrl();
    if (!routerOrigin(url)) {
      const typed = await vscode.window.showInputBox({
        title: vscode.l10n.t('Model Router URL'),
        prompt: vscode.l10n.t('The base URL of the model router'),
        placeHolder: 'https://router.example.com',
        ignoreFocusOut: true,
        validateInput: (v) => (routerOrigin(v.trim()) ? undefined : vscode.l10n.t('Enter an http or https URL')),
      });
      if (typed === undefined) return;
      url = typed.trim();
      await this.config.setRouterUrl(url);
    }
    const origin = routerOrigin(url)!;
    const key = await vscode.window.showInputBox({
      title: vscode.l10n.t('Model Router Key'),
      prompt: vscode.l10n.t('The key for {0} (kept in the secret storage, sent only to this origin)', origin),
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('The key cannot be empty') : undefined),
    });
    if (key === undefined) return;
    await this.storeKey(origin, key.trim());
    await this.refresh();
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return {
      [Commands.setRouterKey]: () => this.setRouterKey(),
      [Commands.refreshModels]: () => this.refresh(),
      [Commands.filterModels]: async (text?: unknown) => {
        const value =
          typeof text === 'string'
            ? text
            : await vscode.window.showInputBox({
                title: vscode.l10n.t('Filter Models'),
                prompt: vscode.l10n.t('Text in a model id (empty: show all)'),
                value: this.filter,
              });
        if (value !== undefined) this.setFilter(value);
      },
    };
  }
}
