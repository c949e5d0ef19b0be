/**
 * The Job and Asset API v2 as a {@link JobBackend} (core/jobs): its client's operations, their answers mapped into the
 * model (mapping.ts). Submissions are durable (submission.ts: the Idempotency-Key written before sending, never
 * presented again after an unknown outcome) and settled (core/jobs/unknownOutcome.ts: an unknown outcome resolved
 * through the listing where the surface has one), watches poll with the event stream as a live enhancement
 * (watch.ts), and the store's unheard submissions are looked up by their key (reconcile.ts).
 *
 * Links are followed, not built (Job and Asset API v2, design rule 4): the model keeps no links, so the backend keeps
 * the last answer of each job it saw (at most {@link KNOWN_JOBS}) and reads, watches and cancels a job through that
 * answer's `urls`; a job it never saw is reached by its URL under the base URL.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_RETRY_POLICY, withRetry } from '../http/retry';
import type {
  AcceptedJob,
  JobAnswer,
  JobBackend,
  JobCapabilities,
  JobList,
  JobSubmitOptions,
  JobWatchOptions,
  ReconcileReport,
  SavedOutput,
  StoredWorkflow,
} from '../jobs/backend';
import type { Job } from '../jobs/model';
import { DEFAULT_SETTLE_MS, submitSettled } from '../jobs/unknownOutcome';
import { SubmittedJobReader } from '../jobs/submittedJobs';
import type { StateStore } from '../state/stateStore';
import type { V2Client } from './client';
import { JobsApi, type JobSnapshot, type Submission } from './jobs';
import { submitDurably } from './submission';
import { V2_API, answerOf, downloadSnapshotOf, jobOf, updateOf } from './mapping';
import { reconcilePending, type ReconcileOptions } from './reconcile';
import { NOT_FOUND_GRACE_MS, watchJob, type WatchOptions } from './watch';

/**
 * What v2 can do: its surfaces may list jobs (the self-hosted companion's `GET /api/v2/jobs`; elsewhere the listing
 * is refused and the caller shows what it remembers), cancel a running job (`POST …/cancel`), keep a job's workflow
 * (`GET …/workflow`), and outputs are assets; every submission has an Idempotency-Key.
 */
export const V2_CAPABILITIES: JobCapabilities = Object.freeze({
  list: true,
  cancelRunning: true,
  assets: true,
  storedWorkflow: true,
  idempotentSubmit: true,
});

/** How many jobs' last answers (their links) a backend keeps; the least recently seen go first. */
const KNOWN_JOBS = 500;

/** Options of {@link V2JobBackend}. */
export interface V2JobBackendOptions {
  /** Options of every watch (stream on/off, cadence, outage budget). */
  watch?: Omit<WatchOptions, 'signal' | 'onUpdate' | 'clock' | 'streams'>;
  /** Options of reconciling (tests inject the clock, pid liveness, host name). */
  reconcile?: Omit<ReconcileOptions, 'signal'>;
  /**
   * The settle window (ms) of an unknown outcome's resolution: how long after a send a job shows in the listing
   * (`comfyCloud.unknownOutcomeSettleSeconds`, the CLI's `--settle`). Default {@link DEFAULT_SETTLE_MS}.
   */
  settleMs?: number;
}

/** The low layer of jobs, telling the watch's owner of every GET answer (the watch reads through it). */
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

/** A {@link JobBackend} over a {@link V2Client}, which it owns (`close()` closes it). */
export class V2JobBackend implements JobBackend {
  readonly api = V2_API;
  readonly capabilities = V2_CAPABILITIES;
  /** The last answer of each job seen, by job id, least recently seen first (its links are followed). */
  private readonly known = new Map<string, JobSnapshot>();
  /** The jobs of the last listing read, by id: a job found there is followed from that answer. */
  private listed = new Map<string, JobSnapshot>();
  /** The listing's readings, shared by every resolution of an unknown outcome under way. */
  readonly reader: SubmittedJobReader;

  constructor(
    /** The client (its assets are the asset views' to use). */
    readonly client: V2Client,
    private readonly options: V2JobBackendOptions = {},
  ) {
    this.reader = new SubmittedJobReader(this, client.clock);
  }

  get baseUrl(): string {
    return this.client.http.baseUrl;
  }

  /**
   * With a store, a durable and settled submission: each send durable (submission.ts), an unknown outcome resolved
   * (core/jobs/unknownOutcome.ts `submitSettled`: found in the listing, or the key retired and the submission sent
   * again under its successor), so the job returned is the one that exists. Without a store, one POST with a fresh
   * key, unremembered. The job's watch follows the links of the answer ({@link watch} with the returned job).
   * @throws as submitSettled / submitDurably / JobsApi.submit.
   */
  async submit(workflow: unknown, options: JobSubmitOptions = {}): Promise<AcceptedJob> {
    const { store } = options;
    if (!store) {
      const submission = await this.client.submit(workflow, {
        idempotencyKey: options.idempotencyKey,
        signal: options.signal,
      });
      this.saw(submission);
      return { ...answerOf(submission), recordKey: submission.idempotencyKey, handoff: submission };
    }
    const send = async (key: string, originKey: string | undefined): Promise<AcceptedJob> => {
      const durable = await submitDurably(this.client, workflow, {
        store,
        idempotencyKey: key,
        originKey,
        batchId: options.batchId,
        // One attempt: the caller waits out a busy server (a 429 released the key: Job and Asset API v2, POST
        // /api/v2/jobs, rule 4), under the same key.
        policy: options.busy === 'throw' ? { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 } : undefined,
        workflowFile: options.workflowFile,
        client: options.client,
        signal: options.signal,
        onWait: options.onWait,
      });
      const submission: Submission = { ...durable.snapshot, idempotencyKey: durable.idempotencyKey };
      this.saw(submission);
      return { ...answerOf(submission), recordKey: submission.idempotencyKey, handoff: submission };
    };
    const settled = await submitSettled(this, {
      store,
      originKey: options.idempotencyKey ?? randomUUID(),
      workflow,
      send,
      read: (jobId) => this.get(jobId, options.signal),
      clock: this.client.clock,
      settleMs: options.settleMs ?? this.options.settleMs ?? DEFAULT_SETTLE_MS,
      reader: this.reader,
      orphaned: options.orphaned,
      beforeResend: options.beforeResend,
      onEvent: options.onResolution,
      recordFields: { client: options.client, batchId: options.batchId, workflowFile: options.workflowFile },
      signal: options.signal,
    });
    // A job found in the listing is followed from that answer (a GET may not show a new job yet).
    return settled.handoff !== undefined || !settled.adopted
      ? settled
      : { ...settled, handoff: this.listed.get(settled.job.id) };
  }

