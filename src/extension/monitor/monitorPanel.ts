import * as vscode from 'vscode';
import { promises as fs } from 'node:fs';
import { AbortError, isNewerFrame, type Job, type JobFollow, type JobState } from '../../core';
import { describeOutage, errorMessage } from '../../core/views';
import type { JobRecord } from '../../core/state';
import {
  PROTOCOL_VERSION,
  parseWebviewMessage,
  type HostMessage,
  type MonitorGraph,
  type MonitorPreview,
  type MonitorState,
  type WebviewMessage,
} from '../../core/views/monitor/protocol';
import { MonitorPosts } from '../../core/views/monitor/delta';
import type { NodeDefinitions } from '../../core/workflowSchema/objectInfo';
import { keepSeenStates, type NodeRunState } from '../../core/graph/runStates';
import {
  monitorHtml,
  monitorJob,
  monitorNodeStates,
  monitorOutput,
  monitorPreview,
  monitorState,
  monitorStrings,
  type SavedOutput,
} from '../../core/views/monitor/monitorPage';
import { Commands, MONITOR_VIEW_TYPE } from '../platform/constants';
import { MonitorOutputFiles } from './monitorOutputFiles';
import { openJobWorkflowFile, readJobGraph, revealNode, saveOutputAs } from './monitorWorkflow';
import type { Display } from '../platform/display';
import type { RerunOptions, RerunResult } from '../jobs';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';
import {
  webviewPanelOptions,
  WebviewPanelHost,
  type PageBasics,
  type PageProtocol,
  type ReadyMessage,
} from '../platform/webviewPanelHost';

export { MONITOR_VIEW_TYPE };

/** The monitor's page protocol (core views/monitor/protocol.ts). */
const MONITOR_PAGE: PageProtocol<WebviewMessage> = {
  component: 'monitor',
  version: PROTOCOL_VERSION,
  parse: parseWebviewMessage,
};

/** What a panel needs from the extension. */
export interface MonitorPanelDeps {
  extensionUri: vscode.Uri;
  jobs: JobServiceHost;
  display: Display;
  log: Log;
  /** The active connection's name (status bar). @throws when the settings are unusable. */
  connectionName(): string;
  /** The active connection's base URL. @throws when the settings are unusable. */
  baseUrl(): string;
  /** Opens the monitor of another job (Re-run's new job), in this panel's tab when the manager reuses tabs. */
  openJob?(jobId: string): Thenable<unknown>;
  /**
   * The node definitions workflow IntelliSense uses (socket types of an API-format graph); undefined when unknown.
   * Absent: none (the graph says its types are unknown).
   */
  definitions?(): Promise<NodeDefinitions | undefined>;
}

/** What the manager found out before the panel was made (the record and the job's output folder). */
export interface MonitorTarget {
  jobId: string;
  record: JobRecord | undefined;
  /** The job's output folder (not made until an output is written into it): a local resource root of the webview. */
  outputDir: string;
  /** Makes the output folder (outputs.ts `forJob`: with its .gitignore), before an output is written into it. */
  makeOutputDir(): Promise<string>;
}

/** The webview options of a monitor: scripts on, no command URIs, local resources only from dist/webview and the job's output folder. */
export function monitorWebviewOptions(extensionUri: vscode.Uri, outputDir: string): vscode.WebviewOptions {
  return webviewPanelOptions(extensionUri, [outputDir]);
}

/**
 * One job's monitor: a `WebviewPanel` whose page (core views/monitor/monitorPage.ts {@link monitorHtml}: nonce CSP, the first state
 * embedded) shows the job service's state of the job (`onDidChangeJobState`: the job with its live progress, the latest
 * preview frame, the outage its watch rides out), kept alive by the service's ONE watch of the job (`follow`, shared
 * with the submission, the Jobs view and the notification; released on dispose). The host posts a whole `snapshot` on
 * `ready` and a `delta` on each change after it (the job and the nodes' states that changed: core delta.ts
 * `MonitorPosts`), `preview` for each new frame (base64 data from the event, never a URL), `output` when an output
 * is committed and again once it is saved here. Every message from the page is validated (`parseWebviewMessage`); an
 * invalid one is logged and dropped. Closing the panel never cancels the job.
 */
