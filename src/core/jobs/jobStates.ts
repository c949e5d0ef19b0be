/**
 * The job service's one state per job (job, request id, preview, outage), by `<base URL> <job id>`, and its
 * publishing: `onDidChangeJobState` on any change, `onDidChangeJob` when the job itself changed (compared by value: an
 * answer that says nothing new is not news). A job's state is kept after its watch ends, up to {@link MAX_KNOWN_JOBS}.
 */
import type { JobBackend } from './backend';
import type { Emitter } from './listeners';
import type { JobState } from './state';

/**
 * How many jobs' states the service keeps at most: past it, the states of the jobs seen longest ago (and not watched)
 * are dropped (a view that shows such a job again reads it again).
 */
export const MAX_KNOWN_JOBS = 5_000;

/** What a state change may set; a key absent keeps the state's value. */
export type JobStateChange = Partial<Pick<JobState, 'job' | 'requestId' | 'preview' | 'outage'>>;

/** A job's state as published, and its job as JSON (an answer that says nothing new is not news). */
interface Known {
  state: JobState;
  json: string;
}

/** The states of the jobs seen, least recently changed first; see the module comment. */
export class JobStates {
  private readonly known = new Map<string, Known>();

  /**
   * @param emitters `job` fires when a job changed, `state` on any change.
   * @param isWatched whether the job of a key is watched (its state is never forgotten then).
   */
  constructor(
    private readonly emitters: { job: Emitter<JobState>; state: Emitter<JobState> },
    private readonly isWatched: (key: string) => boolean,
  ) {}

  /** The state of the job of `key` (`<base URL> <job id>`) as last published, else undefined. */
  get(key: string): JobState | undefined {
    return this.known.get(key)?.state;
  }

  /**
   * Changes the state of the job of `key` (`<base URL> <job id>`, of `backend`'s server) and publishes it:
   * `onDidChangeJobState` when anything changed, `onDidChangeJob` too when the job did. Nothing happens for a job
   * never seen when `change` has no job. Past {@link MAX_KNOWN_JOBS} the jobs changed longest ago and not watched are
   * forgotten.
   */
  set(key: string, backend: JobBackend, change: JobStateChange): void {
    const held = this.known.get(key);
    const before = held?.state;
    const job = change.job ?? before?.job;
    if (!job) return;
    const next: JobState = {
      baseUrl: backend.baseUrl,
      capabilities: backend.capabilities,
      job,
      requestId: 'requestId' in change ? change.requestId : before?.requestId,
      preview: 'preview' in change ? (change.preview ?? null) : (before?.preview ?? null),
      outage: 'outage' in change ? (change.outage ?? null) : (before?.outage ?? null),
    };
    const json = JSON.stringify(job);
    const jobChanged = json !== held?.json;
    const changed = jobChanged || !before || next.preview !== before.preview || next.outage !== before.outage;
    // Newest last: the oldest are dropped first.
    this.known.delete(key);
    this.known.set(key, { state: next, json });
    this.forgetOldest();
    if (!changed) return;
    if (jobChanged) this.emitters.job.fire(next);
    this.emitters.state.fire(next);
  }

  /** Keeps at most {@link MAX_KNOWN_JOBS} states: the oldest of the jobs not watched go first. */
  private forgetOldest(): void {
    if (this.known.size <= MAX_KNOWN_JOBS) return;
    for (const key of this.known.keys()) {
      if (this.known.size <= MAX_KNOWN_JOBS) return;
      if (!this.isWatched(key)) this.known.delete(key);
    }
  }

  /** Forgets every state (the service was disposed). */
  clear(): void {
    this.known.clear();
  }
}
