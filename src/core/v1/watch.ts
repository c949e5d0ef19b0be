/**
 * Watching a v1 job (Cloud API v1 (deprecated), "States and transitions", "Events", "Endpoints" rule 3), reported
 * through the job model's {@link JobUpdate}s and ended with a {@link JobAnswer} (mapping.ts), so that whatever follows a
 * job follows a v1 job unchanged.
 *
 * - The socket is OPEN (its `open` awaited, the feature flags sent) BEFORE the prompt is posted ({@link submitAndWatch}):
 *   no event is lost between the two.
 * - Every message is filtered by `prompt_id`: all connections of a user receive every message (rule 3), so another
 *   job's `executed` never becomes our output. PREVIEW_IMAGE and TEXT frames carry no prompt id: they are ours only
 *   while the last message on this connection that named a prompt named ours (the socket says which job is executing).
 * - `GET /api/job/{id}/status` is polled alongside (the server sends no heartbeat on an idle socket) at v2's cadence
 *   (500 ms, ×1.5, at most 5 s; at most 5 s apart while the socket is healthy); a socket event that says the execution
 *   ended polls at once. The final state comes from the status endpoint, never from the socket alone.
 * - A socket that closes or fails is reopened after {@link reconnectDelay} (bounded, jittered; after
 *   {@link QUICK_RECONNECTS} quick tries at least 6 s), at most `maxReconnects` times in a row; then, or after a
 *   refusal of the handshake (a 4xx other than 429), polling alone carries on.
 * - Terminal: success, completed, error, non_retryable_error, lost, cancelled (mapping.ts); anything else is in flight.
 * - Outputs: from `executed` events as they come, confirmed at the end by `GET /api/jobs/{id}`, else (404)
 *   `GET /api/history_v2/{id}` (V1Client.outputs); when both answer 404, the `executed` ones stand.
 */
import { AbortError } from '../http/errors';
import type { JobAnswer, JobUpdate } from '../jobs/backend';
import type { DownloadOptions } from '../http/download';
import { assertApiWorkflow, withoutSchemaKey, type ApiWorkflow } from '../util/workflow';
import type { V1Client, V1DownloadedOutput, V1Submission } from './client';
import { answerOfV1, isV1TerminalStatus, jobOfV1, jobStatusOf } from './mapping';
import type { EngineSocket } from '../engine/socket';
import { followSocket, reasonOf } from '../engine/follow';
import { Tracker } from '../engine/tracker';

/** A job's times from the status endpoint's answer and the socket (mapping.ts V1JobState). */
function timesOf(
  answer: { created_at?: string | null; updated_at?: string | null },
  tracker: { startedAt: string | undefined },
) {
  return { createdAt: answer.created_at, updatedAt: answer.updated_at, startedAt: tracker.startedAt };
}

// The reconnect policy of the engine's socket (engine/follow.ts), as v1's index has always named it.
export { MAX_RECONNECT_DELAY_MS, QUICK_RECONNECTS, SLOW_RECONNECT_MIN_MS, reconnectDelay } from '../engine/follow';

/** Options of {@link watchV1Job}. Times in ms. */
export interface V1WatchOptions {
  signal?: AbortSignal;
  onUpdate?: (update: JobUpdate) => void;
  /** An open socket to listen on first ({@link submitAndWatch}'s); the watch owns it and closes it. */
  socket?: EngineSocket;
  /** false: poll only (a given socket is closed). Default true. */
  useSocket?: boolean;
  /** The workflow, when known: its node count and classes make the progress (`nodes_total`, `current_node_class`). */
  workflow?: ApiWorkflow;
  pollInitialMs?: number;
  pollFactor?: number;
  pollMaxMs?: number;
  /** Reconnects in a row (without a connection that lived a minute) before polling alone. Default 8. */
  maxReconnects?: number;
  /**
   * Told the job after every answer of the status endpoint (the server's word: what a job service records), with the
   * outputs and progress known so far; the final one is the return value.
   */
  onAnswer?: (answer: JobAnswer) => void;
}