  /** GET the job (its `self` link when it was seen), retried like any read (V2Client.getJob). */
  async get(jobId: string, signal?: AbortSignal): Promise<JobAnswer> {
    return answerOf(this.saw(await this.client.getJob(this.linkOf(jobId), { signal })));
  }

  /**
   * watch.ts {@link watchJob} on the client's clock and stream budget: every GET answer told as the server's word, the
   * final one returned. A job this backend accepted is followed by the links of its submission's answer; a job id is
   * read first (GET, by the links of its last answer when one was seen), so the watch's first word is the server's now.
   */
  async watch(start: string | AcceptedJob, options: JobWatchOptions = {}): Promise<JobAnswer> {
    const from =
      typeof start === 'string'
        ? this.linkOf(start)
        : ((start.handoff as JobSnapshot | undefined) ?? this.linkOf(start.job.id));
    let source: URL | undefined = typeof from === 'string' ? undefined : from.source;
    const jobs = new ObservedJobs(this.client, (snapshot) => {
      source = snapshot.source;
      this.saw(snapshot);
      options.onAnswer?.(answerOf(snapshot));
    });
    // A job just accepted (or found) is new: a 404 soon after is the server not showing it yet.
    const newSince = options.newSince ?? (typeof start === 'string' ? undefined : this.client.clock.now());
    const final = await watchJob(jobs, from, {
      ...this.options.watch,
      clock: this.client.clock,
      streams: this.client.streams,
      signal: options.signal,
      // A snapshot remembered from an earlier answer may be stale: the job is read again before anything is reported.
      readFirst: typeof start === 'string',
      notFoundUntil: newSince !== undefined ? newSince + NOT_FOUND_GRACE_MS : undefined,
      onUpdate: options.onUpdate ? (u) => options.onUpdate!(updateOf(u, source)) : undefined,
    });
    return answerOf(final);
  }

  /** POST cancel (its `cancel` link when the job was seen; idempotent, retried like a read), the job as it then stands. */
  async cancel(jobId: string, signal?: AbortSignal): Promise<JobAnswer> {
    return answerOf(this.saw(await this.client.cancelJob(this.linkOf(jobId), { signal })));
  }

  /** V2Client.downloadOutputs of the model job's outputs (each from its resolved `url`, else its asset's content). */
  async downloadOutputs(
    job: Job,
    dir: string,
    options: {
      signal?: AbortSignal;
      onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
    } = {},
  ): Promise<SavedOutput[]> {
    const files = await this.client.downloadOutputs(downloadSnapshotOf(job, this.client.http.url('/')), dir, {
      signal: options.signal,
      onProgress: options.onProgress,
    });
    // One file per output, in order.
    return files.map((f, i) => ({ output: job.outputs[i]!, path: f.path, bytes: f.bytes }));
  }

  /** `GET /api/v2/jobs?limit=` (the self-hosted companion's listing); other surfaces refuse it. */
  async list(options: { limit?: number; signal?: AbortSignal } = {}): Promise<JobList> {
    const page = await this.client.jobs.list({ limit: options.limit, signal: options.signal });
    const source = this.client.http.url('/api/v2/jobs');
    this.listed = new Map(page.jobs.map((j) => [j.id, { job: j, source, requestId: undefined }]));
    return { jobs: page.jobs.map((j) => jobOf(j, source)), truncated: page.truncated };
  }

  /** `GET /api/v2/jobs/{id}/workflow`, retried like any read. @throws NotFoundError past retention; ApiErrors. */
  async workflow(jobId: string, signal?: AbortSignal): Promise<StoredWorkflow> {
    const res = await withRetry('read', () => this.client.jobs.workflow(jobId, signal), {
      clock: this.client.clock,
      signal,
    });
    return { workflow: res.workflow, format: res.format, requestId: res.requestId };
  }

  /** reconcile.ts {@link reconcilePending} of the store's records of this server. */
  reconcile(store: StateStore, signal?: AbortSignal): Promise<ReconcileReport[]> {
    return reconcilePending(this.client, store, { ...this.options.reconcile, signal });
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** Keeps `snapshot` as the last answer of its job (the most recently seen), within {@link KNOWN_JOBS}. */
  private saw(snapshot: JobSnapshot): JobSnapshot {
    this.known.delete(snapshot.job.id);
    this.known.set(snapshot.job.id, snapshot);
    if (this.known.size > KNOWN_JOBS) this.known.delete(this.known.keys().next().value!);
    return snapshot;
  }

  /** The last answer of job `jobId` (whose links are followed), or its id when it was never seen. */
  private linkOf(jobId: string): JobSnapshot | string {
    return this.known.get(jobId) ?? jobId;
  }
}
