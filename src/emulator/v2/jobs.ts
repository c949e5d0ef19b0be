/**
 * The job store and the job state machine (Job and Asset API v2, Job, and States and transitions; inner fields
 * from public sources). Every change of a job goes through here, so that the job GET answers and the event
 * stream pushes are the same data: a status event at every transition, a progress event per snapshot, a
 * preview event per preview, an output event per committed output.
 * Retention: a job past `expires_at` is dropped on its next access (404) or by the periodic sweep.
 */
import { randomUUID } from 'node:crypto';
import type { AssetRecord, AssetStore } from './assets';
import type { ExecutionPlan } from '../engine/engine';
import type { EventHub, StreamEvent } from './events';
import type { JobLag } from '../faults';
import type { Links } from './links';
import type { SavedJob } from '../persistence';
import {
  isTerminal,
  iso,
  type JobStatus,
  type WireJob,
  type WireJobError,
  type WireLogLine,
  type WirePreview,
  type WireProgress,
  type WireStatusEvent,
} from './wire';

/** A job as the emulator keeps it. Times are ms since the epoch (the emulator's clock). */
export interface JobRecord {
  readonly id: string;
  readonly owner: string;
  status: JobStatus;
  readonly createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  readonly expiresAt: number;
  /** 0 = next to start; null unless queued. */
  queuePosition: number | null;
  progress: WireProgress | null;
  /** Committed outputs, in commit order. */
  readonly outputs: AssetRecord[];
  error: WireJobError | null;
  /** The latest preview, sent to a stream on connect. */
  preview: WirePreview | null;
  /** The workflow exactly as submitted (GET …/workflow); never the extra_data. */
  readonly workflow: Record<string, unknown>;
  /** What runs; replaced once when a queued job is taken back after a restart (its workflow checked again). */
  plan: ExecutionPlan;
  /** The submission's extra_data: held for the run only, never persisted or shown, cleared when the run ends. */
  extraData: Record<string, string> | null;
  /**
   * More tEXt chunks for every PNG the run saves (keyword → text): a ComfyUI submission's `extra_data.extra_pnginfo`,
   * each value as JSON, as ComfyUI's SaveImage writes them beside `prompt`. Held for the run; not persisted.
   */
  pngText?: Readonly<Record<string, string>>;
  /** Aborts the run (cancel, retention, close); set while running. */
  abort: AbortController | null;
  /** What the run printed (kept only when the store captures logs: a serverless deployment). */
  readonly logLines: WireLogLine[];
  /**
   * When the job comes into sight (ms, the emulator's clock): the listing shows it from `list`, its own routes (GET,
   * events, workflow) from `get`. Both `createdAt` unless a `lag` fault holds it back (faults.ts); not persisted.
   */
  readonly visibleFrom: { readonly list: number; readonly get: number };
}

/**
 * Allowed transitions: the document's table, plus queued → canceled (cancel of a queued job is not shown there;
 * public sources: on the self-hosted surface a canceled queued job is dequeued and ends canceled).
 */
const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  queued: ['running', 'canceled'],
  running: ['succeeded', 'failed', 'canceling', 'expired'],
  canceling: ['canceled'],
  succeeded: [],
  canceled: [],
  failed: [],
  expired: [],
};

/** What the store needs around it. */
interface JobStoreOptions {
  readonly now: () => number;
  /** `expires_at` = `created_at` + this. */
  readonly retentionMs: number;
  readonly hub: EventHub;
  readonly links: Links;
  readonly assets: AssetStore;
  /** Called when a job leaves retention, after it is removed (dequeue it, abort its run, drop its outputs). */
  readonly onDrop: (job: JobRecord) => void;
  /**
   * Capture each run's log and return it as `logs` on GET of a finished job: the serverless deployment surface (the
   * emulator under a mount prefix). Job and Asset API v2, Job, rules for `logs`, rule 1: other surfaces never have it.
   */
  readonly captureLogs?: boolean;
  /**
   * Called after every change worth keeping across a restart (a job created, moved to another status, given an
   * output, dropped); not after progress or previews, which a restart need not keep.
   */
  readonly onChange?: () => void;
}

