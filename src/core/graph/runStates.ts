/**
 * Where a job is, node by node: a pure function from the client's job model (core/jobs: {@link Job}, and the job
 * service's {@link JobState} with its latest preview) to a state per node id.
 *
 * What the job model gives per node, and so all this uses (Job and Asset API v2, Events: the progress event's inner
 * fields are not shown there; the client's model keeps the running node, its step, the outputs' nodes, the failed
 * node): the running node (`progress.currentNode`, at `step` of `steps`), each output's `nodeId`, the error's
 * `nodeId` and message, the preview's `nodeId`, and the job's status. The model keeps no list of finished or cached
 * nodes, except the ones an engine answered from its cache (`progress.cachedNodes`, a ComfyUI server's
 * `execution_cached`): those are `cached`.
 */
import { isEndedStatus, type Job, type JobOutput } from '../jobs/model';
import { shownStep } from '../jobs/progress';
import type { JobState } from '../jobs/state';
import { GRAPH_LIMITS, shortText } from './model';
import type { NodeRunState, NodeRunStatus } from './types';

export type { NodeRunOutput, NodeRunState, NodeRunStatus } from './types';

/** Options of {@link nodeRunStates}. */
export interface NodeRunStatesOptions {
  /** Makes a server string safe to show (the extension's redactor); default: as is. */
  clean?: (text: string) => string;
}

/** At most this many characters of a failed node's error message. */
const MAX_ERROR = 500;

function blank(status: NodeRunStatus): NodeRunState {
  return { status, progress: null, error: null, preview: null, outputs: [] };
}

/** The instance ids a path id runs inside: `"12:5:3"` → `"12"`, `"12:5"`. */
function ancestors(id: string): string[] {
  const parts = id.split(':');
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join(':'));
  return out;
}

/**
 * The state of each node of `nodeIds` (execution ids, inner ones included) in the job `source` (a {@link Job}, or
 * the job service's {@link JobState}, whose preview is then placed too). Rules:
 * 1. A job not yet running (queued, or any status in flight that is not `running`): every node waits.
 * 2. A running job: the current node runs (with its step of steps); a node with an output is done; the rest wait.
 * 3. A succeeded job: every node is done.
 * 4. A failed job: the error's node failed (with the message); a node with an output is done; the others have no state
 *    (not known to have run).
 * 5. A canceled, expired or lost job: a node with an output is done; the others have no state.
 * 6. Outputs are listed on their node (`nodeId`); the preview on the node that drew it.
 * 7. A running or failed node inside a subgraph instance (`"12:5"`) makes its instance box (`"12"`) running or
 *    failed too, so the state shows in the outer graph.
 * 8. A node the engine answered from its cache (`progress.cachedNodes`) of a running or succeeded job is cached.
 * Ids the job names that are not in `nodeIds` still get their state (a job of another version of the workflow).
 */
export function nodeRunStates(
  source: Job | Pick<JobState, 'job' | 'preview'>,
  nodeIds: Iterable<string>,
  options: NodeRunStatesOptions = {},
): Record<string, NodeRunState> {
  const clean = options.clean ?? ((t: string) => t);
  const job = 'job' in source ? source.job : source;
  const preview = 'job' in source ? source.preview : null;
  const states: Record<string, NodeRunState> = {};
  const ended = isEndedStatus(job.status);
  const of = (id: string, status: NodeRunStatus): NodeRunState => {
    const s = (states[id] ??= blank(status));
    s.status = status;
    return s;
  };

  const all = job.status === 'succeeded' ? 'done' : !ended ? 'waiting' : undefined;
  if (all) for (const id of nodeIds) states[id] = blank(all);

  const byNode = new Map<string, JobOutput[]>();
  for (const o of job.outputs) if (o.nodeId) (byNode.get(o.nodeId) ?? byNode.set(o.nodeId, []).get(o.nodeId)!).push(o);
  for (const [id, outputs] of byNode) {
    const s = of(id, 'done');
    s.outputs = outputs.map((o) => ({
      id: o.id,
      name: shortText(clean(o.name ?? o.id), GRAPH_LIMITS.title),
      type: o.type === null ? null : clean(o.type),
    }));
  }

  const current = job.status === 'running' ? job.progress?.currentNode : null;
  if (current) {
    const s = of(current, 'running');
    const shown = shownStep(job.progress);
    s.progress = shown ? { value: shown.step, max: shown.steps } : null;
    for (const a of ancestors(current)) if (states[a]?.status !== 'failed') of(a, 'running');
  }

  // Rule 8: a node the engine answered from its cache (a running or succeeded job's) is cached, not run.
  if (job.status === 'running' || job.status === 'succeeded')
    for (const id of job.progress?.cachedNodes ?? []) if (states[id]?.status !== 'running') of(id, 'cached');

  if (job.status === 'failed' && job.error?.nodeId) {
    const s = of(job.error.nodeId, 'failed');
    s.error = shortText(clean(job.error.message ?? job.error.code ?? 'failed'), MAX_ERROR);
    for (const a of ancestors(job.error.nodeId)) {
      const outer = of(a, 'failed');
      outer.error ??= s.error;
    }
  }

  if (preview?.nodeId) {
    const s = states[preview.nodeId] ?? of(preview.nodeId, job.status === 'running' ? 'running' : 'done');
    s.preview = { seq: preview.seq, contentType: preview.contentType, dataBase64: preview.dataBase64 };
  }
  return states;
}

