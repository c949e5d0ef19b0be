/**
 * The job monitor's protocol (one `protocol.ts` shared by host and webview): every message between the
 * extension host (src/extension/monitor/) and the monitor webview (media/monitor/), typed both ways and validated on
 * receipt by each side (`parseHostMessage` in the webview, `parseWebviewMessage` in the host): a message that does not
 * parse is dropped, never acted on.
 *
 * Rules the types carry:
 * - The webview holds no credential and reaches no network: previews come as base64 data, output thumbnails as
 *   `data:` URLs or webview resource URIs of files already saved in the job's output folder.
 * - Every string in a host message is already cleaned by the host (redacted, control and bidi characters escaped);
 *   the webview still only ever sets it as text (`textContent`), never as HTML.
 * - The webview says `ready` before the host posts; the first {@link MonitorState} is also embedded in the page so it
 *   paints at once.
 * - The first message after `ready` is a whole `snapshot`; then each change of the job is a `delta` (the job, and only
 *   the nodes' states that changed since the message before), so a progress event of a 500-node job stays small.
 *
 * Plain data, no `vscode`, no DOM: imported by the host, the webview bundle (browser) and the unit tests. Not exported
 * from the core index: the webview bundle imports it by path, without the rest of the core.
 */
import * as z from 'zod/mini';
import { lazy, parsedOrUndefined } from '../../util/lazySchema';
import type { Progress } from '../../jobs/model';
import { GRAPH_MESSAGE_LIMITS, graphDataSchemas } from '../../graph/protocol';
import type { GraphModel, NodeRunState } from '../../graph/types';

/** Bumped when a message changes shape; a page of another version is re-rendered from scratch by the host. */
export const PROTOCOL_VERSION = 3;

/** The job's progress as shown (the job's `progress`, Job and Asset API v2, Events, in the monitor's names). */
export type MonitorProgress = Progress;

/** A failed job's error (the job's `error`), with the traceback when the server gives one. */
export interface MonitorError {
  code: string | null;
  message: string | null;
  nodeId: string | null;
  classType: string | null;
  traceback: string | null;
}

/** One committed output. */
export interface MonitorOutput {
  id: string;
  /** The file name (cleaned), else the id. */
  name: string;
  contentType: string | null;
  sizeBytes: number | null;
  /**
   * What the gallery shows for an image: a `data:` URL or a webview resource URI of the file saved in the job's
   * output folder (`asWebviewUri`); null until known, and for other types (a file card is shown).
   */
  thumbnail: string | null;
  /** True once the file is saved on this machine (Open and Save work without a download). */
  saved: boolean;
}

/** The latest live preview (the `preview` event): image bytes as base64, and the node that produced it. */
export interface MonitorPreview {
  /** Grows with each preview of the job: the webview shows a frame only if newer than the one shown. */
  seq: number;
  nodeId: string | null;
  nodeClass: string | null;
  contentType: string;
  dataBase64: string;
}

/** One metric (the job's `metrics`): its value as text, or null for "not yet". */
interface MonitorMetric {
  name: string;
  value: string | null;
}

/** Everything the panel shows of a job (a snapshot: the webview replaces its state with it, progress excepted). */
export interface MonitorJob {
  jobId: string;
  /** The workflow file's name, else the SaveImage prefix, else "job". */
  workflowName: string;
  /** The server's status (`queued`, `running`, `succeeded`, …). */
  status: string;
  /** The connection's name (status bar). */
  connection: string;
  /** ISO times, null when not yet. */
  createdAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** 0-based queue position while queued. */
  queuePosition: number | null;
  progress: MonitorProgress | null;
  error: MonitorError | null;
  /** Log lines (serverless deployments, from GET only), null where the surface has none. */
  logs: string[] | null;
  metrics: MonitorMetric[];
  outputs: MonitorOutput[];
  /**
   * "server unreachable (…), retrying in N s" while the watch retries, or why nothing more can be learned of the job
   * (the server no longer knows it); null otherwise.
   */
  retrying: string | null;
  /** What the action buttons may do now. */
  can: { cancel: boolean; rerun: boolean; openWorkflow: boolean; goToNode: boolean; revealOutputs: boolean };
}

/**
 * The job's workflow as a graph (core/graph `workflowGraph`), posted once when the host has read the workflow (and
 * again on each `ready`): never in a snapshot, so the progress of a 500-node job does not carry its model each time.
 * Either `model` (the graph) or `unavailable` (why no graph can be shown, in the user's words) is set.
 */
export interface MonitorGraph {
  model: GraphModel | null;
  unavailable: string | null;
  /** True when a node can be shown in the workflow's file (Go to node): the graph was read from the remembered file. */
  canReveal: boolean;
  /**
   * True when the sockets have no types: an API-format workflow read without node definitions (the JSON names no
   * type; a UI-format workflow carries its own). The page says so under the graph; false without a model.
   */
  typesUnknown: boolean;
}

