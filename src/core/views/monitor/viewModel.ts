/**
 * The job monitor's view model: what the monitor webview keeps between messages
 * ({@link MonitorView}) and what each part of the page shows ({@link present}). Pure: no DOM, no `vscode`; the
 * webview (media/monitor/main.ts) renders {@link MonitorPresentation} and the unit tests check it.
 *
 * Rules it carries:
 * - The bar shows the job's progress as the host sent it: the host renders the job service's state, where progress
 *   never goes backwards (core/jobs state.ts, the client's one place for that rule), so nothing here holds a value.
 * - Live previews are double-buffered: a frame newer than the one shown becomes `pending`, and becomes `shown` only
 *   when the webview reports it decoded ({@link previewDecoded}); a frame not newer than the shown or pending one is
 *   ignored. The last frame stays after the job ends, until an output exists.
 * - Outputs are keyed by id: an `output` message adds one or replaces the one with its id.
 * - The graph: the model comes once (`graph`), the nodes' states with every snapshot, and what changed of them with
 *   every delta; the preview frame shown is placed on the node that drew it (the states carry none, so a frame never
 *   crosses twice).
 */
import { isEndedStatus } from '../../jobs/model';
import { clampFraction, isNewerFrame, shownStep } from '../../jobs/progress';
import { humanSize } from '../../util/bytes';
import type { GraphModel, NodeRunState } from '../../graph/types';
import { applyNodeStatesDelta } from './delta';
import type {
  HostMessage,
  MonitorGraph,
  MonitorJob,
  MonitorOutput,
  MonitorPreview,
  MonitorState,
  MonitorStrings,
} from './protocol';

/** What the webview holds between messages. Immutable: every change returns a new view. */
export interface MonitorView {
  /** The latest state, with outputs merged from `output` messages; its `preview` is the latest one received. */
  state: MonitorState;
  /** The frame on screen (decoded), and the newer one being decoded off-screen. */
  preview: { shown: MonitorPreview | null; pending: MonitorPreview | null };
  /** The job's workflow graph (or why there is none); null until the host has read the workflow. */
  graph: MonitorGraph | null;
}

/** The view of the state embedded in the page: its preview (if any) waits to be decoded like any other frame. */
export function initialView(state: MonitorState): MonitorView {
  return {
    state,
    preview: { shown: null, pending: state.preview },
    graph: null,
  };
}

/**
 * The view after one host message (protocol.ts {@link HostMessage}).
 * - `snapshot`: the state is replaced; for the same job id the snapshot's preview is taken only if newer than the
 *   shown and pending frames; for another job id (a re-run in the same panel) the view starts over.
 * - `delta`: the job is replaced and the nodes' states merged (core delta.ts `applyNodeStatesDelta`); the preview and
 *   the words stay. A delta of another job id is ignored (it cannot be merged into this job's states).
 * - `preview`: becomes pending if its `seq` is greater than the shown and pending frames' (else ignored).
 * - `output`: added, or replaces the output with its id (order kept).
 * - `graph`: the graph (or why there is none) replaces the one held.
 */
export function reduce(view: MonitorView, message: HostMessage): MonitorView {
  switch (message.type) {
    case 'snapshot': {
      const state = message.state;
      if (state.job.jobId !== view.state.job.jobId) return initialView(state);
      return {
        state,
        preview: state.preview ? offerPreview(view.preview, state.preview) : view.preview,
        graph: view.graph,
      };
    }
    case 'delta': {
      if (message.job.jobId !== view.state.job.jobId) return view;
      const nodeStates = applyNodeStatesDelta(view.state.nodeStates, message.nodeStates);
      return { ...view, state: { ...view.state, job: message.job, nodeStates } };
    }
    case 'preview':
      return {
        ...view,
        state: { ...view.state, preview: newer(view.state.preview, message.preview) },
        preview: offerPreview(view.preview, message.preview),
      };
    case 'output': {
      const outputs = view.state.job.outputs;
      const at = outputs.findIndex((o) => o.id === message.output.id);
      const next = at < 0 ? [...outputs, message.output] : outputs.map((o, i) => (i === at ? message.output : o));
      return { ...view, state: { ...view.state, job: { ...view.state.job, outputs: next } } };
    }
    case 'graph':
      return { ...view, graph: message.graph };
  }
}

/** The view once the webview has decoded frame `seq` off-screen: it becomes the shown frame (if it is still the pending one). */
export function previewDecoded(view: MonitorView, seq: number): MonitorView {
  const pending = view.preview.pending;
  if (!pending || pending.seq !== seq) return view;
  return { ...view, preview: { shown: pending, pending: null } };
}

