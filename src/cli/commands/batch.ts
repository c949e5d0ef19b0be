/**
 * `comfy-cloud batch run|list|status|resume|cancel`: batches of one API-format workflow, each variation one job under
 * the Idempotency-Key its batch record fixed (core/batch; Job and Asset API v2, POST /api/v2/jobs, rules 3–5).
 *
 * Rules:
 * - `batch run <file.batch.json>`: the batch file (`parseBatchFile`; its workflow path relative to the batch file),
 *   every check made before anything is sent or recorded (exit 2), then as `submit --set` (batchRun.ts);
 * - `batch list`: the batches remembered in the state dir, newest first: id, created, counts, workflow file name,
 *   `canceled`; `batch status <id>`: the counts, then one line per variation (label, state, job id), from the job
 *   records (core/batch/status.ts), without asking the server;
 * - `batch status` also shows, under a variation, each retired key (no job was made under it: its sending time, and
 *   whether the listing proved it or the user asked) and each job that turned up late for one (canceled or not);
 * - `batch resume <id>`: runs the batch again (every variation under its recorded key, or the successor of a retired
 *   one: never a second job for it) and follows it to its end, as the first run did, the batch id printed first;
 *   `--resubmit-unknown` sends again under new keys the variations whose outcome cannot be decided (a server without
 *   a job listing), on the user's word: a duplicate job is possible;
 * - `--settle <seconds>` (run, resume, and `submit`): the settle window of an unknown outcome's resolution, how long
 *   after a send its job shows in the server's listing (default 3; decimals allowed);
 * - `batch cancel <id>`: marks the batch canceled (no process sends more of it), then cancels on the server every job
 *   of it not ended; prints each job canceled;
 * - a batch id is a file name of the state dir: anything but `[A-Za-z0-9._-]` (a path) is refused, and an unknown id
 *   is bad usage (exit 2) with a sentence naming `batch list`.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { BatchStore, type BatchRecord } from '../../core/state';
import {
  DEFAULT_CONCURRENCY,
  batchStatus,
  cancelBatch,
  describeCounts,
  parseBatchFile,
  variationsFromBatchFile,
  type BatchCancel,
} from '../../core/batch';
import { readInputFile } from '../../core/util/inputFile';
import { followBatch, startBatch } from '../batchRun';
import type { CliContext } from '../context';
import { MAX_CONCURRENCY, SETTLE_HELP, concurrencyOption, settleOption } from '../options';
import { capable } from '../capabilities';
import { UsageError, describe, shown } from '../output';
import { workflowToSubmit } from '../workflowInput';

/** A batch id as the state dir names its records: never a path. */
const BATCH_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The record of batch `id` in the state dir.
 * @throws UsageError when `id` is not a batch id, or no batch of that id is recorded here.
 */
export async function recordedBatch(ctx: CliContext, id: string): Promise<BatchRecord> {
  if (!BATCH_ID.test(id) || id === '.' || id === '..')
    throw new UsageError(`${shown(id)} is not a batch id (batch ids are like b-0c6e…; see: comfy-cloud batch list)`);
  const batch = await new BatchStore(ctx.store().dir).get(id);
  if (!batch) throw new UsageError(`no batch ${id} is recorded in ${ctx.store().dir} (see: comfy-cloud batch list)`);
  return batch;
}

