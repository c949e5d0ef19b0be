/**
 * Running a recorded batch (plan.ts) to its end, the first time or again after a crash, so that every variation
 * becomes exactly one job (Job and Asset API v2, POST /api/v2/jobs, rules 3–5, and Errors: 429 with Retry-After).
 *
 * Rules:
 * 1. Each variation is submitted under the Idempotency-Key its batch record fixed, and no other: its job record is
 *    written before the request (submitDurably), so a process killed at any point leaves a key that may stand for a
 *    job, never a job without a key.
 * 2. Before anything is sent, the variations' job records say what each needs (resume.ts): none, sent under its key;
 *    `pending` of a live submitter, left to it; `created`, followed only; `outcome_unknown` or `pending` of a dead
 *    submitter, adopted through reconciliation (the server's listing, by workflow and time) before anything else.
 * 3. A submission whose outcome stays unknown is never given a new key. Its key is presented again, which is safe
 *    under reject-on-duplicate (rule 3): a 201 means no earlier request reached submission (rule 4: a key is claimed
 *    only by a request that does); `idempotency_key_reuse` means one did, and the job is looked for again. After
 *    {@link BatchRunOptions.unknownAttempts} such rounds the variation is left `unknown` (said, never resubmitted).
 * 4. At most the batch's `concurrency` jobs are in flight (submitted and not ended), and a busy server's 429
 *    (`queue_full`, `rate_limited`, `deployment_not_ready`) pauses the whole batch for its Retry-After (gate.ts), then
 *    the same key is presented again (the 429 released it: rule 4).
 * 5. A canceled batch (its record's `canceledAt`, set by any process) sends nothing more: it is asked before each
 *    submission (BatchStore `canceledAt`, which reads the record again only when its file changed).
 * 6. A succeeded job's outputs go to `<out>/<index>-<short values>/` (variations.ts `variationLabel`); those already
 *    complete there are not downloaded again (a resumed batch finishes a cut download without a second copy).
 * 7. Each job's last status is written to its record as it ends, so `batch status` and the Jobs view read the batch
 *    without asking the server.
 */
import * as path from 'node:path';
import { AbortError, ApiError, ComfyError, ConnectionError, InputError, describeError, isNotFound } from '../http/errors';
import { systemClock, type Clock } from '../http/clock';
import { backoff, DEFAULT_RETRY_POLICY } from '../http/retry';
import type { AcceptedJob, JobBackend } from '../jobs/backend';
import { downloadMissingOutputs, type SavedOutputFile } from '../jobs/jobEnds';
import { LOST_STATUS, isTerminalStatus, type Job } from '../jobs/model';
import type { BatchRecord, BatchStore, BatchVariationRecord } from '../state/batchRecords';
import { submissionRecord, type JobRecord, type StateStore } from '../state/stateStore';
import { isOrphaned } from '../v2/reconcile';
import { BatchGate } from './gate';
import { resumePlan, type ResumeStep } from './resume';
import { recordLabel, variationOf } from './status';
import { applyVariation } from './variations';

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
  /** Its submission's outcome is still unknown: a job may exist; never resubmitted under a new key. */
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
}

/** What a run tells as it goes, in order for each variation. */
export type BatchEvent =
  /** The variation's job exists: submitted now (`adopted` when found by reconciliation) or known from before. */
  | { type: 'submitted'; variation: BatchVariationRecord; label: string; jobId: string; adopted: boolean; earlier: boolean }
  /** The server is busy: the whole batch waits `delayMs` (ms). */
  | { type: 'busy'; delayMs: number; reason: string }
  /** A variation's submission was not heard, or sent nothing: tried again after `delayMs` (ms) under its key. */
  | { type: 'retrying'; variation: BatchVariationRecord; label: string; delayMs: number; reason: string }
  /** A variation ended (every variation gets exactly one). */
  | { type: 'ended'; outcome: VariationOutcome };

