/**
 * Jobs that turn up late for the retired keys of a submission (Job and Asset API v2, POST /api/v2/jobs, rules 3–5;
 * rule 5 of unknownOutcome.ts): a key retired after two readings showed no job may still have made one, listed later.
 * The next reading of the listing finds it: when the submission has its job, the late one is a duplicate, canceled
 * when still queued and noted on the retired record either way; when it has none yet, it is adopted.
 */
import { AbortError } from '../http/errors';
import { claimedJobIds, isOrphaned, type JobRecord, type StateStore } from '../state/stateStore';
import type { JobBackend } from './backend';
import type { Job } from './model';
import { SubmittedJobReader, matchSubmittedJob } from './submittedJobs';
import { windowsOf, type ResolveOptions } from './unknownOutcome';

/** Late jobs one retired key may turn out to have in one reading (a bound, never reached in practice). */
const LATE_JOBS_PER_KEY = 8;

/** A job that turned up for a retired key of a submission ({@link settleLateJobs}). */
export interface LateJobFound {
  /** The submission's first key. */
  originKey: string;
  /** The retired key it was made under (as far as its time says). */
  retiredKey: string;
  jobId: string;
  /** `duplicate`: the submission had its job; `adopted`: it had none, and this one is now its job. */
  kind: 'duplicate' | 'adopted';
  /** A duplicate canceled (it was still queued). */
  canceled: boolean;
  /** Its status when found (after the cancel, for a canceled one). */
  status: string;
}

/**
 * One reading of the listing for jobs that turned up for the retired keys of the submissions `originKeys` (rule 5):
 * for each submission with a retired key whose current record is not being sent by a live submitter, an unclaimed
 * job of its workflow created in a retired key's window is adopted when the submission has no job yet, else noted
 * as a late duplicate of that key and canceled when still queued.
 * @returns what was found. @throws AbortError; the listing's errors (nothing is decided then).
 */
export async function settleLateJobs(
  backend: Pick<JobBackend, 'capabilities' | 'list' | 'workflow' | 'cancel' | 'baseUrl'>,
  store: StateStore,
  originKeys: readonly string[],
  options: Omit<ResolveOptions, 'lookupBudgetMs'>,
): Promise<LateJobFound[]> {
  if (!backend.capabilities.list) return [];
  const orphaned = options.orphaned ?? ((r: JobRecord) => isOrphaned(r));
  const reader = options.reader ?? new SubmittedJobReader(backend, options.clock);
  const chains = (
    await Promise.all(originKeys.map(async (originKey) => ({ originKey, ...(await store.chain(originKey)) })))
  ).filter(
    (c) => c.records.some((r) => r.state === 'retired') && !(c.current?.state === 'pending' && !orphaned(c.current)),
  );
  if (chains.length === 0) return [];
  const found: LateJobFound[] = [];
  const listing = await reader.listing(options.clock.now(), options.signal);
  for (const chain of chains) {
    for (const r of chain.records.filter((c) => c.state === 'retired' && c.workflowHash)) {
      // Every job of this key's window, one per pass: each one found is claimed before the next pass.
      for (let pass = 0; pass < LATE_JOBS_PER_KEY; pass++) {
        const claimed = claimedJobIds(await store.list({ retired: true }));
        const query = {
          workflowHash: r.workflowHash!,
          windows: windowsOf([r], options),
          near: Date.parse(r.sentAt ?? r.submittedAt),
        };
        const job = (await matchSubmittedJob(listing, query, claimed, (id) => reader.workflowHash(id, options.signal)))
          .job;
        if (!job) break;
        const late = await settleLateJob(backend, store, chain, r, job, options);
        if (!late) break;
        found.push(late);
      }
    }
  }
  return found;
}

/**
 * One late job `job` of retired record `retired` of `chain`: adopted under the chain's current key when the
 * submission has no job, else canceled when still queued and noted on the retired record.
 * @returns what was done, or undefined when another record took the job meanwhile.
 */
async function settleLateJob(
  backend: Pick<JobBackend, 'cancel'>,
  store: StateStore,
  chain: { originKey: string; currentKey: string },
  retired: JobRecord,
  job: Job,
  options: Pick<ResolveOptions, 'clock' | 'signal'>,
): Promise<LateJobFound | undefined> {
  const base = { originKey: chain.originKey, retiredKey: retired.idempotencyKey, jobId: job.id };
  const current = await store.get(chain.currentKey);
  if (!current?.jobId) {
    // The submission has no job yet: this one is it, adopted under the key it stands under now.
    if (!current) {
      const {
        sentAt: _s,
        retiredAt: _r,
        retiredBy: _b,
        successorKey: _k,
        lateJobs: _l,
        jobId: _j,
        lastStatus: _t,
        ...fields
      } = retired;
      await store.putIfAbsent({
        ...fields,
        idempotencyKey: chain.currentKey,
        state: 'outcome_unknown',
        originKey: chain.originKey,
        submittedAt: new Date(options.clock.now()).toISOString(),
      });
    }
    const claim = await store.claimJob(chain.currentKey, job.id, { state: 'created', lastStatus: job.status });
    return 'record' in claim ? { ...base, kind: 'adopted', canceled: false, status: job.status } : undefined;
  }
  let status = job.status;
  let canceled = false;
  if (status === 'queued') {
    try {
      status = (await backend.cancel(job.id, options.signal)).job.status;
      canceled = true;
    } catch (err) {
      if (AbortError.is(err)) throw err;
      // Not canceled: reported as found, still to cancel by hand.
    }
  }
  const noted = await store.noteLateJob(retired.idempotencyKey, {
    jobId: job.id,
    foundAt: new Date(options.clock.now()).toISOString(),
    canceled,
    status,
  });
  return noted ? { ...base, kind: 'duplicate', canceled, status } : undefined;
}
