import * as vscode from 'vscode';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import {
  AbortError,
  ComfyError,
  buildJobTree,
  entryKey,
  isTerminalStatus,
  mergeEntries,
  needsFollow,
  outputLabel,
  presentEntry,
  safeFileName,
  type Job,
  type JobChange,
  type JobEntry,
  type JobFollow,
  type JobItemModel,
  type JobOutput,
  type StateStore,
} from '../core';
import { Commands, Views } from './constants';
import type { Config } from './config';
import { Disposable } from './disposable';
import type { Display } from './display';
import type { JobServiceHost } from './jobService';
import type { Log } from './log';
import type { OutputLocations } from './outputs';

/** A node of the Jobs tree. Job and output nodes are kept (same object per id) so refreshes can name them. */
export type JobsNode =
  | { readonly kind: 'group'; readonly group: 'running' | 'recent' }
  | { readonly kind: 'job'; readonly key: string }
  | { readonly kind: 'output'; readonly key: string; readonly output: JobOutput };

/** How long changes are gathered before the tree is told (ms): a burst of progress events is one refresh. */
export const JOBS_VIEW_DEBOUNCE_MS = 150;

/** How many jobs of the server's listing are read (where the surface has a listing). */
const LISTING_LIMIT = 50;

const RUNNING: JobsNode = { kind: 'group', group: 'running' };
const RECENT: JobsNode = { kind: 'group', group: 'recent' };

/**
 * The Jobs view's data (issue 9, "The sidebar: Jobs"): the jobs submitted from this machine (the state store,
 * shared with the CLI) for the configured server, plus the server's listing where it has one, grouped Running /
 * Recent; the words of each item are the core's (jobTree.ts).
 *
 * Live: it subscribes to the job service's `onDidChangeJob` and follows every running job it shows (one shared watch
 * per job; the follow is released when the job ends or the view is disposed); terminal jobs are never asked about
 * again. Changes are gathered for {@link JOBS_VIEW_DEBOUNCE_MS} and only the changed items are refreshed (the whole
 * tree only when a job moves between groups or appears), and nothing is refreshed while the view is hidden: one
 * refresh when it shows again. Items have stable ids (base URL + job id), so selection and expansion survive.
 */
