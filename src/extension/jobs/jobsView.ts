import * as vscode from 'vscode';
import {
  downloadJobOutput,
  AbortError,
  describeError,
  HiddenJobs,
  RECENT_PAGE_SIZE,
  buildJobTree,
  entryKey,
  groupAccessibilityLabel,
  groupLabel,
  groupOf,
  hasMoreJobs,
  isEndedStatus,
  jobChildren,
  liveEntry,
  mergeEntries,
  needsFollow,
  presentEntry,
  presentBatch,
  savedOutputPath,
  type Job,
  type JobChildModel,
  type JobEntry,
  type JobFollow,
  type JobItemModel,
  type JobOutput,
  type JobRecord,
  type JobState,
  type JobTreeModel,
  type StateStore,
  type BatchItemModel,
  type BatchRecord,
  type BatchStore,
  type BatchView,
} from '../../core';
import { Commands, Views } from '../platform/constants';
import type { Config } from '../platform/config';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';
import type { OutputLocations } from '../platform/outputs';

/**
 * A node of the Jobs tree. Job and output nodes are kept (same object per id) so refreshes can name them. `detail`:
 * a job's workflow, logs or error child; `more`: the trailing "Load more…" of Recent; `batch`: a batch, its jobs beneath.
 */
export type JobsNode =
  | { readonly kind: 'group'; readonly group: 'running' | 'recent' }
  | { readonly kind: 'batch'; readonly batchId: string }
  | { readonly kind: 'job'; readonly key: string }
  | { readonly kind: 'output'; readonly key: string; readonly output: JobOutput }
  | { readonly kind: 'detail'; readonly key: string; readonly detail: 'workflow' | 'logs' | 'error' }
  | { readonly kind: 'more' };

/** How long batch events are gathered before the batch records are read again (ms): a burst is one read. */
export const BATCH_RECORDS_DEBOUNCE_MS = 150;

/** How many jobs of the server's listing are read at first, and how many more each "Load more…" asks for. */
export const LISTING_PAGE_SIZE = 50;

const RUNNING: JobsNode = { kind: 'group', group: 'running' };
const RECENT: JobsNode = { kind: 'group', group: 'recent' };
const MORE: JobsNode = { kind: 'more' };

/** What the Jobs view reads of the batches (the BatchService and the batch records). */
export interface BatchSource {
  /** The batch records (the state folder shared with the CLI). */
  readonly store: BatchStore;
  /** True while a runner of this window runs the batch. */
  isRunning(batchId: string): boolean;
  /** Fires with a batch id whose state changed (a job submitted or ended, the batch canceled, a run started or ended). */
  readonly onDidChange: vscode.Event<string>;
}

/** What the view keeps of a job: which job it is (its server, its id) and its remembered submission; never its state. */
interface Shown {
  readonly baseUrl: string;
  readonly jobId: string | undefined;
  record?: JobRecord;
}

/**
 * The Jobs view's data: the jobs submitted from this machine (the state store,
 * shared with the CLI) for the configured server, plus the server's listing where it has one, grouped Running /
 * Recent; the words of each item are the core's (jobTree.ts).
 *
 * One source: each job's state (its status, progress, outputs, the outage its watch rides out) is the job service's
 * ({@link JobService.state}), read when an item is drawn and when the running jobs are counted; the view keeps which
 * jobs it shows and their records, no copy of a job. It follows every running job it shows (one shared watch per job;
 * the follow is released when the job ends or the view is disposed) and redraws on the service's
 * `onDidChangeJobState` in the same tick: the changed items (the whole tree when a job moves between groups or
 * appears), the badge and the status bar's count together, so they never lag the monitor or the contact sheet, which
 * read the same state. Nothing is redrawn while the view is hidden: one refresh when it shows again. Items have stable
 * ids (base URL + job id), so selection and expansion survive.
 */
