/**
 * Watching a job to its end. Rules: Job and Asset API v2, What the service does, design rule 1 (poll-first: the event
 * stream is a live enhancement, never the source of truth), Events, rules 1–4, and what the official SDK does where
 * the document says nothing (polling cadence 500 ms growing 1.5× to 5 s; unknown events ignored; progress whose value
 * goes backwards dropped).
 *
 * How: a GET poll loop always runs; while the event stream is healthy it polls at the slow end of the
 * cadence (at most `pollMaxMs`, 5 s, apart), and the stream's events are reported live. When the stream is refused,
 * breaks or ends without a terminal status, polling takes over at the fast end. The final state always comes from GET.
 *
 * Outages (a watch rides out a server outage): the job is durable on the server, so a watch does not
 * give up on transient failures (5xx, no answer, 429, an unreadable answer) of its reads until they have lasted
 * `outageBudgetMs` without a success in between; definitive answers (404, 401, 403, other 4xx) end it at once, except
 * a 404 before the job was ever read within its grace (`notFoundUntil`: a server can answer 404 for a moment right
 * after it created a job).
 *
 * Pauses: a 429's Retry-After, heard by a poll or by the event stream, holds every request of the watch (the polls
 * and the stream's reopening) until the longest pause asked for has passed (http/retry.ts RetryPause): a stream that
 * breaks never wakes a poll early, and a reconnect's short backoff never cuts a longer Retry-After.
 */
import { AbortError, ApiError, ComfyError, ConnectionError, isNotFound } from '../http/errors';
import { DEFAULT_RETRY_POLICY, RetryPause, backoff, isTransientReadFailure, retryAfterMs } from '../http/retry';
import { systemClock, type Clock } from '../http/clock';
import { STREAM_TOO_LARGE, type JobEvent, type WatchUpdate } from './events';
import type { JobSnapshot, JobsApi } from './jobs';
import type { JobOutput, Progress } from './schemas';
import { isTerminalStatus } from '../jobs/model';
import { progressFraction } from '../jobs/progress';
import { progressOf } from './mapping';

export type { WatchUpdate } from './events';

/** Options of {@link watchJob}. Times in ms. */
export interface WatchOptions {
  signal?: AbortSignal;
  clock?: Clock;
  /** Use the event stream (default true); false polls only. */
  stream?: boolean;
  /**
   * The `start` snapshot is one remembered from earlier (its links are followed), not a fresh answer: the job is read
   * first, before the stream opens, so the first state reported is the server's of now. A job id is always read first.
   */
  readFirst?: boolean;
  pollInitialMs?: number;
  pollFactor?: number;
  pollMaxMs?: number;
  /**
   * How long reads of the job may keep failing transiently (5xx, connection errors, timeouts, 429, unreadable
   * answers), counted from the first failure of the current run of failures and reset by any success, before the
   * watch throws the last error. Default 600 000 (10 min).
   */
  outageBudgetMs?: number;
  /** Longest wait between retries of a failing read, ms (a Retry-After is obeyed even when longer). Default 30 000. */
  maxRetryDelayMs?: number;
  /** No byte (keep-alive comments count) for this long means a dead stream, ms. Default 45 000 (the official SDK's). */
  idleTimeoutMs?: number;
  /** Reopenings of a broken stream before the watch polls only. Default 5. */
  maxReconnects?: number;
  /** Shared bound on open streams; without one a watcher always tries its own stream. */
  streams?: StreamBudget;
  /**
   * Until when (ms since the epoch, on the watch's clock) a 404 of a read is taken for a job the server does not show
   * yet rather than a job gone: it is retried like an outage up to then. Only before the job's first answer: once it
   * was read, a 404 ends the watch. Default: {@link NOT_FOUND_GRACE_MS} after the watch starts for a job handed in as
   * a fresh answer (not `readFirst`: a job just created), none for a job id.
   */
  notFoundUntil?: number;
  onUpdate?: (update: WatchUpdate) => void;
}

/**
 * How long after a job's creation (ms) a 404 of its reads is a server not showing it yet, not the job gone: 30 s.
 * Job and Asset API v2 says a 201 means the job is durably recorded; a surface whose reads lag its writes can still
 * answer 404 for a moment after it (assumed: well under this bound).
 */
export const NOT_FOUND_GRACE_MS = 30_000;

/**
 * Removes repeats of the same status, progress or output. It maps and passes on every other event: whether a progress
 * is behind the job's is the job service's rule, applied once to the job's state (core/jobs state.ts).
 */