/**
 * Watches prompt `promptId` until the status endpoint says it is terminal (the rules of this module's header), and
 * returns it in the model (mapping.ts: status mapped, outputs with `/api/view` URLs, error).
 * @throws AbortError when `signal` aborts; NotFoundError (unknown prompt) and other definitive ApiErrors of the status
 *   endpoint; the last error of a read once its retries are spent (retry.ts).
 */
export async function watchV1Job(client: V1Client, promptId: string, options: V1WatchOptions = {}): Promise<JobAnswer> {
  const clock = client.clock;
  const initial = options.pollInitialMs ?? 500;
  const factor = options.pollFactor ?? 1.5;
  const max = options.pollMaxMs ?? 5_000;
  const maxReconnects = options.maxReconnects ?? 8;
  const signal = options.signal;
  const report = (u: JobUpdate): void => options.onUpdate?.(u);
  const mode = (m: 'stream' | 'polling', reason?: string): void => report({ type: 'mode', mode: m, reason });
  if (signal?.aborted) {
    options.socket?.close();
    throw new AbortError('watch aborted');
  }
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let wake = new AbortController();
  let socketHealthy = false;
  const tracker = new Tracker(promptId, client, options.workflow, report, () => wake.abort());

  let failingSince: number | undefined;
  const onRetry = (info: { delayMs: number; attempt: number; reason: string }): void => {
    if (info.attempt === 1 || failingSince === undefined) failingSince = clock.now();
    report({ type: 'retrying', delayMs: info.delayMs, reason: info.reason, failingSinceMs: failingSince });
  };

  const sockets = followSocket({
    socket: options.socket,
    useSocket: options.useSocket,
    connect: (stopSignal) => client.connect({ signal: stopSignal }),
    clock,
    random: client.random,
    maxReconnects,
    stop: stop.signal,
    tracker,
    mode,
    healthy: (open) => (socketHealthy = open),
    missed: () => wake.abort(),
  });
  try {
    let delay = initial;
    let answer = await client.status(promptId, { signal, onRetry });
    for (;;) {
      failingSince = undefined;
      tracker.reportStatus(jobStatusOf(answer.status, tracker.started));
      if (isV1TerminalStatus(answer.status)) break;
      options.onAnswer?.({
        job: jobOfV1({
          ...timesOf(answer, tracker),
          promptId,
          v1Status: answer.status,
          started: tracker.started,
          outputs: [...tracker.outputs.values()],
          progress: tracker.progress,
        }),
        requestId: answer.requestId,
      });
      try {
        await clock.sleep(socketHealthy ? max : delay, AbortSignal.any([stop.signal, wake.signal]));
      } catch {
        if (stop.signal.aborted) throw new AbortError('watch aborted');
      }
      if (wake.signal.aborted) wake = new AbortController();
      if (!socketHealthy) delay = Math.min(delay * factor, max);
      try {
        answer = await client.status(promptId, { signal, onRetry });
      } catch (err) {
        if (signal?.aborted) throw new AbortError('watch aborted');
        throw err;
      }
    }
    stop.abort();
    await sockets;
    const confirmed = await client.outputs(promptId, { signal, onRetry });
    for (const output of confirmed?.outputs ?? []) tracker.reportOutput(output);
    const outputs = confirmed ? confirmed.outputs : [...tracker.outputs.values()];
    const final = answerOfV1({
      ...timesOf(answer, tracker),
      promptId,
      v1Status: answer.status,
      started: tracker.started,
      outputs,
      failure: tracker.failure ?? confirmed?.failure,
      errorMessage: answer.error_message,
      progress: tracker.progress,
      requestId: answer.requestId,
    });
    options.onAnswer?.(final);
    return final;
  } catch (err) {
    if (signal?.aborted && !AbortError.is(err)) throw new AbortError('watch aborted');
    throw err;
  } finally {
    stop.abort();
    await sockets;
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Options of {@link submitAndWatch}. */
export interface SubmitAndWatchOptions extends Omit<V1WatchOptions, 'socket' | 'workflow'> {
  /** The partner-service key (`extra_data.api_key_svc_org`). */
  partnerKey?: string;
  /** Called once the prompt is accepted. */
  onSubmitted?: (submission: V1Submission) => void;
  /** Where to download the outputs of a succeeded job; none: not downloaded. */
  outputDir?: string;
  onDownload?: DownloadOptions['onProgress'];
}

/** The outcome of {@link submitAndWatch}: the submission, the final job and the files written. */
export interface V1RunResult {
  submission: V1Submission;
  final: JobAnswer;
  files: V1DownloadedOutput[];
}

/** A prompt posted by {@link postWithSocket}: its submission, the socket opened first (if it opened) and the prompt. */
export interface PostedPrompt {
  submission: V1Submission;
  /** The socket opened before posting (its `clientId` was sent); undefined when it could not be opened. */
  socket: EngineSocket | undefined;
  /** The prompt as posted (`$schema` removed). */
  prompt: ApiWorkflow;
  /** Why there is no socket, when one was wanted and could not be opened (a watch reports it as `mode: polling`). */
  noSocketReason?: string;
}

/**
 * Opens the socket, THEN posts the prompt with the socket's `clientId` (so no event of the job is lost). A socket
 * that cannot be opened does not stop the submission: the watch polls and tries the socket again. The prompt is
 * posted once: v1 has no Idempotency-Key, so a retry could run it twice.
 * @throws InputError before anything is opened for a workflow that is not API format; AbortError when `signal`
 *   aborts before posting; as V1Client.submit (the socket then closed).
 */
export async function postWithSocket(
  client: V1Client,
  workflow: unknown,
  options: { signal?: AbortSignal; partnerKey?: string; useSocket?: boolean } = {},
): Promise<PostedPrompt> {
  const prompt = withoutSchemaKey(workflow);
  assertApiWorkflow(prompt);
  let socket: EngineSocket | undefined;
  let noSocketReason: string | undefined;
  if (options.useSocket !== false) {
    try {
      socket = await client.connect({ signal: options.signal });
    } catch (err) {
      if (options.signal?.aborted) throw new AbortError('aborted before submitting', {}, { requestSent: false });
      noSocketReason = `the WebSocket could not be opened (${reasonOf(err)})`;
    }
  }
  try {
    const submission = await client.submit(prompt, {
      partnerKey: options.partnerKey,
      clientId: socket?.clientId,
      signal: options.signal,
    });
    return { submission, socket, prompt, noSocketReason };
  } catch (err) {
    socket?.close();
    throw err;
  }
}

/**
 * Posts the prompt with its socket opened first ({@link postWithSocket}), then watches it ({@link watchV1Job}) and,
 * when it succeeded and `outputDir` is set, downloads its outputs (V1Client.downloadOutputs).
 * @throws as {@link postWithSocket}, {@link watchV1Job} and V1Client.downloadOutputs.
 */
export async function submitAndWatch(
  client: V1Client,
  workflow: unknown,
  options: SubmitAndWatchOptions = {},
): Promise<V1RunResult> {
  const posted = await postWithSocket(client, workflow, options);
  if (posted.noSocketReason) options.onUpdate?.({ type: 'mode', mode: 'polling', reason: posted.noSocketReason });
  const { submission, socket, prompt } = posted;
  options.onSubmitted?.(submission);
  const final = await watchV1Job(client, submission.promptId, { ...options, socket, workflow: prompt });
  const files =
    final.job.status === 'succeeded' && options.outputDir
      ? await client.downloadOutputs(final.job, options.outputDir, {
          signal: options.signal,
          onProgress: options.onDownload,
        })
      : [];
  return { submission, final, files };
}