export class JobsTreeProvider extends Disposable implements vscode.TreeDataProvider<JobsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<JobsNode | JobsNode[] | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly badgeChanged = this.register(new vscode.EventEmitter<number>());
  /**
   * The count of the active connection's running jobs ({@link runningCount}), whenever it changes, in the tick the job
   * service's state changed: the view's badge, and the status bar's count (connectionStatus.ts), so the two always agree.
   */
  readonly onDidChangeBadge = this.badgeChanged.event;

  /** The jobs shown (newest first), by item key ({@link entryKey}). */
  private shown = new Map<string, Shown>();
  /** The group of each job at the last redraw: a job that moves (or appears) makes the whole tree redraw. */
  private drawnGroup = new Map<string, 'running' | 'recent'>();
  private readonly jobNodes = new Map<string, JobsNode & { kind: 'job' }>();
  private readonly outputNodes = new Map<string, JobsNode & { kind: 'output' }>();
  private readonly detailNodes = new Map<string, JobsNode & { kind: 'detail' }>();
  /** Jobs removed from the list that the server still lists (hidden for the session, or until they change). */
  private readonly hidden = new HiddenJobs();
  /** How many Recent jobs are shown, and how long a listing page is asked for ("Load more…" grows both). */
  private recentLimit = RECENT_PAGE_SIZE;
  private listingLimit = LISTING_PAGE_SIZE;
  /** The last listing's paging: the limit asked, how many came, whether the server said there are more. */
  private listing: { limit: number; returned: number; truncated: boolean } | undefined;
  private readonly follows = new Map<string, JobFollow>();
  private baseUrl: string | undefined;
  private loading: Promise<void> | undefined;
  private loaded = false;
  /** Bumped by every reset: a read started before it (another connection's jobs) is dropped when it ends. */
  private generation = 0;
  private visible = true;
  /**
   * Changed job keys waiting for the end of this tick's changes; `whole` when the tree's shape changed (a job appeared
   * or moved between groups: the groups' and batches' counts change with it).
   */
  private pending = new Set<string>();
  private whole = false;
  private flushing = false;
  private dirtyWhileHidden = false;
  /** The count last told through {@link onDidChangeBadge} (-1: none yet); the count itself is read from the states. */
  private toldBadge = -1;
  /** The state last told by `onDidChangeJob`: the same one told again by `onDidChangeJobState` is not news. */
  private lastJobChange: JobState | undefined;
  private batchSource: BatchSource | undefined;
  /** The batch records read with the jobs (every server's; the tree shows the shown server's). */
  private batchRecords: BatchRecord[] = [];
  private readonly batchNodes = new Map<string, JobsNode & { kind: 'batch' }>();
  private batchTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly jobs: JobServiceHost,
    private readonly store: StateStore,
    private readonly config: Config,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    // The job's changes as soon as they are told (before the state's listeners, the status bar's count with them);
    // the state's other changes (an outage begun or ended) too.
    this.register(jobs.onDidChangeJob((change) => this.onState((this.lastJobChange = change))));
    this.register(jobs.onDidChangeJobState((change) => change !== this.lastJobChange && this.onState(change)));
    this.register(config.onDidChange(() => this.reset()));
    // Records past their job's expires_at are dropped at start (and on every load), shown or not.
    void store.prune().catch((err: unknown) => log.warn('jobs-view', `pruning expired jobs failed: ${describeError(err)}`));
    this.register({
      dispose: () => {
        this.stopAll();
        if (this.batchTimer) clearTimeout(this.batchTimer);
      },
    });
  }

  /**
   * Shows batches: each as one item with its jobs beneath (never also loose). Their counts are their jobs' states (the
   * job service's); the batch records are read again on `source`'s changes, once per {@link BATCH_RECORDS_DEBOUNCE_MS}.
   */
  attachBatches(source: BatchSource): void {
    this.batchSource = source;
    this.register(source.onDidChange(() => this.batchChanged()));
    if (this.loaded) this.batchChanged();
  }

  /** The item of batch `batchId` as the tree shows it now (undefined: not a batch of the shown server). */
  async batchModel(batchId: string): Promise<BatchItemModel | undefined> {
    await this.load();
    const tree = this.tree();
    return [...tree.runningBatches, ...tree.recentBatches].find((b) => b.batchId === batchId);
  }

  /** Reads the records (jobs and batches) again soon, once for a burst of batch events; the tree refreshes after. */
  private batchChanged(): void {
    this.batchTimer ??= setTimeout(() => {
      this.batchTimer = undefined;
      void this.reloadBatches();
    }, BATCH_RECORDS_DEBOUNCE_MS);
  }

  /**
   * Reads the batch records and the job records of batches again: a variation's job just submitted by a runner (no
   * watch event of the job service names it) is added, a record's new last status is taken.
   */
  private async reloadBatches(): Promise<void> {
    if (!this.loaded || this.baseUrl === undefined) return;
    const baseUrl = this.baseUrl;
    try {
      const [batches, records] = await Promise.all([this.batchSource?.store.list() ?? Promise.resolve([]), this.store.list()]);
      if (baseUrl !== this.baseUrl) return;
      this.batchRecords = batches;
      for (const record of records) {
        if (record.baseUrl !== baseUrl || record.batchId === undefined) continue;
        const key = entryKey({ baseUrl, jobId: record.jobId, record });
        // A submission read while pending gives way to its job's entry.
        if (record.jobId) this.shown.delete(entryKey({ baseUrl, jobId: undefined, record }));
        const shown = this.shown.get(key);
        if (shown) shown.record = record;
        else this.shown.set(key, { baseUrl, jobId: record.jobId, record });
      }
      this.schedule(undefined);
      this.updateFollows();
    } catch (err) {
      this.log.warn('jobs-view', `cannot read the batches: ${describeError(err)}`);
    }
  }

  /**
   * How many of the active connection's jobs run now (the badge's count; 0 before the first load), counted from the
   * job service's states at the moment it is read.
   */
  get runningCount(): number {
    let running = 0;
    for (const entry of this.entriesNow()) if (groupOf(entry) === 'running') running++;
    return running;
  }

  /**
   * Reads the jobs in the background (the store and the server's listing), so the badge and the status bar count the
   * running ones from start-up, before the view is first shown. Never rejects (failures are logged by the load).
   */
  start(): void {
    void this.load();
  }

  /** Tells the provider whether the view shows: hidden, nothing refreshes; shown again, one refresh if needed. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    if (visible && this.dirtyWhileHidden) {
      this.dirtyWhileHidden = false;
      this.pending.clear();
      this.whole = false;
      this.changed.fire(undefined);
    }
  }

  /** Reads the store and the server's listing again (the Refresh button). Resolves when the tree holds them. */
  async refresh(): Promise<void> {
    this.loaded = false;
    await this.load();
    this.schedule(undefined);
  }

  /** The model of the tree now (for tests and the badge). Starts the first load if not yet done. */
  async model(): Promise<JobTreeModel & { more: boolean }> {
    await this.load();
    const tree = this.tree();
    return { ...tree, more: hasMoreJobs(tree, this.listing) };
  }

  /** The entry of a job node (or of an output or detail node's job), or of a job id, as it stands now. */
  entryOf(node: JobsNode | string): JobEntry | undefined {
    if (typeof node === 'string') {
      const shown = [...this.shown.values()].find((e) => e.jobId === node);
      return shown && this.entry(shown);
    }
    return node.kind === 'group' || node.kind === 'more' || node.kind === 'batch' ? undefined : this.entryOfKey(node.key);
  }

  /** The entry of the job whose item key ({@link entryKey}) is `key`, as it stands now. */
  entryOfKey(key: string): JobEntry | undefined {
    const shown = this.shown.get(key);
    return shown && this.entry(shown);
  }

  /** Every entry shown or known (for Clear Finished), as they stand now. */
  allEntries(): JobEntry[] {
    return this.entriesNow();
  }

  /** A job as it stands now: what the view keeps of it, with the job service's state (the one source). */
  private entry(shown: Shown, now = Date.now()): JobEntry {
    return liveEntry(shown, shown.jobId === undefined ? undefined : this.jobs.service.state(shown.baseUrl, shown.jobId), now);
  }

  /** Every job shown, as they stand now, in order. */
  private entriesNow(): JobEntry[] {
    const now = Date.now();
    return [...this.shown.values()].map((s) => this.entry(s, now));
  }

  async getChildren(node?: JobsNode): Promise<JobsNode[]> {
    if (!node) {
      await this.load();
      // No job at all: no root, so the view's welcome content (connect, sample, submit) shows instead.
      return this.shown.size === 0 && this.shownBatches().length === 0 ? [] : [RUNNING, RECENT];
    }
    if (node.kind === 'group') {
      await this.load();
      const tree = this.tree();
      const batches = (node.group === 'running' ? tree.runningBatches : tree.recentBatches).map((b) => this.batchNode(b.batchId));
      const jobs = (node.group === 'running' ? tree.running : tree.recent).map((item) => this.jobNode(item.id));
      return node.group === 'recent' && hasMoreJobs(tree, this.listing) ? [...batches, ...jobs, MORE] : [...batches, ...jobs];
    }
    if (node.kind === 'batch') {
      const batch = this.batchItem(node.batchId);
      return batch ? batch.jobs.map((j) => this.jobNode(j.id)) : [];
    }
    if (node.kind === 'job') {
      const entry = this.entryOfKey(node.key);
      if (!entry) return [];
      return this.childrenOf(entry).map((c) => (c.output ? this.outputNode(node.key, c.output) : this.detailNode(node.key, c.kind as 'workflow' | 'logs' | 'error')));
    }
    return [];
  }

  /** The parent of a node (for `TreeView.reveal`): a job's group, an output's or detail's job. */
  getParent(node: JobsNode): JobsNode | undefined {
    if (node.kind === 'more') return RECENT;
    if (node.kind === 'output' || node.kind === 'detail') return this.jobNode(node.key);
    if (node.kind === 'batch') return this.batchItem(node.batchId)?.group === 'recent' ? RECENT : RUNNING;
    if (node.kind !== 'job') return undefined;
    const entry = this.entryOfKey(node.key);
    const batchId = entry?.record?.batchId;
    if (batchId !== undefined && this.shownBatches().some((b) => b.batch.batchId === batchId)) return this.batchNode(batchId);
    return entry ? (groupOf(entry) === 'running' ? RUNNING : RECENT) : undefined;
  }

  /** The job node of a job id shown now (for `TreeView.reveal`), if any. */
  nodeOfJob(jobId: string): JobsNode | undefined {
    const entry = this.entryOf(jobId);
    return entry ? this.jobNode(entryKey(entry)) : undefined;
  }

  getTreeItem(node: JobsNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const tree = this.tree();
      const count = node.group === 'running' ? tree.running.length + tree.runningBatches.length : tree.recentTotal + tree.recentBatches.length;
      const item = new vscode.TreeItem(groupLabel(node.group, vscode.l10n.t), vscode.TreeItemCollapsibleState.Expanded);
      item.id = `${this.baseUrl ?? ''} group:${node.group}`;
      item.description = String(count);
      item.contextValue = `group:${node.group}`;
      item.accessibilityInformation = { label: groupAccessibilityLabel(node.group, count, vscode.l10n.t), role: 'treeitem' };
      return item;
    }
    if (node.kind === 'more') {
      const item = new vscode.TreeItem(vscode.l10n.t('Load more…'), vscode.TreeItemCollapsibleState.None);
      item.id = `${this.baseUrl ?? ''} group:recent:more`;
      item.iconPath = new vscode.ThemeIcon('ellipsis');
      item.contextValue = 'loadMore';
      item.command = { command: Commands.loadMoreJobs, title: vscode.l10n.t('Load more…') };
      item.accessibilityInformation = { label: vscode.l10n.t('Load more jobs'), role: 'button' };
      return item;
    }
    if (node.kind === 'batch') {
      const batch = this.batchItem(node.batchId);
      if (!batch) return new vscode.TreeItem(vscode.l10n.t('(gone)'));
      return modelItem(batch, vscode.TreeItemCollapsibleState.Collapsed);
    }
    const entry = this.entryOfKey(node.key);
    if (node.kind === 'output' || node.kind === 'detail') {
      const child = entry && this.childrenOf(entry).find((c) => (node.kind === 'output' ? c.output?.id === node.output.id : c.kind === node.detail));
      if (!child) return new vscode.TreeItem(vscode.l10n.t('(gone)'));
      const item = new vscode.TreeItem(child.label, vscode.TreeItemCollapsibleState.None);
      item.id = child.id;
      item.iconPath = new vscode.ThemeIcon(child.icon);
      item.description = child.description;
      item.contextValue = child.contextValue;
      item.accessibilityInformation = { label: [child.label, child.description].filter(Boolean).join(', ') };
      const command =
        node.kind === 'output'
          ? Commands.openOutput
          : node.detail === 'workflow'
            ? Commands.openJobWorkflow
            : node.detail === 'logs'
              ? Commands.openJobLogs
              : Commands.openJobError;
      item.command = { command, title: vscode.l10n.t('Open'), arguments: [node] };
      return item;
    }
    if (!entry) return new vscode.TreeItem(vscode.l10n.t('(gone)'));
    // A batch's job is labelled by its variation's label (the batch's model says it).
    const batchId = entry.record?.batchId;
    const model = (batchId !== undefined ? this.batchItem(batchId)?.jobs.find((j) => j.id === node.key) : undefined) ?? this.present(entry);
    return modelItem(model, model.children.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  }

  /**
   * "Load more…": shows {@link RECENT_PAGE_SIZE} more Recent jobs and, when the server's listing was truncated, asks
   * for a page {@link LISTING_PAGE_SIZE} longer (the listing has no cursor, only `limit`). Resolves when the tree holds
   * them.
   */
  async loadMore(): Promise<void> {
    this.recentLimit += RECENT_PAGE_SIZE;
    if (this.listing?.truncated) {
      this.listingLimit = this.listing.limit + LISTING_PAGE_SIZE;
      this.loaded = false;
      await this.load();
    }
    this.schedule(undefined);
  }

  /**
   * Removes jobs from the list: each one's record is forgotten from the state store (shared with the CLI), and a job
   * the server still lists is hidden for the session or until it changes. Returns how many were removed (Clear
   * Finished and Remove from List shrink the list).
   * @throws ComfyError `state_locked` when a record stays locked by another process (the others are removed).
   */
  async remove(entries: readonly JobEntry[]): Promise<number> {
    let removed = 0;
    let failure: unknown;
    for (const entry of entries) {
      const key = entryKey(entry);
      try {
        if (entry.record) await this.store.forget(entry.record.idempotencyKey);
      } catch (err) {
        failure ??= err;
        continue;
      }
      if (entry.jobId) this.hidden.hide(key, entry.job);
      const follow = this.follows.get(key);
      follow?.dispose();
      this.follows.delete(key);
      if (this.shown.delete(key)) removed++;
    }
    if (removed > 0) this.schedule(undefined);
    if (failure !== undefined) throw failure;
    return removed;
  }

  private tree(): JobTreeModel {
    return buildJobTree(this.entriesNow(), { clean: (t) => this.display.text(t), now: Date.now(), t: vscode.l10n.t, recentLimit: this.recentLimit, batches: this.shownBatches() });
  }

  /** The batches of the shown server, each with whether a runner of this window runs it. */
  private shownBatches(): BatchView[] {
    const source = this.batchSource;
    if (!source || this.baseUrl === undefined) return [];
    return this.batchRecords.filter((b) => b.baseUrl === this.baseUrl).map((batch) => ({ batch, running: source.isRunning(batch.batchId) }));
  }

  /** The model of one shown batch's item. */
  private batchItem(batchId: string): BatchItemModel | undefined {
    const view = this.shownBatches().find((b) => b.batch.batchId === batchId);
    if (!view) return undefined;
    const entries = this.entriesNow().filter((e) => e.record?.batchId === batchId);
    return presentBatch(view, entries, { clean: (t) => this.display.text(t), now: Date.now(), t: vscode.l10n.t });
  }

  private batchNode(batchId: string): JobsNode {
    let node = this.batchNodes.get(batchId);
    if (!node) this.batchNodes.set(batchId, (node = { kind: 'batch', batchId }));
    return node;
  }

  private childrenOf(entry: JobEntry): JobChildModel[] {
    return jobChildren(entry, { clean: (t) => this.display.text(t), now: Date.now(), t: vscode.l10n.t });
  }

  private present(entry: JobEntry): JobItemModel {
    return presentEntry(entry, { clean: (t) => this.display.text(t), now: Date.now(), t: vscode.l10n.t });
  }

  private detailNode(key: string, detail: 'workflow' | 'logs' | 'error'): JobsNode {
    const id = `${key} ${detail}`;
    let node = this.detailNodes.get(id);
    if (!node) this.detailNodes.set(id, (node = { kind: 'detail', key, detail }));
    return node;
  }

  private jobNode(key: string): JobsNode {
    let node = this.jobNodes.get(key);
    if (!node) this.jobNodes.set(key, (node = { kind: 'job', key }));
    return node;
  }

  private outputNode(key: string, output: JobOutput): JobsNode {
    const id = `${key} ${output.id}`;
    let node = this.outputNodes.get(id);
    if (!node || node.output !== output) this.outputNodes.set(id, (node = { kind: 'output', key, output }));
    return node;
  }

  /** The first load (shared), or a reload after `refresh`/`reset`. Never rejects: failures are logged. */
  private load(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    if (this.loading) return this.loading;
    const generation = this.generation;
    const loading = this.read(generation)
      .then(
        () => {
          if (generation !== this.generation) return;
          this.loaded = true;
          // A job heard of while the store was read (its events came before `loaded`) left its pending submission
          // read as such, with no later event to replace it: the records are read again once.
          if (this.hasSubmissionWithoutJob()) void this.mergeRecords();
        },
        (err: unknown) => {
          if (!AbortError.is(err)) this.log.warn('jobs-view', `cannot read the jobs: ${describeError(err)}`);
          if (generation === this.generation) this.loaded = true; // shown empty; Refresh tries again
        },
      )
      .finally(() => {
        if (this.loading === loading) this.loading = undefined;
      });
    this.loading = loading;
    return loading;
  }

  /** Reads the store (this server's records, expired ones pruned) and the server's listing, then follows running jobs. */
  private async read(generation: number): Promise<void> {
    await this.store.prune().catch(() => 0);
    // The listing goes through the lease's backend: each listed job's state is the job service's from then on.
    const { baseUrl, listing, page } = await this.jobs.service.use(async (lease) => {
      const { backend } = lease;
      let jobs: Job[] = [];
      const limit = this.listingLimit;
      let shape: typeof this.listing;
      // An API that lists no jobs (capabilities.list): the remembered ones are shown alone, nothing is asked.
      if (!backend.capabilities.list) return { baseUrl: backend.baseUrl, listing: jobs, page: shape };
      try {
        const page = await backend.list({ limit, signal: lease.signal });
        jobs = page.jobs;
        shape = { limit, returned: page.jobs.length, truncated: page.truncated };
      } catch (err) {
        // Not every surface lists jobs: the remembered ones are shown alone.
        if (AbortError.is(err)) throw err;
        this.log.info('jobs-view', `no job listing from the server (${describeError(err)})`);
      }
      return { baseUrl: backend.baseUrl, listing: jobs, page: shape };
    });
    const records = await this.store.list();
    const batches = (await this.batchSource?.store.list().catch(() => [])) ?? [];
    // The connection changed while this read ran: its jobs are another server's, and the next look reads anew.
    if (generation !== this.generation) return;
    this.listing = page;
    if (this.baseUrl !== undefined && this.baseUrl !== baseUrl) {
      this.stopAll();
      this.shown.clear();
    }
    this.baseUrl = baseUrl;
    this.batchRecords = batches;
    // Which jobs show, and in which order (records past expires_at are left out even when the prune could not drop
    // them); what each one is comes from the job service when it is drawn.
    const merged = mergeEntries(baseUrl, records, listing, new Map(this.entriesNow().map((e) => [entryKey(e), e])), { now: Date.now(), hidden: this.hidden });
    this.shown = new Map(merged.map((e) => [entryKey(e), { baseUrl: e.baseUrl, jobId: e.jobId, record: e.record }]));
    this.schedule(undefined);
    this.updateFollows();
  }

  /** Forgets everything (the base URL or key changed) and reloads on the next look. */
  private reset(): void {
    this.generation++;
    this.loading = undefined;
    this.stopAll();
    this.shown.clear();
    this.drawnGroup = new Map();
    this.loaded = false;
    this.baseUrl = undefined;
    this.listing = undefined;
    this.recentLimit = RECENT_PAGE_SIZE;
    this.listingLimit = LISTING_PAGE_SIZE;
    this.schedule(undefined);
  }

  /**
   * The job service's state of a job changed (its job, its outage): the badge and the status bar's count follow at
   * once, the active connection's job is redrawn in this tick (its item; the whole tree when it appears or moves
   * between groups).
   */
  private onState(change: JobState): void {
    // Only the active connection's jobs: before the first load (or after a switch) its base URL comes from settings.
    if (change.baseUrl !== (this.baseUrl ?? this.activeBaseUrl())) return;
    const key = entryKey({ baseUrl: change.baseUrl, jobId: change.job.id });
    // A job removed from the list stays out until it changes.
    if (this.hidden.isHidden(key, change.job)) return;
    const shown = this.shown.get(key);
    if (!shown) {
      // A job just submitted (from this window), or read: shown at once; its record (workflow file) is read in the
      // background.
      this.shown = new Map([[key, { baseUrl: change.baseUrl, jobId: change.job.id }], ...this.shown]);
      this.schedule(undefined);
      if (this.loaded) void this.mergeRecords();
    } else {
      this.schedule(this.drawnGroup.get(key) === groupOf(this.entry(shown)) ? key : undefined);
      // A read of the store may have caught this job's submission still pending (no job id yet): that entry, keyed by
      // its Idempotency-Key, would stay under Running forever; the records are read again to let it give way.
      if (this.loaded && !shown.record && this.hasSubmissionWithoutJob()) void this.mergeRecords();
    }
    this.updateFollows();
    this.tellBadge();
  }

  /** True when an entry is a remembered submission without a job id yet (keyed by its Idempotency-Key). */
  private hasSubmissionWithoutJob(): boolean {
    for (const shown of this.shown.values()) if (shown.jobId === undefined) return true;
    return false;
  }

  /** The active connection's base URL, or undefined when the settings are unusable. */
  private activeBaseUrl(): string | undefined {
    try {
      return this.config.surface().baseUrl;
    } catch {
      return undefined;
    }
  }

  /**
   * Joins the store's records to entries that have none yet (e.g. a job just submitted), and replaces the entry of a
   * submission read while pending (keyed by its Idempotency-Key) by its job's once its record has the job id: one
   * entry per job, and no pending ghost counted under Running.
   */
  private async mergeRecords(): Promise<void> {
    try {
      const records = await this.store.list();
      let reshaped = false;
      for (const record of records) {
        if (!record.jobId) continue;
        const key = entryKey({ baseUrl: record.baseUrl, jobId: record.jobId });
        const pending = entryKey({ baseUrl: record.baseUrl, jobId: undefined, record });
        if (this.shown.delete(pending)) {
          reshaped = true;
          if (!this.shown.has(key)) this.shown.set(key, { baseUrl: record.baseUrl, jobId: record.jobId, record });
        }
        const shown = this.shown.get(key);
        if (shown && !shown.record) {
          shown.record = record;
          this.schedule(key);
        }
      }
      if (reshaped) {
        this.schedule(undefined);
        this.updateFollows();
      }
    } catch (err) {
      this.log.warn('jobs-view', `cannot read the remembered jobs: ${describeError(err)}`);
    }
  }

  /** Follows every running job shown that is not followed yet; the follow ends with the job (or the view). */
  private updateFollows(): void {
    const now = Date.now();
    for (const [key, shown] of this.shown) {
      if (this.follows.has(key) || shown.jobId === undefined || !needsFollow(this.entry(shown, now))) continue;
      const jobId = shown.jobId;
      // The job's end comes as its state, like every change of it: the follow only keeps the one watch going.
      const follow = this.jobs.service.follow(jobId);
      this.follows.set(key, follow);
      follow.done.then(
        () => undefined,
        (err: unknown) => {
          if (!AbortError.is(err)) this.log.warn('jobs-view', `job ${this.display.text(jobId)}: ${describeError(err)}`);
        },
      ).finally(() => {
        if (this.follows.get(key) === follow) this.follows.delete(key);
      });
    }
  }

  private stopAll(): void {
    for (const follow of this.follows.values()) follow.dispose();
    this.follows.clear();
  }

  /**
   * Gathers a change (a job key, or undefined for the whole tree) and redraws at the end of this tick's changes (a
   * microtask: a listing's burst of states is one redraw, still in the tick they changed): the tree while visible, and
   * the badge and the status bar's count if they changed.
   */
  private schedule(key: string | undefined): void {
    if (key === undefined) this.whole = true;
    else this.pending.add(key);
    if (this.flushing) return;
    this.flushing = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    const whole = this.whole;
    const pending = [...this.pending.keys()].map((k) => this.jobNode(k));
    this.whole = false;
    this.pending.clear();
    if (!this.visible) this.dirtyWhileHidden = this.dirtyWhileHidden || whole || pending.length > 0;
    else if (whole) this.changed.fire(undefined);
    else if (pending.length > 0) this.changed.fire(pending);
    // The groups as drawn now: a job that later moves from one to the other makes the whole tree redraw.
    this.drawnGroup = new Map(this.entriesNow().map((e) => [entryKey(e), groupOf(e)]));
    this.tellBadge();
  }

  /** Tells the running count ({@link onDidChangeBadge}) when it is not the one told last. */
  private tellBadge(): void {
    const running = this.runningCount;
    if (running === this.toldBadge) return;
    this.toldBadge = running;
    this.badgeChanged.fire(running);
  }
}