/** The words of the page, translated by the host (`vscode.l10n.t`); keys are {@link MONITOR_STRINGS}'. */
export type MonitorStrings = Record<keyof typeof MONITOR_STRINGS, string>;

/**
 * The page's own words, in English: the host sends each through `vscode.l10n.t` and embeds the result, so the
 * webview needs no translation machinery. `{0}` placeholders are filled by the webview.
 */
export const MONITOR_STRINGS = {
  copyJobId: 'Copy job id',
  connection: 'Connection',
  created: 'Created',
  started: 'Started',
  finished: 'Finished',
  notYet: 'not yet',
  unknown: 'unknown',
  progress: 'Progress',
  nodes: 'Nodes {0} of {1}',
  node: 'Node {0} ({1})',
  nodeOnly: 'Node {0}',
  step: 'Step {0} of {1}',
  queuePosition: 'Position {0} in the queue',
  preview: 'Live preview',
  previewFrom: 'From node {0}',
  noPreview: 'No preview yet',
  outputs: 'Outputs',
  noOutputs: 'No output yet',
  open: 'Open',
  save: 'Save…',
  imageWorkflow: 'Workflow',
  downloadAll: 'Download all',
  error: 'Error',
  traceback: 'Traceback',
  goToNode: 'Go to node',
  logs: 'Logs',
  metrics: 'Metrics',
  cancel: 'Cancel',
  rerun: 'Re-run',
  openWorkflow: 'Open Workflow',
  revealOutputs: 'Reveal Outputs',
  graph: 'Graph',
  graphLoading: 'Reading the workflow…',
  graphUnavailable: 'No graph: {0}',
  graphTypesUnknown: 'Socket types unknown: no node definitions for this connection',
} as const;

/** The state a page is made from: the job, its nodes' states, the latest preview, the page's words. */
export interface MonitorState {
  version: typeof PROTOCOL_VERSION;
  job: MonitorJob;
  /**
   * Each node's state in the run, by node id (core/graph `nodeRunStates` of the job, without the preview: the page
   * places its latest frame on the node that drew it, so no frame is sent twice). Small: a status, a step, an error
   * and output names per node the job named, or per node of the graph while every node waits or is done.
   */
  nodeStates: Record<string, NodeRunState>;
  preview: MonitorPreview | null;
  strings: MonitorStrings;
}

/**
 * The nodes' states that changed since the last `snapshot` or `delta` the page got: whole states of nodes added or
 * changed (each replaces the page's), and the ids of nodes no longer in the states. Both empty: no node changed.
 */
export interface NodeStatesDelta {
  changed: Record<string, NodeRunState>;
  removed: string[];
}

/** Host → webview. */
export type HostMessage =
  /** The whole state: the first message after each `ready` (the page may have been written anew). */
  | { type: 'snapshot'; state: MonitorState }
  /**
   * A change of the job after a snapshot (a progress event): the job (small) and only the nodes' states that changed;
   * the page merges it into the state it holds. No preview (frames come as `preview`) and no strings (unchanged).
   */
  | { type: 'delta'; job: MonitorJob; nodeStates: NodeStatesDelta }
  /** A new live preview frame. */
  | { type: 'preview'; preview: MonitorPreview }
  /** An output committed or saved (added, or replacing the one with its id). */
  | { type: 'output'; output: MonitorOutput }
  /** The job's workflow graph, or why there is none (once read; again after each `ready`). */
  | { type: 'graph'; graph: MonitorGraph };

/** Webview → host. Output ids are the job's; the host checks them against the job before acting. */
export type WebviewMessage =
  | { type: 'ready'; version: number }
  | { type: 'cancel' }
  | { type: 'rerun' }
  | { type: 'copyJobId' }
  | { type: 'openWorkflow' }
  /** The failed node (no `nodeId`), or a node of the graph, selected in the workflow's file. */
  | { type: 'goToNode'; nodeId?: string }
  | { type: 'revealOutputs' }
  | { type: 'downloadAll' }
  | { type: 'openOutput'; outputId: string }
  | { type: 'saveOutput'; outputId: string }
  /** "Open Workflow from Image" on a PNG output: its UI workflow and API graph opened as untitled documents. */
  | { type: 'openImageWorkflow'; outputId: string };

// ---- validation (zod/mini): each side parses what it receives ------------------------------------------------------

/**
 * The schemas, built at the first message or state read: the extension's activation does not build them for a monitor
 * that may never open (about 3 ms of CPU, measured by `npm run bench -- activation`).
 */
