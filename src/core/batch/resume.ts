/**
 * What a resumed batch does with each variation, from the job record of its Idempotency-Key (Job and Asset API v2,
 * POST /api/v2/jobs, rules 3–5):
 * - `unsent`: no record. submitDurably writes the record before its POST and removes it only after a definitive
 *   failure without a job (the server released the key, rule 4), so nothing of this key exists: submit it, under the
 *   same key;
 * - `in_flight`: `pending`, its submitter alive: another process is sending it; leave it;
 * - `unknown`: `outcome_unknown`, or `pending` left by a dead submitter (reconcile.ts `isOrphaned`): a job may exist
 *   and the key stays claimed (rule 5): never submitted as new; adopted through reconciliation;
 * - `accepted`: `created` with a job id: follow the job (and fetch its outputs) only.
 */
import type { BatchRecord, BatchVariationRecord } from '../state/batchRecords';
import type { JobRecord } from '../state/stateStore';

/** What resuming does with one variation; see the module's rules. */
export type ResumeAction = 'unsent' | 'in_flight' | 'unknown' | 'accepted';

/** One variation with its action and its job record (when there is one). */
export interface ResumeStep {
  variation: BatchVariationRecord;
  action: ResumeAction;
  record?: JobRecord;
}

/**
 * The action of every variation of `batch`, in index order.
 * @param records the job records by Idempotency-Key (the state store's).
 * @param orphaned whether a `pending` record's submitter is gone (reconcile.ts `isOrphaned`).
 */
export function resumePlan(batch: BatchRecord, records: ReadonlyMap<string, JobRecord>, orphaned: (record: JobRecord) => boolean): ResumeStep[] {
  return batch.variations.map((variation) => {
    const record = records.get(variation.idempotencyKey);
    if (!record) return { variation, action: 'unsent' };
    if (record.state === 'created' && record.jobId) return { variation, action: 'accepted', record };
    if (record.state === 'pending' && !orphaned(record)) return { variation, action: 'in_flight', record };
    return { variation, action: 'unknown', record };
  });
}