/**
 * The Jobs view (`comfyCloud.jobs`) and its commands: Refresh, Cancel, Copy Job Id, Open Output. The view's badge
 * counts running jobs; the provider is told when the view shows or hides.
 */
export class JobsView extends Disposable {
  readonly provider: JobsTreeProvider;
  readonly view: vscode.TreeView<JobsNode>;

  constructor(
    /** The list of jobs the tree shows (built before the view: the status bar counts its running jobs too). */
    provider: JobsTreeProvider,
    private readonly jobs: JobServiceHost,
    private readonly outputs: OutputLocations,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    this.provider = provider;
    this.view = this.register(vscode.window.createTreeView(Views.jobs, { treeDataProvider: this.provider, showCollapseAll: true }));
    this.provider.setVisible(this.view.visible);
    this.register(this.view.onDidChangeVisibility((e) => this.provider.setVisible(e.visible)));
    this.register(
      this.provider.onDidChangeBadge((n) => {
        this.view.badge = n > 0 ? { value: n, tooltip: n === 1 ? vscode.l10n.t('1 running job') : vscode.l10n.t('{0} running jobs', n) } : undefined;
      }),
    );
    this.register(vscode.commands.registerCommand(Commands.refreshJobs, () => this.provider.refresh()));
    this.register(vscode.commands.registerCommand(Commands.cancelJob, (arg?: JobsNode | string) => this.cancel(arg)));
    this.register(vscode.commands.registerCommand(Commands.copyJobId, (arg?: JobsNode | string) => this.copyId(arg)));
    this.register(vscode.commands.registerCommand(Commands.openOutput, (arg?: JobsNode) => this.openOutput(arg)));
  }