class Reporter {
  private status: string | undefined;
  private progressKey = '';
  private readonly outputs = new Set<string>();
  constructor(private readonly emit: (update: WatchUpdate) => void) {}

  status_(status: string, queuePosition: number | null): void {
    if (status === this.status) return;
    this.status = status;
    this.emit({ type: 'status', status, queuePosition });
  }

  progress(progress: Progress | null | undefined): void {
    if (!progress) return;
    const model = progressOf(progress);
    const key = JSON.stringify([
      progressFraction(model) ?? 0,
      progress.nodes_done,
      progress.current_node,
      progress.step,
      progress.message,
    ]);
    if (key === this.progressKey) return;
    this.progressKey = key;
    this.emit({ type: 'progress', progress });
  }

  output(output: JobOutput): void {
    if (this.outputs.has(output.id)) return;
    this.outputs.add(output.id);
    this.emit({ type: 'output', output });
  }

  snapshot(s: JobSnapshot): void {
    this.status_(s.job.status, s.job.queue_position ?? null);
    this.progress(s.job.progress);
    for (const o of s.job.outputs) this.output(o);
  }

  event(e: JobEvent): void {
    if (e.type === 'status') this.status_(e.status, e.queuePosition);
    else if (e.type === 'progress') this.progress(e.progress);
    else if (e.type === 'output') this.output(e.output);
    else this.emit({ type: 'preview', preview: e.preview });
  }
}

/** Refusals of the stream that polling answers better than reconnecting (`too_many_streams`, `not_implemented`), and
 * a stream that sent a line or frame over its cap (reopening it would only fetch the same again). */
function isRefusal(err: unknown): boolean {
  if (ComfyError.is(err) && err.code === STREAM_TOO_LARGE) return true;
  return ApiError.is(err) && err.status < 500 && err.code !== 'rate_limited';
}

export { isTransientReadFailure } from '../http/retry';

/** A failure as a short reason for a person: its code and, for an answer, the HTTP status. */
function reasonOf(err: unknown): string {
  if (ApiError.is(err)) return `${err.code} (HTTP ${err.status})`;
  if (ComfyError.is(err)) return `${err.code}: ${err.message}`;
  return String(err);
}

/**
 * The current run of transient failures of the reads of one watch, and the wait before each retry. The budget counts
 * from the first failure of the run and resets on a success.
 */
class Outage {
  private since: number | undefined;
  private failures = 0;
  /** True once a read of the job succeeded: a 404 then means the job is gone. */
  private seen = false;

  constructor(
    private readonly clock: Clock,
    private readonly budgetMs: number,
    private readonly maxDelayMs: number,
    private readonly report: (update: WatchUpdate) => void,
    /** The watch's pause: a 429's Retry-After holds every request of the watch. */
    private readonly pause: RetryPause,
    /** Until when a 404 before the first answer is ridden out (ms since the epoch); -Infinity: never. */
    private readonly notFoundUntil: number,
  ) {}

  succeeded(): void {
    this.since = undefined;
    this.failures = 0;
    this.seen = true;
  }

  /** The server showed the job otherwise (its event stream opened): a 404 from now on means it is gone. */
  shown(): void {
    this.seen = true;
  }

  /**
   * The wait (ms) before retrying after `err`, reported as a `retrying` update. Backoff is the retry policy's
   * jittered exponential one, capped at `maxDelayMs`, never shorter than `floorMs` (the poll cadence), and cut so
   * that a last try falls at the end of the budget; a 429's Retry-After is obeyed (never retried sooner) and holds the
   * whole watch. A 404 before the job was ever read is retried the same way until `notFoundUntil`, and no later.
   * @throws `err` itself when it is definitive, when the budget is spent, or when its Retry-After ends after the
   *   budget does (no retry may start after the budget).
   */
  failed(err: unknown, floorMs: number): number {
    const now = this.clock.now();
    const notShownYet = isNotFound(err) && !this.seen && now < this.notFoundUntil;
    if (!notShownYet && !isTransientReadFailure(err)) throw err;
    if (this.since === undefined) this.since = now;
    this.failures++;
    const left = Math.min(this.since + this.budgetMs, notShownYet ? this.notFoundUntil : Infinity) - now;
    if (left <= 0) throw err;
    let delayMs: number;
    const retryAfter = retryAfterMs(err);
    if (retryAfter !== undefined) {
      delayMs = Math.max(retryAfter, floorMs);
      if (delayMs > left) throw err;
      this.pause.extend(retryAfter);
    } else {
      const step = backoff(this.failures, { ...DEFAULT_RETRY_POLICY, maxDelayMs: this.maxDelayMs });
      delayMs = Math.min(Math.max(step, Math.min(floorMs, this.maxDelayMs)), left);
    }
    this.report({ type: 'retrying', delayMs, reason: reasonOf(err), failingSinceMs: this.since });
    return delayMs;
  }
}