export class MonitorPanel extends WebviewPanelHost<WebviewMessage, HostMessage> {
  readonly jobId: string;
  /**
   * The job service's state of the job last shown (`onDidChangeJobState`): the page renders it and nothing else of
   * the job (its progress, outputs, preview frame and outage are the service's, with the job model's rules applied
   * once, in core/jobs state.ts). Undefined until the service knows the job.
   */
  private shown: JobState | undefined;
  /** The final job when the follow ended and the service held no state of it (else {@link shown}'s). */
  private ended: Job | undefined;
  private record: JobRecord | undefined;
  private readonly outputDir: string;
  /**
   * What no state of the job can say, in the user's words: the first read failing before the service knows the job,
   * or why the job cannot be read at all (the follow failed). Null when fine; a new state clears it.
   */
  private unreadable: string | null = null;
  private follow: JobFollow | undefined;
  /** The job's outputs saved in its output folder (local files, not job state). */
  private readonly files: MonitorOutputFiles;
  private workflowFileExists: boolean | undefined;
  /** The job's workflow graph once read (or why there is none); null while it is read. */
  private graph: MonitorGraph | null = null;
  /** Every node id of the graph (inner ones included), for the nodes' states. */
  private graphNodeIds: string[] = [];
  /** The nodes' states last shown (core/graph `keepSeenStates`: what the job can no longer say is kept). */
  private nodeStates: Record<string, NodeRunState> = {};
  /** Whole snapshot or delta: what the page holds decides (core delta.ts). */
  private readonly posts = new MonitorPosts();
  /**
   * True until the page can show the server's word: the job service held no state of the job when the panel was
   * made (a monitor restored after a reload, or opened on a job not watched), so the page is written at the first
   * answer of the server (or the watch's first outage, or its end), never from the remembered record's last status.
   */
  private waiting = false;
  constructor(
    panel: vscode.WebviewPanel,
    target: MonitorTarget,
    private readonly deps: MonitorPanelDeps,
  ) {
    // Messages are kept while the page is not ready too: tests read the state the page would be sent.
    super(panel, deps, MONITOR_PAGE, { kept: 50, whileNotReady: true });
    this.jobId = target.jobId;
    this.record = target.record;
    this.outputDir = target.outputDir;
    this.files = new MonitorOutputFiles({
      jobId: this.jobId,
      outputDir: this.outputDir,
      makeOutputDir: target.makeOutputDir,
      jobs: deps.jobs,
      webview: panel.webview,
      job: () => this.job,
      onSaved: (outputId) => this.outputSaved(outputId),
      onFound: () => this.snapshot(),
    });
    const known = deps.jobs.service.state(this.baseUrl(), this.jobId);
    this.shown = known;
    if (known) this.postPreview(undefined, known);
    panel.webview.options = monitorWebviewOptions(deps.extensionUri, this.outputDir);
    this.updateTitle();
    this.waiting = known === undefined;
    if (!this.waiting) this.render();
    this.register(deps.jobs.onDidChangeJobState((state) => this.onState(state)));
    this.register({
      dispose: () => {
        // Closing the panel leaves the watch; the job itself goes on.
        this.follow?.dispose();
        this.files.dispose();
      },
    });
    this.startFollowing();
    void this.files.rescan();
    if (this.record?.workflowFile) {
      void fs
        .stat(this.record.workflowFile)
        .then(
          (s) => (this.workflowFileExists = s.isFile()),
          () => (this.workflowFileExists = false),
        )
        .then(() => this.snapshot());
    }
    void this.readGraph();
  }