/** Options of {@link runBatch}. */
export interface BatchRunOptions {
  /** The job records (the same store every submission of this machine writes). */
  store: StateStore;
  /** The batch records (a canceled batch is seen there). */
  batches: BatchStore;
  /** Folder of the outputs (each variation's in `<out>/<label>/`); none: not downloaded. */
  out?: string;
  /** Which program runs it (recorded with each submission). Default `core`. */
  client?: JobRecord['client'];
  /**
   * The value a file input takes (a variation's `{kind: 'file'}` value): uploads it and returns its reference. Called
   * once per file per run. Required when a variation to submit has a file value.
   */
  fileValue?: (file: string, signal?: AbortSignal) => Promise<unknown>;
  /** Aborting stops the run (AbortError); jobs already submitted keep running and a later run follows them. */
  signal?: AbortSignal;
  onEvent?: (event: BatchEvent) => void;
  /** Clock and sleep for the batch's waits. Default the system clock. */
  clock?: Clock;
  /** Rounds of looking for a job whose submission was not heard before leaving it unknown (rule 3). Default 6. */
  unknownAttempts?: number;
  /** Busy answers (429) one variation waits out before its submission is given up as refused. Default 100. */
  busyAttempts?: number;
  /** Jitter source of the backoff, in [0, 1). Default Math.random. */
  random?: () => number;
  /** Whether a `pending` record's submitter is gone (default reconcile.ts `isOrphaned`). */
  orphaned?: (record: JobRecord) => boolean;
}

/** A run's outcome: every variation's, in index order, and whether all succeeded. */
export interface BatchRunResult {
  batch: BatchRecord;
  outcomes: VariationOutcome[];
  /** True when every variation's job succeeded (the CLI's exit 0). */
  allSucceeded: boolean;
}

/**
 * Runs batch `batchId` (recorded with plan.ts `recordBatch`) on `backend` under the module's rules, until every
 * variation has an outcome.
 * @throws InputError `no_such_batch`; `not_supported` when the API has no Idempotency-Key (a batch is never run
 *   without one); `other_server` when the batch was recorded for another server; `no_file_value` when a file value
 *   has no `fileValue`; AbortError when `signal` aborts (every job already submitted keeps its record); the upload's
 *   errors (before anything is submitted).
 */
export async function runBatch(backend: JobBackend, batchId: string, options: BatchRunOptions): Promise<BatchRunResult> {
  const batch = await options.batches.get(batchId);
  if (!batch) throw new InputError('no_such_batch', `no batch ${batchId} is recorded here (see: comfy-cloud batch list)`);
  if (!backend.capabilities.idempotentSubmit) {
    throw new InputError('not_supported', `a batch needs an API whose submissions carry an Idempotency-Key, so no variation runs twice; the ${backend.api} API has none (use the v2 API)`);
  }
  if (batch.baseUrl !== backend.baseUrl) throw new InputError('other_server', `batch ${batchId} was recorded for ${batch.baseUrl}; connect to that server to run it (now: ${backend.baseUrl})`);
  return new BatchRun(backend, batch, options).run();
}

class BatchRun {
  private readonly clock: Clock;
  private readonly gate: BatchGate;
  private readonly signal: AbortSignal | undefined;
  private readonly uploads = new Map<string, Promise<unknown>>();
  private readonly random: () => number;

  constructor(
    private readonly backend: JobBackend,
    private readonly batch: BatchRecord,
    private readonly options: BatchRunOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.gate = new BatchGate(batch.concurrency, this.clock);
    this.signal = options.signal;
    this.random = options.random ?? Math.random;
  }

  async run(): Promise<BatchRunResult> {
    let steps = await this.plan();
    if (steps.some((s) => s.action === 'unknown')) {
      // Rule 2: what a dead process left unheard is looked up before anything is sent.
      await this.backend.reconcile(this.options.store, this.signal);
      steps = await this.plan();
    }
    await this.uploadFiles(steps);
    const outcomes = await Promise.all(steps.map((step) => this.drive(step)));
    return { batch: this.batch, outcomes, allSucceeded: outcomes.every((o) => o.state === 'succeeded') };
  }

  private async plan(): Promise<ResumeStep[]> {
    const records = new Map((await this.options.store.list()).map((r) => [r.idempotencyKey, r]));
    return resumePlan(this.batch, records, this.options.orphaned ?? ((r) => isOrphaned(r)));
  }

  /** Every file value of a variation still to submit, uploaded once (before the first submission). */
  private async uploadFiles(steps: ResumeStep[]): Promise<void> {
    for (const step of steps) {
      if (step.action === 'accepted' || step.action === 'in_flight') continue;
      for (const input of variationOf(step.variation).inputs) if (input.value.kind === 'file') await this.fileValue(input.value.path);
    }
  }