/** The plan of a job that will not run (taken back finished, or interrupted): no step, no asset in use. */
const NO_PLAN: ExecutionPlan = { steps: [], assetIds: [] };

/**
 * The error of a job that was running when the emulator stopped: it ends `failed` when the emulator starts again
 * (the document's running → failed; a run is not resumed half-way, and is not started again, since its outputs so
 * far are already committed).
 */
const INTERRUPTED_BY_RESTART: WireJobError = {
  code: 'execution_error',
  message: 'the emulator stopped while this job was running, so it did not finish; submit the workflow again',
  node_id: null,
  class_type: null,
  traceback: null,
};

/** Most log lines kept per job: a bound, so a long graph cannot grow a job without limit. */
const MAX_LOG_LINES = 1000;

/** Options of {@link JobStore.toWire}. */
interface ToWireOptions {
  /** GET /api/v2/jobs/{id}: the one answer that carries `logs` ("Rules for `logs`" 4). */
  readonly withLogs?: boolean;
}

/** Options of {@link JobStore.list}. */
export interface ListOptions {
  /** Only jobs in one of these statuses; all when empty. */
  readonly statuses: readonly string[];
  readonly limit: number;
}

/** Jobs by id, each owned by one caller. */
export class JobStore {
  private readonly jobs = new Map<string, JobRecord>();

  constructor(private readonly options: JobStoreOptions) {}

  /**
   * A new queued job of `owner` (the caller queues it with the scheduler); `lag` keeps it out of the listing and its
   * own routes for a while after its creation (a `lag` fault). `id`: the id the client chose (a ComfyUI server takes a
   * client's `prompt_id`); default a fresh UUID. @throws TypeError when `id` is already a job's.
   */
  create(
    owner: string,
    workflow: Record<string, unknown>,
    plan: ExecutionPlan,
    extraData: Record<string, string> | null,
    lag?: JobLag,
    id: string = randomUUID(),
  ): JobRecord {
    if (this.jobs.has(id)) throw new TypeError(`a job with id ${JSON.stringify(id)} already exists`);
    const now = this.options.now();
    const job: JobRecord = {
      id,
      owner,
      status: 'queued',
      createdAt: now,
      startedAt: null,
      completedAt: null,
      expiresAt: now + this.options.retentionMs,
      queuePosition: null,
      progress: null,
      outputs: [],
      error: null,
      preview: null,
      workflow,
      plan,
      extraData,
      abort: null,
      logLines: [],
      visibleFrom: { list: now + (lag?.listMs ?? 0), get: now + (lag?.getMs ?? 0) },
    };
    this.jobs.set(job.id, job);
    this.options.onChange?.();
    return job;
  }

  /** The jobs now, in creation order, for the data folder (persistence.ts); outputs as asset ids. */
  saved(): SavedJob[] {
    return [...this.jobs.values()].map((job) => ({
      id: job.id,
      owner: job.owner,
      status: job.status,
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      completedAt: job.completedAt,
      expiresAt: job.expiresAt,
      progress: job.progress,
      outputs: job.outputs.map((a) => a.id),
      error: job.error,
      workflow: job.workflow,
      logLines: job.logLines,
    }));
  }

  /**
   * Takes back the jobs a previous run saved (persistence.ts), after the assets. What a restart does to each:
   * - a finished one (succeeded, failed, canceled, expired) is as it was, with its outputs;
   * - a queued one stays queued and runs again: `plan` checks its workflow once more (as a submission would) and
   *   the caller queues it, in creation order; when the check now fails (an asset it uses is gone), it ends
   *   `failed` with that refusal as its error;
   * - a running one ends `failed` with {@link INTERRUPTED_BY_RESTART};
   * - a canceling one ends `canceled` (the cancel completes: nothing runs any more).
   * Jobs past retention are left out. @returns the jobs to queue, in creation order.
   */
  restore(saved: readonly SavedJob[], plan: (job: SavedJob) => ExecutionPlan | WireJobError): JobRecord[] {
    const now = this.options.now();
    const queued: JobRecord[] = [];
    for (const s of saved) {
      if (now >= s.expiresAt || this.jobs.has(s.id)) continue;
      const outputs = s.outputs
        .map((id) => this.options.assets.recordOf(id))
        .filter((a): a is AssetRecord => a !== undefined);
      const job: JobRecord = {
        ...s,
        queuePosition: null,
        outputs,
        preview: null,
        plan: NO_PLAN,
        extraData: null,
        abort: null,
        logLines: [...s.logLines],
        visibleFrom: { list: s.createdAt, get: s.createdAt },
      };
      if (s.status === 'queued') {
        const checked = plan(s);
        if ('steps' in checked) {
          job.plan = checked;
          queued.push(job);
        } else {
          Object.assign(job, { status: 'failed', error: checked, completedAt: now });
        }
      } else if (s.status === 'running') {
        Object.assign(job, { status: 'failed', error: INTERRUPTED_BY_RESTART, completedAt: now });
      } else if (s.status === 'canceling') {
        Object.assign(job, { status: 'canceled', completedAt: now });
      }
      this.jobs.set(job.id, job);
    }
    this.options.onChange?.();
    return queued;
  }

