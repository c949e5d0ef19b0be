/**
 * The job service: the one long-lived owner of the connection's job backend and the job watches that many views share
 * (one job service with one watch per job, publishing each job's state). It speaks to a {@link JobBackend} only: which
 * API is behind it is the backend's business, what it can do is in its capabilities. No `vscode` here: the extension
 * wraps it (its emitters are injected), so every rule is tested with plain mocha.
 *
 * - Connections: one per configured settings, built when first needed and rebuilt when the settings that make it
 *   (base URL, API, API key) change; the old one is closed once nothing uses it any more (a watch under way keeps it).
 * - Watches: at most ONE per job (per base URL) however many followers follow it; it stops when its last follower
 *   leaves, unless it is a submission's own (then it runs to the job's end, so the record learns the final status).
 * - One {@link JobState} per job it has seen, the one source every view reads ({@link JobService.state}), kept after
 *   the job's watch ends: published with `onDidChangeJob` when the job changed, `onDidChangeJobState` on any change (a
 *   preview, an outage too). The job is never ahead of the server: an answer of the server replaces it (state.ts
 *   `mergeAnswer`), a watch update changes it (`applyUpdate`), except a terminal status, published only once the
 *   server's answer confirms it (Job and Asset API v2, design rule 1: the stream is a live enhancement, never the
 *   source of truth).
 * - Every answer about a job read through a lease's backend is the server's word and goes into that job's state: a
 *   GET, a cancel's answer, a page of the listing (state.ts `mergeListed`); and a `watch` through a lease's backend is
 *   a follower of the service's one watch of the job. So code written against a {@link JobBackend} (a batch's runner,
 *   the job-end owner) shares the job's one watch and one state with the views.
 * - A job its server no longer knows (any 404 of a read: gone past retention, or a server restarted without it) is
 *   published with the client's status `lost` (model.ts {@link LOST_STATUS}), every remembered record of it says
 *   `lost`, and its followers' `done` rejects with {@link JobLostError}: one sentence for a person, never a bare
 *   `not_found`.
 * - Start-up: the backend looks up remembered submissions whose outcome was not heard ({@link JobService.reconcile}),
 *   in the background, errors logged.
 * - Dispose: every watch and request is aborted (their promises reject with {@link AbortError}), every connection closed.
 */
import { AbortError, describeError } from '../http/errors';
import type { AcceptedJob, JobAnswer, JobBackend, JobWatchOptions, ReconcileReport } from './backend';
import type { Job } from './model';
import type { JobState } from './state';
import { LeasePool, type Pooled } from '../util/leasePool';
import { ListenerSet, type Emitter, type EventHook, type Subscription } from './listeners';
import { JobLostError } from './jobLost';
import { JobStates } from './jobStates';
import { JobWatches } from './jobWatches';
import type {
  ClientLease,
  Connection,
  FollowOptions,
  JobFollow,
  JobServiceOptions,
  ServiceSubmitOptions,
} from './serviceOptions';

// The service's parts are in their own modules; their names stay importable from here.
export * from './listeners';
export * from './serviceOptions';
export { JobLostError } from './jobLost';
export { downloadJobOutput } from './savedOutputs';

/** See the module comment. Dispose it to abort everything it runs. */
export class JobService<C extends Connection = Connection> implements Subscription {
  /** Fires with a job's state whenever its job changed; never ahead of the server. */
  readonly onDidChangeJob: EventHook<JobState>;
  /** Fires with a job's state whenever any of it changed: the job, a new preview frame, an outage begun or ended. */
  readonly onDidChangeJobState: EventHook<JobState>;
  private readonly jobEmitter: Emitter<JobState>;
  private readonly stateEmitter: Emitter<JobState>;
  private readonly lifetime = new AbortController();
  /** The built connections, by identity: the current one, and retired ones a watch or request still uses. */
  private readonly pool: LeasePool<C>;
  /** Each connection's backend as leases hand it out: reads noted into the jobs' states, watches through the service's ({@link JobService.lease}). */
  private readonly sharedBackends = new WeakMap<Pooled<C>, JobBackend>();
  private building: { identity: string; entry: Promise<Pooled<C>> } | undefined;
  /** The one watch of each job followed (jobWatches.ts). */
  private readonly watches: JobWatches<C>;
  /** The last state of every job seen, by `<base URL> <job id>` (jobStates.ts). */
  private readonly states: JobStates;
  private reconciling: Promise<ReconcileReport[]> | undefined;

  constructor(private readonly options: JobServiceOptions<C>) {
    const onError = (err: unknown): void => options.log.warn('jobs', `a listener failed: ${describeError(err)}`);
    this.jobEmitter = options.emitters?.job ?? new ListenerSet<JobState>(onError);
    this.stateEmitter = options.emitters?.state ?? new ListenerSet<JobState>(onError);
    this.onDidChangeJob = this.jobEmitter.event;
    this.onDidChangeJobState = this.stateEmitter.event;
    this.states = new JobStates({ job: this.jobEmitter, state: this.stateEmitter }, (key) => this.watches.has(key));
    this.watches = new JobWatches<C>(options, this.states, this.lifetime.signal);
    this.pool = new LeasePool<C>({
      close: (connection) => connection.backend.close(),
      onError: (err) => options.log.warn('jobs', `closing a client failed: ${describeError(err)}`),
    });
  }

