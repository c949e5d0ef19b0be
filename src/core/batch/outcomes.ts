/**
 * What a batch run (run.ts) tells as it goes and answers at its end: how each variation ended, the events of the run
 * in order for each variation, the run's result, and the one sentence a person reads about an unknown outcome's
 * resolution (a submission unheard, a key retired for its successor, a job that turned up late).
 */
import type { SavedOutputFile } from '../jobs/jobEnds';
import type { LOST_STATUS, Job } from '../jobs/model';
import type { LateJobFound } from '../jobs/lateJobs';
import type { UndecidedReason } from '../jobs/unknownOutcome';
import type { BatchRecord, BatchVariationRecord } from '../state/batchRecords';

/** How a variation ended in this run. */
export type VariationOutcomeState =
  /** Its job's terminal status (or the client's `lost`). */
  | 'succeeded'
  | 'failed'
  | 'canceled'
  | 'expired'
  | typeof LOST_STATUS
  /** The server refused its submission definitively (no job; the key released): `error` says why. */
  | 'refused'
  /** Its submission's outcome cannot be decided (the surface lists no jobs): a job may exist; not sent again. */
  | 'unknown'
  /** Another live process is submitting it. */
  | 'in_flight'
  /** Not sent: the batch was canceled first. */
  | 'not_sent'
  /** Its job exists but could not be followed to its end (the server unreachable past the outage budget). */
  | 'unfollowed';

/** One variation's outcome in this run. */
export interface VariationOutcome {
  variation: BatchVariationRecord;
  /** `<index>-<short values>`. */
  label: string;
  state: VariationOutcomeState;
  jobId?: string;
  /** The final job, when it was followed to its end. */
  job?: Job;
  /** The output folder, when outputs were downloaded there. */
  dir?: string;
  /** Its outputs complete on disk, each with its absolute path, in the job's order. */
  saved: SavedOutputFile[];
  /** Why it did not succeed, when an error says it (a refusal, a failed download, an outage). */
  error?: unknown;
  /** `unknown`: why its outcome could not be decided. */
  undecided?: UndecidedReason;
}

/** What a run tells as it goes, in order for each variation. */
export type BatchEvent =
  /** The variation's job exists: submitted now (`adopted` when found in the listing) or known from before. */
  | {
      type: 'submitted';
      variation: BatchVariationRecord;
      label: string;
      jobId: string;
      adopted: boolean;
      earlier: boolean;
    }
  /** The server is busy: the whole batch waits `delayMs` (ms). */
  | { type: 'busy'; delayMs: number; reason: string }
  /** A variation's submission sent nothing (refused connection): tried again after `delayMs` (ms) under its key. */
  | { type: 'retrying'; variation: BatchVariationRecord; label: string; delayMs: number; reason: string }
  /** A variation's submission was not heard (`reason`): its job is looked for in the listing before anything else. */
  | { type: 'unheard'; variation: BatchVariationRecord; label: string; key: string; reason: string }
  /** No job was made under `key` (two readings of the listing): retired; the variation goes on under `successorKey`. */
  | {
      type: 'retired';
      variation: BatchVariationRecord;
      label: string;
      key: string;
      successorKey: string;
      byUser: boolean;
    }
  /** A job turned up late for a retired key of the variation: a duplicate (canceled when still queued) or adopted. */
  | { type: 'late'; variation: BatchVariationRecord; label: string; late: LateJobFound }
  /** A variation ended (every variation gets exactly one). */
  | { type: 'ended'; outcome: VariationOutcome };

/** A run's outcome: every variation's, in index order, whether all succeeded, and the late jobs found. */
export interface BatchRunResult {
  batch: BatchRecord;
  outcomes: VariationOutcome[];
  /** True when every variation's job succeeded (the CLI's exit 0). */
  allSucceeded: boolean;
  /** Jobs that turned up late for retired keys, found in this run (rule 8). */
  lateJobs: LateJobFound[];
}

/**
 * One sentence for a person about an unknown outcome's resolution in a batch (the CLI prints it, the editor logs it):
 * a submission unheard and looked for, a key retired for its successor, a job that turned up late.
 */
export function describeResolution(event: Extract<BatchEvent, { type: 'unheard' | 'retired' | 'late' }>): string {
  const which = `variation ${event.variation.index} (${event.label})`;
  if (event.type === 'unheard')
    return `${which}: its submission was not heard (${event.reason}); looking for its job in the server's job listing`;
  if (event.type === 'retired') {
    return event.byUser
      ? `${which}: sent again under a new Idempotency-Key ${event.successorKey}, on your word; its key ${event.key} may have made a job (a duplicate is possible)`
      : `${which}: no job was made under Idempotency-Key ${event.key} (two readings of the job listing); sent again under ${event.successorKey}`;
  }
  const { late } = event;
  if (late.kind === 'adopted')
    return `${which}: its job ${late.jobId} turned up late in the job listing and is followed`;
  if (late.canceled) return `a late duplicate of ${which} appeared (job ${late.jobId}) and was canceled`;
  return `a late duplicate of ${which} appeared (job ${late.jobId}, ${late.status}); it was ${late.status === 'queued' ? 'not canceled (the cancel failed)' : 'already under way and was left to end'}, its outputs are not saved`;
}