  private fileValue(file: string): Promise<unknown> {
    let value = this.uploads.get(file);
    if (!value) {
      if (!this.options.fileValue) throw new InputError('no_file_value', `${file} is a file value but this run cannot upload files`);
      value = this.options.fileValue(file, this.signal);
      this.uploads.set(file, value);
    }
    return value;
  }

  private async workflowOf(variation: BatchVariationRecord): Promise<unknown> {
    const v = variationOf(variation);
    const files = new Map<string, unknown>();
    for (const i of v.inputs) if (i.value.kind === 'file') files.set(i.value.path, await this.fileValue(i.value.path));
    return applyVariation(this.batch.workflow as never, v, (file) => files.get(file));
  }

  private emit(event: BatchEvent): void {
    this.options.onEvent?.(event);
  }

  private outcome(variation: BatchVariationRecord, state: VariationOutcomeState, extra: Partial<VariationOutcome> = {}): VariationOutcome {
    const outcome: VariationOutcome = { variation, label: recordLabel(variation), state, saved: [], ...extra };
    this.emit({ type: 'ended', outcome });
    return outcome;
  }

  /** One variation from its step to its outcome, in a slot of the gate (rule 4). */
  private drive(step: ResumeStep): Promise<VariationOutcome> {
    const { variation } = step;
    if (step.action === 'in_flight') return Promise.resolve(this.outcome(variation, 'in_flight', { jobId: step.record?.jobId }));
    return this.gate.run(async () => {
      let start: AcceptedJob | string;
      if (step.action === 'accepted') {
        start = step.record!.jobId!;
        this.emit({ type: 'submitted', variation, label: recordLabel(variation), jobId: start, adopted: false, earlier: true });
      } else {
        const submitted = await this.submit(variation);
        if (typeof submitted !== 'string' && 'state' in submitted) return submitted;
        start = submitted;
      }
      return this.follow(variation, start, step.record);
    }, this.signal);
  }

  /** Submits a variation under its key until its job exists (or its outcome is settled otherwise): rules 1, 3, 4, 5. */
  private async submit(variation: BatchVariationRecord): Promise<AcceptedJob | string | VariationOutcome> {
    const key = variation.idempotencyKey;
    const label = recordLabel(variation);
    const workflow = await this.workflowOf(variation);
    let busy = 0;
    let unheard = 0;
    let unsent = 0;
    for (;;) {
      await this.gate.open(this.signal);
      if (await this.options.batches.canceledAt(this.batch.batchId)) {
        const record = await this.options.store.get(key);
        return this.outcome(variation, record ? 'unknown' : 'not_sent');
      }
      try {
        const accepted = await this.backend.submit(workflow, {
          store: this.options.store,
          idempotencyKey: key,
          batchId: this.batch.batchId,
          busy: 'throw',
          workflowFile: this.batch.workflowFile,
          client: this.options.client,
          signal: this.signal,
        });
        this.emit({ type: 'submitted', variation, label, jobId: accepted.job.id, adopted: unheard > 0, earlier: false });
        return accepted;
      } catch (err) {
        if (AbortError.is(err)) throw err;
        if (ApiError.is(err) && err.status === 429) {
          // Rule 4: the whole batch waits, then the same key (released by the 429) is presented again.
          if (++busy > (this.options.busyAttempts ?? 100)) return this.outcome(variation, 'refused', { error: err });
          const delayMs = err.retryAfter !== undefined ? err.retryAfter * 1000 : backoff(busy, { ...DEFAULT_RETRY_POLICY, random: this.random });
          this.gate.pause(delayMs);
          this.emit({ type: 'busy', delayMs, reason: `${err.code}${err.retryAfter !== undefined ? `: Retry-After ${err.retryAfter} s` : ''}` });
          continue;
        }
        if (sentNothing(err)) {
          // No request reached the server (refused, host not found): nothing was claimed; the same key again.
          if (++unsent > DEFAULT_RETRY_POLICY.maxAttempts) return this.outcome(variation, 'refused', { error: err });
          const delayMs = backoff(unsent, { ...DEFAULT_RETRY_POLICY, random: this.random });
          this.emit({ type: 'retrying', variation, label, delayMs, reason: describeError(err) });
          await this.clock.sleep(delayMs, this.signal);
          continue;
        }
        if (!mayHaveJob(err)) return this.outcome(variation, 'refused', { error: err });
        // Rule 3: a job may exist under this key. Look for it; else present the key again.
        if (++unheard > (this.options.unknownAttempts ?? 6)) return this.outcome(variation, 'unknown', { error: err });
        const found = await this.lookUp(variation, workflow, unheard, err);
        if (found) {
          this.emit({ type: 'submitted', variation, label, jobId: found, adopted: true, earlier: false });
          return found;
        }
      }
    }
  }

