/**
 * What a resumed batch does with each variation, from the job records of its keys (Job and Asset API v2, POST
 * /api/v2/jobs, rules 3–5). A variation stands under the key its batch record fixed, or, once that key was retired
 * (its absence of a job proven after an unknown outcome: core/jobs/unknownOutcome.ts), under the successor its
 * retired record names (StateStore `submissionChain`). From the record of the key it stands under now:
 * - `unsent`: no record. submitDurably writes the record before its POST and removes it only after a definitive
 *   failure without a job (the server released the key, rule 4), and a successor is named before anything is sent
 *   under it, so nothing of this key exists: submit it, under that key;
 * - `in_flight`: `pending`, its submitter alive: another process is sending it; leave it;
 * - `unknown`: `outcome_unknown`, or `pending` left by a dead submitter (StateStore `isOrphaned`): a job may exist and
 *   the key stays claimed (rule 5): never presented again; resolved (found in the listing, or retired for a
 *   successor) before anything else is sent;
 * - `accepted`: `created` with a job id: follow the job (and fetch its outputs) only.
 * And which batches a program resumes unasked at start-up ({@link batchesToResume}).
 */
import type { BatchRecord, BatchVariationRecord } from '../state/batchRecords';
import { submissionChain, type JobRecord } from '../state/stateStore';
import { batchStatus } from './status';

/** What resuming does with one variation; see the module's rules. */
export type ResumeAction = 'unsent' | 'in_flight' | 'unknown' | 'accepted';

/** One variation with its action, the key it stands under now and that key's record (when there is one). */
export interface ResumeStep {
  variation: BatchVariationRecord;
  action: ResumeAction;
  /** The key the variation stands under now: its own, or the last successor of its retired keys. */
  key: string;
  record?: JobRecord;
  /** Its retired keys' records, in order (none for a variation never resolved). */
  retired: JobRecord[];
}

/**
 * The action of every variation of `batch`, in index order.
 * @param records the job records by Idempotency-Key (the state store's, retired ones included).
 * @param orphaned whether a `pending` record's submitter is gone (StateStore `isOrphaned`).
 */
export function resumePlan(
  batch: BatchRecord,
  records: ReadonlyMap<string, JobRecord>,
  orphaned: (record: JobRecord) => boolean,
): ResumeStep[] {
  return batch.variations.map((variation) => {
    const chain = submissionChain(variation.idempotencyKey, (key) => records.get(key));
    const record = chain.current;
    const base = { variation, key: chain.currentKey, retired: chain.records.filter((r) => r.state === 'retired') };
    if (!record) return { ...base, action: 'unsent' as const };
    if (record.state === 'created' && record.jobId) return { ...base, action: 'accepted' as const, record };
    if (record.state === 'pending' && !orphaned(record)) return { ...base, action: 'in_flight' as const, record };
    return { ...base, action: 'unknown' as const, record };
  });
}

/**
 * The batches `client` resumes unasked (VS Code at start-up, or when its connection changes or comes back): those of
 * server `baseUrl` that it recorded itself (the batch record's `client`, else its variations' job records': a window
 * never finishes the CLI's batches), not canceled (a canceled batch sends nothing more, whoever asks: run.ts rule 5)
 * and not finished ({@link batchStatus}), in the order given.
 * @param records the job records (any list; the state store's).
 */
export function batchesToResume(
  batches: readonly BatchRecord[],
  records: readonly JobRecord[],
  baseUrl: string,
  client: NonNullable<JobRecord['client']>,
): BatchRecord[] {
  return batches.filter((batch) => {
    if (batch.baseUrl !== baseUrl || batch.canceledAt !== undefined) return false;
    const recordedBy = batch.client ?? records.find((r) => r.batchId === batch.batchId)?.client;
    return recordedBy === client && !batchStatus(batch, records).finished;
  });
}