export class JobsTreeProvider extends Disposable implements vscode.TreeDataProvider<JobsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<JobsNode | JobsNode[] | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly badgeChanged = this.register(new vscode.EventEmitter<number>());
  /** The count of running jobs, whenever it changes (the view's badge). */
  readonly onDidChangeBadge = this.badgeChanged.event;

  private entries = new Map<string, JobEntry>();
  private readonly jobNodes = new Map<string, JobsNode & { kind: 'job' }>();
  private readonly outputNodes = new Map<string, JobsNode & { kind: 'output' }>();
  private readonly follows = new Map<string, JobFollow>();
  private baseUrl: string | undefined;
  private loading: Promise<void> | undefined;
  private loaded = false;
  private visible = true;
  /** Changed job keys waiting for the debounce; `whole` when the tree's shape changed. */
  private pending = new Set<string>();
  private whole = false;
  private dirtyWhileHidden = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastBadge = -1;

  constructor(
    private readonly jobs: JobServiceHost,
    private readonly store: StateStore,
    config: Config,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    this.register(jobs.onDidChangeJob((change) => this.onJob(change)));
    this.register(config.onDidChange(() => this.reset()));
    this.register({
      dispose: () => {
        this.stopAll();
        if (this.timer) clearTimeout(this.timer);
      },
    });
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
  async model(): Promise<{ running: JobItemModel[]; recent: JobItemModel[]; badge: number }> {
    await this.load();
    return buildJobTree(this.entries.values(), { clean: (t) => this.display.text(t), now: Date.now() });
  }

  /** The entry of a job node (or of an output node's job). */
  entryOf(node: JobsNode | string): JobEntry | undefined {
    if (typeof node === 'string') return [...this.entries.values()].find((e) => e.jobId === node);
    return node.kind === 'group' ? undefined : this.entries.get(node.key);
  }

  async getChildren(node?: JobsNode): Promise<JobsNode[]> {
    if (!node) {
      await this.load();
      return [RUNNING, RECENT];
    }
    if (node.kind === 'group') {
      await this.load();
      const tree = buildJobTree(this.entries.values(), { clean: (t) => this.display.text(t), now: Date.now() });
      return (node.group === 'running' ? tree.running : tree.recent).map((item) => this.jobNode(item.id));
    }
    if (node.kind === 'job') {
      const entry = this.entries.get(node.key);
      if (!entry) return [];
      return this.present(entry).outputs.map((o) => this.outputNode(node.key, o));
    }
    return [];
  }

  getTreeItem(node: JobsNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const tree = buildJobTree(this.entries.values(), { clean: (t) => this.display.text(t), now: Date.now() });
      const count = node.group === 'running' ? tree.running.length : tree.recent.length;
      const item = new vscode.TreeItem(node.group === 'running' ? 'Running' : 'Recent', vscode.TreeItemCollapsibleState.Expanded);
      item.id = `${this.baseUrl ?? ''} group:${node.group}`;
      item.description = String(count);
      item.contextValue = `group:${node.group}`;
      return item;
    }
    const entry = this.entries.get(node.key);
    if (node.kind === 'output') {
      const item = new vscode.TreeItem(outputLabel(node.output, (t) => this.display.text(t)), vscode.TreeItemCollapsibleState.None);
      item.id = `${node.key} output:${node.output.id}`;
      item.iconPath = new vscode.ThemeIcon(/^image\//.test(node.output.content_type ?? '') ? 'file-media' : 'file');
      item.description = [node.output.content_type, node.output.size_bytes != null ? `${node.output.size_bytes} bytes` : '']
        .filter(Boolean)
        .map((t) => this.display.text(t!))
        .join(' · ');
      item.contextValue = 'output';
      item.command = { command: Commands.openOutput, title: 'Open Output', arguments: [node] };
      return item;
    }
    if (!entry) return new vscode.TreeItem('(gone)');
    const model = this.present(entry);
    const item = new vscode.TreeItem(model.label, model.outputs.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = model.id;
    item.description = model.description;
    item.iconPath = new vscode.ThemeIcon(model.icon.id, model.icon.color ? new vscode.ThemeColor(model.icon.color) : undefined);
    item.contextValue = model.contextValue;
    // Markdown without HTML, themes' icons or command links: the server's words are escaped in the model.
    item.tooltip = new vscode.MarkdownString(model.tooltip, false);
    item.accessibilityInformation = { label: `${model.label}, ${entryStatusWord(entry)}, ${model.description}` };
    return item;
  }

  private present(entry: JobEntry): JobItemModel {
    return presentEntry(entry, { clean: (t) => this.display.text(t), now: Date.now() });
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
    this.loading ??= this.read()
      .then(
        () => {
          this.loaded = true;
        },
        (err: unknown) => {
          if (!AbortError.is(err)) this.log.warn('jobs-view', `cannot read the jobs: ${describe(err)}`);
          this.loaded = true; // shown empty; Refresh tries again
        },
      )
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Reads the store (this server's records, expired ones pruned) and the server's listing, then follows running jobs. */
  private async read(): Promise<void> {
    await this.store.prune().catch(() => 0);
    const { baseUrl, listing } = await this.jobs.service.use(async (lease) => {
      let jobs: Job[] = [];
      try {
        jobs = (await lease.client.jobs.list({ limit: LISTING_LIMIT, signal: lease.signal })).jobs;
      } catch (err) {
        // Not every surface lists jobs: the remembered ones are shown alone.
        if (AbortError.is(err)) throw err;
        this.log.info('jobs-view', `no job listing from the server (${describe(err)})`);
      }
      return { baseUrl: lease.client.http.baseUrl, listing: jobs };
    });
    const records = await this.store.list();
    if (this.baseUrl !== undefined && this.baseUrl !== baseUrl) {
      this.stopAll();
      this.entries.clear();
    }
    this.baseUrl = baseUrl;
    const merged = mergeEntries(baseUrl, records, listing, this.entries);
    this.entries = new Map(merged.map((e) => [entryKey(e), e]));
    this.updateFollows();
    this.updateBadge();
  }

  /** Forgets everything (the base URL or key changed) and reloads on the next look. */
  private reset(): void {
    this.stopAll();
    this.entries.clear();
    this.loaded = false;
    this.baseUrl = undefined;
    this.schedule(undefined);
    this.updateBadge();
  }

  private onJob(change: JobChange): void {
    if (this.baseUrl !== undefined && change.baseUrl !== this.baseUrl) return;
    const key = entryKey({ baseUrl: change.baseUrl, jobId: change.job.id });
    const entry = this.entries.get(key);
    if (!entry) {
      // A job just submitted (from this window): shown at once; its record (workflow file) is read in the background.
      this.entries = new Map([[key, { baseUrl: change.baseUrl, jobId: change.job.id, job: change.job }], ...this.entries]);
      this.schedule(undefined);
      if (this.loaded) void this.mergeRecords();
    } else {
      const before = this.present(entry).group;
      entry.job = change.job;
      this.schedule(this.present(entry).group === before ? key : undefined);
    }
    this.updateFollows();
    this.updateBadge();
  }

  /** Joins the store's records to entries that have none yet (e.g. a job just submitted). */
  private async mergeRecords(): Promise<void> {
    try {
      const records = await this.store.list();
      let found = false;
      for (const record of records) {
        if (!record.jobId) continue;
        const entry = this.entries.get(entryKey({ baseUrl: record.baseUrl, jobId: record.jobId }));
        if (entry && !entry.record) {
          entry.record = record;
          found = true;
          this.schedule(entryKey(entry));
        }
      }
      if (!found) return;
    } catch (err) {
      this.log.warn('jobs-view', `cannot read the remembered jobs: ${describe(err)}`);
    }
  }

  /** Follows every running job shown that is not followed yet; the follow ends with the job (or the view). */
  private updateFollows(): void {
    for (const [key, entry] of this.entries) {
      if (!needsFollow(entry) || this.follows.has(key) || entry.jobId === undefined) continue;
      const follow = this.jobs.service.follow(entry.jobId);
      this.follows.set(key, follow);
      follow.done.then(
        (final) => {
          // The final job also came through onDidChangeJob; kept here too, with its request id.
          entry.job = final.job;
          entry.requestId = final.requestId;
          this.schedule(undefined);
        },
        (err: unknown) => {
          if (!AbortError.is(err)) this.log.warn('jobs-view', `job ${this.display.text(entry.jobId ?? '')}: ${describe(err)}`);
        },
      ).finally(() => {
        if (this.follows.get(key) === follow) this.follows.delete(key);
        this.updateBadge();
      });
    }
  }

  private stopAll(): void {
    for (const follow of this.follows.values()) follow.dispose();
    this.follows.clear();
  }

  private updateBadge(): void {
    let running = 0;
    for (const entry of this.entries.values()) if (this.present(entry).group === 'running') running++;
    if (running === this.lastBadge) return;
    this.lastBadge = running;
    this.badgeChanged.fire(running);
  }

  /** Gathers a change (a job key, or undefined for the whole tree) for one debounced refresh, while visible. */
  private schedule(key: string | undefined): void {
    if (key === undefined) this.whole = true;
    else this.pending.add(key);
    if (!this.visible) {
      this.dirtyWhileHidden = true;
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), JOBS_VIEW_DEBOUNCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.visible) {
      this.dirtyWhileHidden = this.dirtyWhileHidden || this.whole || this.pending.size > 0;
      return;
    }
    if (this.whole) this.changed.fire(undefined);
    else if (this.pending.size > 0) this.changed.fire([...this.pending].map((k) => this.jobNode(k)));
    this.whole = false;
    this.pending.clear();
  }
}

function entryStatusWord(entry: JobEntry): string {
  return entry.job?.status ?? entry.record?.lastStatus ?? entry.record?.state ?? 'unknown';
}

function describe(err: unknown): string {
  if (ComfyError.is(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The Jobs view (`comfyCloud.jobs`) and its commands: Refresh, Cancel, Copy Job Id, Open Output. The view's badge
 * counts running jobs; the provider is told when the view shows or hides.
 */
export class JobsView extends Disposable {
  readonly provider: JobsTreeProvider;
  readonly view: vscode.TreeView<JobsNode>;

  constructor(
    private readonly jobs: JobServiceHost,
    store: StateStore,
    config: Config,
    private readonly outputs: OutputLocations,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    this.provider = this.register(new JobsTreeProvider(jobs, store, config, display, log));
    this.view = this.register(vscode.window.createTreeView(Views.jobs, { treeDataProvider: this.provider, showCollapseAll: true }));
    this.provider.setVisible(this.view.visible);
    this.register(this.view.onDidChangeVisibility((e) => this.provider.setVisible(e.visible)));
    this.register(
      this.provider.onDidChangeBadge((n) => {
        this.view.badge = n > 0 ? { value: n, tooltip: `${n} running job${n === 1 ? '' : 's'}` } : undefined;
      }),
    );
    this.register(vscode.commands.registerCommand(Commands.refreshJobs, () => this.provider.refresh()));
    this.register(vscode.commands.registerCommand(Commands.cancelJob, (arg?: JobsNode | string) => this.cancel(arg)));
    this.register(vscode.commands.registerCommand(Commands.copyJobId, (arg?: JobsNode | string) => this.copyId(arg)));
    this.register(vscode.commands.registerCommand(Commands.openOutput, (arg?: JobsNode) => this.openOutput(arg)));
  }

  private jobIdOf(arg: JobsNode | string | undefined): string | undefined {
    if (typeof arg === 'string') return arg;
    const node = arg ?? this.view.selection[0];
    return node ? this.provider.entryOf(node)?.jobId : undefined;
  }

  /**
   * Cancel (non-terminal jobs only): asks nothing, POSTs cancel through the job service's client, then says what
   * the server answered. Returns the status the server gave, or undefined when nothing was sent.
   */
  async cancel(arg?: JobsNode | string): Promise<string | undefined> {
    const jobId = this.jobIdOf(arg);
    if (!jobId) return undefined;
    const short = this.display.text(jobId.slice(0, 8));
    const known = this.provider.entryOf(jobId);
    const status = known?.job?.status ?? known?.record?.lastStatus;
    if (status && isTerminalStatus(status)) {
      void this.display.info(`Comfy Cloud: job ${short} already ended (${status}); nothing to cancel.`);
      return undefined;
    }
    try {
      const snapshot = await this.jobs.service.use((lease) => lease.client.cancelJob(jobId, { signal: lease.signal }));
      this.log.info('jobs-view', `cancel of job ${jobId}: ${snapshot.job.status} (request-id ${snapshot.requestId ?? '-'})`);
      const now = snapshot.job.status;
      void this.display.info(
        now === 'canceled' ? `Comfy Cloud: job ${short} was canceled.` : now === 'canceling' ? `Comfy Cloud: job ${short} is being canceled.` : `Comfy Cloud: job ${short} could not be canceled: it is ${now}.`,
      );
      return now;
    } catch (err) {
      this.log.warn('jobs-view', `cancel of job ${jobId} failed: ${describe(err)}`);
      void this.display.error(`Comfy Cloud: cancel of job ${short} failed: ${describe(err)}`);
      return undefined;
    }
  }

  /** Copies the job id (neutralized: a control character must not reach a terminal through a paste). */
  async copyId(arg?: JobsNode | string): Promise<string | undefined> {
    const jobId = this.jobIdOf(arg);
    if (!jobId) return undefined;
    const id = this.display.text(jobId);
    await vscode.env.clipboard.writeText(id);
    void this.display.info(`Comfy Cloud: job id ${id} copied.`);
    return id;
  }

  /**
   * Opens an output in an editor tab, downloading it first (job service's client, into the job's output folder)
   * unless the file is already there. Returns the file's path.
   */
  async openOutput(arg?: JobsNode): Promise<string | undefined> {
    const node = arg ?? this.view.selection[0];
    if (node?.kind !== 'output') return undefined;
    const entry = this.provider.entryOf(node);
    if (!entry?.jobId) return undefined;
    const jobId = entry.jobId;
    const workflow = entry.record?.workflowFile ? vscode.Uri.file(entry.record.workflowFile) : undefined;
    try {
      const dir = await this.outputs.forJob(jobId, workflow);
      const name = safeFileName(node.output.name, `${node.output.id}${node.output.content_type === 'image/png' ? '.png' : ''}`);
      let file = path.join(dir, name);
      const there = await fs.stat(file).then((s) => s.isFile(), () => false);
      if (!there) {
        file = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Comfy Cloud: downloading output' }, () =>
          this.jobs.service.use(async (lease) => {
            // A fresh GET: the output's link may have expired since the job was shown.
            const snapshot = await lease.client.getJob(jobId, { signal: lease.signal });
            const output = snapshot.job.outputs.find((o) => o.id === node.output.id);
            if (!output) throw new Error('the server no longer lists this output');
            const [done] = await lease.client.downloadOutputs({ ...snapshot, job: { ...snapshot.job, outputs: [output] } }, dir, { signal: lease.signal });
            return done!.path;
          }),
        );
      }
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file), { preview: true });
      return file;
    } catch (err) {
      this.log.warn('jobs-view', `opening an output of job ${jobId} failed: ${describe(err)}`);
      void this.display.error(`Comfy Cloud: cannot open the output: ${describe(err)}`);
      return undefined;
    }
  }
}
