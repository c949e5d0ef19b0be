/**
 * The contract every API's job side implements (each API folder's `jobBackend.ts`): submit, read, watch, cancel,
 * download outputs, list where the API lists, and what the API can do ({@link JobCapabilities}). The job service, the
 * CLI's shared parts and the views speak to a {@link JobBackend} and ask its capabilities; they never ask which API it
 * is. A new API is a new folder with a backend, not a new branch in every view.
 */
import type { JobRecord, StateStore } from '../state/stateStore';
import type { Job, JobOutput, JobStatus, Preview, Progress } from './model';

/** What a settled submission tells as it goes. */
export type SettleEvent =
  /** The outcome under `key` was not heard (`error`, when this call heard the failure): being resolved. */
  | { type: 'unknown'; key: string; error?: unknown }
  /** The submission's job `jobId` was found in the listing and adopted under `key`. */
  | { type: 'adopted'; key: string; jobId: string }
  /** No job was made under `key` (two readings): it is retired, and the submission goes on under `successorKey`. */
  | { type: 'retired'; key: string; successorKey: string; sentAt: string };

/**
 * What a watch reports while a job runs, in order: a status (with the 0-based queue position when queued), a progress
 * (as the server said it: the job service keeps it from going backwards, state.ts), a preview frame, a new output, whether it follows a live stream or
 * polls (and why), and a read that failed transiently and is retried after `delayMs` (ms), failing since
 * `failingSinceMs` (ms since the epoch, from the watch's clock).
 */
export type JobUpdate =
  | { type: 'status'; status: JobStatus; queuePosition: number | null }
  | { type: 'progress'; progress: Progress }
  | { type: 'preview'; preview: Preview }
  | { type: 'output'; output: JobOutput }
  | { type: 'mode'; mode: 'stream' | 'polling'; reason?: string }
  | { type: 'retrying'; delayMs: number; reason: string; failingSinceMs: number };

/** A job as one answer of its server described it, with that answer's request id (for the log and the tooltip). */
export interface JobAnswer {
  readonly job: Job;
  readonly requestId: string | undefined;
  /**
   * The job as the server's answer wrote it (its wire JSON, read tolerantly), where the API has one document per job:
   * what a face prints as the server's own word (the CLI's `--json`). Never read for a decision: {@link job} is.
   */
  readonly wire?: unknown;
}

/** A job its server accepted: the job as first known, and the key of its remembered record. */
export interface AcceptedJob extends JobAnswer {
  /**
   * The key of the submission's record in the state store: the Idempotency-Key where the API has one
   * ({@link JobCapabilities.idempotentSubmit}), else a local key that is never sent.
   */
  readonly recordKey: string;
  /** What the backend hands to the watch of this job (e.g. a socket opened before posting); opaque to everyone else. */
  readonly handoff?: unknown;
  /**
   * True when the job was not heard from its submission's own answer but found after an unknown outcome (the
   * listing, unknownOutcome.ts), or was already held by the key's record.
   */
  readonly adopted?: boolean;
  /** The keys retired on the way (their absence of a job proven), in order: the job is `recordKey`'s. */
  readonly retiredKeys?: readonly string[];
}

/** What an API can do; a view asks these instead of asking which API it is. */
export interface JobCapabilities {
  /** The server lists its jobs ({@link JobBackend.list}): jobs submitted elsewhere can be shown. */
  readonly list: boolean;
  /** A running job can be canceled, not only a queued one. */
  readonly cancelRunning: boolean;
  /** The API has assets: uploads, and a job's outputs are assets (an id to download, reference and delete). */
  readonly assets: boolean;
  /** The server keeps each job's workflow ({@link JobBackend.workflow}). */
  readonly storedWorkflow: boolean;
  /**
   * A submission carries an Idempotency-Key, written before sending: one whose outcome was not heard can be looked up
   * later ({@link JobBackend.reconcile}), and is never sent twice.
   */
  readonly idempotentSubmit: boolean;
}

