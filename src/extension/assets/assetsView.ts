import * as vscode from 'vscode';
import { AbortError, describeError, type JobState } from '../../core';
import { assetKey, presentAsset, type AssetItemModel } from '../../core/views';
import { outputRecord, type AssetRecord, type AssetRecords } from '../../core/state';
import type { Config } from '../platform/config';
import { ContextKeys, Views } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';

/** A node of the Assets tree: one remembered asset, by its stable key (base URL + asset id). Kept per key. */
export interface AssetsNode {
  readonly kind: 'asset';
  readonly key: string;
}

/** How long changes (a burst of record files written by the CLI) are gathered before the tree is told (ms). */
export const ASSETS_VIEW_DEBOUNCE_MS = 150;

/**
 * The Assets view's data: the assets this machine uploaded and the job outputs it
 * knows of, for the active connection's base URL, from the asset records in the state directory shared with the CLI
 * (core state/assetRecords.ts); the words of each item are the core's (assetTree.ts). The v2 contract has no asset
 * listing, so no request is made to show the view.
 *
 * It re-reads the records when asked (Refresh), when the view shows again, when a record file changes (an upload
 * from the CLI), and when the connection changes; it records the outputs of succeeded jobs the job service
 * announces. Items have stable ids (base URL + asset id), so the selection survives a refresh. Nothing is refreshed
 * while the view is hidden.
 */