  /**
   * Shows the Jobs view and selects a job's item (the end-of-job notification's "Show Job"). Resolves true when the
   * job is in the view; a job not loaded yet is looked up after one refresh.
   */
  async revealJob(jobId: string): Promise<boolean> {
    await this.provider.model();
    let node = this.provider.nodeOfJob(jobId);
    if (!node) {
      await this.provider.refresh();
      node = this.provider.nodeOfJob(jobId);
    }
    if (!node) return false;
    // A reveal into a view that is still opening can be dropped by the workbench (nothing selected), or fail when the
    // refresh that showing it starts (setVisible) comes in the middle: the view is shown, its visibility heard, then
    // the item revealed.
    if (!this.view.visible) await this.show();
    // A refresh of the tree while VS Code resolves the item's parents (a job of this view changing meanwhile) makes it
    // "cannot resolve tree item": the item is looked up again and revealed again, a bounded number of times.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.view.reveal(node, { select: true, focus: true, expand: false });
        return true;
      } catch (err) {
        if (attempt >= 3) throw err;
        this.log.info('jobs-view', `reveal of job ${jobId} again (${describeError(err)})`);
        await this.provider.model();
        node = this.provider.nodeOfJob(jobId);
        if (!node) return false;
      }
    }
  }

  /**
   * Shows the Jobs view and resolves once the extension host has heard it visible (so the provider's refresh on
   * showing has fired), or after 5 000 ms at most.
   */
  private async show(): Promise<void> {
    const shown = new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      };
      const timer = setTimeout(done, 5_000);
      const sub = this.view.onDidChangeVisibility((e) => e.visible && done());
    });
    await vscode.commands.executeCommand(`${Views.jobs}.focus`);
    await shown;
  }

  /** The batch id of the selected batch item, if a batch item is selected. */
  selectedBatch(): string | undefined {
    const node = this.view.selection[0];
    return node?.kind === 'batch' ? node.batchId : undefined;
  }

  private jobIdOf(arg: JobsNode | string | undefined): string | undefined {
    if (typeof arg === 'string') return arg;
    const node = arg ?? this.view.selection[0];
    return node ? this.provider.entryOf(node)?.jobId : undefined;
  }

  /**
   * Cancel (non-terminal jobs only): asks nothing, POSTs cancel through the job service's client, then says what
   * the server answered, once per event: `canceling` is a notice "is being canceled" that closes itself when the job
   * ends (a plain toast would stay, saying so of a job long ended); the end (`canceled` at once, or later) is told
   * here only when no submission of this window tells it (its end-of-job notification says "was canceled").
   * Returns the status the server gave, or undefined when nothing was sent.
   */
  async cancel(arg?: JobsNode | string): Promise<string | undefined> {
    const jobId = this.jobIdOf(arg);
    if (!jobId) return undefined;
    const short = this.display.text(jobId.slice(0, 8));
    const known = this.provider.entryOf(jobId);
    const status = known?.job?.status ?? known?.record?.lastStatus;
    if (status && isEndedStatus(status)) {
      void this.display.info(vscode.l10n.t('Comfy Cloud: job {0} already ended ({1}); nothing to cancel.', short, status));
      return undefined;
    }
    try {
      const { answer, cancelsRunning, toldElsewhere } = await this.jobs.service.use(async (lease) => ({
        answer: await lease.backend.cancel(jobId, lease.signal),
        cancelsRunning: lease.backend.capabilities.cancelRunning,
        // Read after the answer: a submission still following the job tells its end itself.
        toldElsewhere: () => this.jobs.service.isSubmission(lease.backend.baseUrl, jobId),
      }));
      this.log.info('jobs-view', `cancel of job ${jobId}: ${answer.job.status} (request-id ${answer.requestId ?? '-'})`);
      const now = answer.job.status;
      const ended = vscode.l10n.t('Comfy Cloud: job {0} was canceled.', short);
      if (now === 'canceled') {
        if (!toldElsewhere()) void this.display.info(ended);
      } else if (now === 'canceling') {
        const elsewhere = toldElsewhere();
        const follow = this.jobs.service.follow(jobId);
        const notice = this.display.lasting(vscode.l10n.t('Comfy Cloud: job {0} is being canceled…', short), follow.done, { busy: true });
        follow.done.then(
          (final) => {
            if (elsewhere) return;
            const end = final.job.status;
            void this.display.info(end === 'canceled' ? ended : vscode.l10n.t('Comfy Cloud: job {0} ended {1} before the cancel took effect.', short, end));
          },
          (err: unknown) => AbortError.is(err) || this.log.warn('jobs-view', `job ${jobId} after its cancel: ${describeError(err)}`),
        );
        // Closed by the user: nothing more is awaited of it (the watch stops unless a submission follows the job).
        void notice.closed.then(() => follow.dispose());
      } else {
        void this.display.info(
          now === 'running' && !cancelsRunning
            ? vscode.l10n.t('Comfy Cloud: job {0} could not be canceled: it is running, and the API of this connection cancels only a job that has not started.', short)
            : vscode.l10n.t('Comfy Cloud: job {0} could not be canceled: it is {1}.', short, now),
        );
      }
      return now;
    } catch (err) {
      this.log.warn('jobs-view', `cancel of job ${jobId} failed: ${describeError(err)}`);
      void this.display.error(vscode.l10n.t('Comfy Cloud: cancel of job {0} failed: {1}', short, describeError(err)));
      return undefined;
    }
  }

  /** Copies the job id (neutralized: a control character must not reach a terminal through a paste). */
  async copyId(arg?: JobsNode | string): Promise<string | undefined> {
    const jobId = this.jobIdOf(arg);
    if (!jobId) return undefined;
    const id = this.display.text(jobId);
    await vscode.env.clipboard.writeText(id);
    void this.display.info(vscode.l10n.t('Comfy Cloud: job id {0} copied.', id));
    return id;
  }

  /**
   * Opens an output in an editor tab, downloading it first (job service's client, into the job's output folder)
   * unless the file is already there. Returns the file's path.
   */
  async openOutput(arg?: JobsNode): Promise<string | undefined> {
    const node = arg ?? this.view.selection[0];
    if (node?.kind !== 'output') return undefined;
    const jobId = this.provider.entryOf(node)?.jobId;
    if (!jobId) return undefined;
    try {
      const file = await this.outputFile(node);
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file), { preview: true });
      return file;
    } catch (err) {
      this.log.warn('jobs-view', `opening an output of job ${jobId} failed: ${describeError(err)}`);
      void this.display.error(vscode.l10n.t('Comfy Cloud: cannot open the output: {0}', describeError(err)));
      return undefined;
    }
  }

  /**
   * The file of an output in the job's output folder, downloaded first (a fresh GET of the job: its link may have
   * expired) unless it is already there. Returns its absolute path.
   * @throws Error when the node is not an output of a job with an id, or the server no longer lists the output; as
   *   the download.
   */
  async outputFile(node: JobsNode): Promise<string> {
    const entry = node.kind === 'output' ? this.provider.entryOf(node) : undefined;
    if (node.kind !== 'output' || !entry?.jobId) throw new Error(vscode.l10n.t('not an output of a job'));
    const jobId = entry.jobId;
    const workflow = entry.record?.workflowFile ? vscode.Uri.file(entry.record.workflowFile) : undefined;
    const dir = await this.outputs.forJob(jobId, workflow);
    // The one rule of a complete output file (core savedOutputPath): one on disk is opened, never downloaded again.
    let file = (await savedOutputPath(node.output, dir, jobId))?.path;
    if (!file) {
      file = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Comfy Cloud: downloading output') }, () =>
        this.jobs.service.use(async (lease) => {
          const done = await downloadJobOutput(lease.backend, jobId, node.output.id, dir, lease.signal);
          if (done === undefined) throw new Error(vscode.l10n.t('the server no longer lists this output'));
          return done;
        }),
      );
    }
    return file;
  }
}

/** The tree item of a job's or a batch's model: its label, id, description, icon, flags, tooltip and accessible name. */
function modelItem(model: Pick<JobItemModel, 'id' | 'label' | 'description' | 'icon' | 'contextValue' | 'tooltip' | 'accessibilityLabel'>, state: vscode.TreeItemCollapsibleState): vscode.TreeItem {
  const item = new vscode.TreeItem(model.label, state);
  item.id = model.id;
  item.description = model.description;
  item.iconPath = new vscode.ThemeIcon(model.icon.id, model.icon.color ? new vscode.ThemeColor(model.icon.color) : undefined);
  item.contextValue = model.contextValue;
  // Markdown without HTML, themes' icons or command links: the server's words are escaped in the model.
  item.tooltip = new vscode.MarkdownString(model.tooltip, false);
  item.accessibilityInformation = { label: model.accessibilityLabel, role: 'treeitem' };
  return item;
}
