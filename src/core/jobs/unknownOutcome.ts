/**
 * Resolving a submission whose outcome was not heard, so that it ends with exactly one job (Job and Asset API v2,
 * POST /api/v2/jobs, rules 3–5: a key is single-use, reject-on-duplicate; after an unknown outcome it stays claimed
 * even when no job was made, so presenting it again can only be refused; the client lists its jobs instead). One
 * resolution for every caller: a batch's variations (batch/run.ts) and a single submission (the backend's `submit`,
 * the CLI's `submit`).
 *
 * Rules:
 * 1. Where the surface lists jobs ({@link JobCapabilities.list}; the listing answers), the outcome is decided, never
 *    left to the user: the job is looked for in the listing as reconciling does (its workflow's hash, created within
 *    the send's time window), first once a settle window has passed since the send (a job is listed a moment after
 *    it is made), then again every settle window.
 * 2. A match that no other record holds is adopted (StateStore.claimJob, under the store's claims lock).
 * 3. Absence is proven by TWO complete readings, a settle window apart, that show no match. A reading is complete
 *    when the listing answered, was not cut before the window, every candidate's workflow could be read, and no live
 *    submission of the same workflow from another key is under way (its job could be the one listed). Then the key is
 *    retired (with its send time) and its successor key is minted and written in the retired record in one atomic
 *    write, BEFORE anything is sent under it: a crash between the two leaves a successor without a record, which is
 *    simply unsent. The submission goes on under the successor.
 * 4. Where the surface does not list jobs (no listing capability, or the listing refused: 404, 501), absence cannot be
 *    proven: the outcome is undecidable and the submission stays unknown; sending it again under a new key is the
 *    user's decision (a duplicate is possible). Readings that keep failing past the lookup budget leave it unknown too.
 * 5. A job that turns up later for a retired key (same workflow, created in that key's window) is found by the next
 *    reading (lateJobs.ts `settleLateJobs`): when the submission has its job, the late one is a duplicate, canceled
 *    when still queued and noted on the retired record either way; when it has none yet, it is adopted.
 * 6. Waits go through the injected clock; a Retry-After of the listing is obeyed (the longest pause wins).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../http/clock';
import { AbortError, ComfyError } from '../http/errors';
import { DEFAULT_RETRY_POLICY, backoff } from '../http/retry';
import { claimedJobIds, isOrphaned, submissionRecord, type JobRecord, type StateStore } from '../state/stateStore';
import type { AcceptedJob, JobAnswer, JobBackend, SettleEvent } from './backend';
import type { Job } from './model';
import {
  SubmittedJobReader,
  isNoListing,
  matchSubmittedJob,
  type SubmittedJobMatch,
  type SubmittedJobQuery,
} from './submittedJobs';

export type { SettleEvent } from './backend';

/** The settle window (ms) by default: how long after a send its job shows in the listing. 3 s. */
export const DEFAULT_SETTLE_MS = 3000;

/** Clock skew allowed either way between this client's send times and the server's `created_at` (ms). */
export const MATCH_WINDOW_MS = 60_000;

/**
 * How long after a send (ms) the job it made may be created: the request may be processed late, and a submission's
 * retries (queue full) reuse its record. The retry budget, `DEFAULT_RETRY_POLICY.maxElapsedMs` (120 000).
 */
const MAX_CREATE_MS = DEFAULT_RETRY_POLICY.maxElapsedMs;

/** Why an outcome stays unknown: the surface lists no jobs, or its listing could not be read within the budget. */
export type UndecidedReason = 'no_listing' | 'lookup_failed' | 'record_gone';

const WHY: Record<UndecidedReason, string> = {
  no_listing: 'this server does not list its jobs, so whether one was created cannot be decided',
  lookup_failed: 'the job listing could not be read',
  record_gone: 'its record was removed meanwhile',
};

/**
 * The submission may have created a job, and it was not sent again: its outcome stays unknown (rule 4). Carries the
 * remembered record and, when a resolution was tried, why it could not decide.
 */
export class OutcomeUnknownError extends ComfyError {
  readonly record: JobRecord;
  readonly reason: UndecidedReason | undefined;
  constructor(record: JobRecord, cause: unknown, reason?: UndecidedReason) {
    const heard =
      cause === undefined
        ? 'its outcome was not heard'
        : `the server did not answer the submission (${cause instanceof Error ? cause.message : String(cause)})`;
    super(
      'outcome_unknown',
      `${heard}${reason ? `; ${WHY[reason]}` : ''}; a job may exist. It was not resubmitted, to avoid running it twice: check your jobs before submitting again (Idempotency-Key ${record.idempotencyKey}).`,
      { requestId: ComfyError.is(cause) ? cause.requestId : undefined },
      { cause },
    );
    this.record = record;
    this.reason = reason;
  }
}