/** Options of {@link JobBackend.submit}. */
export interface JobSubmitOptions {
  /** Where the submission is remembered (shared by the CLI and the extension); without one it is not remembered. */
  store?: StateStore;
  /** Recorded with the submission. */
  workflowFile?: string;
  /** Who submitted it, recorded with it. Default `core`. */
  client?: JobRecord['client'];
  /**
   * The Idempotency-Key to present, where the API has one ({@link JobCapabilities.idempotentSubmit}): a batch fixes
   * each variation's key before its first submission, so a resumed batch presents the same key again. Default: a new
   * one. Ignored by an API without keys.
   */
  idempotencyKey?: string;
  /** The batch this submission is a variation of: recorded with it. */
  batchId?: string;
  /**
   * The UI-format workflow the API-format one was converted from (or an image's `workflow` chunk): an API that keeps
   * it with the job sends it (a ComfyUI server: `extra_data.extra_pnginfo.workflow`, which its SaveImage writes into
   * every PNG, as ComfyUI's own frontend does); the others ignore it.
   */
  uiWorkflow?: unknown;
  /**
   * `throw`: a busy server's 429 (`queue_full`, `rate_limited`, with its Retry-After) is thrown to the caller at once
   * instead of waited out here, so a batch waits it out once for all its jobs. Default `wait`.
   */
  busy?: 'wait' | 'throw';
  signal?: AbortSignal;
  /** Told before a wait for a retry of the submission (queue full, deployment starting): the wait (ms) and why. */
  onWait?: (info: { delayMs: number; reason: string }) => void;
  /** Told when an accepted job could not be remembered in `store` (the job exists and is returned all the same). */
  onUnremembered?: (err: unknown) => void;
  /**
   * The settle window (ms) of an unknown outcome's resolution (unknownOutcome.ts): how long after a send its job
   * shows in the listing. Default the backend's (3 s).
   */
  settleMs?: number;
  /** Told how an unknown outcome is being resolved: unheard, adopted, its key retired for a successor. */
  onResolution?: (event: SettleEvent) => void;
  /** Called before the submission is sent again under a successor key (a batch opens its gate; throw to stop). */
  beforeResend?: (key: string) => Promise<void>;
  /** Whether a `pending` record's submitter is gone (default StateStore `isOrphaned`). */
  orphaned?: (record: JobRecord) => boolean;
}

/** Options of {@link JobBackend.watch}. */
export interface JobWatchOptions {
  /** Aborting it stops the watch (its promise rejects with AbortError); the job goes on. */
  signal?: AbortSignal;
  onUpdate?: (update: JobUpdate) => void;
  /** Told every answer of the server about the job (its word, not the stream's), the final one included. */
  onAnswer?: (answer: JobAnswer) => void;
  /**
   * When the job was created or its submission sent (ms since the epoch, this client's clock), when the caller knows
   * it: a 404 soon after is a server not showing a new job yet (ridden out within the API's grace), not its end. A
   * job just accepted ({@link AcceptedJob}) counts as new without it.
   */
  newSince?: number;
}

/** One output written to a file: the output, the file's path and its size (bytes). */
export interface SavedOutput {
  output: JobOutput;
  path: string;
  bytes: number;
}

/** A page of the server's jobs, newest first; `truncated` when it has more than it returned. */
export interface JobList {
  jobs: Job[];
  truncated: boolean;
}

/** A job's workflow as its server kept it: verbatim, in the shape `format` says (`api`, `save`, or another value). */
export interface StoredWorkflow {
  workflow: Record<string, unknown>;
  format: string;
  requestId: string | undefined;
}

/** What reconciling did to one remembered submission, with one line for a person. */
export interface ReconcileReport {
  record: JobRecord;
  /** `adopted`, `unknown` or `skipped` (left as it was). */
  outcome: string;
  message: string;
}

/**
 * A node class's definition as a server's `object_info` gives it (read tolerantly: only these fields are named, the rest
 * kept as sent).
 */
export interface NodeClassDefinition {
  readonly name?: string;
  readonly display_name?: string;
  readonly category?: string;
  readonly [field: string]: unknown;
}

/** The node definitions of a server: class_type to its definition. */
export type NodeClassDefinitions = Record<string, NodeClassDefinition>;

/** A file as an engine input names it: `{filename, subfolder, type}` (e.g. the image a mask is for). */
export interface InputFileRef {
  readonly filename: string;
  readonly subfolder?: string;
  readonly type?: string;
}

/** Options of {@link JobBackend.uploadInput}. */
export interface InputUploadOptions {
  /** Where the server keeps the file: `input` (default) or `temp`. */
  type?: 'input' | 'temp';
  /** Replace a file of the same name (not with `maskFor`). */
  overwrite?: boolean;
  /** Upload a mask of this image instead of an image. */
  maskFor?: InputFileRef;
  signal?: AbortSignal;
}

/** A file uploaded as an engine input: the name a workflow's loader takes (`subfolder/name` when in a subfolder). */
export interface UploadedInput {
  readonly name: string;
  readonly subfolder: string;
  readonly type?: string;
}

