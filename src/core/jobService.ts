/**
 * The job service: the one long-lived owner of the clients and the job watches that many views share (issue 8, "The
 * extension's job service"; STYLE.md "Shape": one job service with one watch per job and an `onDidChangeJob` event).
 * No `vscode` here: the extension wraps it (its emitter is injected), so every rule is tested with plain mocha.
 *
 * - Clients: one per configured origin, built when first needed and rebuilt when the settings that make it (base URL,
 *   API key) change; the old one is closed once nothing uses it any more (a watch under way keeps its client).
 * - Watches: at most ONE per job (per base URL) however many followers follow it, sharing the client's stream budget
 *   ({@link V2Client.streams}); it stops when its last follower leaves, unless it is a submission's own (then it
 *   runs to the job's end, so the record learns the final status).
 * - `onDidChangeJob`: a job snapshot, never ahead of the server: a GET (or the submission's answer) replaces it; a
 *   stream event updates it, except a terminal status, which is published only once a GET confirms it
 *   (jobs-assets-api-v2.md design rule 1: the stream is a live enhancement, never the source of truth).
 * - Start-up: remembered `pending` and `outcome_unknown` records are reconciled ({@link reconcilePending}), in the
 *   background, errors logged.
 * - Dispose: every watch and request is aborted (their promises reject with {@link AbortError}), every client closed.
 * - A connection that speaks the deprecated v1 API (issue 12, "Extension") brings a {@link V1JobBackend} with its
 *   client: submissions and watches go through it (the socket opened before the prompt is posted, the final state from
 *   the status endpoint), reported in v2's shapes, so every view works the same on both. Lease users reach a job's
 *   get, cancel and download through {@link ClientLease.ops}, which is right for either API.
 */
import { randomUUID } from 'node:crypto';
import { hashBytes } from './hash';
import { AbortError, ComfyError } from './http/errors';
import type { V2Client } from './v2/client';
import { JobsApi, type JobSnapshot, type Submission } from './v2/jobs';
import { reconcilePending, type ReconcileOptions, type ReconcileResult } from './v2/reconcile';
import { isTerminalStatus } from './jobs/model';
import type { Job, Progress } from './v2/schemas';
import { canonicalJson, submitDurably } from './v2/submission';
import type { Surface } from './v2/surface';
import { watchJob, type WatchOptions, type WatchUpdate } from './v2/watch';
import { recordOwner, type JobRecord, type StateStore } from './state/stateStore';
import { saveImagePrefix } from './workflow';

/** Something to stop listening with (structurally a `vscode.Disposable`). */
export interface Subscription {
  dispose(): void;
}

/** Subscribes a listener (structurally a `vscode.Event`). */
export type EventHook<T> = (listener: (value: T) => void) => Subscription;

/** What the service fires its events through (structurally a `vscode.EventEmitter`, which the extension injects). */
export interface Emitter<T> {
  readonly event: EventHook<T>;
  fire(value: T): void;
  dispose(): void;
}

/**
 * The plain emitter used without an injected one: listeners in subscription order; a listener that throws does not
 * stop the others (its error goes to `onError`); after `dispose` nothing fires and subscribing is a no-op.
 */