  /**
   * After an unheard submission: waits a backoff, reconciles the store's unheard records, and returns the job id when
   * this key's record now has one; undefined to present the key again.
   */
  private async lookUp(variation: BatchVariationRecord, workflow: unknown, round: number, err: unknown): Promise<string | undefined> {
    const key = variation.idempotencyKey;
    // A key refused as reused may have lost its record (a 429 that claimed it after all): it is written back as
    // unknown, so reconciliation looks for its job.
    if (!(await this.options.store.get(key))) {
      await this.options.store.putIfAbsent(
        await submissionRecord(workflow, { idempotencyKey: key, baseUrl: this.backend.baseUrl, state: 'outcome_unknown', batchId: this.batch.batchId, workflowFile: this.batch.workflowFile, client: this.options.client }, this.clock.now()),
      );
    }
    const delayMs = backoff(round, { ...DEFAULT_RETRY_POLICY, random: this.random });
    this.emit({ type: 'retrying', variation, label: recordLabel(variation), delayMs, reason: describeError(err) });
    await this.clock.sleep(delayMs, this.signal);
    await this.backend.reconcile(this.options.store, this.signal).catch((e: unknown) => {
      if (AbortError.is(e)) throw e;
    });
    const record = await this.options.store.get(key);
    return record?.state === 'created' && record.jobId ? record.jobId : undefined;
  }

  /** Follows a variation's job to its end, writes its status, downloads its outputs (rules 6, 7). */
  private async follow(variation: BatchVariationRecord, start: AcceptedJob | string, record: JobRecord | undefined): Promise<VariationOutcome> {
    const key = variation.idempotencyKey;
    const jobId = typeof start === 'string' ? start : start.job.id;
    let job: Job;
    try {
      job = (await this.backend.watch(start, { signal: this.signal })).job;
    } catch (err) {
      if (AbortError.is(err)) throw err;
      if (isNotFound(err)) {
        await this.options.store.update(key, { lastStatus: LOST_STATUS }).catch(() => undefined);
        return this.outcome(variation, LOST_STATUS, { jobId, error: err });
      }
      return this.outcome(variation, 'unfollowed', { jobId, error: err });
    }
    await this.options.store.update(key, { lastStatus: job.status, expiresAt: job.expiresAt ?? record?.expiresAt }).catch(() => undefined);
    const state = (isTerminalStatus(job.status) ? job.status : 'unfollowed') as VariationOutcomeState;
    if (job.status !== 'succeeded' || !this.options.out || job.outputs.length === 0) return this.outcome(variation, state, { jobId, job });
    const dir = path.join(this.options.out, recordLabel(variation));
    try {
      const saved = await downloadMissingOutputs(this.backend, job, dir, this.signal);
      return this.outcome(variation, state, { jobId, job, dir, saved });
    } catch (err) {
      if (AbortError.is(err)) throw err;
      return this.outcome(variation, 'unfollowed', { jobId, job, dir, error: err });
    }
  }
}

/** True when an error says no request reached the server (refused, host not found, connect timeout): nothing claimed. */
function sentNothing(err: unknown): boolean {
  return ConnectionError.is(err) && !err.requestSent;
}

/**
 * True when a failed submission may have made a job under its key: its outcome was not heard
 * (`outcome_unknown`, a 2xx whose body could not be read), or the key was refused as already presented.
 */
function mayHaveJob(err: unknown): boolean {
  return ComfyError.is(err) && (err.code === 'outcome_unknown' || err.code === 'job_created_unreadable' || err.code === 'idempotency_key_reuse');
}
