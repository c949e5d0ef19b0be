/**
 * THE mapping from v1 to v2's vocabulary, in one place, so that what follows a v2 job (the Jobs tree, notifications,
 * the monitor: everything fed by {@link WatchUpdate}s and {@link JobSnapshot}s) follows a v1 job unchanged.
 *
 * Sources: cloud-api-v1.md "States and transitions" (terminal: success, error, non_retryable_error, lost, cancelled;
 * any other value in flight), "Resources and their fields" (file references, node outputs) and "Endpoints"
 * (`/api/view`); FACTS.md "v1 (deprecated) and the local engine" (`completed` is success too); and on the v2 side
 * jobs-assets-api-v2.md "States and transitions" (queued, running, canceling; terminal succeeded, failed, canceled,
 * expired) and FACTS.md "v2 jobs" (`outputs[]` items, `error`, `progress`).
 *
 * | v1 status | v2 status |
 * |---|---|
 * | success, completed | succeeded |
 * | error, non_retryable_error | failed (error code = the v1 status) |
 * | lost | failed, error `lost` saying the job disappeared |
 * | cancelled | canceled |
 * | cancel_requested | canceling |
 * | submitted, queued_waiting, waiting_to_dispatch, pending | queued |
 * | preparing, executing, in_progress | running |
 * | anything else | running once execution was seen, else queued (still in flight) |
 */
import { contentTypeOf } from '../v2/assets';
import { JobSchema, type Job, type JobError, type JobOutput, type Progress } from '../v2/schemas';
import type { JobStatus } from '../jobs/model';
import type { JobSnapshot } from '../v2/jobs';

/** The document's five terminal values plus FACTS.md's `completed`. */
export const V1_TERMINAL_STATUSES = ['success', 'completed', 'error', 'non_retryable_error', 'lost', 'cancelled'] as const;
const TERMINAL = new Set<string>(V1_TERMINAL_STATUSES);
const QUEUED = new Set(['submitted', 'queued_waiting', 'waiting_to_dispatch', 'pending']);
const RUNNING = new Set(['preparing', 'executing', 'in_progress']);

/**
 * True for a terminal v1 status (cloud-api-v1.md "States and transitions", FACTS.md `completed`). Anything else is in
 * flight, however unfamiliar (`weird_new_state` included): a client polls until it sees a terminal value.
 */
export function isV1TerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

/**
 * The v2 status of a v1 status (the table of this module's header).
 * @param started true when the job was seen executing (a socket event): an unknown in-flight value then reads `running`
 */
export function v2StatusOf(v1Status: string, started = false): JobStatus {
  switch (v1Status) {
    case 'success':
    case 'completed':
      return 'succeeded';
    case 'error':
    case 'non_retryable_error':
    case 'lost':
      return 'failed';
    case 'cancelled':
      return 'canceled';
    case 'cancel_requested':
      return 'canceling';
    default:
      if (QUEUED.has(v1Status)) return started ? 'running' : 'queued';
      if (RUNNING.has(v1Status)) return 'running';
      return started ? 'running' : 'queued';
  }
}

/** A file reference (cloud-api-v1.md "Resources": output items and `original_ref`). */
export interface FileRef {
  filename: string;
  /** Accepted for compatibility, ignored by the cloud's flat storage; usually ''. */
  subfolder: string;
  /** `output` for final outputs, `temp` for previews, `input` for uploads. */
  type: string;
}

/** One file of a node output, with the node and the kind (`images`, `video`, `audio`, or another key). */
export interface NodeFile {
  nodeId: string;
  kind: string;
  ref: FileRef;
}

/** A file reference read tolerantly: `filename` essential (a non-empty string); `subfolder` '' and `type` `output` when absent. */
export function fileRefOf(value: unknown): FileRef | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.filename !== 'string' || v.filename.length === 0) return undefined;
  return { filename: v.filename, subfolder: typeof v.subfolder === 'string' ? v.subfolder : '', type: typeof v.type === 'string' && v.type ? v.type : 'output' };
}

/**
 * The files of one node output (cloud-api-v1.md "Resources": "object keyed by kind, with arrays of file references
 * under `images`, `video`, `audio`"): every array under any key, its items that are file references; other values
 * (text, numbers, an `animated` flag list) are not files and are skipped.
 */
export function filesOfNodeOutput(nodeId: string, output: unknown): NodeFile[] {
  if (!output || typeof output !== 'object' || Array.isArray(output)) return [];
  const files: NodeFile[] = [];
  for (const [kind, items] of Object.entries(output as Record<string, unknown>)) {
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      const ref = fileRefOf(item);
      if (ref) files.push({ nodeId, kind, ref });
    }
  }
  return files;
}

/** The files of an `outputs` map keyed by node id (`GET /api/jobs/{id}`, history), in node order. */
export function filesOfOutputs(outputs: unknown): NodeFile[] {
  if (!outputs || typeof outputs !== 'object' || Array.isArray(outputs)) return [];
  return Object.entries(outputs as Record<string, unknown>).flatMap(([nodeId, output]) => filesOfNodeOutput(nodeId, output));
}

/** True for a final output: `type` `output` (a `temp` file is a preview; an `input` an upload). */
export function isFinalOutput(file: NodeFile): boolean {
  return file.ref.type === 'output';
}