/**
 * A bound on the event streams open at once; watchers beyond it poll (many jobs watched at once share a bounded
 * number of streams). One per client.
 */
export class StreamBudget {
  private open = 0;
  constructor(readonly max: number) {}
  /** A lease on one stream, or undefined when all are in use. */
  acquire(): { release(): void } | undefined {
    if (this.open >= this.max) return undefined;
    this.open++;
    let released = false;
    return {
      release: () => {
        if (!released) this.open--;
        released = true;
      },
    };
  }
  get inUse(): number {
    return this.open;
  }
}

/**
 * Watches a job until it reaches a terminal status and returns the final job as GET returned it.
 *
 * The stream: keep-alive comments count as life; no byte for `idleTimeoutMs` (45 s) means a dead stream; a broken
 * or dead stream is reopened after a jittered backoff, at most `maxReconnects` times, and its first snapshot
 * re-syncs; a refusal (429 `too_many_streams`, 501 `not_implemented`) or a line or frame over its cap (events.ts)
 * leaves the watch to polling. While a stream is open, GET still runs at most `pollMaxMs` apart.
 *
 * Every read of the job (the first, the polls, the last) rides out transient failures ({@link isTransientReadFailure})
 * for `outageBudgetMs` of continuous failure, with capped jittered backoff or the 429's Retry-After, reporting a
 * `retrying` update before each wait.
 * @param start a snapshot (its links are followed) or a job id
 * @throws AbortError when `signal` aborts; NotFoundError, UnauthorizedError, ForbiddenError and other definitive
 *   ApiErrors of GET at once; the last transient error once the outage budget is spent.
 */
