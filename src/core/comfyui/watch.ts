/**
 * Watching a prompt of a ComfyUI server (ComfyUI server API (observed), Following a job and Reading state), reported
 * through the job model's {@link JobUpdate}s and ended with a {@link JobAnswer} read from the server, never from the
 * socket alone.
 * - The socket is followed as v1's is (engine/follow.ts: bounded, jittered reconnects; a refused handshake leaves
 *   the reads alone), its messages through the engine's {@link Tracker} (engine/tracker.ts): every message
 *   filtered by `prompt_id`; a run answered from the cache (`execution_cached` of every node, no per-node
 *   `executing`, the output node's `executed` replayed) reports its outputs all the same.
 * - `/queue` then `/history/{id}` is read alongside ({@link ComfyUIClient.place}): at 500 ms, ×1.5, at most 5 s apart
 *   (5 s while the socket is open); a message saying the execution ended, or a connection that ended, reads at once.
 * - The watch ends once the prompt is in history, or neither lists it (`lost`, or `canceled` when this client
 *   removed it from the queue). Reads that keep failing transiently (a restart refuses connections) are retried
 *   within an outage budget: a restarted server then answers, and the job reads `lost`, never still running.
 */
import type { EngineSocket } from '../engine/socket';
import { followSocket } from '../engine/follow';
import { Tracker } from '../engine/tracker';
import { AbortError, describeError } from '../http/errors';
import { isTransientReadFailure } from '../http/retry';
import type { JobAnswer, JobUpdate } from '../jobs/backend';
import { isEndedStatus } from '../jobs/model';
import type { ApiWorkflow } from '../util/workflow';
import type { ComfyUIClient } from './client';
import { answerOfComfyUI, statusOf, type KnownJob } from './mapping';

/** Options of {@link watchComfyUIJob}. Times in ms. */
export interface ComfyUIWatchOptions {
  signal?: AbortSignal;
  onUpdate?: (update: JobUpdate) => void;
  onAnswer?: (answer: JobAnswer) => void;
  /** An open socket whose `clientId` the prompt was posted with; the watch owns it and closes it. */
  socket?: EngineSocket;
  /** false: read `/queue` and `/history` only (a given socket is closed). Default true. */
  useSocket?: boolean;
  /** Reconnects in a row (without a connection that lived a minute) before the reads go on alone. Default 8. */
  maxReconnects?: number;
  /** The prompt as posted: its node count and classes make the progress. */
  workflow?: ApiWorkflow;
  /** True when this client removed the prompt from the queue (an absent prompt is then `canceled`, not `lost`). */
  canceledHere?: () => boolean | Promise<boolean>;
  pollInitialMs?: number;
  pollFactor?: number;
  pollMaxMs?: number;
  /**
   * How long the reads may go on failing transiently (a server restarting refuses connections) before the watch gives
   * up (ms). Default 600 000: a restart takes tens of seconds, and afterwards the job reads `lost`, never running.
   */
  outageBudgetMs?: number;
}

/**
 * Follows prompt `promptId` until the server's queue and history say it ended (this module's header).
 * @throws AbortError when `signal` aborts; a definitive read error at once; the last transient one once the outage
 *   budget is spent.
 */
export async function watchComfyUIJob(
  client: ComfyUIClient,
  promptId: string,
  options: ComfyUIWatchOptions = {},
): Promise<JobAnswer> {
  const { signal, socket } = options;
  const max = options.pollMaxMs ?? 5_000;
  const report = (u: JobUpdate): void => options.onUpdate?.(u);
  if (signal?.aborted) {
    socket?.close();
    throw new AbortError('watch aborted');
  }
  const stop = new AbortController();
  let wake = new AbortController();
  const tracker = new Tracker(promptId, client, options.workflow, report, () => wake.abort());
  let socketOpen = false;
  const sockets = followSocket({
    socket,
    useSocket: options.useSocket,
    connect: (stopSignal) => client.connect({ signal: stopSignal }),
    clock: client.clock,
    random: client.random,
    maxReconnects: options.maxReconnects ?? 8,
    stop: stop.signal,
    tracker,
    mode: (mode, reason) => report({ type: 'mode', mode, reason }),
    healthy: (open) => (socketOpen = open),
    missed: () => wake.abort(),
  });
  let failingSince: number | undefined;
  const onRetry = (info: { delayMs: number; attempt: number; reason: string }): void => {
    // The outage counts from its first failure; a read that succeeds ends it.
    failingSince ??= client.clock.now();
    report({ type: 'retrying', delayMs: info.delayMs, reason: info.reason, failingSinceMs: failingSince });
  };
  const known = (): KnownJob => ({
    jobOutputs: (files) => client.jobOutputs(files),
    outputs: [...tracker.outputs.values()],
    progress: tracker.progress,
    startedAt: tracker.startedAt,
    failure: tracker.failure,
  });
  try {
    let delay = options.pollInitialMs ?? 500;
    for (;;) {
      let read;
      try {
        read = await client.place(promptId, false, { signal, onRetry });
        // Only an absent prompt asks whether this client removed it (the record is read then, not at every poll).
        if (read.placement.where === 'absent') read.placement.canceledHere = (await options.canceledHere?.()) ?? false;
      } catch (err) {
        // The read's own retries are spent: an outage (a restart, a proxy down) is ridden out within the budget.
        if (signal?.aborted || !isTransientReadFailure(err)) throw err;
        failingSince ??= client.clock.now();
        const left = failingSince + (options.outageBudgetMs ?? 600_000) - client.clock.now();
        if (left <= 0) throw err;
        const delayMs = Math.min(max, left);
        report({ type: 'retrying', delayMs, reason: describeError(err), failingSinceMs: failingSince });
        await client.clock.sleep(delayMs, signal);
        continue;
      }
      failingSince = undefined;
      const status = statusOf(read.placement);
      const answer = answerOfComfyUI(promptId, read.placement, known(), read.requestId);
      for (const output of answer.job.outputs) tracker.reportOutput(output);
      tracker.reportStatus(status);
      options.onAnswer?.(answer);
      if (isEndedStatus(status)) return answer;
      try {
        await client.clock.sleep(socketOpen ? max : delay, AbortSignal.any([wake.signal, ...(signal ? [signal] : [])]));
      } catch {
        if (signal?.aborted) throw new AbortError('watch aborted');
      }
      if (wake.signal.aborted) wake = new AbortController();
      if (!socketOpen) delay = Math.min(delay * (options.pollFactor ?? 1.5), max);
    }
  } catch (err) {
    if (signal?.aborted && !AbortError.is(err)) throw new AbortError('watch aborted');
    throw err;
  } finally {
    stop.abort();
    await sockets;
  }
}