  /** Job `id` of `owner`; undefined when unknown, another owner's, or past retention (then it is dropped). */
  get(owner: string, id: string): JobRecord | undefined {
    const job = this.jobs.get(id);
    if (job === undefined || job.owner !== owner) return undefined;
    if (this.expired(job)) {
      this.drop(job);
      return undefined;
    }
    return job;
  }

  /**
   * Job `id` of `owner` as its own routes (GET, events, workflow) see it: as {@link get}, and undefined while a `lag`
   * fault still hides it.
   */
  read(owner: string, id: string): JobRecord | undefined {
    const job = this.get(owner, id);
    return job === undefined || this.options.now() < job.visibleFrom.get ? undefined : job;
  }

  /** The jobs of `owner` the listing shows (not those a `lag` fault still hides), newest first, and whether more matched than `limit`. */
  list(owner: string, options: ListOptions): { jobs: JobRecord[]; truncated: boolean } {
    this.sweep();
    const now = this.options.now();
    const matching = [...this.jobs.values()]
      .filter(
        (j) =>
          j.owner === owner &&
          now >= j.visibleFrom.list &&
          (options.statuses.length === 0 || options.statuses.includes(j.status)),
      )
      .reverse(); // insertion order is creation order
    return { jobs: matching.slice(0, options.limit), truncated: matching.length > options.limit };
  }

  /**
   * A job of `owner` that is queued, running or canceling and refers to asset `assetId` by a `core/ASSET`
   * reference (DELETE /api/v2/assets/{id} answers 409 `asset_in_use` then); undefined when none does.
   */
  jobUsingAsset(owner: string, assetId: string): JobRecord | undefined {
    for (const job of this.jobs.values()) {
      if (job.owner === owner && !isTerminal(job.status) && !this.expired(job) && job.plan.assetIds.includes(assetId))
        return job;
    }
    return undefined;
  }

  /** Drops every job past retention. */
  sweep(): void {
    for (const job of [...this.jobs.values()]) if (this.expired(job)) this.drop(job);
  }

  /**
   * Moves `job` to `to` along the state machine, stamps `started_at`/`completed_at`, pushes the status event,
   * and ends the job's streams when `to` is terminal.
   * @throws Error on a transition the state machine does not allow (a bug of the emulator: 500).
   */
  transition(job: JobRecord, to: JobStatus): void {
    if (!TRANSITIONS[job.status].includes(to))
      throw new Error(`illegal job transition ${job.status} → ${to} (job ${job.id})`);
    job.status = to;
    this.log(job, to === 'failed' ? 'error' : 'info', `job ${to}`);
    const now = this.options.now();
    if (to === 'running') job.startedAt = now;
    if (to !== 'queued') job.queuePosition = null;
    if (isTerminal(to)) job.completedAt = now;
    this.options.hub.publish(job.id, { event: 'status', data: this.statusEvent(job) });
    if (isTerminal(to)) this.options.hub.end(job.id);
    this.options.onChange?.();
  }

  /**
   * Sets the queue position of a queued job; a change is pushed as a status event (public sources: status carries it).
   */
  setQueuePosition(job: JobRecord, position: number): void {
    if (job.status !== 'queued' || job.queuePosition === position) return;
    job.queuePosition = position;
    this.options.hub.publish(job.id, { event: 'status', data: this.statusEvent(job) });
  }

