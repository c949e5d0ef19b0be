/**
 * The jobs the Jobs view knows of, without `vscode`: one entry per job (its remembered record and the job service's
 * state), which group it is in, which need following, and how the remembered records merge with the server's
 * listing (jobList.ts keeps the list; jobItems.ts words each item; jobTree.ts builds the tree).
 */
import { isExpiredRecord, type JobRecord } from '../state/stateStore';
import { isEndedStatus, isLostStatus, isTerminalStatus, statusAt, type Job } from '../jobs/model';
import type { JobOutage, JobState } from '../jobs/state';

/** One job the view knows of: its remembered submission, the server's last description of it, or both. */
export interface JobEntry {
  /** The base URL of the server it belongs to. */
  readonly baseUrl: string;
  /** The job id (a remembered submission may not have one yet). */
  readonly jobId: string | undefined;
  /** The submission as this machine remembers it (VS Code or CLI), when it was submitted from here. */
  record?: JobRecord;
  /** The job as the server last described it (a watch, the listing). */
  job?: Job;
  /** The request id of the last answer that described it, when known. */
  requestId?: string;
  /** The outage the job's watch rides out (its reads fail, it retries), or null/absent while reads succeed. */
  outage?: JobOutage | null;
}

/**
 * The entry of a job as it stands now: what the view keeps of it (which job, its remembered submission) with the job
 * service's state of it (the one source: the job, its request id, its outage), read when the view draws, never kept.
 * A job not terminal past its `expires_at` reads `lost` (model.ts `statusAt`) once `now` is given.
 */
export function liveEntry(
  shown: Pick<JobEntry, 'baseUrl' | 'jobId' | 'record'>,
  state: JobState | undefined,
  now?: number,
): JobEntry {
  const entry: JobEntry = { baseUrl: shown.baseUrl, jobId: shown.jobId, record: shown.record };
  if (!state) return entry;
  const status = now === undefined ? state.job.status : statusAt(state.job.status, state.job.expiresAt, now);
  entry.job = status === state.job.status ? state.job : { ...state.job, status, queuePosition: null };
  entry.requestId = state.requestId;
  entry.outage = state.outage;
  return entry;
}

/** The two groups of the view. */
export type JobGroup = 'running' | 'recent';

/** The status an entry shows: the server's job, else the record's last status, else the submission's state. */
export function entryStatus(entry: JobEntry): string {
  if (entry.job) return entry.job.status;
  if (entry.record?.lastStatus) return entry.record.lastStatus;
  if (!entry.record?.jobId && entry.record?.state === 'outcome_unknown') return 'outcome_unknown';
  return entry.record?.state === 'pending' ? 'pending' : 'unknown';
}

/**
 * The group of an entry: "recent" when it has ended (a terminal status: succeeded, failed, canceled, expired; or the
 * client's `lost`: the server no longer knows it), or it is a record whose outcome cannot be learned (no job id and
 * not pending); "running" otherwise (queued, running, canceling, a pending submission). Jobs are grouped Running /
 * Recent; only "running" counts (the badge, the status bar).
 */
export function groupOf(entry: JobEntry): JobGroup {
  const status = entryStatus(entry);
  if (isEndedStatus(status)) return 'recent';
  // A job with an id that is not known to have ended is followed until it does; without an id, only a pending
  // submission is still under way (an unknown outcome is looked up by reconciling, not here).
  if (!entry.jobId) return status === 'pending' ? 'running' : 'recent';
  return 'running';
}

/** True when the view should follow the job (a non-terminal job with an id): it is then updated live. */
export function needsFollow(entry: JobEntry): boolean {
  return entry.jobId !== undefined && groupOf(entry) === 'running';
}

/** The stable id of a job's tree item: base URL and job id (or Idempotency-Key before there is a job id). */
export function entryKey(entry: Pick<JobEntry, 'baseUrl' | 'jobId' | 'record'>): string {
  return `${entry.baseUrl} ${entry.jobId ?? `key:${entry.record?.idempotencyKey ?? ''}`}`;
}

/** Options of {@link mergeEntries}. */
export interface MergeOptions {
  /**
   * Now (ms since the epoch): records past their `expires_at` ({@link isExpiredRecord}) are left out, and a job not
   * terminal past its `expires_at` reads `lost` (model.ts `statusAt`).
   */
  now?: number;
  /** Jobs removed from the list: a listed or live job that is hidden (and unchanged) is left out. */
  hidden?: HiddenJobs;
}

