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
import type { V1Failure } from '../engine/files';
import type { JobAnswer } from '../jobs/backend';
import type { Job, JobError, JobOutput, JobStatus, Progress } from '../jobs/model';

// The engine's file references and failures (engine/files.ts), as v1's index has always named them.
export {
  failureOf,
  filesOfNodeOutput,
  filesOfOutputs,
  isFinalOutput,
  jobOutputOf,
  type FileRef,
  type NodeFile,
  type V1Failure,
} from '../engine/files';

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