  /** True once disposed. */
  get disposed(): boolean {
    return this.lifetime.signal.aborted;
  }

  /**
   * A lease on the connection for the current settings, built (or rebuilt, when the settings changed) if needed. Its
   * `backend` is the connection's, with what it learns going into the jobs' states: `get`, `cancel` and `list`
   * answers are noted (the server's word about those jobs, published to every view), and its `watch` follows the
   * service's one watch of the job (its end, its updates; a job the server no longer knows rejects with the 404, as a
   * backend's watch does). Its `close` does nothing: the service closes connections.
   * @throws InputError `bad_base_url`; AbortError once the service is disposed.
   */
  async lease(): Promise<ClientLease<C>> {
    this.assertLive();
    const identity = await this.options.clients.identity();
    this.assertLive();
    let entry = this.pool.current;
    if (!entry || entry.identity !== identity) entry = await this.build(identity);
    return this.leaseOf(entry);
  }

  /** Runs `fn` with a lease, released when it settles. @throws as {@link lease} and `fn`. */
  async use<T>(fn: (lease: ClientLease<C>) => Promise<T>): Promise<T> {
    const lease = await this.lease();
    try {
      return await fn(lease);
    } finally {
      lease.release();
    }
  }

  /**
   * Re-reads the settings' identity and, when it changed (or the settings are now unusable), retires the current
   * connection (closed once its last user is done). The next {@link lease} builds the new one. Never rejects.
   */
  async refresh(): Promise<void> {
    if (this.disposed) return;
    // A bad base URL (identity() throws) retires it too: the old connection must not go on being handed out.
    if (await this.pool.refresh(() => this.options.clients.identity()))
      this.options.log.info('jobs', 'settings changed: the client will be rebuilt');
  }

  /**
   * Follows job `jobId` of the current server: joins its watch, or starts the one watch of that job. Updates come
   * through `onUpdate` and the service's events; `done` gives the final job. Dispose the follow (or abort `signal`) to
   * leave: the watch stops when its last follower leaves, unless it is a submission's own.
   */
  follow(jobId: string, options: FollowOptions = {}): JobFollow {
    const { follower, follow } = this.watches.follower(options);
    this.lease().then(
      (lease) => {
        if (follower.settled || this.disposed) lease.release();
        else this.watches.attach(lease, jobId, follower, undefined);
      },
      (err: unknown) => this.watches.settle(follower, err),
    );
    return follow;
  }

  /**
   * Submits `workflow` through the lease's backend, remembered in the store by the API's rules (JobBackend.submit:
   * an Idempotency-Key written before sending where the API has one, else the job once accepted), and follows it
   * through the service's one watch of the job, which is the submission's own: it runs to the job's end whoever
   * follows it, then the record gets the final status and expiry.
   * @returns the accepted job and the final job (from the server).
   * @throws as {@link JobBackend.submit} and {@link JobFollow.done}; AbortError when `signal` aborts or the service is
   *   disposed.
   */
  async submit(
    lease: ClientLease<C>,
    workflow: unknown,
    options: ServiceSubmitOptions = {},
  ): Promise<{ submission: AcceptedJob; final: JobAnswer }> {
    this.assertLive();
    const signal = options.signal ? AbortSignal.any([lease.signal, options.signal]) : lease.signal;
    const submission = await lease.backend.submit(workflow, {
      store: this.options.store,
      workflowFile: options.workflowFile,
      uiWorkflow: options.uiWorkflow,
      client: this.options.clientName,
      signal,
      onWait: options.onWait,
      // The job exists whatever happens to its record: logged, the job still followed.
      onUnremembered: (err) => this.options.log.warn('jobs', `the record could not be written: ${describeError(err)}`),
    });
    options.onSubmitted?.(submission);
    this.assertLive();
    const { follower, follow } = this.watches.follower({ onUpdate: options.onUpdate, signal: options.signal });
    this.watches.attach(this.leaseOf(this.entryOf(lease)), submission, follower, submission.recordKey);
    return { submission, final: await follow.done };
  }

  /** The job as last published (by a watch, a read or a listing), else undefined. */
  latest(baseUrl: string, jobId: string): Job | undefined {
    return this.state(baseUrl, jobId)?.job;
  }

  /** True while a watch of the job is under way (someone follows it). */
  isWatched(baseUrl: string, jobId: string): boolean {
    return this.watches.has(`${baseUrl} ${jobId}`);
  }

  /**
   * True while the job's watch is a submission's own (submitted through {@link submit} in this process and not ended):
   * its submitter tells the job's end, so another view need not tell it again.
   */
  isSubmission(baseUrl: string, jobId: string): boolean {
    return this.watches.isSubmission(`${baseUrl} ${jobId}`);
  }

