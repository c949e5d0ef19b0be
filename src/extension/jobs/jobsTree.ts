import * as vscode from 'vscode';
import {
  buildJobTree,
  entryKey,
  groupAccessibilityLabel,
  groupLabel,
  groupOf,
  hasMoreJobs,
  jobChildren,
  presentEntry,
  presentBatch,
  type JobChildModel,
  type JobEntry,
  type JobItemModel,
  type JobTreeModel,
  type BatchItemModel,
} from '../../core/views';
import type { JobOutput } from '../../core';
import type { JobList } from '../../core/views/jobList';
import { Commands } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';

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

const RUNNING: JobsNode = { kind: 'group', group: 'running' };
const RECENT: JobsNode = { kind: 'group', group: 'recent' };
const MORE: JobsNode = { kind: 'more' };

/**
 * The Jobs tree: renders the one list of jobs (core views/jobList.ts) as tree items, with the words of each item the
 * core's (jobTree.ts). It keeps no job and no count of its own: only its nodes (the same object per id, so refreshes
 * can name them) and which group each job was drawn in.
 *
 * It redraws on the list's changes in the same tick (a microtask gathers a burst): the changed items, or the whole
 * tree when a job appears, leaves, or moves between groups. Nothing is redrawn while the view is hidden: one refresh
 * when it shows again. Items have stable ids (base URL + job id), so selection and expansion survive.
 */