/** The view once frame `seq` failed to decode: it is dropped and the shown frame stays (no blank, no flicker). */
export function previewFailed(view: MonitorView, seq: number): MonitorView {
  const pending = view.preview.pending;
  if (!pending || pending.seq !== seq) return view;
  return { ...view, preview: { ...view.preview, pending: null } };
}

/** The `data:` URL of a preview frame (the webview loads images only from `data:` or host-given resource URIs). */
export function previewUrl(preview: MonitorPreview): string {
  return `data:${preview.contentType};base64,${preview.dataBase64}`;
}

/** The state the webview keeps with `vscode.setState` (the host's serializer gets it back after a reload): the
 *  latest state without the preview bytes (they can be large, and the host re-reads the job anyway). */
export function persistedState(view: MonitorView): MonitorState {
  return { ...view.state, preview: null };
}

// ---- what the page shows ----------------------------------------------------------------------------------------

/**
 * The status badge's look: one per server status, `lost` for the client's own (the server no longer knows the job);
 * `other` for a status this version does not know.
 */
type BadgeKind =
  'queued' | 'running' | 'canceling' | 'succeeded' | 'failed' | 'canceled' | 'expired' | 'lost' | 'other';

/** One row of the header's times: the label and the ISO time, or null for "not yet" / "unknown". */
interface TimeRow {
  label: string;
  iso: string | null;
  /** The text shown: the formatted time; without one, `strings.unknown` when the moment has passed, else `strings.notYet`. */
  text: string;
}

/** One output as the gallery shows it. */
export interface OutputCard {
  id: string;
  name: string;
  /** `image` when it has a thumbnail to show; otherwise a file card with type and size. */
  kind: 'image' | 'file';
  thumbnail: string | null;
  /** The content type, else the file's extension in capitals, else empty. */
  typeLabel: string;
  /** Human size (`1.5 MB`), empty when unknown. */
  sizeLabel: string;
  /** Accessible names of the card (opens the file) and of its Save button. */
  openLabel: string;
  saveLabel: string;
  /** True for a PNG (it may carry its workflow: "Open Workflow from Image"). */
  pngWorkflow: boolean;
  /** Accessible name of its Workflow button. */
  workflowLabel: string;
}

/** Everything the page shows, computed from a view: the webview only copies it into the DOM. */
export interface MonitorPresentation {
  header: {
    name: string;
    jobId: string;
    status: string;
    badge: BadgeKind;
    connection: string;
    times: TimeRow[];
    /** "server unreachable …, retrying in N s", or null. */
    retrying: string | null;
  };
  progress: {
    visible: boolean;
    /** 0..1 for the bar, null for an indeterminate bar (no value yet). */
    value: number | null;
    /** `42%`, or null when indeterminate. */
    percentText: string | null;
    nodes: string | null;
    node: string | null;
    step: string | null;
    message: string | null;
    /** "Position N in the queue" (1-based) while queued, else null. */
    queue: string | null;
  };
  preview: {
    visible: boolean;
    /** The `data:` URL of the shown frame, null when none. */
    src: string | null;
    /** "From node …", null when the frame names no node. */
    from: string | null;
    /** Shown when there is no frame yet. */
    placeholder: string | null;
  };
  outputs: { cards: OutputCard[]; empty: string | null };
  error: {
    code: string | null;
    message: string | null;
    /** "Node 12 (KSampler)", or null. */
    node: string | null;
    traceback: string | null;
  } | null;
  logs: string[] | null;
  metrics: { name: string; text: string; notYet: boolean }[];
  /** The Graph section: the job's workflow graph with each node's state, or a line saying why there is none. */
  graph: {
    /** `loading` until the host has read the workflow; `shown` with a model; `unavailable` with the reason. */
    status: 'loading' | 'shown' | 'unavailable';
    /** The model to draw (the same object until a new `graph` message: the page draws it once). */
    model: GraphModel | null;
    /** The line shown instead of a graph (loading, or why none), null with a graph. */
    text: string | null;
    /** The line shown with a graph whose sockets have no types (no node definitions), else null. */
    note: string | null;
    /** Each node's state, the shown preview frame on its node ({@link graphStates}). */
    states: Record<string, NodeRunState>;
    /** Whether choosing a node selects it in the workflow's file (Go to node). */
    canReveal: boolean;
  };
  actions: {
    cancel: boolean;
    rerun: boolean;
    openWorkflow: boolean;
    revealOutputs: boolean;
    goToNode: boolean;
    downloadAll: boolean;
  };
}

