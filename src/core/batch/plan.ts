/**
 * A batch made durable before anything is sent: the record of the batch, with every variation and its own
 * Idempotency-Key, written whole and at once (Job and Asset API v2, POST /api/v2/jobs, rules 3–5: the key of a
 * variation is fixed before its first POST, so a resumed batch presents the same key and never creates a second job
 * for it).
 */
import { randomUUID } from 'node:crypto';
import { BatchStore, newBatchId, type BatchRecord } from '../state/batchRecords';
import type { ApiWorkflow } from '../util/workflow';
import type { Variation } from './variations';

/** Default jobs in flight at once. */
export const DEFAULT_CONCURRENCY = 4;

/** What {@link recordBatch} needs besides the workflow and its variations. */
export interface PlanOptions {
  baseUrl: string;
  workflowFile?: string;
  /** Jobs in flight at once; default {@link DEFAULT_CONCURRENCY}. */
  concurrency?: number;
  /** Now, ms since the epoch (the injected clock's). */
  nowMs: number;
  /** A new Idempotency-Key (default a UUID); injectable for tests. */
  newKey?: () => string;
  /** The batch id (default {@link newBatchId}). */
  batchId?: string;
  /** Which program records it (kept in the record: who resumes it). */
  client?: BatchRecord['client'];
}

/** The record of a new batch: each variation with a key of its own (all distinct). */
export function planBatch(workflow: ApiWorkflow, variations: Variation[], options: PlanOptions): BatchRecord {
  const newKey = options.newKey ?? randomUUID;
  const keys = new Set<string>();
  return {
    batchId: options.batchId ?? newBatchId(),
    baseUrl: options.baseUrl,
    workflow,
    workflowFile: options.workflowFile,
    createdAt: new Date(options.nowMs).toISOString(),
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    ...(options.client ? { client: options.client } : {}),
    variations: variations.map((v) => {
      const idempotencyKey = newKey();
      if (keys.has(idempotencyKey)) throw new Error(`the key generator gave ${idempotencyKey} twice`);
      keys.add(idempotencyKey);
      return {
        index: v.index,
        idempotencyKey,
        inputs: v.inputs.map((i) => ({ nodeId: i.nodeId, field: i.field, value: i.value })),
      };
    }),
  };
}

/**
 * Plans the batch and writes its record whole (one atomic create) before anything is sent; returns the record.
 * @throws as BatchStore.create (`batch_exists`, file system errors): then nothing is sent.
 */
export async function recordBatch(
  store: BatchStore,
  workflow: ApiWorkflow,
  variations: Variation[],
  options: PlanOptions,
): Promise<BatchRecord> {
  const record = planBatch(workflow, variations, options);
  await store.create(record);
  return record;
}