  /** The graph as posted to the page (tests read it); null while the workflow is read. */
  get workflowGraph(): MonitorGraph | null {
    return this.graph;
  }

  /** Reads the job's workflow and makes its graph (monitorWorkflow.ts), then posts it and a snapshot with the nodes' states. */
  private async readGraph(): Promise<void> {
    const entry = { baseUrl: this.baseUrl(), jobId: this.jobId, record: this.record, job: this.job };
    const read = await readJobGraph(this.deps, entry);
    if (!read || this.gone) return;
    this.graph = read.graph;
    this.graphNodeIds = read.nodeIds;
    this.post({ type: 'graph', graph: this.graph });
    this.snapshot();
  }

  /** True while the panel is visible (the end-of-job notification is then not shown: one signal at a time). */
  get visible(): boolean {
    return this.panel.visible;
  }

  /** The job as last known (tests read it). */
  get current(): Job | undefined {
    return this.job;
  }

  private get job(): Job | undefined {
    return this.shown?.job ?? this.ended;
  }

  /**
   * Re-run from the monitor: the Jobs view's Re-run (a modal confirmation unless `confirm: false`; a NEW submission with
   * a new key), then the new job's monitor opens (in this tab when tabs are reused and it is not pinned): the monitor
   * follows the job the person just started. Resolves with the Re-run's result.
   */
  async rerun(options: RerunOptions = {}): Promise<RerunResult | undefined> {
    const result = await vscode.commands.executeCommand<RerunResult | undefined>(
      Commands.rerunJob,
      this.jobId,
      options,
    );
    if (result?.status === 'submitted' && result.jobId) await this.deps.openJob?.(result.jobId);
    return result;
  }

  /** Brings the panel to the front. */
  reveal(): void {
    this.panel.reveal(undefined, false);
  }

  /** An action of the page failed (logged by the host): said to the user too. */
  protected override onFailure(_message: WebviewMessage, err: unknown): void {
    void this.deps.display.error(vscode.l10n.t('Comfy Cloud: {0}', errorMessage(err, vscode.l10n.t)));
  }

  protected subject(): string {
    return `job ${this.deps.display.text(this.jobId)}`;
  }

  /** The whole state, and the graph once read (a re-shown page starts from the state embedded when it was written). */
  protected onReady(): void {
    this.posts.reset();
    this.snapshot();
    if (this.graph) this.post({ type: 'graph', graph: this.graph });
  }

