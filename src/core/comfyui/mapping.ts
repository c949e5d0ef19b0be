/**
 * THE mapping from a ComfyUI server's native API into the client's job model (core/jobs), in one place. Sources:
 * ComfyUI server API (observed), Reading state (`/queue`, `/history`) and Following a job.
 *
 * | where the prompt id is found | model status |
 * |---|---|
 * | `/queue` `queue_running` | running |
 * | `/queue` `queue_pending` | queued (its 0-based place in `queue_pending`) |
 * | `/history`, `status_str` `success` | succeeded |
 * | `/history`, `status_str` `error` with `execution_interrupted` among its messages | canceled |
 * | `/history`, `status_str` `error` otherwise | failed (the `execution_error` message's exception) |
 * | neither (`/history/{id}` answers `{}`) | lost (a restart forgets both), or canceled when this client removed it |
 *
 * `{}` from `/history` alone never means "still running": the queue is read first.
 */
import { failureOf, filesOfOutputs, type NodeFile, type V1Failure } from '../engine/files';
import type { JobAnswer } from '../jobs/backend';
import { LOST_STATUS, type Job, type JobError, type JobOutput, type Progress } from '../jobs/model';
import { isPlainObject } from '../util/workflow';

/** The name of this API in the model ({@link Job.api}) and in a connection's `api`. */
export const COMFYUI_API = 'comfyui';

/** One entry of `/queue` or of a history entry's `prompt`: `[number, prompt_id, prompt, extra_data, outputs]`. */
export interface QueueEntry {
  number: number | undefined;
  promptId: string;
  /** The API-format workflow as the server keeps it. */
  prompt: Record<string, unknown> | undefined;
  extraData: Record<string, unknown> | undefined;
}

/** A queue entry read tolerantly: undefined unless an array whose second item is a non-empty string. */
export function queueEntryOf(value: unknown): QueueEntry | undefined {
  if (!Array.isArray(value) || typeof value[1] !== 'string' || !value[1]) return undefined;
  return {
    number: typeof value[0] === 'number' ? value[0] : undefined,
    promptId: value[1],
    prompt: isPlainObject(value[2]) ? value[2] : undefined,
    extraData: isPlainObject(value[3]) ? value[3] : undefined,
  };
}

/** One history entry, read tolerantly. */
export interface HistoryEntry {
  entry: QueueEntry | undefined;
  /** The raw `outputs` map (node id → node output). */
  outputs: unknown;
  statusStr: string | undefined;
  completed: boolean | undefined;
  /** `status.messages` as `[type, data]` pairs (others skipped). */
  messages: { type: string; data: Record<string, unknown> }[];
}

/** A history entry (`/history/{id}`'s value) read tolerantly; undefined for a value that is not an object. */
export function historyEntryOf(value: unknown): HistoryEntry | undefined {
  if (!isPlainObject(value)) return undefined;
  const status = isPlainObject(value.status) ? value.status : {};
  const messages = Array.isArray(status.messages)
    ? status.messages.flatMap((m) =>
        Array.isArray(m) && typeof m[0] === 'string' ? [{ type: m[0], data: isPlainObject(m[1]) ? m[1] : {} }] : [],
      )
    : [];
  return {
    entry: queueEntryOf(value.prompt),
    outputs: value.outputs,
    statusStr: typeof status.status_str === 'string' ? status.status_str : undefined,
    completed: typeof status.completed === 'boolean' ? status.completed : undefined,
    messages,
  };
}

/** Where a prompt id was found: the answers of `/queue` and `/history/{id}` read together. */
export type Placement =
  | { where: 'running' }
  | { where: 'pending'; position: number }
  | { where: 'history'; history: HistoryEntry }
  /** Neither lists it; `canceledHere` when this client removed it from the queue. */
  | { where: 'absent'; canceledHere: boolean };

/** The ISO 8601 time of a message's `timestamp` (ms since the epoch), else null. */
function timeOf(data: Record<string, unknown> | undefined): string | null {
  const t = data?.timestamp;
  return typeof t === 'number' && Number.isFinite(t) && t > 0 ? new Date(t).toISOString() : null;
}