export class JobsTreeProvider extends Disposable implements vscode.TreeDataProvider<JobsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<JobsNode | JobsNode[] | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  /** The group of each job at the last redraw: a job that moves (or appears) makes the whole tree redraw. */
  private drawnGroup = new Map<string, 'running' | 'recent'>();
  private readonly jobNodes = new Map<string, JobsNode & { kind: 'job' }>();
  private readonly outputNodes = new Map<string, JobsNode & { kind: 'output' }>();
  private readonly detailNodes = new Map<string, JobsNode & { kind: 'detail' }>();
  private readonly batchNodes = new Map<string, JobsNode & { kind: 'batch' }>();
  private visible = true;
  /**
   * Changed job keys waiting for the end of this tick's changes; `whole` when the tree's shape changed (a job appeared
   * or moved between groups: the groups' and batches' counts change with it).
   */
  private pending = new Set<string>();
  private whole = false;
  private flushing = false;
  private dirtyWhileHidden = false;

  constructor(
    /** The one list of jobs (the status bar counts the same running jobs). */
    readonly list: JobList,
    private readonly display: Display,
  ) {
    super();
    this.register(list.onDidChange((key) => this.schedule(key)));
  }

  /** The running count (the list's): the view's badge and the status bar's. */
  get runningCount(): number {
    return this.list.runningCount;
  }

  /** Fires with the running count when it changes (the list's event). */
  get onDidChangeBadge(): vscode.Event<number> {
    return this.list.onDidChangeRunning;
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
  refresh(): Promise<void> {
    return this.list.refresh();
  }

  /** "Load more…" (the list's). */
  loadMore(): Promise<void> {
    return this.list.loadMore();
  }

  /** Removes entries from the list (the list's; see {@link JobList.remove}). */
  remove(entries: readonly JobEntry[]): Promise<number> {
    return this.list.remove(entries);
  }

  /** The model of the tree now. Starts the first load if not yet done. */
  async model(): Promise<JobTreeModel & { more: boolean }> {
    await this.list.load();
    const tree = this.tree();
    return { ...tree, more: hasMoreJobs(tree, this.list.listing) };
  }

  /** The item of batch `batchId` as the tree shows it now (undefined: not a batch of the shown server). */
  async batchModel(batchId: string): Promise<BatchItemModel | undefined> {
    await this.list.load();
    const tree = this.tree();
    return [...tree.runningBatches, ...tree.recentBatches].find((b) => b.batchId === batchId);
  }

  /** The entry of a job node (or of an output or detail node's job), or of a job id, as it stands now. */
  entryOf(node: JobsNode | string): JobEntry | undefined {
    if (typeof node === 'string') return this.list.entryOfJob(node);
    return node.kind === 'group' || node.kind === 'more' || node.kind === 'batch'
      ? undefined
      : this.entryOfKey(node.key);
  }

  /** The entry of the job whose item key ({@link entryKey}) is `key`, as it stands now. */
  entryOfKey(key: string): JobEntry | undefined {
    return this.list.entryOfKey(key);
  }

  /** Every entry shown or known (for Clear Finished), as they stand now. */
  allEntries(): JobEntry[] {
    return this.list.entries();
  }

  async getChildren(node?: JobsNode): Promise<JobsNode[]> {
    if (!node) {
      await this.list.load();
      // No job at all: no root, so the view's welcome content (connect, sample, submit) shows instead.
      return this.list.isEmpty && this.list.batches().length === 0 ? [] : [RUNNING, RECENT];
    }
    if (node.kind === 'group') {
      await this.list.load();
      const tree = this.tree();
      const batches = (node.group === 'running' ? tree.runningBatches : tree.recentBatches).map((b) =>
        this.batchNode(b.batchId),
      );
      const jobs = (node.group === 'running' ? tree.running : tree.recent).map((item) => this.jobNode(item.id));
      return node.group === 'recent' && hasMoreJobs(tree, this.list.listing)
        ? [...batches, ...jobs, MORE]
        : [...batches, ...jobs];
    }
    if (node.kind === 'batch') {
      const batch = this.batchItem(node.batchId);
      return batch ? batch.jobs.map((j) => this.jobNode(j.id)) : [];
    }
    if (node.kind === 'job') {
      const entry = this.entryOfKey(node.key);
      if (!entry) return [];
      return this.childrenOf(entry).map((c) =>
        c.output
          ? this.outputNode(node.key, c.output)
          : this.detailNode(node.key, c.kind as 'workflow' | 'logs' | 'error'),
      );
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
    if (batchId !== undefined && this.list.batches().some((b) => b.batch.batchId === batchId))
      return this.batchNode(batchId);
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
      const count =
        node.group === 'running'
          ? tree.running.length + tree.runningBatches.length
          : tree.recentTotal + tree.recentBatches.length;
      const item = new vscode.TreeItem(groupLabel(node.group, vscode.l10n.t), vscode.TreeItemCollapsibleState.Expanded);
      item.id = `${this.list.baseUrl ?? ''} group:${node.group}`;
      item.description = String(count);
      item.contextValue = `group:${node.group}`;
      item.accessibilityInformation = {
        label: groupAccessibilityLabel(node.group, count, vscode.l10n.t),
        role: 'treeitem',
      };
      return item;
    }
    if (node.kind === 'more') {
      const item = new vscode.TreeItem(vscode.l10n.t('Load more…'), vscode.TreeItemCollapsibleState.None);
      item.id = `${this.list.baseUrl ?? ''} group:recent:more`;
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
      const child =
        entry &&
        this.childrenOf(entry).find((c) =>
          node.kind === 'output' ? c.output?.id === node.output.id : c.kind === node.detail,
        );
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
    const model =
      (batchId !== undefined ? this.batchItem(batchId)?.jobs.find((j) => j.id === node.key) : undefined) ??
      this.present(entry);
    return modelItem(
      model,
      model.children.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
  }

  private tree(): JobTreeModel {
    return buildJobTree(this.list.entries(), {
      clean: (t) => this.display.text(t),
      now: Date.now(),
      t: vscode.l10n.t,
      recentLimit: this.list.recentLimit,
      batches: this.list.batches(),
    });
  }

  /** The model of one shown batch's item. */
  private batchItem(batchId: string): BatchItemModel | undefined {
    const view = this.list.batches().find((b) => b.batch.batchId === batchId);
    if (!view) return undefined;
    const entries = this.list.entries().filter((e) => e.record?.batchId === batchId);
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

  /**
   * Gathers a change (a job key, or undefined for the whole tree) and redraws at the end of this tick's changes (a
   * microtask: a listing's burst of states is one redraw, still in the tick they changed), while visible. A job whose
   * group is not the one it was drawn in redraws the whole tree (the groups' and its batch's counts change).
   */
  private schedule(key: string | undefined): void {
    if (key === undefined) this.whole = true;
    else {
      const entry = this.list.entryOfKey(key);
      if (entry && this.drawnGroup.get(key) !== groupOf(entry)) this.whole = true;
      else this.pending.add(key);
    }
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
    this.drawnGroup = new Map(this.list.entries().map((e) => [entryKey(e), groupOf(e)]));
    // A count that changed with time alone (a job past its expires_at reads lost) is told with the redraw.
    this.list.tellRunning();
  }
}

/** The tree item of a job's or a batch's model: its label, id, description, icon, flags, tooltip and accessible name. */
function modelItem(
  model: Pick<
    JobItemModel,
    'id' | 'label' | 'description' | 'icon' | 'contextValue' | 'tooltip' | 'accessibilityLabel'
  >,
  state: vscode.TreeItemCollapsibleState,
): vscode.TreeItem {
  const item = new vscode.TreeItem(model.label, state);
  item.id = model.id;
  item.description = model.description;
  item.iconPath = new vscode.ThemeIcon(
    model.icon.id,
    model.icon.color ? new vscode.ThemeColor(model.icon.color) : undefined,
  );
  item.contextValue = model.contextValue;
  // Markdown without HTML, themes' icons or command links: the server's words are escaped in the model.
  item.tooltip = new vscode.MarkdownString(model.tooltip, false);
  item.accessibilityInformation = { label: model.accessibilityLabel, role: 'treeitem' };
  return item;
}