export class ListenerSet<T> implements Emitter<T> {
  private listeners: ((value: T) => void)[] = [];
  private disposed = false;

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  readonly event: EventHook<T> = (listener) => {
    if (this.disposed) return { dispose: () => undefined };
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}

/** Where the service gets its clients: the extension reads its settings and SecretStorage here. */
export interface ClientSource {
  /**
   * What identifies the client the settings call for now (e.g. a hash of the base URL and the API key): a different
   * value means the client must be rebuilt. Never logged.
   * @throws InputError `bad_base_url` (the service passes it on).
   */
  identity(): Promise<string>;
  /**
   * A new client for the current settings, with the v1 backend when the connection speaks v1 (issue 12).
   * @throws InputError `bad_base_url`.
   */
  create(): Promise<{ client: V2Client; surface: Surface; v1?: V1JobBackend }>;
}

/**
 * A job's reads and actions that differ between v2 and the deprecated v1 (issue 12): on v2 the client's
 * (jobs-assets-api-v2.md), on v1 the {@link V1JobBackend}'s (cloud-api-v1.md). Snapshots are v2 {@link JobSnapshot}s.
 */
export interface JobOperations {
  /** The job now. @throws NotFoundError; the transport's typed errors. */
  get(jobId: string, signal?: AbortSignal): Promise<JobSnapshot>;
  /**
   * Asks the server to cancel the job (a snapshot's own cancel link is used where v2 gives one); resolves the job as
   * it then stands. @throws the transport's typed errors.
   */
  cancel(job: JobSnapshot | string, signal?: AbortSignal): Promise<JobSnapshot>;
  /** Downloads the snapshot's outputs into `dir` (complete files only). @returns their paths. @throws as the download. */
  downloadOutputs(snapshot: JobSnapshot, dir: string, signal?: AbortSignal): Promise<{ path: string }[]>;
}

/**
 * What a v1 prompt accepted by {@link V1JobBackend.submit} hands to its watch: the job as first known, and whatever
 * the backend opened for it (the socket opened before the prompt was posted; opaque here).
 */
export interface V1Accepted {
  snapshot: JobSnapshot;
  handoff: unknown;
}

/**
 * The job side of a deprecated-v1 connection (issue 12 "Extension"; cloud-api-v1.md), built by the v1 chunk
 * (`src/core/v1/jobBackend.ts`) so that this module holds no v1 code.
 */
export interface V1JobBackend extends JobOperations {
  /**
   * Opens the WebSocket, THEN posts the prompt (`$schema` removed; the partner key in `extra_data` when configured).
   * v1 has no Idempotency-Key: the prompt is posted once and never retried (a retry could run the job twice).
   * @throws InputError for a workflow that is not API format (nothing sent); V1PromptError `invalid_workflow` with
   *   the engine's node errors; the transport's typed errors.
   */
  submit(workflow: unknown, options: { signal?: AbortSignal }): Promise<V1Accepted>;
  /**
   * Follows the job to its end (socket and status polling); `onSnapshot` gets every answer of the status endpoint
   * (the server's word), the return value is the final job.
   */
  watch(jobId: string, options: { accepted?: V1Accepted; signal: AbortSignal; onUpdate: (u: WatchUpdate) => void; onSnapshot: (s: JobSnapshot) => void }): Promise<JobSnapshot>;
  close(): Promise<void>;
}

/** Where the service writes what it did (the extension's log: component tag, message). */
export interface ServiceLog {
  info(component: string, message: string): void;
  warn(component: string, message: string): void;
}

/** What `onDidChangeJob` carries: the job as the server last described it, and which server. */
export interface JobChange {
  /** The base URL of the client that watches it (jobs of two servers never mix). */
  readonly baseUrl: string;
  /**
   * The job: the last GET (or the submission's answer) with the non-terminal stream events since (status, progress
   * that never goes backwards, new outputs). A terminal status here was confirmed by GET.
   */
  readonly job: Job;
}

/**
 * A lease on the service's client of the moment: use it for a few requests, then `release()` it (a rebuilt client's
 * predecessor is closed when its last lease is released). Never close the client itself.
 */
export interface ClientLease {
  readonly client: V2Client;
  readonly surface: Surface;
  /** The v1 backend when the connection speaks the deprecated v1 API (issue 12); undefined on v2. */
  readonly v1: V1JobBackend | undefined;
  /** A job's get, cancel and download, right for the connection's API. */
  readonly ops: JobOperations;
  /** Aborts when the service is disposed: compose it into every request made with this client. */
  readonly signal: AbortSignal;
  /** Gives the lease back; idempotent. */
  release(): void;
}

/** Options of {@link JobService.follow}. */
export interface FollowOptions {
  /**
   * The watch's updates from now on, in order (watch.ts {@link WatchUpdate}), as the shared watch sees them; a terminal
   * status only once GET confirmed it.
   */
  onUpdate?: (update: WatchUpdate) => void;
  /** Aborting it is leaving ({@link JobFollow.dispose}). */
  signal?: AbortSignal;
}

/** One follower of a job's watch. */
export interface JobFollow extends Subscription {
  /**
   * The final job, from GET, once the job is terminal. Rejects with {@link AbortError} when this follower left or the
   * service was disposed; as {@link watchJob} otherwise (NotFoundError, the last transient error past the outage
   * budget, …). Rejections are marked handled: not awaiting it is safe.
   */
  readonly done: Promise<JobSnapshot>;
}

/** Options of {@link JobService.submit}. */
export interface ServiceSubmitOptions {
  /** Recorded with the submission. */
  workflowFile?: string;
  /**
   * Aborts the submission, or stops this caller following the job (the job itself and its watch go on: a cancelled
   * wait is not a cancelled job).
   */
  signal?: AbortSignal;
  /** Told before a wait for a retry of the submission (queue full, deployment starting). */
  onWait?: (info: { delayMs: number; reason: string }) => void;
  /** Called once the job exists. */
  onSubmitted?: (submission: Submission) => void;
  onUpdate?: (update: WatchUpdate) => void;
}

/** How to build a {@link JobService}. */
export interface JobServiceOptions {
  clients: ClientSource;
  /** The store of remembered submissions (shared with the CLI). */
  store: StateStore;
  log: ServiceLog;
  /** The emitter of `onDidChangeJob`; default a {@link ListenerSet}. Disposed with the service. */
  emitter?: Emitter<JobChange>;
  /** Recorded with each submission. Default `core`. */
  clientName?: JobRecord['client'];
  /** Options of every watch (stream on/off, cadence, outage budget). */
  watch?: Omit<WatchOptions, 'signal' | 'onUpdate' | 'clock' | 'streams'>;
  /** Options of reconciling (tests inject the clock, pid liveness, host name). */
  reconcile?: Omit<ReconcileOptions, 'signal'>;
}

/** One built client and who uses it. */
interface ClientEntry {
  identity: string;
  client: V2Client;
  surface: Surface;
  v1: V1JobBackend | undefined;
  ops: JobOperations;
  users: number;
  /** Replaced by a newer client: closed once `users` is 0. */
  retired: boolean;
  closed: boolean;
}

/** One follower of a watch. */
interface Follower {
  onUpdate?: (update: WatchUpdate) => void;
  resolve(final: JobSnapshot): void;
  reject(err: unknown): void;
  settled: boolean;
}

/** The one watch of one job. */
interface Watch {
  key: string;
  jobId: string;
  lease: ClientLease;
  stop: AbortController;
  followers: Set<Follower>;
  /** The submission's Idempotency-Key when the watch is a submission's own (runs to the end, updates its record). */
  ownKey: string | undefined;
  /** The job as published (or about to be). */
  latest: Job | undefined;
  publishedJson: string | undefined;
  /** The last status passed to followers. */
  deliveredStatus: string | undefined;
  ended: boolean;
}

/** A job's progress as one number (value, else nodes done over total), as the watch's Reporter orders them. */
function progressValue(p: Progress | null | undefined): number {
  if (!p) return -1;
  return p.value ?? (p.nodes_total ? (p.nodes_done ?? 0) / p.nodes_total : 0);
}

/**
 * The job after a server answer `next` when `prev` was published: `next` as is, except that while the status stays
 * the same non-terminal one, progress never goes backwards and outputs already seen on the stream are kept (a poll
 * may lag the stream; the final state is always the GET's own).
 */
function mergeServer(prev: Job | undefined, next: Job): Job {
  if (!prev || isTerminalStatus(next.status) || prev.status !== next.status) return next;
  let job = next;
  if (progressValue(prev.progress) > progressValue(next.progress)) job = { ...job, progress: prev.progress };
  const ids = new Set(next.outputs.map((o) => o.id));
  const extra = prev.outputs.filter((o) => !ids.has(o.id));
  if (extra.length > 0) job = { ...job, outputs: [...job.outputs, ...extra] };
  return job;
}

/** The low layer of jobs, telling the service of every GET answer (the watch reads through it). */
class ObservedJobs extends JobsApi {
  constructor(
    client: V2Client,
    private readonly seen: (snapshot: JobSnapshot) => void,
  ) {
    super(client.http);
  }

