/**
 * Canceling a batch, the one way the CLI's `batch cancel` and the editor's Cancel Batch do it: the batch record is
 * marked canceled first (a runner reads it before each submission, in any process: run.ts rule 5), then each of its
 * jobs not ended is canceled on the server (Job and Asset API v2, POST /api/v2/jobs/{id}/cancel) and the status
 * answered written to its record.
 */
import { AbortError } from '../http/errors';
import type { JobBackend } from '../jobs/backend';
import { isEndedStatus } from '../jobs/model';
import type { BatchRecord, BatchStore } from '../state/batchRecords';
import type { StateStore } from '../state/stateStore';
import { batchStatus, type VariationStatus } from './status';

/** One job of the batch the server was asked to cancel: the status it answered, or why the cancel failed. */
export interface CanceledJob {
  variation: VariationStatus;
  jobId: string;
  status?: string;
  error?: unknown;
}

/** What {@link cancelBatch} did. */
export interface BatchCancel {
  /** The batch as now recorded (canceled); undefined when it is not recorded. */
  batch: BatchRecord | undefined;
  /** Each job of it that had not ended, in variation order (none when the backend is another server's). */
  jobs: CanceledJob[];
  /** Variations being submitted or unheard: no job id known here, so not canceled on the server. */
  unsettled: VariationStatus[];
}

/**
 * Cancels batch `batchId` (see the module comment); `backend` cancels its jobs only when it is the batch's server.
 * `nowMs`: ms since the epoch, the time recorded as `canceledAt` (a batch already canceled keeps its first time).
 * @throws AbortError when `signal` aborts; the stores' file system errors. A job's failed cancel is not thrown: it is
 *   given as that job's `error`.
 */
export async function cancelBatch(
  backend: JobBackend,
  batchId: string,
  options: { store: StateStore; batches: BatchStore; nowMs: number; signal?: AbortSignal },
): Promise<BatchCancel> {
  const batch = await options.batches.markCanceled(batchId, new Date(options.nowMs).toISOString());
  if (!batch) return { batch, jobs: [], unsettled: [] };
  const status = batchStatus(batch, await options.store.list());
  const unsettled = status.variations.filter(
    (v) => v.jobId === undefined && (v.state === 'submitting' || v.state === 'unknown'),
  );
  if (backend.baseUrl !== batch.baseUrl) return { batch, jobs: [], unsettled };
  const jobs: CanceledJob[] = [];
  for (const v of status.variations) {
    if (v.jobId === undefined || isEndedStatus(v.state)) continue;
    try {
      const { job } = await backend.cancel(v.jobId, options.signal);
      await options.store.recordStatus(v.variation.idempotencyKey, job).catch(() => undefined);
      jobs.push({ variation: v, jobId: v.jobId, status: job.status });
    } catch (error) {
      if (AbortError.is(error)) throw error;
      jobs.push({ variation: v, jobId: v.jobId, error });
    }
  }
  return { batch, jobs, unsettled };
}