  /** Appends a line to the job's log when the store captures logs (else nothing); at most {@link MAX_LOG_LINES}. */
  log(job: JobRecord, level: WireLogLine['level'], message: string): void {
    if (!this.options.captureLogs || job.logLines.length >= MAX_LOG_LINES) return;
    job.logLines.push({ time: iso(this.options.now()), level, message });
  }

  /** Records and pushes a progress snapshot. */
  setProgress(job: JobRecord, progress: WireProgress): void {
    job.progress = progress;
    this.options.hub.publish(job.id, { event: 'progress', data: progress });
  }

  /** Records and pushes the latest preview. */
  setPreview(job: JobRecord, preview: WirePreview): void {
    job.preview = preview;
    this.options.hub.publish(job.id, { event: 'preview', data: preview });
  }

  /** Commits an output and pushes it as an `output` event (a hint: `outputs` stays authoritative). */
  addOutput(job: JobRecord, asset: AssetRecord): void {
    job.outputs.push(asset);
    this.options.hub.publish(job.id, { event: 'output', data: this.options.assets.toOutput(asset) });
    this.options.onChange?.();
  }

  /**
   * What a stream gets on connect: status, latest progress, latest preview. For a terminal job the status
   * comes last, since a stream ends after the terminal status (Events rules 1 and 2).
   */
  snapshot(job: JobRecord): StreamEvent[] {
    const status: StreamEvent = { event: 'status', data: this.statusEvent(job) };
    const rest: StreamEvent[] = [];
    if (job.progress !== null) rest.push({ event: 'progress', data: job.progress });
    if (job.preview !== null) rest.push({ event: 'preview', data: job.preview });
    return isTerminal(job.status) ? [...rest, status] : [status, ...rest];
  }

  /**
   * The Job object. `logs` only with `withLogs` (GET of the job), when the store captures logs and the job is
   * finished; absent, never null, otherwise ("Rules for `logs`" 2–4).
   */
  toWire(job: JobRecord, options: ToWireOptions = {}): WireJob {
    const queueEnd = job.startedAt ?? (job.completedAt !== null ? job.completedAt : null);
    const wire: WireJob = {
      id: job.id,
      status: job.status,
      created_at: iso(job.createdAt),
      started_at: job.startedAt === null ? null : iso(job.startedAt),
      completed_at: job.completedAt === null ? null : iso(job.completedAt),
      expires_at: iso(job.expiresAt),
      queue_position: job.status === 'queued' ? job.queuePosition : null,
      progress: job.progress,
      outputs: job.outputs.map((a) => this.options.assets.toOutput(a)),
      error: job.error,
      urls: this.options.links.jobUrls(job.id),
      metrics: {
        queue_ms: queueEnd === null ? null : queueEnd - job.createdAt,
        execution_ms: job.startedAt !== null && job.completedAt !== null ? job.completedAt - job.startedAt : null,
      },
    };
    if (options.withLogs && this.options.captureLogs && isTerminal(job.status) && job.logLines.length > 0)
      wire.logs = { lines: [...job.logLines] };
    return wire;
  }

  private statusEvent(job: JobRecord): WireStatusEvent {
    const event: WireStatusEvent = {
      status: job.status,
      queue_position: job.status === 'queued' ? job.queuePosition : null,
    };
    if (isTerminal(job.status)) {
      event.outputs = job.outputs.map((a) => this.options.assets.toOutput(a));
      event.error = job.error;
    }
    return event;
  }

  private expired(job: JobRecord): boolean {
    return this.options.now() >= job.expiresAt;
  }

  /**
   * Removes a job past retention. A running job ends `expired` (the document's running → expired); a queued
   * or canceling one has no transition to a terminal state for this, so its streams just end (a client then
   * re-reads the job and gets 404).
   */
  private drop(job: JobRecord): void {
    this.jobs.delete(job.id);
    if (job.status === 'running') this.transition(job, 'expired');
    else this.options.hub.end(job.id);
    this.options.onDrop(job);
    this.options.onChange?.();
  }
}