/**
 * The nodes' states of a job after `next` (from the job as it stands now, {@link nodeRunStates}) when `seen` were
 * shown for that same job before: what the job model cannot say again is kept, so a view never loses a node's state.
 * 1. A node seen done stays done where `next` says it waits or says nothing of it: the job model keeps no list of
 *    finished nodes, so a job that moved on to another branch, or failed, no longer names the nodes that ran (its
 *    outputs kept when `next` has none).
 * 2. A node seen running that the job has since moved past (another node runs now, or the job failed at another
 *    node, or succeeded) ran to its end: done, likewise.
 * 3. The failing node is marked failed: the one the job's error names ({@link nodeRunStates}, rule 4); when the error
 *    names none, the node seen running when the job failed (the engine runs one node at a time), with the ids of the
 *    instances it runs inside (rule 7), each with the error's message.
 * 4. A node seen cached stays cached where `next` says it is done, waits, or says nothing of it.
 * A state `next` gives otherwise is `next`'s; a canceled, expired or lost job's node seen running is not said to
 * have ended. Pure: the caller keeps the result as the next `seen` (the job monitor keeps it per job).
 */
export function keepSeenStates(
  seen: Readonly<Record<string, NodeRunState>>,
  next: Readonly<Record<string, NodeRunState>>,
  job: Job,
  options: NodeRunStatesOptions = {},
): Record<string, NodeRunState> {
  const clean = options.clean ?? ((t: string) => t);
  const out: Record<string, NodeRunState> = { ...next };
  const failed = job.status === 'failed';
  // The innermost node seen running when the job failed naming no node: its instances were shown running with it.
  const blamed =
    failed && job.error && !job.error.nodeId
      ? Object.keys(seen)
          .filter((id) => seen[id]!.status === 'running')
          .sort((a, b) => b.split(':').length - a.split(':').length)[0]
      : undefined;
  const failing = failed ? (job.error?.nodeId ?? blamed) : undefined;
  const stillOn = (id: string, node: string | null | undefined): boolean =>
    Boolean(node) && (node === id || ancestors(node!).includes(id));
  const movedPast = (id: string): boolean =>
    (job.status === 'running' && !stillOn(id, job.progress?.currentNode)) ||
    job.status === 'succeeded' ||
    (failed && !stillOn(id, failing));
  for (const [id, was] of Object.entries(seen)) {
    const now = out[id];
    // Rule 4: answered from the cache, it stays so (a finished job read again may not carry its cached nodes).
    if (was.status === 'cached' && (now === undefined || now.status === 'waiting' || now.status === 'done')) {
      out[id] = {
        ...(now ?? blank('cached')),
        status: 'cached',
        outputs: now?.outputs.length ? now.outputs : was.outputs,
      };
      continue;
    }
    if (now !== undefined && now.status !== 'waiting') continue;
    if (was.status !== 'done' && !(was.status === 'running' && movedPast(id))) continue;
    out[id] = {
      ...blank('done'),
      outputs: now?.outputs.length ? now.outputs : was.outputs,
      preview: now?.preview ?? null,
    };
  }
  if (blamed !== undefined) {
    const error = shortText(clean(job.error?.message ?? job.error?.code ?? 'failed'), MAX_ERROR);
    for (const id of [blamed, ...ancestors(blamed)])
      out[id] = { ...(out[id] ?? blank('failed')), status: 'failed', progress: null, error };
  }
  return out;
}
