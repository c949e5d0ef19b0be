/**
 * THE mapping from the deprecated v1 API into the client's job model (core/jobs), in one place: the v1 backend, its
 * watch and its client report jobs in the model's shapes, so what follows a job (the Jobs tree, notifications, the
 * monitor, the CLI) follows a v1 job unchanged, without v1 being dressed up as another API.
 *
 * Sources: Cloud API v1 (deprecated), "States and transitions" (terminal: success, error, non_retryable_error, lost,
 * cancelled; any other value in flight), "Resources and their fields" (file references, node outputs) and "Endpoints"
 * (`/api/view`); the local engine says `completed` for success too. The model's statuses are queued, running,
 * canceling; terminal succeeded, failed, canceled, expired.
 *
 * | v1 status | model status |
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
import { contentTypeOf } from '../util/fileNames';
import type { JobAnswer } from '../jobs/backend';
import type { Job, JobError, JobOutput, JobStatus, Progress } from '../jobs/model';

/** The name of this API in the model ({@link Job.api}). */
export const V1_API = 'v1';

/** The document's five terminal values plus the local engine's `completed`. */
export const V1_TERMINAL_STATUSES = [
  'success',
  'completed',
  'error',
  'non_retryable_error',
  'lost',
  'cancelled',
] as const;
const TERMINAL = new Set<string>(V1_TERMINAL_STATUSES);
const QUEUED = new Set(['submitted', 'queued_waiting', 'waiting_to_dispatch', 'pending']);
const RUNNING = new Set(['preparing', 'executing', 'in_progress']);

/**
 * True for a terminal v1 status (Cloud API v1 (deprecated), "States and transitions"; `completed` of the local
 * engine). Anything else is in
 * flight, however unfamiliar (`weird_new_state` included): a client polls until it sees a terminal value.
 */
export function isV1TerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

/**
 * The model's status of a v1 status (the table of this module's header).
 * @param started true when the job was seen executing (a socket event): an unknown in-flight value then reads `running`
 */
export function jobStatusOf(v1Status: string, started = false): JobStatus {
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

/** A file reference (Cloud API v1 (deprecated), Resources and their fields: output items and `original_ref`). */
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
function fileRefOf(value: unknown): FileRef | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.filename !== 'string' || v.filename.length === 0) return undefined;
  return {
    filename: v.filename,
    subfolder: typeof v.subfolder === 'string' ? v.subfolder : '',
    type: typeof v.type === 'string' && v.type ? v.type : 'output',
  };
}

/**
 * The files of one node output (Cloud API v1 (deprecated), Resources and their fields: "object keyed by kind, with
 * arrays of file references under `images`, `video`, `audio`"): every array under any key, its items that are file
 * references; other values (text, numbers, an `animated` flag list) are not files and are skipped.
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
  return Object.entries(outputs as Record<string, unknown>).flatMap(([nodeId, output]) =>
    filesOfNodeOutput(nodeId, output),
  );
}

/** True for a final output: `type` `output` (a `temp` file is a preview; an `input` an upload). */
export function isFinalOutput(file: NodeFile): boolean {
  return file.ref.type === 'output';
}

/** The output `type` of a v1 kind: `images` image, `video`/`gifs` video, `audio` audio, anything else file. */
function outputTypeOf(kind: string): string {
  if (kind === 'images') return 'image';
  if (kind === 'video' || kind === 'gifs' || kind === 'videos') return 'video';
  if (kind === 'audio') return 'audio';
  return 'file';
}

/**
 * A v1 file as an output of the model: `id` `<type>/<subfolder>/<filename>` (stable and unique per file; names the
 * partial file of its download), `name` the file name (sanitized when downloaded), `contentType` from its extension,
 * `url` the absolute `/api/view` URL it is downloaded from (Cloud API v1 (deprecated), "Endpoints"), `hash` and
 * `sizeBytes` unknown (null).
 * @param viewUrl the `/api/view` URL of this file (V1Client.viewUrl)
 */
export function jobOutputOf(file: NodeFile, viewUrl: URL): JobOutput {
  const { filename, subfolder, type } = file.ref;
  return {
    id: `${type}/${subfolder ? `${subfolder}/` : ''}${filename}`,
    nodeId: file.nodeId,
    name: filename,
    type: outputTypeOf(file.kind),
    contentType: contentTypeOf(filename),
    sizeBytes: null,
    hash: null,
    url: viewUrl.href,
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
  const s = (x: unknown): string | undefined =>
    typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined;
  return {
    exception_type: s(v.exception_type),
    exception_message: s(v.exception_message),
    traceback: v.traceback,
    node_id: s(v.node_id),
    node_type: s(v.node_type),
  };
}

/**
 * The model's `error` of a finished v1 job (code, message, node and its class, traceback); null unless the job failed.
 * `lost` says the job disappeared (Cloud API v1 (deprecated), "States and transitions"); `error` and
 * `non_retryable_error` carry the engine's exception when known, else the status endpoint's `error_message`.
 */
export function jobErrorOf(v1Status: string, failure?: V1Failure, errorMessage?: string | null): JobError | null {
  if (v1Status === 'lost') {
    return {
      code: 'lost',
      message: 'The job disappeared before finishing (v1 status "lost"); submit it again.',
      nodeId: null,
      classType: null,
    };
  }
  if (v1Status !== 'error' && v1Status !== 'non_retryable_error') return null;
  const message = failure?.exception_message
    ? `${failure.exception_type ? `${failure.exception_type}: ` : ''}${failure.exception_message}`
    : errorMessage ||
      (v1Status === 'non_retryable_error' ? 'The job failed; retrying will not help.' : 'The job failed.');
  return {
    code: v1Status,
    message,
    nodeId: failure?.node_id ?? null,
    classType: failure?.node_type ?? null,
    ...(failure?.traceback !== undefined ? { traceback: failure.traceback } : {}),
  };
}

/** What a v1 job is known to be, to be shown as a job of the model. */
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
  /** The request id of the answer of the status endpoint. */
  requestId: string | undefined;
}

/**
 * A v1 job in the model: `status` mapped ({@link jobStatusOf}), outputs, `error` ({@link jobErrorOf}), `progress` when
 * known, times when known (`createdAt`, `startedAt` from the socket, `completedAt` = `updated_at` once terminal; never
 * invented), no queue position, expiry, logs or metrics (v1 gives none).
 */
export function jobOfV1(state: Omit<V1JobState, 'requestId'>): Job {
  return {
    id: state.promptId,
    api: V1_API,
    status: jobStatusOf(state.v1Status, state.started),
    createdAt: state.createdAt ?? null,
    startedAt: state.startedAt ?? null,
    // The status endpoint's last update of a terminal job is its end.
    completedAt: isV1TerminalStatus(state.v1Status) ? (state.updatedAt ?? null) : null,
    expiresAt: null,
    queuePosition: null,
    progress: state.progress ?? null,
    outputs: state.outputs,
    error: jobErrorOf(state.v1Status, state.failure, state.errorMessage),
    metrics: {},
  };
}

/** A v1 job as one answer of the status endpoint described it ({@link jobOfV1}, with that answer's request id). */
export function answerOfV1(state: V1JobState): JobAnswer {
  return { job: jobOfV1(state), requestId: state.requestId };
}