  /**
   * The state of a job as last published, whether or not a watch of it is under way (a job that ended keeps its final
   * state), else undefined (never seen, or dropped past jobStates.ts `MAX_KNOWN_JOBS`). The one source of a job's state: a
   * view reads it here when it draws, and redraws on `onDidChangeJobState`.
   */
  state(baseUrl: string, jobId: string): JobState | undefined {
    return this.states.get(`${baseUrl} ${jobId}`);
  }

  /**
   * Has the backend look up the store's submissions of the current server whose outcome was not heard
   * ({@link JobBackend.reconcile}); one run at a time (a call during a run shares it). Logs each record adopted or
   * marked unknown.
   * @throws as {@link lease}; as {@link JobBackend.reconcile}.
   */
  reconcile(): Promise<ReconcileReport[]> {
    this.reconciling ??= this.use((lease) => lease.backend.reconcile(this.options.store, lease.signal))
      .then((results) => {
        for (const r of results) {
          if (r.outcome !== 'skipped')
            this.options.log.info('jobs', `Idempotency-Key ${r.record.idempotencyKey}: ${r.message}`);
        }
        return results;
      })
      .finally(() => (this.reconciling = undefined));
    return this.reconciling;
  }

  /**
   * The start-up work: reconciles remembered submissions ({@link reconcile}). Meant to run in the background: it
   * never rejects (a failure is logged as a warning; a dispose ends it quietly).
   */
  start(): Promise<void> {
    return this.reconcile().then(
      () => undefined,
      (err: unknown) => {
        if (!AbortError.is(err) && !this.disposed)
          this.options.log.warn('jobs', `reconciling remembered submissions failed: ${describeError(err)}`);
      },
    );
  }

  /** Aborts every watch and request (their promises reject with AbortError), closes every connection. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.lifetime.abort();
    const aborted = new AbortError('the job service was disposed');
    this.watches.abortAll(aborted);
    this.states.clear();
    void this.pool.closeAll();
    this.jobEmitter.dispose();
    this.stateEmitter.dispose();
  }

  private assertLive(): void {
    if (this.disposed) throw new AbortError('the job service was disposed');
  }

  /** The entry of `identity`: the one being built for it, or a new one (the previous current one retired). */
  private async build(identity: string): Promise<Pooled<C>> {
    if (this.building?.identity !== identity) {
      // Once disposed, the pool closes a connection built meanwhile at once.
      const entry = this.options.clients.create().then((connection) => this.pool.add(identity, connection));
      const building = { identity, entry };
      this.building = building;
      // Cleared however it ends (a failed build is tried again by the next lease).
      const cleared = (): void => {
        if (this.building === building) this.building = undefined;
      };
      entry.then(cleared, cleared);
    }
    const entry = await this.building!.entry;
    this.assertLive();
    return entry;
  }

  private entryOf(lease: ClientLease<C>): Pooled<C> {
    const entry = this.pool.find(lease.connection);
    if (!entry) throw new Error('a lease of another service'); // a bug, not a condition
    return entry;
  }

  private leaseOf(entry: Pooled<C>): ClientLease<C> {
    let backend = this.sharedBackends.get(entry);
    if (!backend) this.sharedBackends.set(entry, (backend = this.share(entry)));
    return { connection: entry.value, backend, signal: this.lifetime.signal, release: this.pool.take(entry) };
  }

  /** The backend a lease of `entry` hands out (see {@link lease}): the connection's, sharing what it learns. */
  private share(entry: Pooled<C>): JobBackend {
    const raw = entry.value.backend;
    return {
      api: raw.api,
      baseUrl: raw.baseUrl,
      capabilities: raw.capabilities,
      submit: (workflow, options) => raw.submit(workflow, options),
      get: async (jobId, signal) => this.watches.noted(raw, await raw.get(jobId, signal)),
      watch: (start, options) => this.watchShared(entry, start, options),
      cancel: async (jobId, signal) => this.watches.noted(raw, await raw.cancel(jobId, signal)),
      downloadOutputs: (job, dir, options) => raw.downloadOutputs(job, dir, options),
      list: async (options) => {
        const page = await raw.list(options);
        this.watches.noteListed(raw, page.jobs);
        return page;
      },
      workflow: (jobId, signal) => raw.workflow(jobId, signal),
      reconcile: (store, signal) => raw.reconcile(store, signal),
      // A lease never closes its connection: the service does, once nothing uses it.
      close: () => Promise.resolve(),
    };
  }

  /**
   * A `watch` through a lease's backend: a follower of the service's one watch of the job, with the backend's
   * contract (resolves with the final job; a job the server no longer knows rejects with its 404, not JobLostError).
   */
  private watchShared(
    entry: Pooled<C>,
    start: string | AcceptedJob,
    options: JobWatchOptions = {},
  ): Promise<JobAnswer> {
    if (this.disposed) return Promise.reject(new AbortError('the job service was disposed'));
    const { follower, follow } = this.watches.follower({ onUpdate: options.onUpdate, signal: options.signal });
    follower.onAnswer = options.onAnswer;
    this.watches.attach(this.leaseOf(entry), start, follower, undefined, options.newSince);
    return follow.done.catch((err: unknown) => {
      throw JobLostError.is(err) && err.cause !== undefined ? err.cause : err;
    });
  }
}