/**
 * What each part of the page shows for a view.
 * @param formatTime turns an ISO time into the words shown (the webview passes the locale's date formatting; tests
 *   keep the ISO text).
 */
export function present(view: MonitorView, formatTime: (iso: string) => string = (iso) => iso): MonitorPresentation {
  const { job, strings } = view.state;
  // Ended: a terminal status, or the client's `lost` (nothing more will be learned of the job).
  const terminal = isEndedStatus(job.status);
  const p = job.progress;
  const step = shownStep(p);
  const value = job.status === 'succeeded' ? 1 : barValue(view);
  const queued = job.status === 'queued';
  const shown = view.preview.shown;
  // A time the server does not give is "not yet" only while it can still come: a job that ended (or runs) without
  // `started_at` says nothing of when it started (the self-hosted companion leaves both times null): unknown.
  const started = terminal || job.status === 'running' || job.status === 'canceling';
  const time = (label: string, iso: string | null, past: boolean): TimeRow => ({
    label,
    iso,
    text: iso !== null ? formatTime(iso) : past ? strings.unknown : strings.notYet,
  });
  const error = job.error;
  return {
    header: {
      name: job.workflowName,
      jobId: job.jobId,
      status: job.status,
      badge: badgeKind(job.status),
      connection: job.connection,
      times: [
        time(strings.created, job.createdAt, true),
        time(strings.started, job.startedAt, started),
        time(strings.finished, job.finishedAt, terminal),
      ],
      retrying: job.retrying,
    },
    progress: {
      visible: !terminal || p !== null,
      value: terminal && value === null ? 0 : value,
      percentText: value === null ? null : `${Math.floor(value * 100)}%`,
      // What the progress has, nothing it lacks: no node count without a total (the companion sends `nodes_total: 0`),
      // no class in brackets when none is named.
      nodes:
        p && p.nodesDone !== null && p.nodesTotal !== null && p.nodesTotal > 0
          ? fill(strings.nodes, Math.min(p.nodesDone, p.nodesTotal), p.nodesTotal)
          : null,
      node: !terminal && p && p.currentNode ? nodeText(strings, p.currentNode, p.currentNodeClass) : null,
      step: !terminal && step ? fill(strings.step, step.step, step.steps) : null,
      message: !terminal && p ? p.message : null,
      queue: queued && job.queuePosition !== null ? fill(strings.queuePosition, job.queuePosition + 1) : null,
    },
    preview: {
      // Kept after the job ends until an output exists (then the gallery shows the result).
      visible: !terminal || (shown !== null && job.outputs.length === 0),
      src: shown ? previewUrl(shown) : null,
      from:
        shown && shown.nodeId
          ? fill(strings.previewFrom, shown.nodeClass ? `${shown.nodeId} (${shown.nodeClass})` : shown.nodeId)
          : null,
      placeholder: shown ? null : strings.noPreview,
    },
    outputs: {
      cards: job.outputs.map((o) => outputCard(o, strings)),
      empty: job.outputs.length === 0 ? strings.noOutputs : null,
    },
    error: error
      ? {
          code: error.code,
          message: error.message,
          node: error.nodeId ? nodeText(strings, error.nodeId, error.classType) : null,
          traceback: error.traceback,
        }
      : null,
    logs: job.logs,
    metrics: job.metrics.map((m) => ({ name: m.name, text: m.value ?? strings.notYet, notYet: m.value === null })),
    graph: graphOf(view),
    actions: actionsOf(job),
  };
}

function graphOf(view: MonitorView): MonitorPresentation['graph'] {
  const g = view.graph;
  const strings = view.state.strings;
  if (g === null)
    return { status: 'loading', model: null, text: strings.graphLoading, note: null, states: {}, canReveal: false };
  if (g.model === null)
    return {
      status: 'unavailable',
      model: null,
      text: fill(strings.graphUnavailable, g.unavailable ?? strings.unknown),
      note: null,
      states: {},
      canReveal: false,
    };
  return {
    status: 'shown',
    model: g.model,
    text: null,
    note: g.typesUnknown ? strings.graphTypesUnknown : null,
    states: graphStates(view),
    canReveal: g.canReveal,
  };
}

/**
 * The nodes' states as the graph draws them: the snapshot's (core/graph `nodeRunStates` rules), with the preview
 * frame on screen placed on the node that drew it (a node the states do not name gets it as running while the job
 * runs, else done: as `nodeRunStates` places a preview). The frame shown, not the pending one: the graph shows only
 * a decoded frame, as the Live preview section.
 */
