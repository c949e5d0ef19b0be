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
 * And which batches a program resumes unasked at start-up ({@link batchesToResume}).
 */
import type { BatchRecord, BatchVariationRecord } from '../state/batchRecords';
import type { JobRecord } from '../state/stateStore';
import { batchStatus } from './status';

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

/**
 * The batches `client` resumes unasked (VS Code at start-up, or when its connection changes or comes back): those of
 * server `baseUrl` that it recorded itself (the batch record's `client`, else its variations' job records': a window
 * never finishes the CLI's batches), not canceled (a canceled batch sends nothing more, whoever asks: run.ts rule 5)
 * and not finished ({@link batchStatus}), in the order given.
 * @param records the job records (any list; the state store's).
 */
export function batchesToResume(batches: readonly BatchRecord[], records: readonly JobRecord[], baseUrl: string, client: NonNullable<JobRecord['client']>): BatchRecord[] {
  return batches.filter((batch) => {
    if (batch.baseUrl !== baseUrl || batch.canceledAt !== undefined) return false;
    const recordedBy = batch.client ?? records.find((r) => r.batchId === batch.batchId)?.client;
    return recordedBy === client && !batchStatus(batch, records).finished;
  });
}
