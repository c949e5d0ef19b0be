/**
 * The job service's watches: at most ONE per job (per base URL) however many followers follow it, started by its
 * first follower's lease and stopped when its last follower leaves, unless it is a submission's own (then it runs to
 * the job's end, so the submission's record learns the final status). What a watch hears goes into the job's state
 * ({@link JobStates}): an answer of the server replaces the job, an update changes it, except a terminal status,
 * passed on only once the server's answer confirms it (Job and Asset API v2, design rule 1: the stream is a live
 * enhancement, never the source of truth). A 404 of a live watch means the server no longer knows the job: it is
 * published `lost` and its followers' `done` rejects with {@link JobLostError}.
 */
import { AbortError, describeError, isNotFound } from '../http/errors';
import type { AcceptedJob, JobAnswer, JobBackend, JobUpdate } from './backend';
import { LOST_STATUS, isTerminalStatus, type Job } from './model';
import { applyUpdate, mergeAnswer, mergeListed } from './state';
import { JobLostError } from './jobLost';
import type { JobStates } from './jobStates';
import type { ClientLease, Connection, FollowOptions, JobFollow, JobServiceOptions } from './serviceOptions';

export interface Follower {
  onUpdate?: (update: JobUpdate) => void;
  /** Told every answer of the server about the job (a follower through a lease's backend: {@link JobWatchOptions.onAnswer}). */
  onAnswer?: (answer: JobAnswer) => void;
  resolve(final: JobAnswer): void;
  reject(err: unknown): void;
  settled: boolean;
}

/** The one watch of one job. */
export interface Watch<C extends Connection> {
  key: string;
  jobId: string;
  lease: ClientLease<C>;
  stop: AbortController;
  followers: Set<Follower>;
  /** The submission's record key when the watch is a submission's own (runs to the end, updates its record). */
  ownKey: string | undefined;
  previewSeq: number;
  /** The last status passed to followers. */
  deliveredStatus: string | undefined;
  ended: boolean;
}

/** The watches of a job service, by `<base URL> <job id>`; see the module comment. */
export class JobWatches<C extends Connection = Connection> {
  private readonly watches = new Map<string, Watch<C>>();

  /**
   * @param options the service's: its store (records updated at a job's end), its log, `recordsEnd`.
   * @param states where what a watch hears is published.
   * @param lifetime the service's: aborted, every watch stops.
   */
  constructor(
    private readonly options: JobServiceOptions<C>,
    private readonly states: JobStates,
    private readonly lifetime: AbortSignal,
  ) {}

  /** True while a watch of the job of `key` is under way. */
  has(key: string): boolean {
    return this.watches.has(key);
  }

  /** True while the watch of the job of `key` is a submission's own. */
  isSubmission(key: string): boolean {
    return this.watches.get(key)?.ownKey !== undefined;
  }

  /** Ends every watch: their followers' `done` rejects with `err`. */
  abortAll(err: unknown): void {
    for (const watch of this.watches.values()) {
      watch.ended = true;
      for (const f of watch.followers) this.settle(f, err);
      watch.followers.clear();
    }
    this.watches.clear();
  }

  /** An answer read outside a watch (a GET, a cancel): the server's word about the job, into its state. */
  noted(backend: JobBackend, answer: JobAnswer): JobAnswer {
    const key = `${backend.baseUrl} ${answer.job.id}`;
    const watch = this.watches.get(key);
    if (watch && !watch.ended) this.sawAnswer(watch, answer);
    else
      this.states.set(key, backend, {
        job: mergeAnswer(this.states.get(key)?.job, answer.job),
        requestId: answer.requestId,
        outage: null,
      });
    return answer;
  }

  /** A page of the server's listing: each job's state as state.ts `mergeListed` says (a listing may lag a watch). */
  noteListed(backend: JobBackend, jobs: readonly Job[]): void {
    for (const job of jobs) {
      const key = `${backend.baseUrl} ${job.id}`;
      const prev = this.states.get(key)?.job;
      const next = mergeListed(prev, job, this.watches.has(key));
      if (next !== prev) this.states.set(key, backend, { job: next });
    }
  }

