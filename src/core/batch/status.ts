/**
 * Where a batch stands, from its record and the job records of its variations' Idempotency-Keys: pure, so the CLI's
 * `batch status`, the Jobs view and the contact sheet say the same thing. The job records are the truth of each
 * variation (written before each submission and kept current as its job runs: state/stateStore.ts), the batch record
 * only fixes which keys belong to the batch. A variation whose key was retired (no job made under it: core/jobs/
 * unknownOutcome.ts) stands under its successor: found by the retired record's `successorKey`, or, when the records
 * given leave retired ones out (StateStore `list()`), by the successor's `originKey`.
 */
import type { BatchRecord, BatchVariationRecord } from '../state/batchRecords';
import { submissionChain, type JobRecord, type LateJob } from '../state/stateStore';
import { isEndedStatus } from '../jobs/model';
import { variationLabel, type BatchValue, type Variation } from './variations';

/**
 * Where one variation stands: `not_sent` (no record: never sent, or refused and its key released), `submitting` (its
 * record is `pending`), `unknown` (the outcome of its submission was not heard and its job not found yet), or its
 * job's last status seen (`queued`, `running`, `succeeded`, `failed`, `canceled`, `expired`, the client's `lost`, or
 * `submitted` when the job exists but no status was seen yet).
 */
export type VariationState = 'not_sent' | 'submitting' | 'unknown' | 'submitted' | (string & {});

/** One variation of a batch as it stands. */
export interface VariationStatus {
  variation: BatchVariationRecord;
  /** `<index>-<short values>`: its output folder's name and its label in lists. */
  label: string;
  state: VariationState;
  jobId?: string;
  /** The record of the key it stands under now. */
  record?: JobRecord;
  /** The records of its retired keys, in order (when the records given include them: StateStore `list({ retired: true })`). */
  retired: JobRecord[];
  /** Jobs that turned up late for its retired keys (duplicates). */
  lateJobs: LateJob[];
}

/** The counts of a batch: `ended` = succeeded + failed + canceled (every ended job, the lost included). */
export interface BatchCounts {
  total: number;
  succeeded: number;
  /** Failed, expired or lost. */
  failed: number;
  canceled: number;
  /** Submitted and not ended (queued, running, or not seen yet). */
  running: number;
  /** Of `running`, those waiting to run (`queued`, or not seen since submitted): their cards say queued. */
  queued: number;
  notSent: number;
  /** Submitting now, or outcome unknown. */
  unsettled: number;
  /** Of `unsettled`, those being submitted now: their cards say queued too. */
  submitting: number;
  ended: number;
}

/** A batch's variations as they stand, its counts, and whether nothing of it is left to run. */
export interface BatchStatus {
  batch: BatchRecord;
  variations: VariationStatus[];
  counts: BatchCounts;
  /** Every variation ended, or the batch was canceled and none is submitted and running. */
  finished: boolean;
}

/** The model's variation of a batch record's variation (its stored inputs are the model's values). */
export function variationOf(v: BatchVariationRecord): Variation {
  return {
    index: v.index,
    inputs: v.inputs.map((i) => ({ nodeId: i.nodeId, field: i.field, value: i.value as BatchValue })),
  };
}

/** A recorded variation's label, `<index>-<short values>` (variations.ts `variationLabel`): its output folder's name. */
export function recordLabel(v: BatchVariationRecord): string {
  return variationLabel(variationOf(v));
}

/** The state of one variation from its job record (undefined: none). */
export function variationState(record: JobRecord | undefined): VariationState {
  if (!record) return 'not_sent';
  if (record.state === 'pending') return 'submitting';
  if (record.state === 'outcome_unknown' || !record.jobId) return 'unknown';
  return record.lastStatus ?? 'submitted';
}

/**
 * Where `batch` stands, from the job records (any list; those of other keys are ignored).
 */
export function batchStatus(batch: BatchRecord, records: Iterable<JobRecord>): BatchStatus {
  const byKey = new Map<string, JobRecord>();
  const byOrigin = new Map<string, JobRecord>();
  for (const r of records) {
    byKey.set(r.idempotencyKey, r);
    if (r.originKey && r.state !== 'retired') byOrigin.set(r.originKey, r);
  }
  const counts: BatchCounts = {
    total: batch.variations.length,
    succeeded: 0,
    failed: 0,
    canceled: 0,
    running: 0,
    queued: 0,
    notSent: 0,
    unsettled: 0,
    submitting: 0,
    ended: 0,
  };
  const variations = batch.variations.map((variation): VariationStatus => {
    const chain = submissionChain(variation.idempotencyKey, (key) => byKey.get(key));
    // The key it stands under now; its retired keys may be left out of `records` (then its successor names it).
    const record =
      chain.records.length === 0
        ? byOrigin.get(variation.idempotencyKey)
        : chain.current?.state === 'retired'
          ? undefined
          : chain.current;
    const retired = chain.records.filter((r) => r.state === 'retired');
    const state = variationState(record);
    if (state === 'not_sent') counts.notSent++;
    else if (state === 'submitting' || state === 'unknown') {
      counts.unsettled++;
      if (state === 'submitting') counts.submitting++;
    } else if (state === 'succeeded') counts.succeeded++;
    else if (state === 'canceled') counts.canceled++;
    else if (isEndedStatus(state)) counts.failed++;
    else {
      counts.running++;
      if (state === 'queued' || state === 'submitted') counts.queued++;
    }
    return {
      variation,
      label: recordLabel(variation),
      state,
      jobId: record?.jobId,
      record,
      retired,
      lateJobs: retired.flatMap((r) => r.lateJobs ?? []),
    };
  });
  counts.ended = counts.succeeded + counts.failed + counts.canceled;
  const finished =
    counts.ended === counts.total || (batch.canceledAt !== undefined && counts.running === 0 && counts.unsettled === 0);
  return { batch, variations, counts, finished };
}

/**
 * One line of counts, each state counted as the contact sheet's cards show it (contactSheet.ts `cellState`), the
 * states with none left out: `1 succeeded, 3 queued`, `3 succeeded, 2 canceled`, `1 canceled, 5 not sent` (a
 * `done` count would read as if everything ran). `no variations` for an empty batch.
 */
export function describeCounts(counts: BatchCounts): string {
  const shown: [number, string][] = [
    [counts.succeeded, 'succeeded'],
    [counts.failed, 'failed'],
    [counts.canceled, 'canceled'],
    [counts.running - counts.queued, 'running'],
    [counts.queued + counts.submitting, 'queued'],
    [counts.unsettled - counts.submitting, 'unknown'],
    [counts.notSent, 'not sent'],
  ];
  const parts = shown.filter(([n]) => n > 0).map(([n, word]) => `${n} ${word}`);
  return parts.length > 0 ? parts.join(', ') : 'no variations';
}