/** Options of {@link resolveUnknownOutcome}. Times in ms. */
export interface ResolveOptions {
  clock: Clock;
  /** The settle window. Default {@link DEFAULT_SETTLE_MS}. */
  settleMs?: number;
  /** Clock skew allowed (ms). Default {@link MATCH_WINDOW_MS}. */
  matchWindowMs?: number;
  /** How long after a send its job may be created. Default {@link MAX_CREATE_MS}. */
  maxCreateMs?: number;
  /** How long readings may keep failing or stay incomplete before the outcome is left unknown. Default 120 000. */
  lookupBudgetMs?: number;
  /** Whether a `pending` record's submitter is gone. Default StateStore `isOrphaned`. */
  orphaned?: (record: JobRecord) => boolean;
  /** The readings to share (one per backend). Default a reader of this call's own. */
  reader?: SubmittedJobReader;
  /** Jitter of the backoff after a failed reading, in [0, 1). */
  random?: () => number;
  signal?: AbortSignal;
}

/** How a resolution ended: the job adopted (or found on the record meanwhile), the key retired, or undecided. */
type Resolution =
  | { outcome: 'adopted'; record: JobRecord; job: Job | undefined }
  | { outcome: 'absent'; retired: JobRecord; successorKey: string }
  | { outcome: 'undecidable'; reason: UndecidedReason; error?: unknown };

/** The time windows of a chain of keys (rule 1): for each, [first send − skew, last send + late creation + skew]. */
export function windowsOf(records: readonly JobRecord[], options: ResolveOptions): Array<readonly [number, number]> {
  const skew = options.matchWindowMs ?? MATCH_WINDOW_MS;
  const late = options.maxCreateMs ?? MAX_CREATE_MS;
  return records.flatMap((r) => {
    const first = Date.parse(r.submittedAt);
    const last = Date.parse(r.sentAt ?? r.submittedAt);
    return Number.isFinite(first) && Number.isFinite(last)
      ? [[first - skew, Math.max(first, last) + late + skew] as const]
      : [];
  });
}

/**
 * Resolves the submission whose current key is `key` (its record `outcome_unknown`, or `pending` left by a dead
 * submitter) under the module's rules 1–4: waits out the settle window from the send (from now for an orphaned
 * `pending` record, whose send time is not known), then reads the listing until the job is adopted or its absence is
 * proven (the key retired, a successor named), or the outcome cannot be decided.
 * @returns the resolution; `adopted` also when the record got a job meanwhile (another process found it).
 * @throws AbortError when `signal` aborts; the store's errors.
 */