/**
 * The job side of one API at one server. Errors are the core's typed errors (http/errors.ts): a refusal of the server
 * is an ApiError by code, no answer a ConnectionError or TimeoutError, an abort an AbortError.
 */
export interface JobBackend {
  /** Which API it speaks (`v2`, …): for the log and {@link Job.api}; never a reason to branch (ask the capabilities). */
  readonly api: string;
  /** The base URL of its server: jobs of two servers never mix. */
  readonly baseUrl: string;
  readonly capabilities: JobCapabilities;
  /**
   * Submits an API-format workflow once and, with a `store`, remembers it by the API's rules (an Idempotency-Key
   * written before sending where the API has one, else the job once accepted). Where the API has keys, an unknown
   * outcome is resolved (unknownOutcome.ts `submitSettled`: the job found in the listing, or the key retired and the
   * submission sent again under its successor): the job returned is the one that exists, under `recordKey`.
   * @throws InputError before any request for a workflow the API does not take; the API's refusals (invalid
   *   workflow with its node errors, …); OutcomeUnknownError when a job may exist and the surface cannot say (no
   *   listing); AbortError.
   */
  submit(workflow: unknown, options?: JobSubmitOptions): Promise<AcceptedJob>;
  /** The job now, from the server (retried like any read). @throws NotFoundError; the transport's typed errors. */
  get(jobId: string, signal?: AbortSignal): Promise<JobAnswer>;
  /**
   * Follows a job until its server says it is terminal, reporting {@link JobUpdate}s; the final job always comes from
   * the server's read, never from a stream alone. `start` is a job id, or a job this backend just accepted.
   * @throws AbortError when `signal` aborts; NotFoundError and other definitive errors; the last transient error once
   *   the API's outage budget is spent.
   */
  watch(start: string | AcceptedJob, options?: JobWatchOptions): Promise<JobAnswer>;
  /**
   * Asks the server to cancel the job; resolves the job as it then stands (a job the API cannot stop goes on:
   * {@link JobCapabilities.cancelRunning}). @throws the transport's typed errors.
   */
  cancel(jobId: string, signal?: AbortSignal): Promise<JobAnswer>;
  /**
   * Downloads the outputs `job` lists into `dir` (created if missing), one after the other: complete files only, under
   * sanitized free names inside `dir`, nothing overwritten. `onProgress` gets bytes written and the total when known.
   * @throws InputError `unsafe_path` or `unsafe_url`; the download's errors.
   */
  downloadOutputs(
    job: Job,
    dir: string,
    options?: { signal?: AbortSignal; onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void },
  ): Promise<SavedOutput[]>;
  /**
   * A page of the server's jobs, at most `limit`. @throws InputError `not_supported` without
   * {@link JobCapabilities.list}; the server's refusal when this surface has no listing.
   */
  list(options?: { limit?: number; signal?: AbortSignal }): Promise<JobList>;
  /** The workflow the server kept for a job. @throws InputError `not_supported` without {@link JobCapabilities.storedWorkflow}. */
  workflow(jobId: string, signal?: AbortSignal): Promise<StoredWorkflow>;
  /**
   * Looks up the store's submissions of this server whose outcome was not heard (pending, outcome unknown); none
   * without {@link JobCapabilities.idempotentSubmit} (nothing to look them up by).
   */
  reconcile(store: StateStore, signal?: AbortSignal): Promise<ReconcileReport[]>;
  /** Releases its connections. */
  close(): Promise<void>;
  /**
   * A note a face says once when it starts using this backend (e.g. that its API is deprecated, and how to move on);
   * none for most.
   */
  readonly notice?: string;
  /** True where every submission can carry a partner-service key (set when the backend is built); else none is taken. */
  readonly acceptsPartnerKey?: boolean;
  /**
   * The server's node definitions (its `object_info`), all or only `classType` (empty when it has none). Present only
   * where the API serves them: its absence is the capability's.
   * @throws the transport's typed errors.
   */
  nodeDefinitions?(classType?: string, signal?: AbortSignal): Promise<NodeClassDefinitions>;
  /**
   * Uploads a file as an engine input (an image a LoadImage node names, or a mask of one), where the API's inputs are
   * files of the server rather than assets: present only there ({@link JobCapabilities.assets} is the other way in).
   * @throws InputError for an unreadable file (before any request); the transport's typed errors.
   */
  uploadInput?(file: string, options?: InputUploadOptions): Promise<UploadedInput>;
}
