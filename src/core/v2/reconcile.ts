/**
 * Reconciling remembered submissions whose outcome this client never heard, so that no job is lost or duplicated
 * (Job and Asset API v2, POST /api/v2/jobs, rule 5: after an unknown outcome the client looks for the job instead of
 * resubmitting; job listing is not shown there: the self-hosted companion's listing where it answers).
 *
 * A `pending` record is written before the request is sent; a submitter that dies before hearing back leaves it
 * `pending` forever. Such an orphan (and an `outcome_unknown` record, whose job may be findable now) is looked up
 * in the surface's listing: the job created about when the record was submitted whose workflow hashes to the
 * record's `workflowHash`, and that no other record holds, is adopted (the record becomes `created`). Otherwise the
 * record becomes `outcome_unknown`: the user must check before resubmitting. Nothing is ever resubmitted here.
 */
import type { V2Client } from './client';
import { AbortError, isNotFound } from '../http/errors';
import { hashBytes } from '../util/hash';
import { DEFAULT_RETRY_POLICY } from '../http/retry';
import { MATCH_WINDOW_MS } from '../jobs/unknownOutcome';
import { isNoListing, matchSubmittedJob } from '../jobs/submittedJobs';
import type { Job } from './schemas';
import { claimedJobIds, isOrphaned, type JobRecord, type OrphanOptions, type StateStore } from '../state/stateStore';

export { ORPHAN_AFTER_MS, isOrphaned, isProcessAlive, type OrphanOptions } from '../state/stateStore';
export { MATCH_WINDOW_MS } from '../jobs/unknownOutcome';
import { canonicalJson } from '../util/json';

/** Options of {@link findSubmittedJob}. */
export interface FindJobOptions {
  /** Clock skew allowed either way (ms). Default {@link MATCH_WINDOW_MS}. */
  matchWindowMs?: number;
  /**
   * How long after `submittedAt` the job may have been created (ms): submission retries (queue full, deployment
   * starting) reuse the record, so the job can come that much later. Default the retry budget,
   * `DEFAULT_RETRY_POLICY.maxElapsedMs` (120 000).
   */
  maxSubmitMs?: number;
  /** Jobs asked of the listing. Default 100. */
  listLimit?: number;
  /** A listing already fetched (reconcilePending fetches it once for all its records). */
  listing?: readonly Job[];
  /** Workflow hashes already computed, by job id, shared across calls (null: the workflow is not shown, 404). */
  hashes?: Map<string, Promise<string | null>>;
  signal?: AbortSignal;
}

/**
 * The job submitted at about `submittedAt` whose workflow (GET …/workflow, canonical JSON, BLAKE3 as submission.ts
 * hashes it) is `workflowHash`, among the listing's jobs not in `claimedIds`; the closest in time first. Created
 * within [submittedAt − matchWindowMs, submittedAt + maxSubmitMs + matchWindowMs].
 * @returns the job, or undefined when none matches.
 * @throws ApiError 404/501 when the surface has no listing (see {@link isNoListing}); other request errors as they
 *   come (a job whose workflow is gone, 404, is skipped).
 */
export async function findSubmittedJob(
  client: V2Client,
  wanted: { submittedAt: string; workflowHash: string },
  claimedIds: ReadonlySet<string>,
  options: FindJobOptions = {},
): Promise<Job | undefined> {
  const submitted = Date.parse(wanted.submittedAt);
  if (!Number.isFinite(submitted)) return undefined;
  const window = options.matchWindowMs ?? MATCH_WINDOW_MS;
  const windows = [
    [submitted - window, submitted + (options.maxSubmitMs ?? DEFAULT_RETRY_POLICY.maxElapsedMs) + window] as const,
  ];
  const listing =
    options.listing ?? (await client.jobs.list({ limit: options.listLimit ?? 100, signal: options.signal })).jobs;
  const hashes = options.hashes ?? new Map<string, Promise<string | null>>();
  const byId = new Map(listing.map((job) => [job.id, job]));
  // The matching rule is the one resolution's (core/jobs/unknownOutcome.ts): here a job whose workflow is gone is not ours.
  const found = await matchSubmittedJob(
    {
      jobs: listing.map((job) => ({ id: job.id, createdAt: job.created_at ?? null, status: job.status })),
      truncated: false,
    },
    { workflowHash: wanted.workflowHash, windows, near: submitted },
    claimedIds,
    (id) => {
      let hash = hashes.get(id);
      if (!hash) {
        hash = workflowHashOf(client, id, options.signal);
        hashes.set(id, hash);
      }
      return hash;
    },
  );
  return found.job ? byId.get(found.job.id) : undefined;
}