async function resolveUnknownOutcome(
  backend: Pick<JobBackend, 'capabilities' | 'list' | 'workflow' | 'baseUrl'>,
  store: StateStore,
  key: string,
  options: ResolveOptions,
): Promise<Resolution> {
  const { clock, signal } = options;
  const settle = options.settleMs ?? DEFAULT_SETTLE_MS;
  const budget = options.lookupBudgetMs ?? DEFAULT_RETRY_POLICY.maxElapsedMs;
  const orphaned = options.orphaned ?? ((r: JobRecord) => isOrphaned(r));
  const reader = options.reader ?? new SubmittedJobReader(backend, clock);
  let record = await store.get(key);
  if (!record) return { outcome: 'undecidable', reason: 'record_gone' };
  if (record.jobId) return { outcome: 'adopted', record, job: undefined };
  if (!backend.capabilities.list) return { outcome: 'undecidable', reason: 'no_listing' };
  if (!record.workflowHash) return { outcome: 'undecidable', reason: 'lookup_failed' };
  const origin = record.originKey ?? key;
  const chain = (await store.chain(origin)).records;
  const keys = new Set([...chain.map((r) => r.idempotencyKey), key]);
  const query: SubmittedJobQuery = {
    workflowHash: record.workflowHash,
    windows: windowsOf(chain.some((r) => r.idempotencyKey === key) ? chain : [...chain, record], options),
    near: Date.parse(record.sentAt ?? record.submittedAt),
  };
  // The send of an orphaned `pending` record is not known, only that it came before now.
  const sentAt = record.state === 'pending' ? clock.now() : Date.parse(record.sentAt ?? record.submittedAt);
  // A key whose 2xx was heard (its body unreadable) stands for a job, shown or not: it is never retired.
  const mayRetire = !record.acceptedUnread && record.state !== 'created';
  const started = clock.now();
  let next = Math.max(started, sentAt + settle);
  let firstAbsentAt: number | undefined;
  let failures = 0;
  let lastError: unknown;

  const sleepUntil = async (at: number): Promise<void> => {
    const wait = at - clock.now();
    if (wait > 0) await clock.sleep(wait, signal);
  };
  /** A reading that proved nothing: read again after a backoff, within the budget. */
  const retryLater = (): boolean => {
    failures++;
    if (clock.now() - started > budget) return false;
    next =
      clock.now() +
      Math.max(settle, backoff(failures, { ...DEFAULT_RETRY_POLICY, random: options.random ?? Math.random }));
    firstAbsentAt = undefined;
    return true;
  };

  for (;;) {
    await sleepUntil(next);
    const readAt = clock.now();
    let match: SubmittedJobMatch<Job>;
    try {
      const [listing, records] = await Promise.all([reader.listing(readAt, signal), store.list({ retired: true })]);
      const claimed = claimedJobIds(records);
      match = await matchSubmittedJob(listing, query, claimed, (id) => reader.workflowHash(id, signal));
      // A live submission of the same workflow under another key may be the one whose job is listed (rule 3).
      const racing = records.some(
        (r) =>
          !keys.has(r.idempotencyKey) &&
          r.baseUrl === record!.baseUrl &&
          r.state === 'pending' &&
          r.workflowHash === query.workflowHash &&
          !orphaned(r),
      );
      if (racing) match = { job: undefined, complete: false };
    } catch (err) {
      if (AbortError.is(err) || signal?.aborted) throw err;
      if (isNoListing(err)) return { outcome: 'undecidable', reason: 'no_listing', error: err };
      lastError = err;
      if (!retryLater()) return { outcome: 'undecidable', reason: 'lookup_failed', error: lastError };
      continue;
    }
    if (match.job) {
      const job = match.job;
      const claim = await store.claimJob(key, job.id, {
        state: 'created',
        lastStatus: job.status,
        ...(job.expiresAt ? { expiresAt: job.expiresAt } : {}),
      });
      if ('record' in claim) return { outcome: 'adopted', record: claim.record, job };
      if (claim.refused === 'has_job' || claim.refused === 'retired') {
        record = (await store.get(key)) ?? record;
        if (record.jobId) return { outcome: 'adopted', record, job: undefined };
        if (record.state === 'retired' && record.successorKey)
          return { outcome: 'absent', retired: record, successorKey: record.successorKey };
      }
      if (claim.refused === 'no_record') return { outcome: 'undecidable', reason: 'record_gone' };
      // Held by another record meanwhile: read again at once (it is now claimed, so passed over).
      next = clock.now();
      continue;
    }
    if (!match.complete || !mayRetire) {
      if (!retryLater()) return { outcome: 'undecidable', reason: 'lookup_failed', error: lastError };
      continue;
    }
    if (firstAbsentAt === undefined || readAt - firstAbsentAt < settle) {
      firstAbsentAt ??= readAt;
      next = firstAbsentAt + settle;
      continue;
    }
    // Two complete readings a settle window apart showed no job: retire the key, its successor named first.
    const retired = await store.retire(key, {
      successorKey: randomUUID(),
      retiredAt: new Date(clock.now()).toISOString(),
    });
    if (!retired) return { outcome: 'undecidable', reason: 'record_gone' };
    if (retired.jobId) return { outcome: 'adopted', record: retired, job: undefined };
    if (retired.state !== 'retired' || !retired.successorKey) {
      // Left as it was: it came to stand for a job meanwhile (a 2xx heard by another writer). Looked for again.
      if (!retryLater()) return { outcome: 'undecidable', reason: 'lookup_failed', error: lastError };
      continue;
    }
    return { outcome: 'absent', retired, successorKey: retired.successorKey };
  }
}

/** Options of {@link submitSettled}. */
export interface SettledSubmitOptions extends ResolveOptions {
  store: StateStore;
  /** The key the submission first goes out under (a batch variation's recorded key, or a new one). */
  originKey: string;
  /** The workflow (a record written here carries its hash). */
  workflow: unknown;
  /**
   * Sends the submission once under `key` (the backend's durable submission: its record written before sending, with
   * `originKey` when `key` succeeds a retired one). @throws its refusals; an unknown outcome as `outcome_unknown`.
   */
  send: (key: string, originKey: string | undefined) => Promise<AcceptedJob>;
  /** The job `jobId` as its server has it now (for a key whose record already holds a job). */
  read: (jobId: string) => Promise<JobAnswer>;
  /** Called before anything is sent under a successor key, in this call (a batch opens its gate; throw to stop). */
  beforeResend?: (key: string) => Promise<void>;
  onEvent?: (event: SettleEvent) => void;
  /** Fields of a record this call writes (a key refused as reused that had none). */
  recordFields?: Pick<JobRecord, 'client' | 'batchId' | 'workflowFile'>;
}

/** A submission settled with its one job: the accepted (or found) job, under the key that holds it. */
interface SettledSubmission extends AcceptedJob {
  /** True when the job was not heard from its own 201 but found (adopted, or already on the record). */
  adopted: boolean;
  /** The keys retired on the way, in order. */
  retiredKeys: string[];
}