/**
 * The jobs removed from the list ("Remove from List", "Clear Finished") that only the server's listing or a live
 * watch knows (their record, if any, is forgotten from the store): hidden for the session, or until the job changes
 * (another status, end time or outputs count). Clear Finished and Remove from List shrink the list.
 */
export class HiddenJobs {
  private readonly hidden = new Map<string, string>();

  /** Hides the job of entry key `key` as `job` describes it now (no job: hidden until any job shows for it). */
  hide(key: string, job: Job | undefined): void {
    this.hidden.set(key, job ? HiddenJobs.fingerprint(job) : '');
  }

  /** True when `key` is hidden and `job` is as it was when hidden (a changed job shows again, and is unhidden). */
  isHidden(key: string, job: Job): boolean {
    const was = this.hidden.get(key);
    if (was === undefined) return false;
    if (was === HiddenJobs.fingerprint(job)) return true;
    this.hidden.delete(key);
    return false;
  }

  /** How many jobs are hidden. */
  get size(): number {
    return this.hidden.size;
  }

  private static fingerprint(job: Job): string {
    return `${job.status} ${job.completedAt ?? ''} ${job.outputs.length}`;
  }
}

/**
 * Merges remembered records and the server's listing into entries for `baseUrl`: records of other servers are left
 * out; a listed job with a record is joined to it (one entry per job id); `previous` entries keep their newer job
 * snapshot (a live watch's word beats a listing read before it, and a terminal snapshot with its `logs` beats the
 * listing's copy without). Order: newest first (created or submitted time).
 */
export function mergeEntries(
  baseUrl: string,
  records: readonly JobRecord[],
  listing: readonly Job[],
  previous?: ReadonlyMap<string, JobEntry>,
  options: MergeOptions = {},
): JobEntry[] {
  const byKey = new Map<string, JobEntry>();
  for (const record of records) {
    if (record.baseUrl !== baseUrl) continue;
    if (options.now !== undefined && isExpiredRecord(record, options.now)) continue;
    const entry: JobEntry = { baseUrl, jobId: record.jobId, record };
    byKey.set(entryKey(entry), entry);
  }
  for (const job of listing) {
    const key = entryKey({ baseUrl, jobId: job.id });
    if (!byKey.has(key) && options.hidden?.isHidden(key, job)) continue;
    const known = byKey.get(key);
    if (known) known.job = job;
    else byKey.set(key, { baseUrl, jobId: job.id, job });
  }
  if (previous) {
    for (const [key, old] of previous) {
      // Another server's job (the connection changed) is never carried over.
      if (old.baseUrl !== baseUrl) continue;
      const entry = byKey.get(key);
      if (!entry) {
        // A job seen live (e.g. just submitted) but not yet in the store or the listing stays shown, unless it was
        // removed from the list (and has not changed since).
        if (old.job && !options.hidden?.isHidden(key, old.job)) byKey.set(key, old);
        continue;
      }
      // The live snapshot wins while the listing says the job is not over, and once it is over itself: a terminal
      // job no longer changes, and the live one came from GET, the one answer with `logs` (the listing never has them).
      // A job the client marked lost is the exception: a listing that knows it again is the server's word.
      const relisted = entry.job !== undefined && old.job !== undefined && isLostStatus(old.job.status);
      if (
        old.job &&
        !relisted &&
        (!entry.job || !isTerminalStatus(entry.job.status) || isTerminalStatus(old.job.status))
      )
        entry.job = old.job;
      entry.requestId ??= old.requestId;
    }
  }
  if (options.now !== undefined) {
    for (const entry of byKey.values()) {
      const status = entry.job ? statusAt(entry.job.status, entry.job.expiresAt, options.now) : undefined;
      if (entry.job && status !== entry.job.status) entry.job = { ...entry.job, status: status!, queuePosition: null };
    }
  }
  // Each entry's time is parsed once, not in every comparison (thousands of entries: the sort's cost was mostly
  // Date.parse). The sort is stable, as before: entries of one time keep their order.
  const timed = [...byKey.values()].map((entry) => ({ entry, time: timeOf(entry) }));
  timed.sort((a, b) => b.time - a.time);
  return timed.map((t) => t.entry);
}

function timeOf(entry: JobEntry): number {
  const t = Date.parse(entry.job?.createdAt ?? entry.record?.submittedAt ?? '');
  return Number.isFinite(t) ? t : 0;
}