/** The hash of job `id`'s workflow; null when the job (or its workflow) is gone (404). */
async function workflowHashOf(client: V2Client, id: string, signal?: AbortSignal): Promise<string | null> {
  try {
    const { workflow } = await client.jobs.workflow(id, signal);
    return await hashBytes(canonicalJson(workflow));
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/**
 * Why a record was not adopted: `no_listing` (the surface lists no jobs), `no_match` (no unclaimed job matched),
 * `lookup_failed` (the listing or a workflow could not be read), `live` (a `pending` record whose submitter may
 * still be running), `other_server` (sent to another base URL than this client's), `in_flight` (a live submission
 * of the same workflow may yet claim the match: left for later), `changed` (the record changed meanwhile).
 */
type ReconcileReason = 'no_listing' | 'no_match' | 'lookup_failed' | 'live' | 'other_server' | 'in_flight' | 'changed';

/** What became of one record, for the CLI and the extension to print. */
interface ReconcileResult {
  /** The record as stored after reconciling (as it was, when skipped). */
  record: JobRecord;
  /** `adopted`: now `created` with `jobId`; `unknown`: `outcome_unknown`, check before resubmitting; `skipped`: left as it was. */
  outcome: 'adopted' | 'unknown' | 'skipped';
  jobId?: string;
  reason?: ReconcileReason;
  /** One line for a person, e.g. `unknown: check before resubmitting (this server lists no jobs)`. */
  message: string;
}

/** Options of {@link reconcilePending}. */
export interface ReconcileOptions extends Omit<OrphanOptions, 'now'>, Omit<FindJobOptions, 'listing' | 'hashes'> {
  /** Now, ms since the epoch. Default the client's clock. */
  now?: () => number;
}

const WHY: Record<ReconcileReason, string> = {
  no_listing: 'this server lists no jobs',
  no_match: 'no job of this workflow found at that time',
  lookup_failed: 'the job listing could not be read',
  live: 'its submitter may still be running',
  other_server: 'sent to another server',
  in_flight: 'a submission of the same workflow is still under way',
  changed: 'the record changed meanwhile',
};

/**
 * Reconciles the store's orphaned `pending` records ({@link isOrphaned}) and its `outcome_unknown` ones, of the
 * client's base URL: each is adopted ({@link StateStore.claimJob}, `created` with the job's id, status and
 * `expires_at`) when {@link findSubmittedJob} finds its job, else marked `outcome_unknown`. The listing is read
 * once; records of other servers, and `pending` records of live submitters, are skipped. Nothing is resubmitted.
 * @returns one result per `pending` or `outcome_unknown` record, newest first.
 * @throws AbortError when `signal` aborts; ComfyError `state_locked` when the store stays locked. Request errors
 *   are not thrown: the records concerned become `unknown` with reason `lookup_failed`.
 */
export async function reconcilePending(
  client: V2Client,
  store: StateStore,
  options: ReconcileOptions = {},
): Promise<ReconcileResult[]> {
  const now = (options.now ?? (() => client.clock.now()))();
  const orphan = (r: JobRecord): boolean => isOrphaned(r, { ...options, now });
  const baseUrl = client.http.baseUrl;
  const all = await store.list({ retired: true });
  const records = all.filter((r) => r.state !== 'retired');
  const ours = (r: JobRecord): boolean => r.baseUrl === baseUrl;
  const results: ReconcileResult[] = [];
  // Jobs held by records, late duplicates of retired keys included: one job, one record.
  const claimed = claimedJobIds(all);
  // Hashes of workflows still being submitted by live processes: their job may be in the listing, unclaimed yet.
  const inFlight = new Set(
    records.filter((r) => ours(r) && r.state === 'pending' && !orphan(r) && r.workflowHash).map((r) => r.workflowHash),
  );
  const hashes = new Map<string, Promise<string | null>>();
  let listing: Promise<readonly Job[]> | undefined;
  const skip = (record: JobRecord, reason: ReconcileReason): ReconcileResult => ({
    record,
    outcome: 'skipped',
    reason,
    message: `skipped: ${WHY[reason]}`,
  });

  for (const record of records) {
    if (record.state !== 'pending' && record.state !== 'outcome_unknown') continue;
    if (!ours(record)) {
      results.push(skip(record, 'other_server'));
      continue;
    }
    if (record.state === 'pending' && !orphan(record)) {
      results.push(skip(record, 'live'));
      continue;
    }
    if (record.workflowHash && inFlight.has(record.workflowHash)) {
      results.push(skip(record, 'in_flight'));
      continue;
    }

    let found: Job | undefined;
    let reason: ReconcileReason = 'no_match';
    if (record.workflowHash) {
      try {
        listing ??= client.jobs.list({ limit: options.listLimit ?? 100, signal: options.signal }).then((l) => l.jobs);
        found = await findSubmittedJob(
          client,
          { submittedAt: record.submittedAt, workflowHash: record.workflowHash },
          claimed,
          { ...options, listing: await listing, hashes },
        );
      } catch (err) {
        if (AbortError.is(err) || options.signal?.aborted) throw err;
        reason = isNoListing(err) ? 'no_listing' : 'lookup_failed';
      }
    }

    if (found) {
      const claim = await store.claimJob(record.idempotencyKey, found.id, {
        state: 'created',
        expiresAt: found.expires_at ?? undefined,
        lastStatus: found.status,
      });
      claimed.add(found.id);
      if ('record' in claim) {
        results.push({
          record: claim.record,
          outcome: 'adopted',
          jobId: found.id,
          message: `adopted: job ${found.id}`,
        });
        continue;
      }
      if (claim.refused !== 'claimed_by_other') {
        const current = await store.get(record.idempotencyKey);
        results.push(skip(current ?? record, 'changed'));
        continue;
      }
      reason = 'no_match'; // another process adopted it for another record meanwhile
    }

    let changed = false;
    const marked = await store.mutate(record.idempotencyKey, (current) => {
      if (current.state === 'outcome_unknown') return undefined;
      if (current.state !== 'pending' || !orphan(current)) {
        changed = true;
        return undefined;
      }
      return { ...current, state: 'outcome_unknown' };
    });
    if (!marked || changed) {
      results.push(skip(marked ?? record, 'changed'));
      continue;
    }
    results.push({
      record: marked,
      outcome: 'unknown',
      reason,
      message: `unknown: check before resubmitting (${WHY[reason]}; Idempotency-Key ${record.idempotencyKey})`,
    });
  }
  return results;
}