function graphStates(view: MonitorView): Record<string, NodeRunState> {
  const states = view.state.nodeStates;
  const frame = view.preview.shown;
  if (!frame?.nodeId) return states;
  const preview = { seq: frame.seq, contentType: frame.contentType, dataBase64: frame.dataBase64 };
  const known = states[frame.nodeId];
  const status = view.state.job.status === 'running' ? 'running' : 'done';
  return {
    ...states,
    [frame.nodeId]: known ? { ...known, preview } : { status, progress: null, error: null, preview, outputs: [] },
  };
}

/** Which action buttons are enabled: the host's `can`, Cancel only while not ended (never for a lost job), Go to node
 *  only with a node to go to, Download all only with an output. */
function actionsOf(job: MonitorJob): MonitorPresentation['actions'] {
  return {
    cancel: job.can.cancel && !isEndedStatus(job.status),
    rerun: job.can.rerun,
    openWorkflow: job.can.openWorkflow,
    revealOutputs: job.can.revealOutputs,
    goToNode: job.can.goToNode && job.error?.nodeId != null,
    downloadAll: job.outputs.length > 0,
  };
}

/** The badge kind of a server status (unknown statuses are shown as `other`, never rejected: read tolerantly). */
function badgeKind(status: string): BadgeKind {
  const known: BadgeKind[] = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled', 'expired', 'lost'];
  return (known as string[]).includes(status) ? (status as BadgeKind) : 'other';
}

/**
 * What the `aria-live` region says after a change from `before` to `after` (progress is announced through an
 * aria-live region): the status when it changed, else the progress when it crossed into a new tenth (10%, 20%, …),
 * else null (nothing; a screen reader is not told every event).
 */
export function announcement(before: MonitorView | undefined, after: MonitorView): string | null {
  const job = after.state.job;
  const s = after.state.strings;
  const statusChanged = !before || before.state.job.jobId !== job.jobId || before.state.job.status !== job.status;
  const reached = barValue(after);
  const pct = reached === null ? null : Math.floor(reached * 100);
  if (statusChanged)
    return pct !== null && !isEndedStatus(job.status) ? `${job.status}, ${s.progress} ${pct}%` : job.status;
  const tenth = (v: number | null) => (v === null ? -1 : Math.floor(v * 10 + 1e-9));
  if (tenth(reached) > tenth(barValue(before))) return `${s.progress} ${tenth(reached) * 10}%`;
  return null;
}

/** Fills `{0}`, `{1}` … in a translated string (the words come from the host already translated). */
export function fill(template: string, ...args: (string | number)[]): string {
  return template.replace(/\{(\d+)\}/g, (m, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : m));
}

/** "Node 12 (KSampler)", or "Node 12" when the class is not named. */
function nodeText(strings: MonitorStrings, nodeId: string, classType: string | null): string {
  return classType ? fill(strings.node, nodeId, classType) : fill(strings.nodeOnly, nodeId);
}

function outputCard(o: MonitorOutput, strings: MonitorStrings): OutputCard {
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(o.name)?.[1];
  return {
    id: o.id,
    name: o.name,
    kind: o.thumbnail !== null ? 'image' : 'file',
    thumbnail: o.thumbnail,
    typeLabel: o.contentType ?? (ext ? ext.toUpperCase() : ''),
    sizeLabel: humanSize(o.sizeBytes),
    openLabel: `${strings.open} ${o.name}`,
    saveLabel: `${strings.save} ${o.name}`,
    pngWorkflow: o.contentType === 'image/png' || (o.contentType === null && ext?.toLowerCase() === 'png'),
    workflowLabel: `${strings.imageWorkflow} ${o.name}`,
  };
}

function offerPreview(buffer: MonitorView['preview'], frame: MonitorPreview): MonitorView['preview'] {
  return isNewerFrame(frame.seq, buffer.shown?.seq, buffer.pending?.seq)
    ? { shown: buffer.shown, pending: frame }
    : buffer;
}

function newer(a: MonitorPreview | null, b: MonitorPreview): MonitorPreview {
  return a && !isNewerFrame(b.seq, a.seq) ? a : b;
}

/** The bar's value (0..1) of a view: its job's progress value, clamped (core/jobs `clampFraction`); null for none. */
function barValue(view: MonitorView): number | null {
  return clampFraction(view.state.job.progress?.value ?? null);
}