/**
 * True when a failed send may have made a job under its key: its outcome was not heard (`outcome_unknown`), a 2xx
 * whose body could not be read (`job_created_unreadable`), or the key was refused as presented before.
 */
function mayHaveMadeJob(err: unknown): boolean {
  return (
    ComfyError.is(err) &&
    (err.code === 'outcome_unknown' || err.code === 'job_created_unreadable' || err.code === 'idempotency_key_reuse')
  );
}

/**
 * Drives a submission from its first key `originKey` until it has exactly one job: the key it stands under now (the
 * chain of retired keys followed) is sent when nothing was sent under it, resolved ({@link resolveUnknownOutcome})
 * when its outcome was not heard, and its job read when its record holds one; a retired key's successor is sent
 * next. The one place where a submission whose outcome is unknown is settled.
 * @returns the job and the key that holds it.
 * @throws the send's definitive errors (a refusal, a 429 thrown back, nothing sent); OutcomeUnknownError when the
 *   outcome cannot be decided (rule 4); AbortError; what `beforeResend` throws.
 */
export async function submitSettled(
  backend: Pick<JobBackend, 'capabilities' | 'list' | 'workflow' | 'baseUrl'>,
  options: SettledSubmitOptions,
): Promise<SettledSubmission> {
  const { store, originKey } = options;
  const orphaned = options.orphaned ?? ((r: JobRecord) => isOrphaned(r));
  const retiredKeys: string[] = [];
  /** Keys sent by this call: a key is sent once; a refusal that may have made a job is resolved, never sent again. */
  const sent = new Set<string>();
  let heard: unknown;
  let resolved = false;
  for (;;) {
    const { currentKey, current } = await store.chain(originKey);
    if (current?.jobId) {
      const answer = await options.read(current.jobId);
      return { ...answer, recordKey: currentKey, adopted: true, retiredKeys };
    }
    // A chain longer than any submission's (damaged records): its last key is retired, never to be sent again.
    if (current?.state === 'retired')
      throw new ComfyError(
        'submission_chain_broken',
        `the records of Idempotency-Key ${originKey} name too many successor keys; nothing was sent (see them in the state folder's jobs/)`,
      );
    // Unheard: its outcome not heard (a 2xx without a readable id included), a `created` record without its job's id,
    // or left `pending` by a submitter that died.
    if (
      current &&
      (current.state === 'outcome_unknown' ||
        current.state === 'created' ||
        (current.state === 'pending' && orphaned(current)))
    ) {
      if (heard === undefined) options.onEvent?.({ type: 'unknown', key: currentKey });
      const r = await resolveUnknownOutcome(backend, store, currentKey, options);
      if (r.outcome === 'adopted') {
        const jobId = r.record.jobId!;
        options.onEvent?.({ type: 'adopted', key: currentKey, jobId });
        // The job as the listing gave it (a GET may not show a new job yet); else read.
        const answer = r.job ? { job: r.job, requestId: undefined } : await options.read(jobId);
        return { ...answer, recordKey: currentKey, adopted: true, retiredKeys };
      }
      if (r.outcome === 'undecidable') throw new OutcomeUnknownError(current, heard, r.reason);
      retiredKeys.push(currentKey);
      options.onEvent?.({
        type: 'retired',
        key: currentKey,
        successorKey: r.successorKey,
        sentAt: r.retired.sentAt ?? r.retired.submittedAt,
      });
      heard = undefined;
      resolved = true;
      continue;
    }
    // Sent already by this call and still neither settled nor unheard: another live process is sending it.
    if (sent.has(currentKey)) {
      if (current) throw new OutcomeUnknownError(current, heard);
      throw new ComfyError(
        'record_gone',
        `the record of Idempotency-Key ${currentKey} was removed while it was being sent; nothing was sent again`,
      );
    }
    if (resolved) await options.beforeResend?.(currentKey);
    sent.add(currentKey);
    try {
      const accepted = await options.send(currentKey, currentKey === originKey ? undefined : originKey);
      return { ...accepted, adopted: false, retiredKeys };
    } catch (err) {
      if (!mayHaveMadeJob(err)) throw err;
      heard = err;
      // A key refused as presented before, with no record here: written as unknown, so it is resolved, never sent again.
      if (!(await store.get(currentKey))) {
        const fields = {
          idempotencyKey: currentKey,
          baseUrl: backend.baseUrl,
          state: 'outcome_unknown' as const,
          originKey: currentKey === originKey ? undefined : originKey,
          ...options.recordFields,
        };
        await store.putIfAbsent(await submissionRecord(options.workflow, fields, options.clock.now()));
      }
      options.onEvent?.({ type: 'unknown', key: currentKey, error: err });
    }
  }
}