  override async get(job: JobSnapshot | string, signal?: AbortSignal): Promise<JobSnapshot> {
    const snapshot = await super.get(job, signal);
    this.seen(snapshot);
    return snapshot;
  }
}

/**
 * Downloads one output of job `jobId` into `dir` from a fresh read of the job (an output's link may have expired
 * since the job was shown), through `ops` (v2 or v1 alike).
 * @returns the file's path, or undefined when the server no longer lists that output.
 * @throws as {@link JobOperations.get} and {@link JobOperations.downloadOutputs}.
 */
export async function downloadJobOutput(ops: JobOperations, jobId: string, outputId: string, dir: string, signal?: AbortSignal): Promise<string | undefined> {
  const snapshot = await ops.get(jobId, signal);
  const output = snapshot.job.outputs.find((o) => o.id === outputId);
  if (!output) return undefined;
  const [done] = await ops.downloadOutputs({ ...snapshot, job: { ...snapshot.job, outputs: [output] } }, dir, signal);
  return done?.path;
}

/** A v2 client's job operations ({@link JobOperations}). */
function v2Operations(client: V2Client): JobOperations {
  return {
    get: (jobId, signal) => client.getJob(jobId, { signal }),
    cancel: (job, signal) => client.cancelJob(job, { signal }),
    downloadOutputs: (snapshot, dir, signal) => client.downloadOutputs(snapshot, dir, { signal }),
  };
}

function describe(err: unknown): string {
  if (ComfyError.is(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** See the module comment. Dispose it to abort everything it runs. */
export class JobService implements Subscription {
  /** Fires with a job's new snapshot (see {@link JobChange}); never ahead of the server. */
  readonly onDidChangeJob: EventHook<JobChange>;
  private readonly emitter: Emitter<JobChange>;
  private readonly lifetime = new AbortController();
  private readonly entries = new Set<ClientEntry>();
  private current: ClientEntry | undefined;
  private building: { identity: string; entry: Promise<ClientEntry> } | undefined;
  private readonly watches = new Map<string, Watch>();
  private reconciling: Promise<ReconcileResult[]> | undefined;

  constructor(private readonly options: JobServiceOptions) {
    this.emitter = options.emitter ?? new ListenerSet<JobChange>((err) => options.log.warn('jobs', `a listener failed: ${describe(err)}`));
    this.onDidChangeJob = this.emitter.event;
  }

  /** True once disposed. */
  get disposed(): boolean {
    return this.lifetime.signal.aborted;
  }

  /**
   * A lease on the client for the current settings, built (or rebuilt, when the base URL or key changed) if needed.
   * @throws InputError `bad_base_url`; AbortError once the service is disposed.
   */
  async lease(): Promise<ClientLease> {
    this.assertLive();
    const identity = await this.options.clients.identity();
    this.assertLive();
    let entry = this.current;
    if (!entry || entry.identity !== identity) entry = await this.build(identity);
    return this.leaseOf(entry);
  }

  /** Runs `fn` with a lease, released when it settles. @throws as {@link lease} and `fn`. */
  async use<T>(fn: (lease: ClientLease) => Promise<T>): Promise<T> {
    const lease = await this.lease();
    try {
      return await fn(lease);
    } finally {
      lease.release();
    }
  }

  /**
   * Re-reads the settings' identity and, when it changed (or the settings are now unusable), retires the current
   * client (closed once its last user is done). The next {@link lease} builds the new one. Never rejects.
   */
  async refresh(): Promise<void> {
    const entry = this.current;
    if (!entry || this.disposed) return;
    let identity: string | undefined;
    try {
      identity = await this.options.clients.identity();
    } catch {
      identity = undefined; // a bad base URL: the old client must not go on being handed out
    }
    if (this.current === entry && identity !== entry.identity) {
      this.current = undefined;
      this.retire(entry);
      this.options.log.info('jobs', 'settings changed: the client will be rebuilt');
    }
  }

  /**
   * Follows job `jobId` of the current server: joins its watch, or starts the one watch of that job. Updates come
   * through `onUpdate` and {@link onDidChangeJob}; `done` gives the final job. Dispose the follow (or abort
   * `signal`) to leave: the watch stops when its last follower leaves, unless it is a submission's own.
   */
  follow(jobId: string, options: FollowOptions = {}): JobFollow {
    const { follower, follow } = this.follower(options);
    this.lease().then(
      (lease) => {
        if (follower.settled || this.disposed) lease.release();
        else this.attach(lease, jobId, follower, undefined);
      },
      (err: unknown) => this.settle(follower, err),
    );
    return follow;
  }

  /**
   * Submits `workflow` durably with the lease's client (submission.ts: key remembered before sending, never
   * resubmitted on an unknown outcome) and follows it through the service's one watch of the job, which is the
   * submission's own: it runs to the job's end whoever follows it, then the record gets the final status and expiry.
   * @returns the submission and the final job (from GET).
   * @throws as {@link submitDurably} and {@link JobFollow.done}; AbortError when `signal` aborts or the service is
   *   disposed.
   */
  async submit(lease: ClientLease, workflow: unknown, options: ServiceSubmitOptions = {}): Promise<{ submission: Submission; final: JobSnapshot }> {
    this.assertLive();
    const signal = options.signal ? AbortSignal.any([lease.signal, options.signal]) : lease.signal;
    if (lease.v1) return this.submitV1(lease, lease.v1, workflow, options, signal);
    const durable = await submitDurably(lease.client, workflow, {
      store: this.options.store,
      workflowFile: options.workflowFile,
      client: this.options.clientName,
      signal,
      onWait: options.onWait,
    });
    const submission: Submission = { ...durable.snapshot, idempotencyKey: durable.idempotencyKey };
    options.onSubmitted?.(submission);
    this.assertLive();
    const { follower, follow } = this.follower({ onUpdate: options.onUpdate, signal: options.signal });
    this.attach(this.leaseOf(this.entryOf(lease)), submission, follower, submission.idempotencyKey);
    return { submission, final: await follow.done };
  }

  /**
   * A v1 submission (issue 12): the backend posts the prompt once (v1 has no Idempotency-Key, so never again), then
   * the job is remembered like a v2 one (a local key, never sent, names the record; `created` with the prompt id) so
   * the Jobs view lists it and the CLI's `status` finds it, and followed by the service's one watch, the submission's own.
   */
  private async submitV1(lease: ClientLease, v1: V1JobBackend, workflow: unknown, options: ServiceSubmitOptions, signal: AbortSignal): Promise<{ submission: Submission; final: JobSnapshot }> {
    const accepted = await v1.submit(workflow, { signal });
    const job = accepted.snapshot.job;
    const idempotencyKey = `v1-${randomUUID()}`;
    const record: JobRecord = {
      idempotencyKey,
      baseUrl: lease.client.http.baseUrl,
      state: 'created',
      jobId: job.id,
      workflowFile: options.workflowFile,
      workflowHash: await hashBytes(canonicalJson(workflow)),
      savePrefix: saveImagePrefix(workflow),
      submittedAt: new Date(lease.client.clock.now()).toISOString(),
      client: this.options.clientName ?? 'core',
      lastStatus: job.status,
      ...recordOwner(),
    };
    // The prompt is accepted whatever happens to the record: a store that fails is logged, the job still followed.
    await this.options.store.put(record).catch((err: unknown) => this.options.log.warn('jobs', `job ${job.id}: the record could not be written: ${describe(err)}`));
    const submission: Submission = { ...accepted.snapshot, idempotencyKey };
    options.onSubmitted?.(submission);
    this.assertLive();
    const { follower, follow } = this.follower({ onUpdate: options.onUpdate, signal: options.signal });
    this.attach(this.leaseOf(this.entryOf(lease)), submission, follower, idempotencyKey, accepted);
    return { submission, final: await follow.done };
  }

  /** The job as last published by a watch under way, else undefined. */
  latest(baseUrl: string, jobId: string): Job | undefined {
    return this.watches.get(`${baseUrl} ${jobId}`)?.latest;
  }

  /**
   * Reconciles the store's orphaned `pending` and `outcome_unknown` records of the current server (reconcile.ts);
   * one run at a time (a call during a run shares it). Logs each record adopted or marked unknown. Nothing on a v1
   * connection: its records are written only once a prompt is accepted, and v1 has no Idempotency-Key to look one up.
   * @throws as {@link lease}; as {@link reconcilePending}.
   */
  reconcile(): Promise<ReconcileResult[]> {
    this.reconciling ??= this.use((lease) => (lease.v1 ? Promise.resolve([]) : reconcilePending(lease.client, this.options.store, { ...this.options.reconcile, signal: lease.signal })))
      .then((results) => {
        for (const r of results) {
          if (r.outcome !== 'skipped') this.options.log.info('jobs', `Idempotency-Key ${r.record.idempotencyKey}: ${r.message}`);
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
        if (!AbortError.is(err) && !this.disposed) this.options.log.warn('jobs', `reconciling remembered submissions failed: ${describe(err)}`);
      },
    );
  }

  /** Aborts every watch and request (their promises reject with AbortError), closes every client. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.lifetime.abort();
    const aborted = new AbortError('the job service was disposed');
    for (const watch of this.watches.values()) {
      watch.ended = true;
      for (const f of watch.followers) this.settle(f, aborted);
      watch.followers.clear();
    }
    this.watches.clear();
    this.current = undefined;
    for (const entry of this.entries) {
      entry.retired = true;
      this.close(entry);
    }
    this.emitter.dispose();
  }

  private assertLive(): void {
    if (this.disposed) throw new AbortError('the job service was disposed');
  }

  /** The entry of `identity`: the one being built for it, or a new one (the previous current one retired). */
  private async build(identity: string): Promise<ClientEntry> {
    if (this.building?.identity !== identity) {
      const entry = this.options.clients.create().then((made): ClientEntry => {
        const built: ClientEntry = { identity, ...made, v1: made.v1, ops: made.v1 ?? v2Operations(made.client), users: 0, retired: false, closed: false };
        this.entries.add(built);
        if (this.disposed) {
          built.retired = true;
          this.close(built);
        } else {
          const previous = this.current;
          this.current = built;
          if (previous && previous !== built) this.retire(previous);
        }
        return built;
      });
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

  private entryOf(lease: ClientLease): ClientEntry {
    for (const entry of this.entries) if (entry.client === lease.client) return entry;
    throw new Error('a lease of another service'); // a bug, not a condition
  }

  private leaseOf(entry: ClientEntry): ClientLease {
    entry.users++;
    let released = false;
    return {
      client: entry.client,
      surface: entry.surface,
      v1: entry.v1,
      ops: entry.ops,
      signal: this.lifetime.signal,
      release: () => {
        if (released) return;
        released = true;
        entry.users--;
        if (entry.retired && entry.users === 0) this.close(entry);
      },
    };
  }

  private retire(entry: ClientEntry): void {
    entry.retired = true;
    if (entry.users === 0) this.close(entry);
  }

  private close(entry: ClientEntry): void {
    if (entry.closed) return;
    entry.closed = true;
    this.entries.delete(entry);
    entry.client.close().catch((err: unknown) => this.options.log.warn('jobs', `closing a client failed: ${describe(err)}`));
    entry.v1?.close().catch((err: unknown) => this.options.log.warn('jobs', `closing the v1 client failed: ${describe(err)}`));
  }

  /** A follower and its handle; `done` is marked handled, and the follower leaves when `signal` aborts. */
  private follower(options: FollowOptions): { follower: Follower; follow: JobFollow } {
    let resolve!: (final: JobSnapshot) => void;
    let reject!: (err: unknown) => void;
    const done = new Promise<JobSnapshot>((res, rej) => {
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

  private settle(follower: Follower, outcome: unknown, final?: JobSnapshot): void {
    if (follower.settled) return;
    follower.settled = true;
    if (final) follower.resolve(final);
    else follower.reject(outcome);
  }

  /**
   * Adds `follower` to the watch of the job, starting it with `lease` (which it then owns) when there is none; else
   * `lease` is released. `ownKey`: the watch is that submission's own.
   */
  private attach(lease: ClientLease, start: JobSnapshot | string, follower: Follower, ownKey: string | undefined, accepted?: V1Accepted): void {
    const jobId = typeof start === 'string' ? start : start.job.id;
    const key = `${lease.client.http.baseUrl} ${jobId}`;
    const watch = this.watches.get(key);
    if (!watch) {
      this.startWatch(key, jobId, lease, start, follower, ownKey, accepted);
      return;
    }
    lease.release();
    if (ownKey !== undefined) watch.ownKey = ownKey;
    watch.followers.add(follower);
  }

  /** Starts the watch of a job with its first follower (there before any update: a v1 socket's backlog comes at once). */
  private startWatch(key: string, jobId: string, lease: ClientLease, start: JobSnapshot | string, follower: Follower, ownKey: string | undefined, accepted?: V1Accepted): Watch {
    const watch: Watch = {
      key,
      jobId,
      lease,
      stop: new AbortController(),
      followers: new Set([follower]),
      ownKey,
      latest: undefined,
      publishedJson: undefined,
      deliveredStatus: undefined,
      ended: false,
    };
    this.watches.set(key, watch);
    const { client } = lease;
    // A submission's answer is the server's word too.
    if (typeof start !== 'string') this.sawServer(watch, start);
    const signal = AbortSignal.any([this.lifetime.signal, watch.stop.signal]);
    const onUpdate = (update: WatchUpdate): void => this.sawUpdate(watch, update);
    const watching = lease.v1
      ? lease.v1.watch(jobId, { accepted, signal, onUpdate, onSnapshot: (snapshot) => this.sawServer(watch, snapshot) })
      : watchJob(new ObservedJobs(client, (snapshot) => this.sawServer(watch, snapshot)), start, {
          ...this.options.watch,
          clock: client.clock,
          streams: client.streams,
          signal,
          onUpdate,
        });
    watching.then(
      (final) => this.finish(watch, final),
      (err: unknown) => this.end(watch, err),
    );
    return watch;
  }

  private stopWatch(watch: Watch): void {
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    watch.stop.abort();
  }

  /** The watch reached the job's end: the final job published and, for a submission's own, recorded. */
  private finish(watch: Watch, final: JobSnapshot): void {
    if (watch.ended) return this.end(watch, new AbortError('the watch was stopped'));
    this.sawServer(watch, final);
    this.deliverStatus(watch, final.job.status, final.job.queue_position ?? null);
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    const recorded =
      watch.ownKey === undefined
        ? Promise.resolve()
        : this.options.store
            .update(watch.ownKey, { lastStatus: final.job.status, expiresAt: final.job.expires_at ?? undefined })
            .then(
              () => undefined,
              (err: unknown) => this.options.log.warn('jobs', `job ${watch.jobId}: the record could not be updated: ${describe(err)}`),
            );
    void recorded.then(() => {
      for (const f of watch.followers) this.settle(f, undefined, final);
      watch.followers.clear();
      watch.lease.release();
    });
  }

  /** The watch ended without the job's end (stopped, disposed, or failed): its followers get `err`. */
  private end(watch: Watch, err: unknown): void {
    if (this.watches.get(watch.key) === watch) this.watches.delete(watch.key);
    watch.ended = true;
    for (const f of watch.followers) this.settle(f, err);
    watch.followers.clear();
    watch.lease.release();
  }

  /** A server answer (GET, or the submission's): it replaces the snapshot, and a terminal status is now confirmed. */
  private sawServer(watch: Watch, snapshot: JobSnapshot): void {
    if (watch.ended) return;
    watch.latest = mergeServer(watch.latest, snapshot.job);
    if (isTerminalStatus(snapshot.job.status)) this.deliverStatus(watch, snapshot.job.status, snapshot.job.queue_position ?? null);
    this.publish(watch);
  }

  /** An update of the watch: merged into the snapshot and passed on, except an unconfirmed terminal status (held). */
  private sawUpdate(watch: Watch, update: WatchUpdate): void {
    if (watch.ended) return;
    const latest = watch.latest;
    if (update.type === 'status') {
      if (isTerminalStatus(update.status)) {
        // From the stream (or a GET that sawServer already delivered): only a GET's word is passed on.
        if (latest?.status === update.status) this.deliverStatus(watch, update.status, update.queuePosition);
        return;
      }
      if (latest && !isTerminalStatus(latest.status)) watch.latest = { ...latest, status: update.status, queue_position: update.queuePosition };
      this.publish(watch);
      this.deliverStatus(watch, update.status, update.queuePosition);
      return;
    }
    if (latest && update.type === 'progress' && progressValue(update.progress) >= progressValue(latest.progress)) {
      watch.latest = { ...latest, progress: update.progress };
      this.publish(watch);
    } else if (latest && update.type === 'output' && !latest.outputs.some((o) => o.id === update.output.id)) {
      watch.latest = { ...latest, outputs: [...latest.outputs, update.output] };
      this.publish(watch);
    }
    this.deliver(watch, update);
  }

  private deliverStatus(watch: Watch, status: string, queuePosition: number | null): void {
    if (watch.deliveredStatus === status) return;
    watch.deliveredStatus = status;
    this.deliver(watch, { type: 'status', status, queuePosition });
  }

  private deliver(watch: Watch, update: WatchUpdate): void {
    for (const f of watch.followers) {
      if (f.settled || !f.onUpdate) continue;
      try {
        f.onUpdate(update);
      } catch (err) {
        this.options.log.warn('jobs', `job ${watch.jobId}: a follower failed: ${describe(err)}`);
      }
    }
  }

  /** Fires `onDidChangeJob` when the snapshot changed since it was last published. */
  private publish(watch: Watch): void {
    if (!watch.latest) return;
    const json = JSON.stringify(watch.latest);
    if (json === watch.publishedJson) return;
    watch.publishedJson = json;
    this.emitter.fire({ baseUrl: watch.lease.client.http.baseUrl, job: watch.latest });
  }
}
