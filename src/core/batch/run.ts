/**
 * Running a recorded batch (plan.ts) to its end, the first time or again after a crash, so that every variation
 * becomes exactly one job (Job and Asset API v2, POST /api/v2/jobs, rules 3–5, and Errors: 429 with Retry-After).
 *
 * Rules:
 * 1. Each variation is submitted under the Idempotency-Key its batch record fixed, or under the successor of that key
 *    once it was retired (rule 3), and no other: its job record is written before the request (submitDurably), so a
 *    process killed at any point leaves a key that may stand for a job, never a job without a key.
 * 2. Before anything is sent, the records of the keys the variations stand under say what each needs (resume.ts):
 *    none, sent under its key; `pending` of a live submitter, left to it; `created`, followed only; `outcome_unknown`
 *    or `pending` of a dead submitter, resolved before anything else is sent under it.
 * 3. A submission whose outcome is unknown is resolved by the one resolution (core/jobs/unknownOutcome.ts, through
 *    the backend's submit): where the surface lists jobs, its job is found and adopted, or its absence is proven by
 *    two readings a settle window apart, its key retired and the variation sent again under a successor key (named in
 *    the retired record before it is sent); where it does not, the variation ends `unknown`, and is sent again under
 *    a new key only on the user's word ({@link BatchRunOptions.resubmitUnknown}: a duplicate is possible).
 * 4. At most the batch's `concurrency` jobs are in flight (submitted and not ended), and a busy server's 429
 *    (`queue_full`, `rate_limited`, `deployment_not_ready`), or a 402 with a Retry-After (http/retry.ts
 *    `isBusyRefusal`), pauses the whole batch for its Retry-After (gate.ts: the longest pause wins), then the same key
 *    is presented again (the refusal released it: rule 4). A send under a successor key goes through the gate too.
 * 5. A canceled batch (its record's `canceledAt`, set by any process) sends nothing more: it is asked before each
 *    submission (BatchStore `canceledAt`, which reads the record again only when its file changed).
 * 6. Every created job is followed to its end, whatever happens to the others, through the job service's one watch of
 *    it (the lease's backend: jobService.ts), never a watch of the runner's own, so a view that follows the same job
 *    (the Jobs view, the monitor) shares that watch: one event stream per job. A 404 right after its creation is a
 *    server not showing it yet (the backend's grace), and an outage while following or downloading is waited out
 *    within {@link BatchRunOptions.outageBudgetMs}. A succeeded job's outputs go to `<out>/<index>-<short values>/`
 *    (variations.ts `variationLabel`); those already complete there are not downloaded again.
 * 7. Each job's last status is written to its record as it ends, so `batch status` and the Jobs view read the batch
 *    without asking the server.
 * 8. Jobs that turn up late for retired keys are looked for when the run starts and once it ended (lateJobs.ts
 *    `settleLateJobs`): adopted by a variation without a job, else canceled when still queued; told either way.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import {
  AbortError,
  ApiError,
  ComfyError,
  ConnectionError,
  InputError,
  describeError,
  isNotFound,
} from '../http/errors';
import { systemClock, type Clock } from '../http/clock';
import { backoff, DEFAULT_RETRY_POLICY, isBusyRefusal, isTransientReadFailure } from '../http/retry';
import type { AcceptedJob, JobAnswer, JobBackend } from '../jobs/backend';
import type { ClientLease } from '../jobs/jobService';
import { refusalText } from '../jobs/refusals';
import { downloadMissingOutputs, type SavedOutputFile } from '../jobs/jobEnds';
import { LOST_STATUS, isTerminalStatus, type Job } from '../jobs/model';
import { settleLateJobs, type LateJobFound } from '../jobs/lateJobs';
import { DEFAULT_SETTLE_MS, OutcomeUnknownError, type SettleEvent } from '../jobs/unknownOutcome';
import type { BatchRecord, BatchStore, BatchVariationRecord } from '../state/batchRecords';
import { isOrphaned, type JobRecord, type StateStore } from '../state/stateStore';
import { BatchGate } from './gate';
import { resumePlan, type ResumeStep } from './resume';
import { recordLabel, variationOf } from './status';
import { applyVariation } from './variations';
import type { BatchEvent, BatchRunResult, VariationOutcome, VariationOutcomeState } from './outcomes';

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
  /** The settle window of an unknown outcome's resolution (ms; rule 3). Default {@link DEFAULT_SETTLE_MS}. */
  settleMs?: number;
  /**
   * Send again under a new key, without proof, the variations whose outcome cannot be decided (the surface lists no
   * jobs): the user's word that a duplicate job is acceptable (rule 3). Default false.
   */
  resubmitUnknown?: boolean;
  /** How long following or downloading a job may keep failing transiently before it is given up (ms). Default 600 000. */
  outageBudgetMs?: number;
  /** Busy answers (429) one variation waits out before its submission is given up as refused. Default 100. */
  busyAttempts?: number;
  /** Jitter source of the backoff, in [0, 1). Default Math.random. */
  random?: () => number;
  /** Whether a `pending` record's submitter is gone (default StateStore `isOrphaned`). */
  orphaned?: (record: JobRecord) => boolean;
}

