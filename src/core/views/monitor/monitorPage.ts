/**
 * What the job monitor shows, built by the host from what it knows of a job, without `vscode`: the job model's
 * {@link Job} (the job service's state of it: live progress and queue position included), its remembered
 * {@link JobRecord}, the connection's name, the outage the watch rides out, and the outputs already saved on this
 * machine. The result is the protocol's {@link MonitorJob} / {@link MonitorState} (protocol.ts).
 *
 * Every server-chosen string (status, ids, times, node ids and classes, progress message, error code, message and
 * traceback, output names and types, metric names, log lines) passes through the injected `clean` (the extension's
 * redactor: secrets redacted, control and bidi characters escaped: server data is untrusted), so the webview only
 * ever receives text that is safe to show.
 *
 * Not exported from the core index: the monitor imports it by path.
 */
import { logsText } from '../jobDocuments';
import { hasLogs, hasWorkflowSource } from '../jobTree';
import type { Translate } from '../../util/l10n';
import type { JobRecord } from '../../state/stateStore';
import {
  isEndedStatus,
  isLostStatus,
  type Job,
  type JobError,
  type JobOutput,
  type Preview,
  type Progress,
} from '../../jobs/model';
import { progressFraction } from '../../jobs/progress';
import { outputBytes } from '../../jobs/outputFiles';
import { prefixOfOutputName } from '../../util/workflow';
import { webviewPageHtml } from '../../util/webviewPage';
import type { GraphModel, NodeRunState } from '../../graph/types';
import { nodeRunStates } from '../../graph/runStates';
import {
  PROTOCOL_VERSION,
  type MonitorError,
  type MonitorJob,
  type MonitorOutput,
  type MonitorPreview,
  type MonitorProgress,
  type MonitorState,
  type MonitorStrings,
} from './protocol';

/** Makes a server string safe to show, on one line (the extension's `Display.text`). */
type Clean = (text: string) => string;

/** An output saved in the job's output folder: what the gallery shows for it (a webview resource URI or `data:`). */
export interface SavedOutput {
  /** The thumbnail the caller made for it (`asWebviewUri` of the file), null for a type not shown as an image. */
  thumbnail: string | null;
  /** The file's size on disk, in bytes (shown when the server's size is 0 or unknown). */
  bytes?: number;
}

/** What {@link monitorJob} is built from. */
interface MonitorJobInput {
  jobId: string;
  /** The job as the job service holds it (the server's word, with live progress); undefined before the first read. */
  job?: Job;
  /** The submission as this machine remembers it, when it was submitted from here. */
  record?: JobRecord;
  /** The active connection's name. */
  connection: string;
  /** "server unreachable …, retrying in N s" (already in the user's words) while the watch retries. */
  retrying?: string | null;
  /** Outputs saved on this machine, by output id. */
  saved?: ReadonlyMap<string, SavedOutput>;
  /** True when the remembered workflow file exists (Go to node opens it). Default: a file is remembered. */
  workflowFileExists?: boolean;
}

/** The name the header shows: the workflow file's name, else the SaveImage prefix, else "job" (as the Jobs view). */
function monitorWorkflowName(job: Job | undefined, record: JobRecord | undefined, clean: Clean, t: Translate): string {
  const file = record?.workflowFile;
  if (file) return clean(file.split(/[\\/]/).pop() || file);
  const prefix = record?.savePrefix ?? job?.outputs.map((o) => prefixOfOutputName(o.name)).find(Boolean);
  return prefix ? clean(prefix) : t('job');
}

function cleanOrNull(value: string | null | undefined, clean: Clean): string | null {
  return value === null || value === undefined ? null : clean(value);
}

