/**
 * Watching a job to its end. Rules: jobs-assets-api-v2.md design rule 1 (poll-first: the event stream is a
 * live enhancement, never the source of truth), "Events" 1–4, and FACTS.md (polling cadence 500 ms growing
 * 1.5× to 5 s; unknown events ignored; progress whose value goes backwards dropped).
 *
 * How: a GET poll loop always runs; while the event stream is healthy it polls at the slow end of the
 * cadence, and the stream's events are reported live. When the stream is refused, breaks or ends without a
 * terminal status, polling takes over at the fast end. The final state always comes from GET.
 */
import { AbortError, ApiError, ComfyError, ConnectionError, TimeoutError } from './errors';
import { systemClock, type Clock } from './clock';
import type { JobEvent } from './events';
import type { JobSnapshot, JobsApi } from './jobs';
import { isTerminalStatus, type JobOutput, type Preview, type Progress } from './schemas';

/** What a watcher reports while a job runs, in order; never a progress that goes backwards. */
export type WatchUpdate =
  | { type: 'status'; status: string; queuePosition: number | null }
  | { type: 'progress'; progress: Progress }
  | { type: 'preview'; preview: Preview }
  | { type: 'output'; output: JobOutput }
  | { type: 'mode'; mode: 'stream' | 'polling'; reason?: string };

/** Options of {@link watchJob}. Times in ms. */
export interface WatchOptions {
  signal?: AbortSignal;
  clock?: Clock;
  /** Use the event stream (default true); false polls only. */
  stream?: boolean;
  pollInitialMs?: number;
  pollFactor?: number;
  pollMaxMs?: number;
  /** Consecutive failed polls (network, timeout, 5xx) tolerated before giving up. Default 5. */
  maxPollFailures?: number;
  onUpdate?: (update: WatchUpdate) => void;
}

/** Removes the progress that would go backwards, and repeats of the same status or output. */
class Reporter {
  private status: string | undefined;
  private progressValue = -1;
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
    const value = progress.value ?? (progress.nodes_total ? (progress.nodes_done ?? 0) / progress.nodes_total : 0);
    if (value < this.progressValue) return;
    const key = JSON.stringify([value, progress.nodes_done, progress.current_node, progress.step, progress.message]);
    if (key === this.progressKey) return;
    this.progressValue = value;
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

/** Errors of a poll that are worth polling again after (nothing was changed by a GET). */
function isTransient(err: unknown): boolean {
  return ConnectionError.is(err) || TimeoutError.is(err) || (ApiError.is(err) && (err.status >= 500 || err.code === 'rate_limited'));
}

/**
 * Watches a job until it reaches a terminal status and returns the final job as GET returned it.
 * @param start a snapshot (its links are followed) or a job id
 * @throws AbortError when `signal` aborts; NotFoundError and other ApiErrors of GET; the last transient error
 *   after `maxPollFailures` failed polls in a row.
 */
export async function watchJob(jobs: JobsApi, start: JobSnapshot | string, options: WatchOptions = {}): Promise<JobSnapshot> {
  const clock = options.clock ?? systemClock;
  const initial = options.pollInitialMs ?? 500;
  const factor = options.pollFactor ?? 1.5;
  const max = options.pollMaxMs ?? 5000;
  const maxFailures = options.maxPollFailures ?? 5;
  const signal = options.signal;
  if (signal?.aborted) throw new AbortError('watch aborted');
  const reporter = new Reporter((u) => options.onUpdate?.(u));
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });

  let wake = new AbortController();
  let streamHealthy = false;
  let terminalSeen = false;

  try {
    let current = typeof start === 'string' ? await jobs.get(start, signal) : start;
    reporter.snapshot(current);

    const streamTask =
      options.stream === false || isTerminalStatus(current.job.status)
        ? Promise.resolve()
        : (async () => {
            try {
              const { events } = await jobs.events(current, { signal: stop.signal });
              streamHealthy = true;
              options.onUpdate?.({ type: 'mode', mode: 'stream' });
              for await (const event of events) {
                reporter.event(event);
                if (event.type === 'status' && isTerminalStatus(event.status)) {
                  terminalSeen = true;
                  break;
                }
              }
              if (!terminalSeen) options.onUpdate?.({ type: 'mode', mode: 'polling', reason: 'the event stream ended before the job did' });
            } catch (err) {
              if (stop.signal.aborted) return;
              const reason = ComfyError.is(err) ? `${err.code}: ${err.message}` : String(err);
              options.onUpdate?.({ type: 'mode', mode: 'polling', reason: `event stream unavailable (${reason})` });
            } finally {
              streamHealthy = false;
              wake.abort();
            }
          })();

    let delay = initial;
    let failures = 0;
    while (!isTerminalStatus(current.job.status)) {
      if (!terminalSeen) {
        try {
          await clock.sleep(streamHealthy ? max : delay, AbortSignal.any([stop.signal, wake.signal]));
        } catch (err) {
          if (!AbortError.is(err) || stop.signal.aborted) throw new AbortError('watch aborted');
        }
        if (wake.signal.aborted) wake = new AbortController();
      }
      try {
        current = await jobs.get(current, signal);
        failures = 0;
      } catch (err) {
        if (signal?.aborted) throw new AbortError('watch aborted');
        if (!isTransient(err) || ++failures >= maxFailures) throw err;
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
      current = await jobs.get(current, signal);
      reporter.snapshot(current);
    }
    return current;
  } finally {
    stop.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}