/** The first message of `type` among a history entry's messages. */
function messageOf(history: HistoryEntry, type: string): Record<string, unknown> | undefined {
  return history.messages.find((m) => m.type === type)?.data;
}

/** The model's status of a placement (the table of this module's header). */
export function statusOf(placement: Placement): string {
  switch (placement.where) {
    case 'running':
      return 'running';
    case 'pending':
      return 'queued';
    case 'absent':
      return placement.canceledHere ? 'canceled' : LOST_STATUS;
    case 'history': {
      const h = placement.history;
      if (h.statusStr === 'success' || (h.statusStr === undefined && h.completed === true)) return 'succeeded';
      if (messageOf(h, 'execution_interrupted')) return 'canceled';
      return 'failed';
    }
  }
}

/** The model's error of a failed or lost job (the `execution_error` message's exception, node and class), else null. */
export function jobErrorOf(status: string, failure: V1Failure | undefined): JobError | null {
  if (status === LOST_STATUS) {
    return {
      code: 'lost',
      message:
        'The server no longer knows the job: it was restarted (a restart forgets its queue and history), or another client deleted it. Submit it again.',
      nodeId: null,
      classType: null,
    };
  }
  if (status !== 'failed') return null;
  const message = failure?.exception_message
    ? `${failure.exception_type ? `${failure.exception_type}: ` : ''}${failure.exception_message}`
    : 'The job failed.';
  return {
    code: 'execution_error',
    message,
    nodeId: failure?.node_id ?? null,
    classType: failure?.node_type ?? null,
    ...(failure?.traceback !== undefined ? { traceback: failure.traceback } : {}),
  };
}

/** What a job is known to be besides its placement: the outputs maker, and what a watch learnt from the socket. */
export interface KnownJob {
  /** The final files among a node output's files as the model's outputs (the client's `/view` URLs). */
  jobOutputs(files: NodeFile[]): JobOutput[];
  /** Outputs heard on the socket (a history entry's outputs replace them). */
  outputs?: JobOutput[];
  progress?: Progress | null;
  /** The socket's `execution_start` time, when heard. */
  startedAt?: string | null;
  /** The socket's `execution_error`, when heard. */
  failure?: V1Failure;
}

/**
 * A ComfyUI prompt in the model: status ({@link statusOf}), outputs (the history entry's, else those heard), error
 * ({@link jobErrorOf}), times from the history's messages (`execution_start`, and the end message's `timestamp`);
 * ComfyUI says nothing of a creation time, expiry, logs or metrics.
 */
export function jobOfComfyUI(promptId: string, placement: Placement, known: KnownJob): Job {
  const status = statusOf(placement);
  const history = placement.where === 'history' ? placement.history : undefined;
  const end = history
    ? (messageOf(history, 'execution_success') ??
      messageOf(history, 'execution_error') ??
      messageOf(history, 'execution_interrupted'))
    : undefined;
  const failure = (history ? failureOf(messageOf(history, 'execution_error')) : undefined) ?? known.failure;
  return {
    id: promptId,
    api: COMFYUI_API,
    status,
    createdAt: null,
    startedAt: (history ? timeOf(messageOf(history, 'execution_start')) : null) ?? known.startedAt ?? null,
    completedAt: timeOf(end),
    expiresAt: null,
    queuePosition: placement.where === 'pending' ? placement.position : null,
    progress: known.progress ?? null,
    outputs: history ? known.jobOutputs(filesOfOutputs(history.outputs)) : (known.outputs ?? []),
    error: jobErrorOf(status, failure),
    metrics: {},
  };
}

/**
 * {@link jobOfComfyUI} with the request id of the answer that told it. No `wire`: ComfyUI keeps no document of a job
 * (its history entry is not one, and says nothing of a queued, running or lost job), so what prints a job as JSON
 * prints the model's, whose `status` is one of queued, running, succeeded, failed, canceled, lost.
 */
export function answerOfComfyUI(
  promptId: string,
  placement: Placement,
  known: KnownJob,
  requestId: string | undefined,
): JobAnswer {
  return { job: jobOfComfyUI(promptId, placement, known), requestId };
}