/** v2's output `type` for a v1 kind: `images` image, `video`/`gifs` video, `audio` audio, anything else file. */
function outputTypeOf(kind: string): string {
  if (kind === 'images') return 'image';
  if (kind === 'video' || kind === 'gifs' || kind === 'videos') return 'video';
  if (kind === 'audio') return 'audio';
  return 'file';
}

/**
 * A v1 file as a v2 output item (FACTS.md "v2 jobs" `outputs[]`): `id` `<type>/<subfolder>/<filename>` (stable and
 * unique per file; names the partial file of its download), `name` the file name (sanitized when downloaded),
 * `content_type` from its extension, `url` the absolute `/api/view` URL it is downloaded from (cloud-api-v1.md
 * "Endpoints"), `hash` and `size_bytes` unknown (null).
 * @param viewUrl the `/api/view` URL of this file (V1Client.viewUrl)
 */
export function jobOutputOf(file: NodeFile, viewUrl: URL, promptId: string): JobOutput {
  const { filename, subfolder, type } = file.ref;
  return {
    id: `${type}/${subfolder ? `${subfolder}/` : ''}${filename}`,
    node_id: file.nodeId,
    name: filename,
    type: outputTypeOf(file.kind),
    content_type: contentTypeOf(filename),
    size_bytes: null,
    hash: null,
    url: viewUrl.href,
    url_expires_at: null,
    job_id: promptId,
  };
}

/** What v1 says about a failure: the socket's `execution_error` data, or `execution_error` of `GET /api/jobs/{id}`. */
export interface V1Failure {
  exception_type?: string;
  exception_message?: string;
  traceback?: unknown;
  node_id?: string;
  node_type?: string;
}

/** The failure fields of an `execution_error` object (the socket's event data or the job detail's), read tolerantly. */
export function failureOf(value: unknown): V1Failure | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const s = (x: unknown): string | undefined => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined);
  return { exception_type: s(v.exception_type), exception_message: s(v.exception_message), traceback: v.traceback, node_id: s(v.node_id), node_type: s(v.node_type) };
}

/**
 * v2's `error` of a finished v1 job (FACTS.md "v2 jobs": `code`, `message`, optional `node_id`, `class_type`,
 * `traceback`); null unless the job failed. `lost` says the job disappeared (cloud-api-v1.md "States"); `error` and
 * `non_retryable_error` carry the engine's exception when known, else the status endpoint's `error_message`.
 */
export function jobErrorOf(v1Status: string, failure?: V1Failure, errorMessage?: string | null): JobError | null {
  if (v1Status === 'lost') {
    return { code: 'lost', message: 'The job disappeared before finishing (v1 status "lost"); submit it again.', node_id: null, class_type: null };
  }
  if (v1Status !== 'error' && v1Status !== 'non_retryable_error') return null;
  const message = failure?.exception_message
    ? `${failure.exception_type ? `${failure.exception_type}: ` : ''}${failure.exception_message}`
    : errorMessage || (v1Status === 'non_retryable_error' ? 'The job failed; retrying will not help.' : 'The job failed.');
  return {
    code: v1Status,
    message,
    node_id: failure?.node_id ?? null,
    class_type: failure?.node_type ?? null,
    ...(failure?.traceback !== undefined ? { traceback: failure.traceback } : {}),
  };
}

/** What a v1 job is known to be, to be shown as a v2 {@link JobSnapshot}. */
export interface V1JobState {
  promptId: string;
  /** The v1 status as the status endpoint returned it. */
  v1Status: string;
  /** True once execution was seen (socket events): an unknown in-flight status then maps to `running`. */
  started?: boolean;
  outputs: JobOutput[];
  failure?: V1Failure;
  errorMessage?: string | null;
  progress?: Progress | null;
  /** `created_at` of the status endpoint (ISO 8601), when given. */
  createdAt?: string | null;
  /** When execution began (the socket's `execution_start` timestamp, ISO 8601), when seen. */
  startedAt?: string | null;
  /** `updated_at` of the status endpoint: the job's end once its status is terminal (ISO 8601). */
  updatedAt?: string | null;
  /** The URL of the request that returned the status (the snapshot's `source`). */
  source: URL;
  requestId: string | undefined;
}

/**
 * A v1 job as a v2 {@link JobSnapshot}: `status` mapped ({@link v2StatusOf}), `outputs` as v2 output items, `error`
 * ({@link jobErrorOf}), `progress` when known, times when known (`created_at`, `started_at` from the socket,
 * `completed_at` = `updated_at` once terminal), no `urls` (v1 has no job links: a v2 client must not GET this job; it
 * is followed through V1Client), `metrics` empty. The v1 status is kept as `v1_status` (a loose field).
 */
export function toJobSnapshot(state: V1JobState): JobSnapshot {
  const job: Job = JobSchema.parse({
    id: state.promptId,
    status: v2StatusOf(state.v1Status, state.started),
    outputs: state.outputs,
    error: jobErrorOf(state.v1Status, state.failure, state.errorMessage),
    progress: state.progress ?? null,
    created_at: state.createdAt ?? null,
    started_at: state.startedAt ?? null,
    // The status endpoint's last update of a terminal job is its end.
    completed_at: isV1TerminalStatus(state.v1Status) ? (state.updatedAt ?? null) : null,
    urls: {},
    metrics: {},
    v1_status: state.v1Status,
  });
  return { job, source: state.source, requestId: state.requestId };
}