export class AssetsTreeProvider extends Disposable implements vscode.TreeDataProvider<AssetsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<AssetsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  private records = new Map<string, AssetRecord>();
  private readonly nodes = new Map<string, AssetsNode>();
  private baseUrl: string | undefined;
  private loading: Promise<void> | undefined;
  private loaded = false;
  /**
   * Bumped by every reload and every remembered record: a read that began before a bump reads again, so neither a
   * reload nor a record stored meanwhile is lost to a listing taken before it.
   */
  private generation = 0;
  private visible = true;
  private dirtyWhileHidden = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Jobs whose outputs were recorded in this session: each is recorded once. */
  private readonly outputsRecorded = new Set<string>();
  /** The value {@link ContextKeys.noAssets} was last set to. */
  private noAssets: boolean | undefined;

  constructor(
    private readonly jobs: JobServiceHost,
    readonly store: AssetRecords,
    config: Config,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    this.register(config.onDidChange(() => this.reload()));
    this.register(jobs.onDidChangeJob((change) => void this.recordOutputs(change)));
    this.register({ dispose: () => this.timer && clearTimeout(this.timer) });
    this.watchStore();
  }

  /** Tells the provider whether the view shows: hidden, nothing refreshes; shown again, the records are re-read. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    if (visible && this.dirtyWhileHidden) {
      this.dirtyWhileHidden = false;
      this.reload();
    }
  }

  /** Reads the records again (the Refresh button). Resolves when the tree holds them. */
  async refresh(): Promise<void> {
    this.generation++;
    this.loaded = false;
    await this.load();
    this.changed.fire(undefined);
  }

  /** The items of the tree now (for tests). */
  async model(): Promise<AssetItemModel[]> {
    await this.load();
    return [...this.records.values()].map((r) => this.present(r));
  }

  /** Whether the shown connection's API has assets (`capabilities.assets`; undefined before the first load). */
  get connectionHasAssets(): boolean | undefined {
    return this.noAssets === undefined ? undefined : !this.noAssets;
  }

  /** The base URL the view shows the assets of (once loaded). */
  get activeBaseUrl(): string | undefined {
    return this.baseUrl;
  }

  /** The record of a node, of an asset id (of the shown server), or undefined. */
  recordOf(node: AssetsNode | string | undefined): AssetRecord | undefined {
    if (node === undefined) return undefined;
    if (typeof node === 'string') return [...this.records.values()].find((r) => r.assetId === node);
    return this.records.get(node.key);
  }

  /** Stores a record (an upload, a download's path) and shows it at once when it belongs to the shown server. */
  async remember(record: AssetRecord): Promise<void> {
    await this.store.put(record);
    this.generation++;
    if (this.baseUrl === undefined || record.baseUrl !== this.baseUrl) return;
    const key = assetKey(record);
    // Newest first, as the store lists them.
    this.records = new Map([[key, record], ...[...this.records].filter(([k]) => k !== key)]);
    this.schedule();
  }

  /** Forgets a record (the asset was deleted, or is gone from the server) and takes it out of the view. */
  async forget(record: AssetRecord): Promise<void> {
    // A record made from another view's output (no base URL known) was never stored.
    if (record.baseUrl) await this.store.remove(record.baseUrl, record.assetId);
    if (this.records.delete(assetKey(record))) this.schedule();
  }

  getChildren(node?: AssetsNode): Promise<AssetsNode[]> | AssetsNode[] {
    if (node) return [];
    return this.load().then(() => [...this.records.keys()].map((key) => this.nodeOf(key)));
  }

  getTreeItem(node: AssetsNode): vscode.TreeItem {
    const record = this.records.get(node.key);
    if (!record) return new vscode.TreeItem(vscode.l10n.t('(gone)'));
    const model = this.present(record);
    const item = new vscode.TreeItem(model.label, vscode.TreeItemCollapsibleState.None);
    item.id = model.id;
    item.description = model.description;
    item.iconPath = new vscode.ThemeIcon(
      model.icon.id,
      model.icon.color ? new vscode.ThemeColor(model.icon.color) : undefined,
    );
    item.contextValue = model.contextValue;
    // Markdown without HTML, themes' icons or command links: the server's words are escaped in the model.
    item.tooltip = new vscode.MarkdownString(model.tooltip, false);
    item.accessibilityInformation = { label: model.accessibilityLabel };
    return item;
  }

  private present(record: AssetRecord): AssetItemModel {
    return presentAsset(record, { t: vscode.l10n.t, clean: (s) => this.display.text(s) });
  }

  private nodeOf(key: string): AssetsNode {
    let node = this.nodes.get(key);
    if (!node) this.nodes.set(key, (node = { kind: 'asset', key }));
    return node;
  }

  /** The first load (shared), or a reload after `refresh`. Never rejects: failures are logged, the view shows empty. */
  private load(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    this.loading ??= this.read()
      .catch((err: unknown) => {
        if (!AbortError.is(err)) this.log.warn('assets-view', `cannot read the assets: ${describeError(err)}`);
      })
      .finally(() => {
        this.loaded = true;
        this.loading = undefined;
      });
    return this.loading;
  }

  /**
   * Reads the records of the active connection's base URL (as its client writes it: no request is made), and tells
   * the welcome view whether that connection's API has assets at all (`capabilities.assets`: the context key
   * {@link ContextKeys.noAssets}; the view then says where the outputs of its jobs are instead).
   */
  private async read(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const generation = this.generation;
      const { baseUrl, assets } = await this.jobs.service.use(async (lease) => ({
        baseUrl: lease.backend.baseUrl,
        assets: lease.backend.capabilities.assets,
      }));
      this.setNoAssets(!assets);
      const records = await this.store.list(baseUrl);
      // A reload or a record stored while listing: list again (bounded: a store that changes without pause is
      // shown as last read, and its watcher reloads again).
      if (generation !== this.generation && attempt < 5) continue;
      this.baseUrl = baseUrl;
      this.records = new Map(records.map((r) => [assetKey(r), r]));
      return;
    }
  }

  /** Sets {@link ContextKeys.noAssets} when it changes (the welcome view follows it). */
  private setNoAssets(noAssets: boolean): void {
    if (noAssets === this.noAssets) return;
    this.noAssets = noAssets;
    vscode.commands
      .executeCommand('setContext', ContextKeys.noAssets, noAssets)
      .then(undefined, (err: unknown) => this.log.warn('assets-view', `setContext failed: ${String(err)}`));
  }

  /** Marks the records stale and refreshes the tree (which re-reads them), or waits until the view shows. */
  private reload(): void {
    this.generation++;
    this.loaded = false;
    this.schedule();
  }

  /**
   * Records the outputs of a succeeded job of the shown server (once per job): they are assets this machine knows. Only
   * where the outputs of the job's API are assets (`capabilities.assets`); elsewhere they are files with no asset id to
   * download, reference or delete.
   */
  private async recordOutputs(change: JobState): Promise<void> {
    const { job, baseUrl } = change;
    if (!change.capabilities.assets) return;
    if (job.status !== 'succeeded' || job.outputs.length === 0 || this.outputsRecorded.has(`${baseUrl} ${job.id}`))
      return;
    this.outputsRecorded.add(`${baseUrl} ${job.id}`);
    try {
      for (const output of job.outputs) {
        // A record already there (e.g. with the path it was downloaded to) is kept.
        if (await this.store.get(baseUrl, output.id)) continue;
        await this.remember(outputRecord(baseUrl, job.id, output, job.expiresAt, 'vscode'));
      }
    } catch (err) {
      this.log.warn('assets-view', `cannot remember the outputs of job ${job.id}: ${describeError(err)}`);
    }
  }

  /** Re-reads the records when a record file changes (an upload from the CLI, another window). */
  private watchStore(): void {
    try {
      const pattern = new vscode.RelativePattern(vscode.Uri.file(this.store.folder), '*.json');
      const watcher = this.register(vscode.workspace.createFileSystemWatcher(pattern));
      const onChange = (): void => this.reload();
      this.register(watcher.onDidCreate(onChange));
      this.register(watcher.onDidChange(onChange));
      this.register(watcher.onDidDelete(onChange));
    } catch (err) {
      // Without a watcher the view still refreshes when shown and on Refresh.
      this.log.info('assets-view', `not watching the asset records: ${describeError(err)}`);
    }
  }

  /** One debounced refresh of the whole tree, while visible. */
  private schedule(): void {
    if (!this.visible) {
      this.dirtyWhileHidden = true;
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (!this.visible) {
        this.dirtyWhileHidden = true;
        return;
      }
      this.changed.fire(undefined);
    }, ASSETS_VIEW_DEBOUNCE_MS);
  }
}

/** The Assets view (`comfyCloud.assets`): its provider, told when the view shows or hides. */
export class AssetsView extends Disposable {
  readonly provider: AssetsTreeProvider;
  readonly view: vscode.TreeView<AssetsNode>;

  constructor(jobs: JobServiceHost, store: AssetRecords, config: Config, display: Display, log: Log) {
    super();
    this.provider = this.register(new AssetsTreeProvider(jobs, store, config, display, log));
    this.view = this.register(vscode.window.createTreeView(Views.assets, { treeDataProvider: this.provider }));
    this.provider.setVisible(this.view.visible);
    this.register(this.view.onDidChangeVisibility((e) => this.provider.setVisible(e.visible)));
  }
}
