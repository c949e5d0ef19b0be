/**
 * Following a recorded batch to its end from the CLI, shared by `submit --set`, `batch run` and `batch resume`: the
 * batch id printed first, the run (core/batch/run.ts `runBatch`), one stderr progress line for the whole batch, one
 * result per variation as its job ends, the saved outputs remembered, the exit code, and the truth on Ctrl-C.
 *
 * Rules:
 * - stdout's first line is the batch id, written before any request (the batch is already recorded, so a process
 *   killed from here on can be resumed by that id); with `--json` it is the JSON line `{"batchId": "b-…"}`;
 * - then one result per variation as it ends: `<label> <status> <job id or ->` followed by each output file saved,
 *   one path a line; with `--json` exactly one JSON line per variation,
 *   `{"batchId","index","label","inputs","status","jobId","files","error"}`, and no other stdout line;
 * - stderr: one progress line of the batch's counts (`batch b-… 10 succeeded, 2 failed, 4 running, 24 not sent`), redrawn in place on
 *   a terminal, else printed when it changes at most once a second (and once at the end); a busy server's pause said
 *   once per pause (the whole batch waits it: Job and Asset API v2, Errors, 429 with Retry-After); nothing with
 *   `--quiet` but warnings;
 * - each saved output is remembered in the state dir's asset records, as follow.ts does for one job;
 * - an unknown outcome being resolved, a key retired for its successor, and a job that turned up late for a retired
 *   key are said on stderr as they happen (core/batch/run.ts `describeResolution`); a late duplicate even with
 *   `--quiet`;
 * - exit 0 when every variation's job succeeded, else 1 and a line counting those that did not and how to resume;
 *   variations whose outcome cannot be decided (the server lists no jobs) are named, with the command that sends
 *   them again under new keys on the user's word (`batch resume <id> --resubmit-unknown`) and the warning that a
 *   duplicate is possible;
 * - Ctrl-C aborts the run: the jobs already submitted keep running on the server, and the line says how to resume
 *   (exit 130).
 */
import { AbortError, InputError, refusalText } from '../core';
import { AssetRecords, BatchStore, savedOutputRecord, type BatchRecord } from '../core/state';
import { assetReference, type ApiWorkflow } from '../core/util';
import {
  describeCounts,
  describeResolution,
  runBatch,
  variationOf,
  type BatchCounts,
  type BatchEvent,
  type VariationOutcome,
  recordBatch,
  type Variation,
} from '../core/batch';
import { setMaxListeners } from 'node:events';
import * as path from 'node:path';
import type { CliContext } from './context';
import { Exit, describe, errorDocument, shown } from './output';

/** Options of {@link followBatch}. */
export interface FollowBatchOptions {
  /** The outputs' folder (each variation's in `<out>/<label>/`); none: not downloaded. */
  out?: string;
  /** The settle window of an unknown outcome's resolution (ms, `--settle`); default the core's (3 s). */
  settleMs?: number;
  /** Send again under new keys the variations whose outcome cannot be decided (`--resubmit-unknown`). */
  resubmitUnknown?: boolean;
}

/** Options of {@link startBatch}: {@link FollowBatchOptions}, jobs in flight at once, the workflow's file. */
export interface StartBatchOptions extends FollowBatchOptions {
  /** Jobs in flight at once (checked by the caller: a whole number 1..64). */
  concurrency: number;
  /** The workflow file given (remembered with the batch and each job), as typed or absolute. */
  workflowFile?: string;
}

/**
 * Records a new batch of `variations` on `workflow` for the configured server (plan.ts `recordBatch`: every
 * variation's Idempotency-Key written whole before anything is sent), then follows it ({@link followBatch}).
 * Everything about the input must be checked before: nothing here refuses it.
 * @throws as recordBatch (then nothing was sent) and followBatch.
 */
export async function startBatch(
  ctx: CliContext,
  workflow: ApiWorkflow,
  variations: Variation[],
  opts: StartBatchOptions,
): Promise<void> {
  const { lease } = await ctx.jobs({ settleMs: opts.settleMs });
  const store = ctx.store();
  const batch = await recordBatch(new BatchStore(store.dir), workflow, variations, {
    baseUrl: lease.backend.baseUrl,
    workflowFile: opts.workflowFile ? path.resolve(opts.workflowFile) : undefined,
    concurrency: opts.concurrency,
    nowMs: ctx.io.clock?.now() ?? Date.now(),
  });
  await followBatch(ctx, batch, opts);
}

/** At most one progress line a second when stderr is not a terminal (a log is not flooded by a 10,000-job batch). */
const LINE_INTERVAL_MS = 1000;

/**
 * Prints the batch id, runs (or resumes) batch `batch` on the run's connection (its job service follows every job:
 * CliContext `jobs`) and follows it to its end under the module's rules; sets exit code 1 unless every variation
 * succeeded.
 * @throws AbortError on Ctrl-C (after saying how to resume); InputError from runBatch (`other_server`,
 *   `not_supported`, …: exit 2); the upload's errors.
 */