const schemas = lazy(() => {
  const text = z.string();
  const maybeText = z.nullable(z.string());
  const maybeNumber = z.nullable(z.number());
  /** An id or name from the other side: bounded, so a bad message cannot make the receiver hold megabytes. */
  const id = z.string().check(z.minLength(1), z.maxLength(1024));

  const progressSchema = z.object({
    value: maybeNumber,
    nodesDone: maybeNumber,
    nodesTotal: maybeNumber,
    currentNode: maybeText,
    currentNodeClass: maybeText,
    step: maybeNumber,
    steps: maybeNumber,
    message: maybeText,
  });

  const errorSchema = z.object({
    code: maybeText,
    message: maybeText,
    nodeId: maybeText,
    classType: maybeText,
    traceback: maybeText,
  });

  const outputSchema = z.object({
    id,
    name: text,
    contentType: maybeText,
    sizeBytes: maybeNumber,
    thumbnail: maybeText,
    saved: z.boolean(),
  });

  const previewSchema = z.object({
    seq: z.number(),
    nodeId: maybeText,
    nodeClass: maybeText,
    contentType: z.string().check(z.regex(/^image\/[a-z0-9.+-]+$/)),
    dataBase64: z.string().check(z.regex(/^[A-Za-z0-9+/]*={0,2}$/)),
  });

  const jobSchema = z.object({
    jobId: id,
    workflowName: text,
    status: text,
    connection: text,
    createdAt: maybeText,
    startedAt: maybeText,
    finishedAt: maybeText,
    queuePosition: maybeNumber,
    progress: z.nullable(progressSchema),
    error: z.nullable(errorSchema),
    logs: z.nullable(z.array(text)),
    metrics: z.array(z.object({ name: text, value: maybeText })),
    outputs: z.array(outputSchema),
    retrying: maybeText,
    can: z.object({
      cancel: z.boolean(),
      rerun: z.boolean(),
      openWorkflow: z.boolean(),
      goToNode: z.boolean(),
      revealOutputs: z.boolean(),
    }),
  });

  const stringsSchema = z.object(
    Object.fromEntries(Object.keys(MONITOR_STRINGS).map((k) => [k, text])) as Record<
      keyof typeof MONITOR_STRINGS,
      typeof text
    >,
  );

  const graphData = graphDataSchemas();
  const nodeStatesSchema = z.record(id, graphData.runState);
  const graphSchema = z.object({
    model: z.nullable(graphData.model),
    unavailable: maybeText,
    canReveal: z.boolean(),
    typesUnknown: z.boolean(),
  });
  // A delta names at most as many nodes as a graph may have (core/graph's bound): a bad one cannot grow without end.
  const maxNodes = GRAPH_MESSAGE_LIMITS.nodes;
  const deltaSchema = z.object({
    changed: nodeStatesSchema.check(z.refine((r) => Object.keys(r).length <= maxNodes)),
    removed: z.array(id).check(z.maxLength(maxNodes)),
  });

  const stateSchema = z.object({
    version: z.literal(PROTOCOL_VERSION),
    job: jobSchema,
    nodeStates: nodeStatesSchema,
    preview: z.nullable(previewSchema),
    strings: stringsSchema,
  });

  const hostMessageSchema = z.discriminatedUnion('type', [
    z.object({ type: z.literal('snapshot'), state: stateSchema }),
    z.object({ type: z.literal('delta'), job: jobSchema, nodeStates: deltaSchema }),
    z.object({ type: z.literal('preview'), preview: previewSchema }),
    z.object({ type: z.literal('output'), output: outputSchema }),
    z.object({ type: z.literal('graph'), graph: graphSchema }),
  ]);

  const webviewMessageSchema = z.discriminatedUnion('type', [
    z.object({ type: z.literal('ready'), version: z.number() }),
    z.object({ type: z.literal('cancel') }),
    z.object({ type: z.literal('rerun') }),
    z.object({ type: z.literal('copyJobId') }),
    z.object({ type: z.literal('openWorkflow') }),
    z.object({ type: z.literal('goToNode'), nodeId: z.optional(id) }),
    z.object({ type: z.literal('revealOutputs') }),
    z.object({ type: z.literal('downloadAll') }),
    z.object({ type: z.literal('openOutput'), outputId: id }),
    z.object({ type: z.literal('saveOutput'), outputId: id }),
    z.object({ type: z.literal('openImageWorkflow'), outputId: id }),
  ]);
  return { stateSchema, hostMessageSchema, webviewMessageSchema };
});

/** A message from the host as the webview accepts it; undefined when it is not one (dropped). */
export function parseHostMessage(value: unknown): HostMessage | undefined {
  return parsedOrUndefined<HostMessage>(schemas().hostMessageSchema, value);
}

/** A message from the webview as the host accepts it; undefined when it is not one (dropped, logged by the host). */
export function parseWebviewMessage(value: unknown): WebviewMessage | undefined {
  return parsedOrUndefined<WebviewMessage>(schemas().webviewMessageSchema, value);
}

/** The state embedded in the page as it is read back (the same validation as a `snapshot`). */
export function parseMonitorState(value: unknown): MonitorState | undefined {
  return parsedOrUndefined<MonitorState>(schemas().stateSchema, value);
}