  protected async act(message: Exclude<WebviewMessage, ReadyMessage>): Promise<unknown> {
    switch (message.type) {
      case 'cancel':
        // The Jobs view's Cancel: POST cancel through the job service's client, then say what the server answered.
        return vscode.commands.executeCommand(Commands.cancelJob, this.jobId);
      case 'rerun':
        return this.rerun();
      case 'copyJobId':
        return vscode.commands.executeCommand(Commands.copyJobId, this.jobId);
      case 'openWorkflow':
        return this.openWorkflow();
      case 'goToNode':
        return this.goToNode(message.nodeId);
      case 'revealOutputs':
        return this.revealOutputs();
      case 'downloadAll':
        return this.files.all();
      case 'openOutput': {
        const file = await this.files.file(message.outputId);
        await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file), { preview: true });
        return file;
      }
      case 'openImageWorkflow': {
        const file = await this.files.file(message.outputId);
        return vscode.commands.executeCommand(Commands.openWorkflowFromImage, vscode.Uri.file(file));
      }
      case 'saveOutput':
        return saveOutputAs(await this.files.file(message.outputId), this.deps.display);
    }
  }

  /** The remembered workflow file when it still exists, else the job's workflow document (Jobs view). */
  private openWorkflow(): Promise<unknown> {
    return openJobWorkflowFile(this.record?.workflowFile, this.jobId);
  }

  /**
   * Go to node: the failed node's, or `chosen` (a node chosen in the graph: taken only when the graph, read from the
   * workflow file, has it), selected in the remembered workflow file (monitorWorkflow.ts `revealNode`).
   */
  private async goToNode(chosen?: string): Promise<string | undefined> {
    const nodeId =
      chosen === undefined
        ? this.job?.error?.nodeId
        : this.graph?.canReveal && this.graphNodeIds.includes(chosen)
          ? chosen
          : undefined;
    const file = this.record?.workflowFile;
    return nodeId && file ? revealNode(file, nodeId) : undefined;
  }

  /** Downloads what is not saved yet, then shows the output folder (Explorer inside the workspace, else the OS). */
  private async revealOutputs(): Promise<string> {
    await this.files.all();
    const uri = vscode.Uri.file(this.outputDir);
    await vscode.commands.executeCommand(
      vscode.workspace.getWorkspaceFolder(uri) ? 'revealInExplorer' : 'revealFileInOS',
      uri,
    );
    return this.outputDir;
  }

  // ---- feeding the page ----------------------------------------------------------------------------------------

  private baseUrl(): string {
    if (this.record?.baseUrl) return this.record.baseUrl;
    try {
      return this.deps.baseUrl();
    } catch {
      return ''; // unusable settings: no server to match
    }
  }

  private startFollowing(): void {
    // The follow keeps the one watch of the job going while the panel is open; what it learns comes as the job's state.
    const follow = this.deps.jobs.service.follow(this.jobId, {
      // The first read fails and is retried (the server is away): the page shows that, rather than nothing.
      onUpdate: (update) => {
        if (update.type === 'retrying' && this.waiting) {
          // Cleaned once, with the rest of the job, by the page's model (monitorJob).
          this.unreadable = describeOutage(
            { reason: update.reason, failingSinceMs: update.failingSinceMs, retryInMs: update.delayMs },
            vscode.l10n.t,
            (s) => s,
          );
          this.showFirst();
        }
      },
    });
    this.follow = follow;
    follow.done.then(
      (final) => {
        const before = this.job;
        // The service published the final state before `done` resolved; its answer stands in only without one.
        const state = this.deps.jobs.service.state(this.baseUrl(), this.jobId);
        if (state) this.shown = state;
        else this.ended = final.job;
        this.unreadable = null;
        this.postOutputs(before, this.job);
        this.updateTitle();
        void this.files.rescan().then(() => (this.waiting ? this.showFirst() : this.snapshot()));
      },
      (err: unknown) => {
        if (AbortError.is(err)) return;
        this.deps.log.warn('monitor', `job ${this.jobId}: ${errorMessage(err, vscode.l10n.t)}`);
        this.unreadable = vscode.l10n.t('Cannot read the job: {0}', errorMessage(err, vscode.l10n.t));
        if (this.waiting) this.showFirst();
        else this.snapshot();
      },
    );
  }

  /** The job service's new state of a job: this panel's job of this server is shown as it now stands. */
  private onState(state: JobState): void {
    if (state.job.id !== this.jobId || state.baseUrl !== this.baseUrl()) return;
    const before = this.shown;
    this.shown = state;
    this.postPreview(before, state);
    if (before && state.job === before.job && state.outage === before.outage && this.unreadable === null) return; // a new preview frame only
    this.unreadable = null;
    this.postOutputs(before?.job ?? this.ended, state.job);
    if (before?.job.status !== state.job.status) this.updateTitle();
    if (this.waiting) this.showFirst();
    else this.snapshot();
  }

  /** Writes the page for the first time, now that the server has said something of the job (see `waiting`). */
  private showFirst(): void {
    if (this.gone || !this.waiting) return;
    this.waiting = false;
    this.render();
  }

  /** The page's preview frame of a state (none when the protocol would refuse it). */
  private previewOf(state: JobState | undefined): MonitorPreview | null {
    const frame = state?.preview;
    if (!frame) return null;
    return monitorPreview(frame, frame.seq, state.job.progress, (s) => this.deps.display.text(s)) ?? null;
  }

  /** Posts the state's preview frame when it is newer than the state shown before (core/jobs `isNewerFrame`). */
  private postPreview(before: JobState | undefined, state: JobState): void {
    if (!state.preview || !isNewerFrame(state.preview.seq, before?.preview?.seq)) return;
    const preview = this.previewOf(state);
    if (preview) this.post({ type: 'preview', preview });
  }

  /** Posts `output` for each output of `next` that `prev` did not list (committed since). */
  private postOutputs(prev: Job | undefined, next: Job | undefined): void {
    const seen = new Set(prev?.outputs.map((o) => o.id));
    for (const output of next?.outputs ?? []) {
      if (seen.has(output.id)) continue;
      this.post({
        type: 'output',
        output: monitorOutput(output, this.files.savedOutput(output), (s) => this.deps.display.text(s)),
      });
      this.files.scheduleRescan();
    }
  }

  private outputSaved(outputId: string): void {
    const output = this.job?.outputs.find((o) => o.id === outputId);
    if (output)
      this.post({
        type: 'output',
        output: monitorOutput(output, this.files.savedOutput(output), (s) => this.deps.display.text(s)),
      });
  }

  private state() {
    const clean = (s: string): string => this.deps.display.text(s);
    const saved = new Map<string, SavedOutput>();
    for (const output of this.job?.outputs ?? []) {
      const s = this.files.savedOutput(output);
      if (s) saved.set(output.id, s);
    }
    let connection = '';
    try {
      connection = this.deps.connectionName();
    } catch {
      // unusable settings: no name
    }
    const job = monitorJob(
      {
        jobId: this.jobId,
        job: this.job,
        record: this.record,
        connection,
        retrying:
          this.unreadable ?? (this.shown?.outage ? describeOutage(this.shown.outage, vscode.l10n.t, (s) => s) : null),
        saved,
        workflowFileExists: this.workflowFileExists,
      },
      clean,
      vscode.l10n.t,
    );
    // The nodes' states of the job's graph (none before it is read), keeping what was seen of them (a node done stays
    // done; the failing node is marked); the preview is placed by the page.
    if (this.job && this.graph?.model)
      this.nodeStates = keepSeenStates(
        this.nodeStates,
        monitorNodeStates(this.job, this.graph.model, clean),
        this.job,
        { clean },
      );
    const nodeStates = this.nodeStates;
    return monitorState(job, this.previewOf(this.shown), monitorStrings(vscode.l10n.t), nodeStates);
  }

  /** Posts the state: whole to a page that holds none we know of, else what changed (core delta.ts `MonitorPosts`). */
  private snapshot(): void {
    if (this.gone || this.waiting) return;
    this.post(this.posts.next(this.state(), this.ready));
  }

  /** The last state posted, whole or as a delta: what the page shows once it got it (tests read it). */
  get lastState(): MonitorState | undefined {
    return this.posts.last;
  }

  /** The page (core views/monitor/monitorPage.ts), with the current state embedded. */
  protected html(basics: PageBasics, asset: (name: string) => string): string {
    return monitorHtml({
      ...basics,
      codiconCss: asset('codicon.css'),
      graphCss: asset('graph.css'),
      monitorCss: asset('monitor.css'),
      monitorJs: asset('monitor.js'),
      state: this.state(),
    });
  }

  private updateTitle(): void {
    if (this.gone) return;
    const name = monitorJob(
      { jobId: this.jobId, job: this.job, record: this.record, connection: '' },
      (s) => this.deps.display.text(s),
      vscode.l10n.t,
    ).workflowName;
    this.panel.title = vscode.l10n.t('{0} · {1}', name, this.deps.display.text(this.jobId.slice(0, 8)));
  }
}