export async function watchJob(
  jobs: JobsApi,
  start: JobSnapshot | string,
  options: WatchOptions = {},
): Promise<JobSnapshot> {
  const clock = options.clock ?? systemClock;
  const initial = options.pollInitialMs ?? 500;
  const factor = options.pollFactor ?? 1.5;
  const max = options.pollMaxMs ?? 5000;
  const idleMs = options.idleTimeoutMs ?? 45_000;
  const maxReconnects = options.maxReconnects ?? 5;
  const policy = DEFAULT_RETRY_POLICY;
  const signal = options.signal;
  if (signal?.aborted) throw new AbortError('watch aborted');
  const reporter = new Reporter((u) => options.onUpdate?.(u));
  const pause = new RetryPause(clock);
  const notFoundUntil =
    options.notFoundUntil ??
    (typeof start !== 'string' && !options.readFirst ? clock.now() + NOT_FOUND_GRACE_MS : -Infinity);
  const outage = new Outage(
    clock,
    options.outageBudgetMs ?? 600_000,
    options.maxRetryDelayMs ?? 30_000,
    (u) => options.onUpdate?.(u),
    pause,
    notFoundUntil,
  );
  const mode = (m: 'stream' | 'polling', reason?: string): void =>
    options.onUpdate?.({ type: 'mode', mode: m, reason });
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });

  let wake = new AbortController();
  let streamHealthy = false;
  let terminalSeen = false;

  /** One connection of the event stream; resolves when it ends. @throws its failure. */
  const streamOnce = async (current: JobSnapshot): Promise<void> => {
    const connection = new AbortController();
    const connSignal = AbortSignal.any([stop.signal, connection.signal]);
    let lastByte = clock.now();
    let idle = false;
    let watchdog: Promise<void> = Promise.resolve();
    try {
      const { events } = await jobs.events(current, { signal: connSignal, onBytes: () => (lastByte = clock.now()) });
      // Idle time counts from the connection (before it, the request's own timeout applies). The watchdog sleeps
      // until the deadline measured from the LAST byte, then re-checks: a reset timer is never checked before it
      // could have fired.
      lastByte = clock.now();
      watchdog = (async () => {
        while (!connSignal.aborted) {
          const left = idleMs - (clock.now() - lastByte);
          if (left <= 0) {
            idle = true;
            connection.abort();
            return;
          }
          try {
            await clock.sleep(left, connSignal);
          } catch {
            return;
          }
        }
      })();
      streamHealthy = true;
      // The server opened the job's stream: it knows the job, so a later 404 means it is gone.
      outage.shown();
      mode('stream');
      for await (const event of events) {
        reporter.event(event);
        if (event.type === 'status' && isTerminalStatus(event.status)) {
          terminalSeen = true;
          break;
        }
      }
    } catch (err) {
      if (idle) throw new ConnectionError(`no byte on the event stream for ${Math.round(idleMs / 1000)} s`);
      throw err;
    } finally {
      streamHealthy = false;
      connection.abort();
      await watchdog;
    }
  };

  try {
    // The first and last reads ride out an outage like the polls do.
    const read = async (job: JobSnapshot | string): Promise<JobSnapshot> => {
      for (;;) {
        if (pause.remainingMs() > 0) {
          try {
            await pause.wait(signal);
          } catch {
            throw new AbortError('watch aborted');
          }
        }
        try {
          const snapshot = await jobs.get(job, signal);
          outage.succeeded();
          return snapshot;
        } catch (err) {
          if (signal?.aborted) throw new AbortError('watch aborted');
          const wait = outage.failed(err, initial);
          try {
            // The caller's signal, not `stop`: the last read comes after the poll loop stopped.
            await clock.sleep(wait, signal);
          } catch {
            throw new AbortError('watch aborted');
          }
        }
      }
    };
    let current = typeof start === 'string' || options.readFirst ? await read(start) : start;
    reporter.snapshot(current);

    const streamTask = (async () => {
      if (options.stream === false || isTerminalStatus(current.job.status)) return;
      const lease = options.streams ? options.streams.acquire() : { release: () => undefined };
      if (!lease) {
        mode('polling', 'all event streams of this client are in use');
        return;
      }
      try {
        for (let attempt = 0; !stop.signal.aborted && !terminalSeen; attempt++) {
          if (attempt > 0) {
            if (attempt > maxReconnects) {
              mode('polling', `the event stream failed ${maxReconnects + 1} times`);
              return;
            }
            await clock.sleep(backoff(attempt, policy), stop.signal);
          }
          // A Retry-After heard by a poll or an earlier stream holds every opening (a reconnect's short backoff too).
          if (pause.remainingMs() > 0) await pause.wait(stop.signal);
          try {
            await streamOnce(current);
            if (!terminalSeen) mode('polling', 'the event stream ended before the job did');
          } catch (err) {
            if (stop.signal.aborted) return;
            // A rate limit heard by the stream holds the polls too (the account's limit, not the stream's).
            const asked = isRefusal(err) ? undefined : retryAfterMs(err);
            if (asked !== undefined) pause.extend(asked);
            const reason = ComfyError.is(err) ? `${err.code}: ${err.message}` : String(err);
            mode('polling', `event stream unavailable (${reason})`);
            if (isRefusal(err)) return;
          } finally {
            // Whatever ended the stream, GET now: the authoritative state, and what the stream may have missed.
            wake.abort();
          }
        }
      } catch {
        // aborted while waiting to reconnect
      } finally {
        lease.release();
      }
    })();

    let delay = initial;
    /** The wait before retrying a failed poll: not cut short by the stream (a Retry-After is obeyed). */
    let retryDelay: number | undefined;
    while (!isTerminalStatus(current.job.status)) {
      if (!terminalSeen) {
        try {
          if (retryDelay !== undefined) await clock.sleep(retryDelay, stop.signal);
          else await clock.sleep(streamHealthy ? max : delay, AbortSignal.any([stop.signal, wake.signal]));
        } catch (err) {
          if (!AbortError.is(err) || stop.signal.aborted) throw new AbortError('watch aborted');
        }
        if (wake.signal.aborted) wake = new AbortController();
      }
      // Woken early (the stream broke, or said terminal): a pause the server asked for still stands.
      if (pause.remainingMs() > 0) {
        try {
          await pause.wait(stop.signal);
        } catch {
          throw new AbortError('watch aborted');
        }
      }
      retryDelay = undefined;
      try {
        current = await jobs.get(current, signal);
        outage.succeeded();
      } catch (err) {
        if (signal?.aborted) throw new AbortError('watch aborted');
        // The outage budget counts from the first failure of this run, not from the start of a long watch; a
        // backoff never shortens the cadence.
        retryDelay = outage.failed(err, delay);
        terminalSeen = false;
        continue;
      } finally {
        if (!streamHealthy) delay = Math.min(delay * factor, max);
      }
      reporter.snapshot(current);
      // The stream said terminal but GET does not yet: keep polling at the fast end.
      if (terminalSeen && !isTerminalStatus(current.job.status)) terminalSeen = false;
    }
    stop.abort();
    await streamTask;
    // The final state always comes from GET, even when the job was already terminal when handed in.
    if (current === start) {
      current = await read(current);
      reporter.snapshot(current);
    }
    return current;
  } finally {
    stop.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}
