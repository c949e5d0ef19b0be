/**
 * What a `JobService` (jobService.ts) is built from and hands out: its connections (the backend of the current settings, leased),
 * where it logs, and the options and handles of following and submitting a job.
 */
import type { JobRecord, StateStore } from '../state/stateStore';
import type { AcceptedJob, JobAnswer, JobBackend, JobUpdate } from './backend';
import type { Emitter, Subscription } from './listeners';
import type { JobState } from './state';

/**
 * What the service builds for the current settings: the job backend, and whatever else its owner keeps with it (the
 * extension adds the surface and the asset client). The service closes the backend when the connection is retired.
 */
export interface Connection {
  readonly backend: JobBackend;
}

/** Where the service gets its connections: the extension reads its settings and SecretStorage here. */
interface ClientSource<C extends Connection = Connection> {
  /**
   * What identifies the connection the settings call for now (e.g. a hash of the base URL, the API and the API key): a
   * different value means it must be rebuilt. Never logged.
   * @throws InputError `bad_base_url` (the service passes it on).
   */
  identity(): Promise<string>;
  /** A new connection for the current settings. @throws InputError `bad_base_url`. */
  create(): Promise<C>;
}

/** Where the service writes what it did (the extension's log: component tag, message). */
export interface ServiceLog {
  info(component: string, message: string): void;
  warn(component: string, message: string): void;
}

/**
 * A lease on the service's connection of the moment: use it for a few requests, then `release()` it (a rebuilt
 * connection's predecessor is closed when its last lease is released). Never close the backend itself.
 */
export interface ClientLease<C extends Connection = Connection> {
  readonly connection: C;
  /** The connection's job backend (ask its `capabilities` before an operation the API may not offer). */
  readonly backend: JobBackend;
  /** Aborts when the service is disposed: compose it into every request made with this lease. */
  readonly signal: AbortSignal;
  /** Gives the lease back; idempotent. */
  release(): void;
}

/** Options of {@link JobService.follow}. */
export interface FollowOptions {
  /** The watch's updates from now on, in order, as the shared watch sees them; a terminal status only once confirmed. */
  onUpdate?: (update: JobUpdate) => void;
  /** Aborting it is leaving ({@link JobFollow.dispose}). */
  signal?: AbortSignal;
}

/** One follower of a job's watch. */
export interface JobFollow extends Subscription {
  /**
   * The final job, from the server, once the job is terminal. Rejects with {@link AbortError} when this follower left
   * or the service was disposed; with {@link JobLostError} when the server answered 404 for the job (its state is
   * then published with status `lost`); as {@link JobBackend.watch} otherwise (the last transient error past
   * the outage budget, …). Rejections are marked handled: not awaiting it is safe.
   */
  readonly done: Promise<JobAnswer>;
}

/** Options of {@link JobService.submit}. */
export interface ServiceSubmitOptions {
  /** Recorded with the submission. */
  workflowFile?: string;
  /**
   * The UI-format workflow the API-format one was converted from (or an image's `workflow` chunk): an API that keeps
   * it with the job sends it (a ComfyUI server: `extra_data.extra_pnginfo.workflow`, which its SaveImage writes into
   * every PNG, as ComfyUI's own frontend does); the others ignore it.
   */
  uiWorkflow?: unknown;
  /**
   * Aborts the submission, or stops this caller following the job (the job itself and its watch go on: a cancelled
   * wait is not a cancelled job).
   */
  signal?: AbortSignal;
  /** Told before a wait for a retry of the submission (queue full, deployment starting). */
  onWait?: (info: { delayMs: number; reason: string }) => void;
  /** Called once the job exists. */
  onSubmitted?: (submission: AcceptedJob) => void;
  onUpdate?: (update: JobUpdate) => void;
}

/** How to build a {@link JobService}. */
export interface JobServiceOptions<C extends Connection = Connection> {
  clients: ClientSource<C>;
  /** The store of remembered submissions (shared with the CLI). */
  store: StateStore;
  log: ServiceLog;
  /** The emitters of `onDidChangeJob` and `onDidChangeJobState`; default {@link ListenerSet}s. Disposed with the service. */
  emitters?: { job?: Emitter<JobState>; state?: Emitter<JobState> };
  /** Recorded with each submission. Default `core`. */
  clientName?: JobRecord['client'];
  /**
   * Whether the service writes a submission's final status into its record when its own watch ends. Default true.
   * An owner of job ends that downloads outputs first (the extension's) turns it off and writes the record itself,
   * after the download: a process that dies mid-download then leaves the record not terminal, and its next start-up
   * downloads again instead of finding a terminal record with outputs missing.
   */
  recordsEnd?: boolean;
}