/**
 * Runs batch `batchId` (recorded with plan.ts `recordBatch`) on the connection of `lease` (a lease of the job
 * service: its backend submits, reads and downloads; the service follows each job, rule 6) under the module's rules,
 * until every variation has an outcome.
 * @throws InputError `no_such_batch`; `not_supported` when the API has no Idempotency-Key (a batch is never run
 *   without one); `other_server` when the batch was recorded for another server; `no_file_value` when a file value
 *   has no `fileValue`; AbortError when `signal` aborts (every job already submitted keeps its record); the upload's
 *   errors (before anything is submitted).
 */
export async function runBatch(lease: ClientLease, batchId: string, options: BatchRunOptions): Promise<BatchRunResult> {
  const { backend } = lease;
  const batch = await options.batches.get(batchId);
  if (!batch)
    throw new InputError('no_such_batch', `no batch ${batchId} is recorded here (see: comfy-cloud batch list)`);
  if (!backend.capabilities.idempotentSubmit) {
    throw new InputError('not_supported', refusalText('idempotentSubmit', backend.api));
  }
  if (batch.baseUrl !== backend.baseUrl)
    throw new InputError(
      'other_server',
      `batch ${batchId} was recorded for ${batch.baseUrl}; connect to that server to run it (now: ${backend.baseUrl})`,
    );
  return new BatchRun(lease, batch, options).run();
}

/** Thrown by a send under a successor key once the batch is canceled: nothing more of it is sent (rule 5). */
class BatchCanceled extends Error {}

class BatchRun {
  private readonly clock: Clock;
  private readonly gate: BatchGate;
  private readonly signal: AbortSignal | undefined;
  private readonly uploads = new Map<string, Promise<unknown>>();
  private readonly random: () => number;
  private readonly orphaned: (record: JobRecord) => boolean;
  private readonly lateJobs: LateJobFound[] = [];
  /** The lease's backend: the connection's, its reads noted into the job service's states. */
  private readonly backend: JobBackend;

  constructor(
    private readonly lease: ClientLease,
    private readonly batch: BatchRecord,
    private readonly options: BatchRunOptions,
  ) {
    this.backend = lease.backend;
    this.clock = options.clock ?? systemClock;
    this.gate = new BatchGate(batch.concurrency, this.clock);
    this.signal = options.signal;
    this.random = options.random ?? Math.random;
    this.orphaned = options.orphaned ?? ((r) => isOrphaned(r));
  }

  async run(): Promise<BatchRunResult> {
    const steps = await this.plan();
    // Rule 8: a job that turned up for a retired key since the last run is adopted before anything is sent again.
    if (steps.some((s) => s.retired.length > 0)) await this.settleLate();
    await this.uploadFiles(steps);
    const outcomes = await Promise.all((await this.plan()).map((step) => this.drive(step)));
    if ((await this.plan()).some((s) => s.retired.length > 0)) {
      // The next reading after the last retirement: a settle window later, so a job that was slow to show is seen.
      await this.clock.sleep(this.options.settleMs ?? DEFAULT_SETTLE_MS, this.signal);
      await this.settleLate();
    }
    return {
      batch: this.batch,
      outcomes,
      allSucceeded: outcomes.every((o) => o.state === 'succeeded'),
      lateJobs: this.lateJobs,
    };
  }

  private async plan(): Promise<ResumeStep[]> {
    const records = new Map((await this.options.store.list({ retired: true })).map((r) => [r.idempotencyKey, r]));
    return resumePlan(this.batch, records, this.orphaned);
  }

  /** One reading for late jobs of the variations' retired keys (rule 8); a failed reading decides nothing. */
  private async settleLate(): Promise<void> {
    let found: LateJobFound[];
    try {
      found = await settleLateJobs(
        this.backend,
        this.options.store,
        this.batch.variations.map((v) => v.idempotencyKey),
        { clock: this.clock, signal: this.signal, orphaned: this.orphaned },
      );
    } catch (err) {
      if (AbortError.is(err)) throw err;
      return;
    }
    for (const late of found) {
      const variation = this.batch.variations.find((v) => v.idempotencyKey === late.originKey)!;
      this.lateJobs.push(late);
      this.emit({ type: 'late', variation, label: recordLabel(variation), late });
    }
  }

  /** Every file value of a variation still to submit, uploaded once (before the first submission). */
  private async uploadFiles(steps: ResumeStep[]): Promise<void> {
    for (const step of steps) {
      if (step.action === 'accepted' || step.action === 'in_flight') continue;
      for (const input of variationOf(step.variation).inputs)
        if (input.value.kind === 'file') await this.fileValue(input.value.path);
    }
  }