export async function followBatch(ctx: CliContext, batch: BatchRecord, opts: FollowBatchOptions): Promise<void> {
  const { io, output } = ctx;
  const id = batch.batchId;
  if (output.json) output.jsonLine({ batchId: id });
  else output.result(id);
  const store = ctx.store();
  // The run's connection (closed with the run): its backend submits, its job service follows each job.
  const { lease } = await ctx.jobs({ settleMs: opts.settleMs });
  const { backend } = lease;
  const assets = lease.connection.assets;
  const progress = new BatchProgress(ctx, id, batch.variations.length);
  const records = new AssetRecords(store.dir);
  // Results are printed in the order the jobs end; the asset records are written in the same order.
  let printing = Promise.resolve();
  const print = (outcome: VariationOutcome): Promise<void> =>
    (printing = printing.then(() => printOutcome(ctx, backend.baseUrl, id, outcome, records, progress)));
  const resume = `comfy-cloud batch resume ${id}${opts.out ? ` --out ${opts.out}` : ''}`;
  // One signal of the run's own: every variation waiting for a slot listens to it (a batch may hold thousands), which
  // Node would otherwise warn about on stderr as a leak.
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const onAbort = (): void => stop.abort();
  if (io.signal?.aborted) stop.abort();
  io.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await runBatch(lease, id, {
      store,
      batches: new BatchStore(store.dir),
      out: opts.out,
      client: 'cli',
      signal: stop.signal,
      settleMs: opts.settleMs,
      resubmitUnknown: opts.resubmitUnknown,
      fileValue: async (file, signal) => {
        // Every distinct file once per run (runBatch asks once per file); an unchanged file is not sent again (dedup by hash).
        if (!assets) throw new InputError('no_assets', refusalText('assets', backend.api));
        const up = await assets.uploadFile(file, {}, { signal });
        output.message(`${up.dedup ? 'already uploaded' : 'uploaded'} ${file} as asset ${shown(up.asset.id)}`);
        return assetReference({ ...up.asset, hash: up.asset.hash ?? up.hash });
      },
      onEvent: (event) => {
        progress.event(event);
        if (event.type === 'ended') void print(event.outcome);
        else if (event.type === 'late') {
          progress.clear();
          output.warn(`batch ${id}: ${describeResolution(event)}`);
          progress.redraw();
        } else if (event.type === 'unheard' || event.type === 'retired') {
          progress.clear();
          output.message(`batch ${id}: ${describeResolution(event)}`);
          progress.redraw();
        }
      },
    });
    await printing;
    progress.stop();
    const notOk = result.outcomes.filter((o) => o.state !== 'succeeded');
    if (notOk.length) {
      const byState = new Map<string, number>();
      for (const o of notOk) byState.set(o.state, (byState.get(o.state) ?? 0) + 1);
      const states = [...byState].map(([s, n]) => `${n} ${s}`).join(', ');
      output.warn(
        `batch ${id}: ${notOk.length} of ${result.outcomes.length} variations did not succeed (${states}); ${resume} follows again those not settled (a failed job stays failed)`,
      );
      const unknown = notOk.filter((o) => o.state === 'unknown');
      if (unknown.length) {
        const which = unknown.map((o) => o.variation.index).join(', ');
        const why = unknown.some((o) => o.undecided === 'no_listing')
          ? 'this server does not list its jobs, so whether they were created cannot be decided'
          : 'their jobs could not be looked for';
        output.warn(
          `batch ${id}: the outcome of variation${unknown.length > 1 ? 's' : ''} ${which} is unknown (${why}); to send ${unknown.length > 1 ? 'them' : 'it'} again under new keys: comfy-cloud batch resume ${id}${opts.out ? ` --out ${opts.out}` : ''} --resubmit-unknown (a duplicate job is possible)`,
        );
      }
      ctx.setExitCode(Exit.failed);
    }
  } catch (e) {
    await printing;
    progress.stop();
    if (AbortError.is(e))
      output.warn(
        `interrupted: the jobs of batch ${id} already submitted keep running on the server; resume with: ${resume}`,
      );
    throw e;
  } finally {
    io.signal?.removeEventListener('abort', onAbort);
  }
}

/** Prints one variation's result (module rules) and remembers its saved outputs in the asset records. */
async function printOutcome(
  ctx: CliContext,
  baseUrl: string,
  batchId: string,
  outcome: VariationOutcome,
  records: AssetRecords,
  progress: BatchProgress,
): Promise<void> {
  const { output } = ctx;
  for (const saved of outcome.job ? outcome.saved : []) {
    await records
      .put(savedOutputRecord(baseUrl, outcome.job!, saved, 'cli'))
      .catch((err: unknown) =>
        output.message(
          `could not remember output ${shown(saved.output.id)} in the state dir: ${shown((err as Error).message)}`,
        ),
      );
  }
  const files = outcome.saved.map((s) => s.path);
  progress.clear();
  if (output.json) {
    const inputs: Record<string, unknown> = {};
    for (const i of variationOf(outcome.variation).inputs)
      inputs[`${i.nodeId}.${i.field}`] = i.value.kind === 'file' ? { file: i.value.path } : i.value.value;
    output.jsonLine({
      batchId,
      index: outcome.variation.index,
      label: outcome.label,
      inputs,
      status: outcome.state,
      jobId: outcome.jobId ?? null,
      files,
      error:
        outcome.error !== undefined
          ? errorDocument(outcome.error)
          : outcome.job?.error
            ? { code: outcome.job.error.code, message: outcome.job.error.message, node_id: outcome.job.error.nodeId }
            : null,
    });
  } else {
    output.result(`${outcome.label} ${outcome.state} ${outcome.jobId ?? '-'}`);
    for (const f of files) output.result(f);
    if (outcome.state !== 'succeeded') {
      const why =
        outcome.error !== undefined
          ? describe(outcome.error)
          : outcome.job?.error?.message
            ? shown(outcome.job.error.message)
            : '';
      output.warn(
        `${outcome.label} ${outcome.state}${outcome.jobId ? ` (job ${shown(outcome.jobId)})` : ''}${why ? `: ${why}` : ''}`,
      );
    }
  }
  progress.redraw();
}