  /** A follower and its handle; `done` is marked handled, and the follower leaves when `signal` aborts. */
  follower(options: FollowOptions): { follower: Follower; follow: JobFollow } {
    let resolve!: (final: JobAnswer) => void;
    let reject!: (err: unknown) => void;
    const done = new Promise<JobAnswer>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined);
    const onAbort = (): void => leave();
    const follower: Follower = {
      onUpdate: options.onUpdate,
      settled: false,
      resolve: (final) => {
        options.signal?.removeEventListener('abort', onAbort);
        resolve(final);
      },
      reject: (err) => {
        options.signal?.removeEventListener('abort', onAbort);
        reject(err);
      },
    };
    const leave = (): void => {
      if (follower.settled) return;
      this.settle(follower, new AbortError('stopped following the job'));
      for (const watch of this.watches.values()) {
        if (!watch.followers.delete(follower)) continue;
        if (watch.followers.size === 0 && watch.ownKey === undefined) this.stopWatch(watch);
      }
    };
    if (options.signal?.aborted) leave();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    return { follower, follow: { done, dispose: leave } };
  }

  settle(follower: Follower, outcome: unknown, final?: JobAnswer): void {
    if (follower.settled) return;
    follower.settled = true;
    if (final) follower.resolve(final);
    else follower.reject(outcome);
  }

  /**
   * Adds `follower` to the watch of the job, starting it with `lease` (which it then owns) when there is none; else
   * `lease` is released. `ownKey`: the watch is that submission's own.
   */
  attach(
    lease: ClientLease<C>,
    start: string | AcceptedJob,
    follower: Follower,
    ownKey: string | undefined,
    newSince?: number,
  ): void {
    const jobId = typeof start === 'string' ? start : start.job.id;
    const key = `${lease.backend.baseUrl} ${jobId}`;
    const watch = this.watches.get(key);
    if (!watch) {
      this.startWatch(key, jobId, lease, start, follower, ownKey, newSince);
      return;
    }
    lease.release();
    if (ownKey !== undefined) watch.ownKey = ownKey;
    watch.followers.add(follower);
  }

  /** Starts the watch of a job with its first follower (there before any update: a socket's backlog comes at once). */
  private startWatch(
    key: string,
    jobId: string,
    lease: ClientLease<C>,
    start: string | AcceptedJob,
    follower: Follower,
    ownKey: string | undefined,
    newSince?: number,
  ): void {
    const watch: Watch<C> = {
      key,
      jobId,
      lease,
      stop: new AbortController(),
      followers: new Set([follower]),
      ownKey,
      previewSeq: 0,
      deliveredStatus: undefined,
      ended: false,
    };
    this.watches.set(key, watch);
    // A submission's answer is the server's word too.
    if (typeof start !== 'string') this.sawAnswer(watch, start);
    // The connection's own backend (a lease's would follow this very watch).
    lease.connection.backend
      .watch(start, {
        signal: AbortSignal.any([this.lifetime, watch.stop.signal]),
        onUpdate: (update) => this.sawUpdate(watch, update),
        onAnswer: (answer) => this.sawAnswer(watch, answer),
        // Its first follower's word that the job is new (JobWatchOptions.newSince): a 404 soon after is ridden out.
        newSince,
      })
      .then(
        (final) => this.finish(watch, final),
        (err: unknown) => this.end(watch, err),
      );
  }

  private stopWatch(watch: Watch<C>): void {
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    watch.stop.abort();
  }

  /** The watch reached the job's end: the final job published and, for a submission's own, recorded. */
  private finish(watch: Watch<C>, final: JobAnswer): void {
    if (watch.ended) return this.end(watch, new AbortError('the watch was stopped'));
    this.sawAnswer(watch, final);
    this.deliverStatus(watch, final.job.status, final.job.queuePosition);
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    const recorded =
      watch.ownKey === undefined || this.options.recordsEnd === false
        ? Promise.resolve()
        : this.options.store.recordStatus(watch.ownKey, final.job).then(
            () => undefined,
            (err: unknown) =>
              this.options.log.warn(
                'jobs',
                `job ${watch.jobId}: the record could not be updated: ${describeError(err)}`,
              ),
          );
    void recorded.then(() => {
      for (const f of watch.followers) this.settle(f, undefined, final);
      watch.followers.clear();
      watch.lease.release();
    });
  }

  /**
   * The watch ended without the job's end (stopped, disposed, or failed): its followers get `err`. A 404 of a live
   * watch means the server no longer knows the job: {@link lose}.
   */
  private end(watch: Watch<C>, err: unknown): void {
    if (!watch.ended && isNotFound(err)) return this.lose(watch, err);
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    for (const f of watch.followers) this.settle(f, err);
    watch.followers.clear();
    watch.lease.release();
  }

  /**
   * The server answered 404 for the watched job: its state is published with status `lost` (the last job known, else
   * one with only its id), every remembered record of the job says `lost` (the store keeps a terminal status), then
   * the followers' `done` rejects with {@link JobLostError}.
   */
  private lose(watch: Watch<C>, err: unknown): void {
    const backend = watch.lease.backend;
    const known: Job = this.states.get(watch.key)?.job ?? {
      id: watch.jobId,
      api: backend.api,
      status: LOST_STATUS,
      createdAt: null,
      startedAt: null,
      completedAt: null,
      expiresAt: null,
      queuePosition: null,
      progress: null,
      outputs: [],
      error: null,
      metrics: {},
    };
    this.states.set(watch.key, backend, { job: { ...known, status: LOST_STATUS, queuePosition: null }, outage: null });
    this.deliverStatus(watch, LOST_STATUS, null);
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    this.options.log.info(
      'jobs',
      `job ${watch.jobId}: the server no longer knows it (${describeError(err)}); it is lost`,
    );
    const lost = new JobLostError(watch.jobId, err);
    void this.options.store
      .recordStatus({ baseUrl: backend.baseUrl, jobId: watch.jobId }, { status: LOST_STATUS })
      .then(
        () => undefined,
        (e: unknown) =>
          this.options.log.warn('jobs', `job ${watch.jobId}: the record could not be updated: ${describeError(e)}`),
      )
      .then(() => {
        for (const f of watch.followers) this.settle(f, lost);
        watch.followers.clear();
        watch.lease.release();
      });
  }

  /** An answer of the server: it replaces the job (state.ts `mergeAnswer`), ends an outage, and confirms a terminal status. */
  private sawAnswer(watch: Watch<C>, answer: JobAnswer): void {
    if (watch.ended) return;
    const job = mergeAnswer(this.states.get(watch.key)?.job, answer.job);
    this.states.set(watch.key, watch.lease.backend, { job, requestId: answer.requestId, outage: null });
    for (const f of watch.followers) {
      if (f.settled || !f.onAnswer) continue;
      try {
        f.onAnswer(answer);
      } catch (err) {
        this.options.log.warn('jobs', `job ${watch.jobId}: a follower failed: ${describeError(err)}`);
      }
    }
    if (isTerminalStatus(answer.job.status)) this.deliverStatus(watch, answer.job.status, answer.job.queuePosition);
  }

  /**
   * An update of the watch: merged into the state (state.ts `applyUpdate`) and passed on, except an unconfirmed
   * terminal status (held) and a progress the state did not take (behind the job's: progress never goes backwards).
   */
  private sawUpdate(watch: Watch<C>, update: JobUpdate): void {
    if (watch.ended) return;
    const state = this.states.get(watch.key);
    if (update.type === 'status' && isTerminalStatus(update.status)) {
      // From the stream (or an answer that sawAnswer already delivered): only the server's answer is passed on.
      if (state?.job.status === update.status) this.deliverStatus(watch, update.status, update.queuePosition);
      return;
    }
    if (state) {
      const backend = watch.lease.backend;
      if (update.type === 'progress') {
        // The one place progress is held to never going backwards: followers are told only what the state took.
        const job = applyUpdate(state.job, update);
        if (job.progress !== update.progress) return;
        this.states.set(watch.key, backend, { job });
      } else if (update.type === 'preview')
        this.states.set(watch.key, backend, { preview: { ...update.preview, seq: ++watch.previewSeq } });
      else if (update.type === 'retrying')
        this.states.set(watch.key, backend, {
          outage: { reason: update.reason, failingSinceMs: update.failingSinceMs, retryInMs: update.delayMs },
        });
      else
        this.states.set(watch.key, backend, {
          job: applyUpdate(state.job, update),
          ...(update.type === 'status' ? { outage: null } : {}),
        });
    }
    if (update.type === 'status') this.deliverStatus(watch, update.status, update.queuePosition);
    else this.deliver(watch, update);
  }

  private deliverStatus(watch: Watch<C>, status: string, queuePosition: number | null): void {
    if (watch.deliveredStatus === status) return;
    watch.deliveredStatus = status;
    this.deliver(watch, { type: 'status', status, queuePosition });
  }

  private deliver(watch: Watch<C>, update: JobUpdate): void {
    for (const f of watch.followers) {
      if (f.settled || !f.onUpdate) continue;
      try {
        f.onUpdate(update);
      } catch (err) {
        this.options.log.warn('jobs', `job ${watch.jobId}: a follower failed: ${describeError(err)}`);
      }
    }
  }
}