  private fileValue(file: string): Promise<unknown> {
    let value = this.uploads.get(file);
    if (!value) {
      if (!this.options.fileValue)
        throw new InputError('no_file_value', `${file} is a file value but this run cannot upload files`);
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

  private outcome(
    variation: BatchVariationRecord,
    state: VariationOutcomeState,
    extra: Partial<VariationOutcome> = {},
  ): VariationOutcome {
    const outcome: VariationOutcome = { variation, label: recordLabel(variation), state, saved: [], ...extra };
    this.emit({ type: 'ended', outcome });
    return outcome;
  }

  /** One variation from its step to its outcome, in a slot of the gate (rule 4). */
  private drive(step: ResumeStep): Promise<VariationOutcome> {
    const { variation } = step;
    if (step.action === 'in_flight')
      return Promise.resolve(this.outcome(variation, 'in_flight', { jobId: step.record?.jobId }));
    return this.gate.run(async () => {
      let start: AcceptedJob | string;
      let newSince: number | undefined;
      if (step.action === 'accepted') {
        start = step.record!.jobId!;
        // A job created a moment before a crash may not show yet: its grace counts from its send.
        newSince = Date.parse(step.record!.sentAt ?? step.record!.submittedAt);
        this.emit({
          type: 'submitted',
          variation,
          label: recordLabel(variation),
          jobId: start,
          adopted: false,
          earlier: true,
        });
      } else {
        const submitted = await this.submit(variation);
        if ('state' in submitted) return submitted;
        start = submitted;
      }
      return this.follow(variation, start, newSince);
    }, this.signal);
  }

  /**
   * Submits a variation until its job exists, or its outcome is settled otherwise: rules 1, 3, 4, 5. The backend's
   * submit follows the variation's keys from its recorded one and resolves an unknown outcome (rule 3).
   */
  private async submit(variation: BatchVariationRecord): Promise<AcceptedJob | VariationOutcome> {
    const label = recordLabel(variation);
    const workflow = await this.workflowOf(variation);
    const canceled = async (): Promise<boolean> =>
      (await this.options.batches.canceledAt(this.batch.batchId)) !== undefined;
    let busy = 0;
    let unsent = 0;
    for (;;) {
      await this.gate.open(this.signal);
      if (await canceled()) return this.notSent(variation);
      try {
        const accepted = await this.backend.submit(workflow, {
          store: this.options.store,
          idempotencyKey: variation.idempotencyKey,
          batchId: this.batch.batchId,
          busy: 'throw',
          workflowFile: this.batch.workflowFile,
          client: this.options.client,
          signal: this.signal,
          settleMs: this.options.settleMs,
          orphaned: this.options.orphaned,
          // A send under a successor key waits its turn like any other, and never once the batch is canceled.
          beforeResend: async () => {
            await this.gate.open(this.signal);
            if (await canceled()) throw new BatchCanceled();
          },
          onResolution: (e) => this.resolution(variation, label, e),
        });
        this.emit({
          type: 'submitted',
          variation,
          label,
          jobId: accepted.job.id,
          adopted: accepted.adopted === true,
          earlier: false,
        });
        return accepted;
      } catch (err) {
        if (AbortError.is(err)) throw err;
        if (err instanceof BatchCanceled) return this.notSent(variation);
        if (ApiError.is(err) && isBusyRefusal(err)) {
          // Rule 4: the whole batch waits, then the same key (released by the refusal) is presented again.
          if (++busy > (this.options.busyAttempts ?? 100)) return this.outcome(variation, 'refused', { error: err });
          const delayMs =
            err.retryAfter !== undefined
              ? err.retryAfter * 1000
              : backoff(busy, { ...DEFAULT_RETRY_POLICY, random: this.random });
          this.gate.pause(delayMs);
          this.emit({
            type: 'busy',
            delayMs,
            reason: `${err.code}${err.retryAfter !== undefined ? `: Retry-After ${err.retryAfter} s` : ''}`,
          });
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
        if (OutcomeUnknownError.is(err)) {
          // The surface cannot say whether a job was made: sent again under a new key only on the user's word.
          if (this.options.resubmitUnknown && (await this.retireByUser(variation, label, err.record))) continue;
          return this.outcome(variation, 'unknown', { error: err, undecided: err.reason });
        }
        return this.outcome(variation, 'refused', { error: err });
      }
    }
  }

  /** A canceled batch's variation: `unknown` when a key of it may stand for a job, else `not_sent`. */
  private async notSent(variation: BatchVariationRecord): Promise<VariationOutcome> {
    const { current } = await this.options.store.chain(variation.idempotencyKey);
    return this.outcome(variation, current && current.state !== 'retired' ? 'unknown' : 'not_sent');
  }

  /** Tells a step of an unknown outcome's resolution as the batch's event. */
  private resolution(variation: BatchVariationRecord, label: string, e: SettleEvent): void {
    if (e.type === 'unknown')
      this.emit({
        type: 'unheard',
        variation,
        label,
        key: e.key,
        reason:
          e.error !== undefined ? describeError(e.error) : 'its submission was not heard (an earlier run stopped)',
      });
    else if (e.type === 'retired')
      this.emit({ type: 'retired', variation, label, key: e.key, successorKey: e.successorKey, byUser: false });
  }

  /**
   * Retires the key of an undecidable record on the user's word (rule 3: `resubmitUnknown`), naming its successor.
   * @returns true when the variation now stands under a successor (sent next).
   */
  private async retireByUser(variation: BatchVariationRecord, label: string, record: JobRecord): Promise<boolean> {
    const retired = await this.options.store.retire(record.idempotencyKey, {
      successorKey: randomUUID(),
      retiredAt: new Date(this.clock.now()).toISOString(),
      byUser: true,
    });
    if (retired?.state !== 'retired' || !retired.successorKey) return false;
    this.emit({
      type: 'retired',
      variation,
      label,
      key: record.idempotencyKey,
      successorKey: retired.successorKey,
      byUser: true,
    });
    return true;
  }

  /** Follows a variation's job to its end, writes its status, downloads its outputs (rules 6, 7). */
  private async follow(
    variation: BatchVariationRecord,
    start: AcceptedJob | string,
    newSince: number | undefined,
  ): Promise<VariationOutcome> {
    const jobId = typeof start === 'string' ? start : start.job.id;
    let job: Job;
    try {
      job = (await this.followed(start, newSince)).job;
    } catch (err) {
      if (AbortError.is(err)) throw err;
      if (isNotFound(err)) {
        await this.options.store
          .recordStatus({ baseUrl: this.backend.baseUrl, jobId }, { status: LOST_STATUS })
          .catch(() => undefined);
        return this.outcome(variation, LOST_STATUS, { jobId, error: err });
      }
      return this.outcome(variation, 'unfollowed', { jobId, error: err });
    }
    await this.options.store.recordStatus({ baseUrl: this.backend.baseUrl, jobId }, job).catch(() => undefined);
    const state = (isTerminalStatus(job.status) ? job.status : 'unfollowed') as VariationOutcomeState;
    if (job.status !== 'succeeded' || !this.options.out || job.outputs.length === 0)
      return this.outcome(variation, state, { jobId, job });
    const dir = path.join(this.options.out, recordLabel(variation));
    try {
      const saved = await this.download(job, dir);
      return this.outcome(variation, state, { jobId, job, dir, saved });
    } catch (err) {
      if (AbortError.is(err)) throw err;
      return this.outcome(variation, 'unfollowed', { jobId, job, dir, error: err });
    }
  }

  /**
   * Follows a job to its end through the job service (rule 6): the lease's backend's `watch` joins the service's one
   * watch of the job, or starts it; the runner never watches a job itself.
   */
  private followed(start: AcceptedJob | string, newSince: number | undefined): Promise<JobAnswer> {
    return this.lease.backend.watch(start, { signal: this.signal, newSince });
  }

  /**
   * The job's outputs missing from `dir`, downloaded; a transient failure (a cut connection, a 5xx, a 429) is retried
   * after a backoff, the job read again first (its output links may have expired), until the failures have lasted
   * the outage budget (rule 6). @throws the last failure then, or a definitive one at once.
   */
  private async download(job: Job, dir: string): Promise<SavedOutputFile[]> {
    const budget = this.options.outageBudgetMs ?? 600_000;
    let since: number | undefined;
    for (let failures = 1; ; failures++) {
      try {
        return await downloadMissingOutputs(this.backend, job, dir, this.signal);
      } catch (err) {
        if (AbortError.is(err) || !isTransientDownloadFailure(err)) throw err;
        since ??= this.clock.now();
        if (this.clock.now() - since >= budget) throw err;
        await this.clock.sleep(backoff(failures, { ...DEFAULT_RETRY_POLICY, random: this.random }), this.signal);
        job = await this.backend.get(job.id, this.signal).then(
          (answer) => answer.job,
          () => job,
        );
      }
    }
  }
}

/** True when an error says no request reached the server (refused, host not found, connect timeout): nothing claimed. */
function sentNothing(err: unknown): boolean {
  return ConnectionError.is(err) && !err.requestSent;
}

/** A download's failure that a later try can get past: a transient read failure, or a part another download took. */
function isTransientDownloadFailure(err: unknown): boolean {
  return isTransientReadFailure(err) || (ComfyError.is(err) && err.code === 'download_interrupted');
}