/** Registers `batch` and its subcommands on `program`; returns the `batch` command. */
export function register(program: Command, ctx: CliContext): Command {
  const { output } = ctx;
  const batch = program
    .command('batch')
    .description(
      'batches of one workflow: run a batch file, list, status, resume, cancel (a batch from the command line: submit --set)',
    );

  batch
    .command('run')
    .description(
      'run a batch file (JSON: "workflow", and "set" or "variations") and follow every job to its end; prints the batch id first',
    )
    .argument('<file.batch.json>')
    .option('--out <dir>', "download each variation's outputs into <dir>/<index>-<values>/")
    .option('--concurrency <n>', `jobs in flight at once, 1 to ${MAX_CONCURRENCY}`, String(DEFAULT_CONCURRENCY))
    .option('--settle <seconds>', SETTLE_HELP)
    .action(async (file: string, opts: { out?: string; concurrency?: string; settle?: string }) => {
      const concurrency = concurrencyOption(opts.concurrency);
      const settleMs = settleOption(opts.settle);
      await capable(ctx, 'idempotentSubmit', { settleMs });
      const parsed = parseBatchFile(await readInputFile(file), path.basename(file));
      const baseDir = path.dirname(path.resolve(file));
      const workflowFile = path.resolve(baseDir, parsed.workflow);
      const { workflow } = await workflowToSubmit(ctx, workflowFile, {});
      const variations = await variationsFromBatchFile(workflow, parsed, baseDir);
      await startBatch(ctx, workflow, variations, { out: opts.out, concurrency, workflowFile, settleMs });
    });

  batch
    .command('list')
    .description('the batches remembered on this machine, newest first, with their counts')
    .action(async () => {
      const store = ctx.store();
      const records = await store.list();
      const rows = (await new BatchStore(store.dir).list()).map((b) => ({ b, status: batchStatus(b, records) }));
      if (output.json) {
        output.document({
          batches: rows.map(({ b, status }) => ({
            batchId: b.batchId,
            createdAt: b.createdAt,
            baseUrl: b.baseUrl,
            workflowFile: b.workflowFile ?? null,
            canceledAt: b.canceledAt ?? null,
            counts: status.counts,
            finished: status.finished,
          })),
        });
        return;
      }
      if (rows.length === 0) output.message('no batch is remembered here');
      for (const { b, status } of rows) {
        output.result(
          `${b.batchId}  ${b.createdAt}  ${describeCounts(status.counts)}  ${b.workflowFile ? path.basename(b.workflowFile) : '-'}${b.canceledAt ? '  canceled' : ''}`,
        );
      }
    });

  batch
    .command('status')
    .description("a batch's counts, then each variation: label, state, job id (from what this machine recorded)")
    .argument('<batch-id>')
    .action(async (id: string) => {
      const b = await recordedBatch(ctx, id);
      // Retired keys included: what was resolved under each variation is shown.
      const status = batchStatus(b, await ctx.store().list({ retired: true }));
      if (output.json) {
        output.document({
          batchId: b.batchId,
          createdAt: b.createdAt,
          canceledAt: b.canceledAt ?? null,
          counts: status.counts,
          finished: status.finished,
          variations: status.variations.map((v) => ({
            index: v.variation.index,
            label: v.label,
            state: v.state,
            jobId: v.jobId ?? null,
            idempotencyKey: v.record?.idempotencyKey ?? null,
            retiredKeys: v.retired.map((r) => ({
              idempotencyKey: r.idempotencyKey,
              sentAt: r.sentAt ?? r.submittedAt,
              retiredAt: r.retiredAt ?? null,
              retiredBy: r.retiredBy ?? null,
              successorKey: r.successorKey ?? null,
            })),
            lateJobs: v.lateJobs.map((l) => ({
              jobId: l.jobId,
              foundAt: l.foundAt,
              canceled: l.canceled,
              status: l.status ?? null,
            })),
          })),
        });
        return;
      }
      output.result(`${b.batchId} ${describeCounts(status.counts)}${b.canceledAt ? ' (canceled)' : ''}`);
      for (const v of status.variations) {
        output.result(`${v.label} ${shown(v.state)} ${v.jobId ? shown(v.jobId) : '-'}`);
        for (const r of v.retired) {
          const how =
            r.retiredBy === 'user'
              ? 'sent again on your word: a duplicate is possible'
              : 'no job was made under it (two readings of the job listing)';
          output.result(`  retired key ${r.idempotencyKey} sent ${r.sentAt ?? r.submittedAt}: ${how}`);
        }
        for (const l of v.lateJobs)
          output.result(
            `  late duplicate ${shown(l.jobId)} ${l.canceled ? 'canceled' : `not canceled (${shown(l.status ?? 'unknown')})`}`,
          );
      }
    });

  batch
    .command('resume')
    .description(
      'run a batch again where it stopped (each variation under its own key: never twice) and follow it to its end',
    )
    .argument('<batch-id>')
    .option(
      '--out <dir>',
      "download each variation's outputs into <dir>/<index>-<values>/ (those already there are kept)",
    )
    .option('--settle <seconds>', SETTLE_HELP)
    .option(
      '--resubmit-unknown',
      'send again under new keys the variations whose outcome cannot be decided (a server that lists no jobs): a duplicate job is possible',
    )
    .action(async (id: string, opts: { out?: string; settle?: string; resubmitUnknown?: boolean }) => {
      const settleMs = settleOption(opts.settle);
      await capable(ctx, 'idempotentSubmit', { settleMs });
      await followBatch(ctx, await recordedBatch(ctx, id), {
        out: opts.out,
        settleMs,
        resubmitUnknown: opts.resubmitUnknown === true,
      });
    });

  batch
    .command('cancel')
    .description('cancel a batch: nothing more of it is sent, and its jobs not ended are canceled on the server')
    .argument('<batch-id>')
    .action(async (id: string) => {
      const { lease } = await capable(ctx, 'idempotentSubmit');
      const b = await recordedBatch(ctx, id);
      const store = ctx.store();
      const result: BatchCancel = await cancelBatch(lease.backend, b.batchId, {
        store,
        batches: new BatchStore(store.dir),
        nowMs: ctx.io.clock?.now() ?? Date.now(),
        signal: ctx.io.signal,
      });
      output.message(`batch ${b.batchId} canceled: nothing more of it is sent`);
      const canceled: Array<{ index: number; label: string; jobId: string; status: string }> = [];
      const failed: Array<{ index: number; label: string; jobId: string; error: string }> = [];
      for (const j of result.jobs) {
        const { index } = j.variation.variation;
        const { label } = j.variation;
        if (j.status !== undefined) {
          canceled.push({ index, label, jobId: j.jobId, status: j.status });
          if (!output.json) output.result(`${label} ${shown(j.status)} ${shown(j.jobId)}`);
        } else {
          failed.push({ index, label, jobId: j.jobId, error: describe(j.error) });
          output.warn(`could not cancel job ${shown(j.jobId)} of ${label}: ${describe(j.error)}`);
        }
      }
      if (result.unsettled.length)
        output.warn(
          `${result.unsettled.length} variations were being submitted, their jobs not known here: run batch cancel ${b.batchId} again once a resume has found them`,
        );
      if (output.json) output.document({ batchId: b.batchId, canceled, failed });
      else if (canceled.length === 0) output.message('no job of it was running');
      if (failed.length) ctx.setExitCode(1);
    });

  return batch;
}
