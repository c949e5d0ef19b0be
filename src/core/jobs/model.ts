/**
 * The client's own job model, owned by no API: what the job service, the CLI's shared parts and every view read.
 * Each API folder maps its own wire shapes into it (its `mapping.ts`); this module imports nothing, so the monitor's
 * webview script can use it too.
 *
 * Its words for a job's status are the Job and Asset API v2's ("States and transitions": queued, running, canceling;
 * terminal succeeded, failed, canceled, expired), which the other APIs map theirs into. A status a server sends that
 * is none of these is kept as it is and counts as in flight (read tolerantly).
 */

/**
 * The statuses of the model (the API's). A backend may report another value; it is kept and counts as in flight. The
 * client adds one of its own, {@link LOST_STATUS}, which no server sends.
 */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'canceling', 'canceled', 'failed', 'expired'] as const;
/** A known status, or any other string a server sent. */
export type JobStatus = (typeof JOB_STATUSES)[number] | (string & {});

const TERMINAL = new Set<string>(['succeeded', 'canceled', 'failed', 'expired']);

/**
 * True for a terminal status: succeeded, canceled, failed, expired (Job and Asset API v2, "States and transitions");
 * after it a job never changes. The one terminal test of the client: every API's backend maps its statuses to these.
 */
export function isTerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

/**
 * The client's own status of a job its server no longer knows: the server answered 404 for it (any 404 code:
 * `not_found`, `job_not_found`, …: gone past retention, or a server restarted without it), or it was not terminal and
 * its `expires_at` passed (Job and Asset API v2, Limits, rule 2: the job and its outputs are retrievable until then). Never a server's word:
 * no API sends it. It is not terminal in the API's sense (a later answer of a server that knows the job again wins,
 * {@link isTerminalStatus} stays false), but it has ended for the views ({@link isEndedStatus}): not running, counted
 * nowhere, never followed or cancelled; it can be re-run or removed from the list.
 */
export const LOST_STATUS = 'lost';

/** True for the client's {@link LOST_STATUS}: the server no longer knows the job. */
export function isLostStatus(status: string): boolean {
  return status === LOST_STATUS;
}

/**
 * True when a job has ended as far as the views go: a terminal status ({@link isTerminalStatus}), or the client's
 * {@link LOST_STATUS}. Groups (Running / Recent), counts (badge, status bar), follows and Cancel read it.
 */
export function isEndedStatus(status: string): boolean {
  return TERMINAL.has(status) || status === LOST_STATUS;
}

/**
 * The status to show for a job known as `status` with retention deadline `expiresAt` (ISO 8601, null or undefined
 * when unknown) at `nowMs` (ms since the epoch): {@link LOST_STATUS} for a status that is not terminal past its
 * `expires_at` (the server keeps a job only until then: Job and Asset API v2, Limits, rule 2), else `status` itself. A terminal
 * status is never changed (what ended stays as it ended).
 */
export function statusAt(status: string, expiresAt: string | null | undefined, nowMs: number): string {
  if (TERMINAL.has(status) || status === LOST_STATUS || !expiresAt) return status;
  const deadline = Date.parse(expiresAt);
  return Number.isFinite(deadline) && deadline < nowMs ? LOST_STATUS : status;
}

/**
 * How far a running job is. Every field may be null (unknown). `value` is the server's fraction in 0..1 when it gives
 * one; `nodesDone` of `nodesTotal` nodes are done; `currentNode` (its `class_type` `currentNodeClass`) runs, at
 * `step` of `steps`; `message` is the server's own words (e.g. `KSampler 21/50`).
 */
export interface Progress {
  value: number | null;
  nodesDone: number | null;
  nodesTotal: number | null;
  currentNode: string | null;
  currentNodeClass: string | null;
  step: number | null;
  steps: number | null;
  message: string | null;
  /**
   * The nodes the engine answered from its cache in this run (a ComfyUI server's `execution_cached`), at most
   * {@link MAX_CACHED_NODES} ids; absent where the API does not say.
   */
  cachedNodes?: readonly string[];
}

/** At most this many cached node ids are kept in a {@link Progress}. */
export const MAX_CACHED_NODES = 1000;

/**
 * One output of a job. `id` names it (on an API whose outputs are assets, the asset id); `name` is the file name the
 * server gave (unsafe until sanitized); `type` its kind (`image`, `video`, `audio`, `file`, or another value);
 * `sizeBytes` in bytes; `hash` `blake3:<hex>` when known; `url` the absolute URL its bytes are fetched from when the
 * API gives one (the backend that listed it downloads it; a view never fetches it).
 */
export interface JobOutput {
  id: string;
  nodeId: string | null;
  name: string | null;
  type: string | null;
  contentType: string | null;
  sizeBytes: number | null;
  hash: string | null;
  url: string | null;
}

/** Why a job failed: the server's code and message, the node (`nodeId`, its `classType`) and traceback when given. */
export interface JobError {
  code: string | null;
  message: string | null;
  nodeId: string | null;
  classType: string | null;
  /** A string, a list of strings (Python's `format_exception`), or anything else the server sent; absent when none. */
  traceback?: unknown;
}

/** A live preview frame of a running job: the image's bytes (base64) and type, and the node that drew it. */
export interface Preview {
  nodeId: string | null;
  contentType: string;
  dataBase64: string;
}

/**
 * A job as the client knows it. Times are ISO 8601 strings, null when unknown or not yet; `queuePosition` is 0-based
 * (null when not queued or unknown); `outputs` fill in as the job runs; `error` is set once it failed; `logs` is what
 * the run printed, where the API gives it (inner structure not shown: read by `logsText`); `metrics` are numbers, a
 * null one not available yet. `api` says which API described it (`v2`, or another its backend names).
 */
export interface Job {
  id: string;
  api: string;
  status: JobStatus;
  createdAt: string | null;
  startedAt: string | null;
  completedAt: string | null;
  expiresAt: string | null;
  queuePosition: number | null;
  progress: Progress | null;
  outputs: JobOutput[];
  error: JobError | null;
  logs?: unknown;
  metrics: Record<string, number | null>;
}