function finiteOrNull(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * The progress as the monitor shows it, every string cleaned; the value is the client's one progress formula
 * (core/jobs `progressFraction`: the server's value, else nodes done over total; in 0..1), as the Jobs view shows it.
 */
function monitorProgress(p: Progress, clean: Clean): MonitorProgress {
  return {
    value: progressFraction(p),
    nodesDone: finiteOrNull(p.nodesDone),
    nodesTotal: finiteOrNull(p.nodesTotal),
    currentNode: p.currentNode ? clean(p.currentNode) : null,
    currentNodeClass: p.currentNodeClass ? clean(p.currentNodeClass) : null,
    step: finiteOrNull(p.step),
    steps: finiteOrNull(p.steps),
    message: cleanOrNull(p.message, clean),
  };
}

/**
 * A traceback as text: a string as is, an array of strings (Python's `format_exception` list) joined, anything else
 * as indented JSON; cleaned line by line (one line never forges another), null when there is none.
 */
export function tracebackText(tb: unknown, clean: Clean): string | null {
  if (tb === undefined || tb === null || tb === '') return null;
  const raw = Array.isArray(tb)
    ? tb.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('')
    : typeof tb === 'string'
      ? tb
      : JSON.stringify(tb, null, 2);
  const lines = raw.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => clean(l)).join('\n');
}

/** A failed job's error as the monitor shows it: code, message, node and its `class_type`, traceback. */
function monitorError(error: JobError, clean: Clean): MonitorError {
  return {
    code: cleanOrNull(error.code, clean),
    message: cleanOrNull(error.message, clean),
    nodeId: cleanOrNull(error.nodeId, clean),
    classType: cleanOrNull(error.classType, clean),
    traceback: tracebackText(error.traceback, clean),
  };
}

/** One output as the gallery shows it: its name (else id), type and size; its thumbnail once saved here. */
export function monitorOutput(output: JobOutput, saved: SavedOutput | undefined, clean: Clean): MonitorOutput {
  return {
    id: output.id,
    name: clean(output.name ?? output.id),
    contentType: cleanOrNull(output.contentType, clean),
    // The server's size, else the bytes on disk (a size of 0 is the companion's "not computed yet").
    sizeBytes: outputBytes({ sizeBytes: finiteOrNull(output.sizeBytes) }, saved?.bytes),
    thumbnail: saved?.thumbnail ?? null,
    saved: saved !== undefined,
  };
}

/**
 * The job as the monitor shows it: status, times, progress (the job service's, which never goes backwards), queue
 * position while queued, the error of a job that carries one, logs (Job and Asset API v2, Rules for `logs`, read as
 * jobDocuments.ts {@link logsText} does), metrics with nulls kept as null ("not yet"), outputs with what is saved
 * here; `can`: cancel only a job with a non-terminal status (not already `canceling`), re-run and open workflow when
 * a workflow can be had (jobTree.ts {@link hasWorkflowSource}), go to node when the job failed naming a node and its
 * workflow file is remembered (and exists), reveal outputs when there are outputs. A job the server no longer knows
 * (the client's status `lost`) is never cancellable, and its `retrying` line says so plainly, and what to do (Re-run).
 */
export function monitorJob(input: MonitorJobInput, clean: Clean, t: Translate): MonitorJob {
  const { job, record } = input;
  const status = job?.status ?? record?.lastStatus ?? 'unknown';
  const progress = job?.progress ?? null;
  const queuePosition = status === 'queued' ? finiteOrNull(job?.queuePosition) : null;
  const error = job?.error ? monitorError(job.error, clean) : null;
  const outputs = (job?.outputs ?? []).map((o) => monitorOutput(o, input.saved?.get(o.id), clean));
  const logs = job && hasLogs(job.logs) ? logsText(job.logs, clean, t).replace(/\n$/, '').split('\n') : null;
  const metrics = Object.entries(job?.metrics ?? {}).map(([name, value]) => ({
    name: clean(name),
    value: value === null ? null : String(value),
  }));
  const workflowSource = hasWorkflowSource({ baseUrl: record?.baseUrl ?? '', jobId: input.jobId, record }, status);
  const fileKnown = record?.workflowFile !== undefined && input.workflowFileExists !== false;
  return {
    jobId: clean(input.jobId),
    workflowName: monitorWorkflowName(job, record, clean, t),
    status: clean(status),
    connection: clean(input.connection),
    createdAt: cleanOrNull(job?.createdAt ?? record?.submittedAt, clean),
    startedAt: cleanOrNull(job?.startedAt, clean),
    finishedAt: cleanOrNull(job?.completedAt, clean),
    queuePosition,
    progress: progress ? monitorProgress(progress, clean) : null,
    error,
    logs,
    metrics,
    outputs,
    retrying: isLostStatus(status)
      ? workflowSource
        ? t(
            'The server no longer knows this job: it expired, or the server was restarted without it. Re-run it to run its workflow again.',
          )
        : t(
            'The server no longer knows this job: it expired, or the server was restarted without it, and its workflow with it.',
          )
      : cleanOrNull(input.retrying, clean),
    can: {
      cancel: !isEndedStatus(status) && status !== 'canceling' && status !== 'unknown',
      rerun: workflowSource,
      openWorkflow: workflowSource,
      goToNode: status === 'failed' && Boolean(job?.error?.nodeId) && fileKnown,
      revealOutputs: outputs.length > 0,
    },
  };
}

/** Preview images the monitor accepts: an `image/…` type the webview can show, as the protocol validates it. */
const PREVIEW_TYPE = /^image\/[a-z0-9.+-]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A `preview` event as the monitor sends it (bytes as base64 data, never a URL: the webview reaches no network), with
 * the node that produced it and its class when the progress names that node; undefined when the event's type or data
 * would not pass the protocol's validation (dropped).
 */
export function monitorPreview(
  preview: Preview,
  seq: number,
  progress: Progress | null | undefined,
  clean: Clean,
): MonitorPreview | undefined {
  const contentType = preview.contentType.trim().toLowerCase();
  const data = preview.dataBase64.replace(/\s+/g, '');
  if (!PREVIEW_TYPE.test(contentType) || !BASE64.test(data) || data.length === 0) return undefined;
  // The self-hosted companion sends `node_id: ""`: no node named.
  const nodeId = preview.nodeId ? clean(preview.nodeId) : null;
  const nodeClass =
    preview.nodeId && progress?.currentNode === preview.nodeId ? cleanOrNull(progress.currentNodeClass, clean) : null;
  return { seq, nodeId, nodeClass, contentType, dataBase64: data };
}

/**
 * The page's words in the user's language: each of protocol.ts `MONITOR_STRINGS` through `t`, written out so the l10n
 * bundle (scripts/l10n-bundle.mjs) finds every message (a unit test checks they are MONITOR_STRINGS' own).
 */
export function monitorStrings(t: Translate): MonitorStrings {
  return {
    copyJobId: t('Copy job id'),
    connection: t('Connection'),
    created: t('Created'),
    started: t('Started'),
    finished: t('Finished'),
    notYet: t('not yet'),
    unknown: t('unknown'),
    progress: t('Progress'),
    nodes: t('Nodes {0} of {1}'),
    node: t('Node {0} ({1})'),
    nodeOnly: t('Node {0}'),
    step: t('Step {0} of {1}'),
    queuePosition: t('Position {0} in the queue'),
    preview: t('Live preview'),
    previewFrom: t('From node {0}'),
    noPreview: t('No preview yet'),
    outputs: t('Outputs'),
    noOutputs: t('No output yet'),
    open: t('Open'),
    save: t('Save…'),
    imageWorkflow: t('Workflow'),
    downloadAll: t('Download all'),
    error: t('Error'),
    traceback: t('Traceback'),
    goToNode: t('Go to node'),
    logs: t('Logs'),
    metrics: t('Metrics'),
    cancel: t('Cancel'),
    rerun: t('Re-run'),
    openWorkflow: t('Open Workflow'),
    revealOutputs: t('Reveal Outputs'),
    graph: t('Graph'),
    graphLoading: t('Reading the workflow…'),
    graphUnavailable: t('No graph: {0}'),
    graphTypesUnknown: t('Socket types unknown: no node definitions for this connection'),
  };
}

/**
 * Each node's state in the job, for the monitor's graph: core/graph `nodeRunStates` of the job over every node of
 * `model` (inner ones included; the preview left to the page), and one rule more, from the graph: a node upstream
 * (through links) of the running node or of the failed node has run, so it is shown `done` where the job says
 * nothing else of it. The engine runs a node only once every node feeding it has run (ComfyUI's execution order),
 * and the job model names the running node but keeps no list of finished ones. A muted or bypassed node is passed
 * through (its own upstream has run) but never marked: it did not run.
 */
export function monitorNodeStates(job: Job, model: GraphModel, clean: Clean): Record<string, NodeRunState> {
  const graphs = [model.root, ...Object.values(model.subgraphs)];
  const nodes = new Map(graphs.flatMap((g) => g.nodes.map((n) => [n.id, n] as const)));
  const states = nodeRunStates({ job, preview: null }, nodes.keys(), { clean });
  const feeders = new Map<string, string[]>();
  for (const g of graphs) for (const e of g.edges) (feeders.get(e.to) ?? feeders.set(e.to, []).get(e.to)!).push(e.from);
  const starts = [
    job.status === 'running' ? job.progress?.currentNode : null,
    job.status === 'failed' ? job.error?.nodeId : null,
  ].filter((id): id is string => Boolean(id));
  const seen = new Set<string>(starts);
  const queue = [...starts];
  while (queue.length > 0) {
    for (const from of feeders.get(queue.shift()!) ?? []) {
      if (seen.has(from)) continue;
      seen.add(from);
      queue.push(from);
      const st = states[from];
      if (nodes.get(from)?.mode === 'normal' && (st === undefined || st.status === 'waiting')) {
        states[from] = { status: 'done', progress: null, error: null, preview: null, outputs: st?.outputs ?? [] };
      }
    }
  }
  return states;
}

/** The whole state a page is made from; `nodeStates` as core/graph `nodeRunStates` gives them (none before the graph is read). */
export function monitorState(
  job: MonitorJob,
  preview: MonitorPreview | null,
  strings: MonitorStrings,
  nodeStates: Record<string, NodeRunState> = {},
): MonitorState {
  return { version: PROTOCOL_VERSION, job, nodeStates, preview, strings };
}

/** What the page is built from (see {@link monitorHtml}). */
interface MonitorPageInput {
  /** `vscode.env.language`. */
  lang: string;
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh nonce (base64 of `crypto.randomBytes`), new per render. */
  nonce: string;
  /** `asWebviewUri` of dist/webview/codicon.css, graph.css (the embedded graph's), monitor.css and monitor.js. */
  codiconCss: string;
  graphCss: string;
  monitorCss: string;
  monitorJs: string;
  state: MonitorState;
}

/**
 * The monitor's page: a strict CSP (`default-src 'none'`; scripts only by the nonce;
 * styles and fonts from `cspSource`; images from `cspSource`, `data:` and `blob:`; workers from `blob:` (the graph's
 * layout worker); no `unsafe-inline` script, no
 * remote origin), the codicon, graph and monitor stylesheets, the first state embedded as JSON (every `<` escaped as
 * `\u003c`, so no server string can close the script element), and the monitor script by its nonce.
 */
export function monitorHtml(p: MonitorPageInput): string {
  const json = JSON.stringify(p.state)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return webviewPageHtml({
    ...p,
    imageSources: 'data: blob:',
    // The embedded graph's layout worker, started from the text the script carries (media/graph/layoutClient.ts).
    workerSources: 'blob:',
    // The graph's stylesheet before the monitor's: the monitor's rules for the page itself win.
    stylesheets: [
      { href: p.codiconCss, id: 'vscode-codicon-stylesheet' },
      { href: p.graphCss },
      { href: p.monitorCss },
    ],
    body: `<script type="application/json" id="monitor-state">${json}</script>\n<main id="monitor"></main>`,
    script: p.monitorJs,
  });
}