/** What a variation counts as in the progress line, from this run's events. */
type Tally = 'waiting' | 'running' | 'succeeded' | 'failed' | 'canceled' | 'unsettled';

function tallyOf(state: VariationOutcome['state']): Tally {
  if (state === 'succeeded') return 'succeeded';
  if (state === 'canceled' || state === 'not_sent') return 'canceled';
  if (state === 'unknown' || state === 'in_flight') return 'unsettled';
  return 'failed';
}

/**
 * The batch's one progress line on stderr (module rules): counts from the run's events, redrawn in place on a
 * terminal, else written when it changed at most every {@link LINE_INTERVAL_MS} (ms, the CLI's clock); a busy pause
 * said once per pause. Silent with `--quiet`.
 */
class BatchProgress {
  private readonly tally = new Map<number, Tally>();
  private readonly tty: boolean;
  private readonly quiet: boolean;
  private shownLine = '';
  private lastWrittenAt = -Infinity;
  private pausedUntil = -Infinity;

  constructor(
    private readonly ctx: CliContext,
    private readonly batchId: string,
    private readonly total: number,
  ) {
    this.tty = Boolean(ctx.io.stderr.isTTY);
    this.quiet = ctx.output.quiet;
  }

  private now(): number {
    return this.ctx.io.clock?.now() ?? Date.now();
  }

  event(e: BatchEvent): void {
    if (e.type === 'submitted') this.tally.set(e.variation.index, 'running');
    else if (e.type === 'ended') this.tally.set(e.outcome.variation.index, tallyOf(e.outcome.state));
    else if (e.type === 'busy') {
      const now = this.now();
      // One pause of the whole batch: the other variations' 429s within it say nothing more.
      if (now >= this.pausedUntil) {
        this.clear();
        this.ctx.output.message(
          `batch ${this.batchId}: the server is busy (${shown(e.reason)}); the whole batch waits ${Math.ceil(e.delayMs / 1000)} s`,
        );
      }
      this.pausedUntil = Math.max(this.pausedUntil, now + e.delayMs);
    }
    this.redraw();
  }

  /** The counts of this run, as core/batch/status.ts counts a batch. */
  counts(): BatchCounts {
    const c: BatchCounts = {
      total: this.total,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      running: 0,
      // The run hears of a submission and of its end, not of its job's status between: in flight is running.
      queued: 0,
      notSent: 0,
      unsettled: 0,
      submitting: 0,
      ended: 0,
    };
    for (const t of this.tally.values()) {
      if (t === 'running') c.running++;
      else if (t === 'succeeded') c.succeeded++;
      else if (t === 'failed') c.failed++;
      else if (t === 'canceled') c.canceled++;
      else if (t === 'unsettled') c.unsettled++;
    }
    c.notSent = this.total - this.tally.size;
    c.ended = c.succeeded + c.failed + c.canceled;
    return c;
  }

  private line(): string {
    return `batch ${this.batchId} ${describeCounts(this.counts())}`;
  }

  /** Draws the line again (on a terminal), or writes it when it changed and the interval has passed. */
  redraw(force = false): void {
    if (this.quiet) return;
    const line = this.line();
    if (this.tty) {
      this.ctx.io.stderr.write(`\r\x1b[2K${this.ctx.redactor.clean(line)}`);
      this.shownLine = line;
      return;
    }
    if (line === this.shownLine) return;
    const now = this.now();
    if (!force && now - this.lastWrittenAt < LINE_INTERVAL_MS && this.counts().ended < this.total) return;
    this.shownLine = line;
    this.lastWrittenAt = now;
    this.ctx.output.message(line);
  }

  /** Clears the line drawn in place, so a result line or a message starts at the left margin. */
  clear(): void {
    if (this.tty && !this.quiet && this.shownLine) this.ctx.io.stderr.write('\r\x1b[2K');
  }

  /** The last counts written (a line throttled away is written now), and the terminal's line ended. */
  stop(): void {
    if (this.quiet) return;
    if (this.tty) {
      if (this.shownLine) this.ctx.io.stderr.write('\n');
      this.shownLine = '';
      return;
    }
    this.redraw(true);
  }
}
