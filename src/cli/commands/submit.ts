/**
 * `comfy-cloud submit <workflow.json|image.png>`: submits an API-format workflow file, or the graph a ComfyUI PNG
 * carries; prints the job id (then, with `--wait --out`, each file written).
 *
 * Rules:
 * - the file is read and checked (UTF-8, JSON, API format; or a PNG's text chunks) before any request; a bad file
 *   exits 2;
 * - the job service runs API format only (Job and Asset API v2, POST /api/v2/jobs, rule 2): a UI-format workflow is
 *   refused (exit 2, nothing sent, `--convert` named as the fix) unless `--convert` is given: then it is converted
 *   first (node definitions as `convert` gets them) and stderr says so; a PNG sends its `prompt` chunk, the exact graph
 *   that made it; one with only a `workflow` chunk needs `--convert` (workflowInput.ts). The job's remembered workflow
 *   file is the file given;
 * - `--out` and `--cancel-on-interrupt` need `--wait`, and `--outage-budget` is checked, before any request (exit 2);
 * - `--input NODE.FIELD=@file` (repeatable): every node and field is checked before any upload, then each file is
 *   uploaded (deduplicated) and its core/ASSET reference put into that input;
 * - the submission is durable and settled (the backend's submit: core/jobs/unknownOutcome.ts): remembered in the
 *   state store before it is sent, retried only as the contract's idempotency rules allow; an unknown outcome is
 *   resolved before the command goes on, with or without `--wait`, where the server lists its jobs: the job found
 *   ("found job"), or, when two readings of the listing a settle window apart (`--settle`, default 3 s) show none,
 *   the key retired and the workflow sent again under a new key (said on stderr). The job id printed is the one that
 *   exists. Where the server lists no jobs, the outcome stays unknown (exit 1, nothing sent again);
 * - stdout: the job id first (not with `--json`); without `--wait`, the Idempotency-Key on stderr, or the job as one
 *   JSON document with `--json`; with `--wait`, the rest as `watch` (follow.ts);
 * - Ctrl-C during the wait says the truth about the job, and cancels it on the server only with
 *   `--cancel-on-interrupt` (follow.ts `interrupted`);
 * - `--set NODE.FIELD=SPEC` (repeatable) makes a batch (core/batch/variations.ts: a grid of the values, or `--zip`):
 *   the workflow, every `--set` and `--concurrency` (1..64, default 4) are checked before anything is recorded or
 *   sent (exit 2); `--idempotency-key`, `--input` and `--cancel-on-interrupt` are refused with it (each variation has
 *   a key of its own; a file goes in as `--set NODE.FIELD=@folder/`; a batch is canceled with `batch cancel`), and so
 *   is an API without Idempotency-Keys (capability `idempotentSubmit`); then the batch is recorded, its id printed first, and followed to its end without
 *   `--wait` (batchRun.ts);
 * - what the connection's API cannot do is refused by its backend's capabilities before any request (exit 2, the
 *   core's words): `--idempotency-key` without Idempotency-Keys, `--input` without assets, `--partner-key` where no
 *   partner key is taken; the partner key (`--partner-key`, else $COMFY_PARTNER_KEY) is never printed.
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { AbortError, DEFAULT_SETTLE_MS, refusalText, settleLateJobs, systemClock, type SettleEvent } from '../../core';
import { assetReference } from '../../core/util';
import { setNodeInput } from '../../core/backends';
import type { JobBackend } from '../../core/jobs/backend';
import type { CliContext, CliJobs } from '../context';
import { follow, interrupted, recordLine, type Followed } from '../follow';
import {
  MAX_CONCURRENCY,
  SETTLE_HELP,
  collect,
  concurrencyOption,
  parseInputOption,
  seconds,
  settleOption,
} from '../options';
import { UsageError, describe, shown } from '../output';
import { workflowToSubmit, type DefinitionsOptions } from '../workflowInput';
import { DEFAULT_CONCURRENCY, variationsFromSetOptions } from '../../core/batch';
import { startBatch } from '../batchRun';
import { capable } from '../capabilities';

interface SubmitOptions extends DefinitionsOptions {
  convert?: boolean;
  wait?: boolean;
  out?: string;
  idempotencyKey?: string;
  cancelOnInterrupt?: boolean;
  outageBudget: string;
  input: string[];
  partnerKey?: string;
  set: string[];
  zip?: boolean;
  concurrency?: string;
  settle?: string;
}

/** Registers `submit` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('submit')
    .description(
      'submit an API-format workflow JSON file, or the graph a ComfyUI PNG carries; prints the job id (then, with --wait --out, the files written)',
    )
    .argument(
      '<workflow.json|image.png>',
      'workflow file in API format (UTF-8; UI format with --convert), or a PNG saved by ComfyUI (its prompt chunk is sent)',
    )
    .option('--wait', 'watch the job to its end (exit 1 unless it succeeded)')
    .option('--out <dir>', 'with --wait: download every output into this folder (never overwrites)')
    .option('--idempotency-key <key>', 'the Idempotency-Key to present (default: a new UUID)')
    .option('--cancel-on-interrupt', 'with --wait: Ctrl-C also cancels the job on the server')
    .option(
      '--outage-budget <seconds>',
      'with --wait: how long the server may stay unreachable before giving up',
      '600',
    )
    .option(
      '--input <NODE.FIELD=@file>',
      'upload a file (deduplicated) and put its core/ASSET reference into that node input (repeatable)',
      collect,
      [] as string[],
    )
    .option(
      '--partner-key <key>',
      'partner-service key, where the API takes one (v1), sent as extra_data.api_key_svc_org (env COMFY_PARTNER_KEY)',
    )
    .option(
      '--set <NODE.FIELD=SPEC>',
      'run a batch: one job per value (SPEC: 1..8, 1..20:5, @lines.txt, @folder/, or one value); several --set make a grid (repeatable)',
      collect,
      [] as string[],
    )
    .option('--zip', 'with --set: the i-th values of every --set together, instead of a grid')
    .option(
      '--concurrency <n>',
      `with --set: jobs in flight at once, 1 to ${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})`,
    )
    .option('--settle <seconds>', SETTLE_HELP)
    .option(
      '--convert',
      "convert a UI-format workflow (or a PNG's workflow chunk) to API format first, with the server's node definitions (without it, UI format is refused)",
    )
    .option(
      '--object-info <file>',
      "with --convert: node definitions from this file (a saved GET /object_info answer) instead of the server's",
    )
    .option(
      '--node-definitions-url <url>',
      "with --convert: node definitions from the ComfyUI engine at this URL instead of the server's",
    )
    .option(
      '--refresh-definitions',
      'with --convert: fetch the node definitions again instead of using the cached ones',
    )
    .action(async (file: string, opts: SubmitOptions) => {
      if ((opts.objectInfo || opts.nodeDefinitionsUrl || opts.refreshDefinitions) && !opts.convert)
        throw new UsageError(
          "--object-info, --node-definitions-url and --refresh-definitions need --convert (they say where the conversion's node definitions come from)",
        );
      if (opts.set.length) return submitBatch(ctx, file, opts);
      if (opts.zip || opts.concurrency !== undefined)
        throw new UsageError('--zip and --concurrency go with --set (they say how a batch runs)');
      if (opts.out && !opts.wait) throw new UsageError('--out needs --wait (outputs exist once the job has succeeded)');
      if (opts.cancelOnInterrupt && !opts.wait)
        throw new UsageError(
          '--cancel-on-interrupt needs --wait (without it the command ends once the job is submitted)',
        );
      const outageBudgetMs = seconds('--outage-budget', opts.outageBudget) * 1000;
      const settleMs = settleOption(opts.settle);
      const input = await workflowToSubmit(ctx, file, opts);
      let workflow = input.workflow;
      const inputs = opts.input.map(parseInputOption);
      for (const i of inputs) setNodeInput(workflow, i.nodeId, i.field, null); // checks node and field before any upload
      const jobs = await ctx.jobs({ settleMs, outageBudgetMs, partnerKey: partnerKeyOf(ctx, opts) });
      const { backend } = jobs.lease;
      // What this API cannot do, refused by capability before any request.
      if (opts.idempotencyKey && !backend.capabilities.idempotentSubmit)
        throw new UsageError(
          `--idempotency-key: ${refusalText('idempotentSubmit', backend.api)} (drop --api ${backend.api})`,
        );
      if (inputs.length && !backend.capabilities.assets)
        throw new UsageError(`--input: ${refusalText('assets', backend.api)} (drop --api ${backend.api})`);
      refusePartnerKey(jobs.lease.connection.backend, opts);
      const seen: Followed = {};
      try {
        for (const i of inputs) {
          // capabilities.assets (checked above): the connection holds its asset client.
          const assets = jobs.lease.connection.assets!;
          const up = await assets.uploadFile(i.file, {}, { signal: io.signal });
          output.message(`${up.dedup ? 'already uploaded' : 'uploaded'} ${i.file} as asset ${shown(up.asset.id)}`);
          workflow = setNodeInput(
            workflow,
            i.nodeId,
            i.field,
            assetReference({ ...up.asset, hash: up.asset.hash ?? up.hash }),
          );
        }
        const store = ctx.store();
        const accepted = await backend.submit(workflow, {
          store,
          idempotencyKey: opts.idempotencyKey,
          workflowFile: path.resolve(file),
          uiWorkflow: input.uiWorkflow,
          client: 'cli',
          signal: io.signal,
          onWait: ctx.retryLine,
          onResolution: (e) => output.message(resolutionLine(e)),
        });
        const job = accepted.job;
        seen.jobId = job.id;
        seen.status = job.status;
        output.message(`${accepted.adopted ? 'found' : 'submitted'} job ${shown(job.id)} (${shown(job.status)})`);
        if (!output.json) output.result(job.id);
        if (accepted.retiredKeys?.length) await reportLateJobs(ctx, jobs, accepted.recordKey, settleMs);
        if (!opts.wait) {
          // The job as its answer gave it (the 201, or the listing it was found in); a GET when neither is at hand.
          if (output.json) output.document(accepted.wire ?? (await backend.get(job.id, io.signal)).wire ?? job);
          else output.message(recordLine(backend.capabilities.idempotentSubmit, accepted.recordKey));
          return;
        }
        const record = await store.get(accepted.recordKey);
        await follow(ctx, jobs, accepted, opts, seen, record ? { idempotencyKey: accepted.recordKey } : undefined);
      } catch (e) {
        if (AbortError.is(e)) await interrupted(ctx, seen, jobs, Boolean(opts.cancelOnInterrupt));
        throw e;
      }
    });
}

/**
 * `submit --set`: checks everything (options, the workflow, every `--set`) before anything is recorded or sent, then
 * records the batch and follows it to its end (batchRun.ts). See the module's rules.
 * @throws UsageError / InputError for a bad input (exit 2, nothing recorded, nothing sent); as startBatch.
 */
async function submitBatch(ctx: CliContext, file: string, opts: SubmitOptions): Promise<void> {
  const { lease } = await capable(ctx, 'idempotentSubmit', { settleMs: settleOption(opts.settle) });
  refusePartnerKey(lease.connection.backend, opts);
  if (opts.idempotencyKey)
    throw new UsageError(
      '--idempotency-key does not go with --set: each variation of a batch is sent under an Idempotency-Key of its own, recorded with the batch',
    );
  if (opts.input.length)
    throw new UsageError(
      '--input does not go with --set: in a batch, files go in as --set NODE.FIELD=@folder/ (one variation per file, each uploaded once)',
    );
  if (opts.cancelOnInterrupt)
    throw new UsageError(
      '--cancel-on-interrupt does not go with --set: a batch interrupted keeps its jobs; cancel them with: comfy-cloud batch cancel <batch-id>',
    );
  const concurrency = concurrencyOption(opts.concurrency);
  seconds('--outage-budget', opts.outageBudget);
  const settleMs = settleOption(opts.settle);
  const { workflow } = await workflowToSubmit(ctx, file, opts);
  const variations = await variationsFromSetOptions(workflow, opts.set, opts.zip ? 'zip' : 'grid', process.cwd());
  await startBatch(ctx, workflow, variations, { out: opts.out, concurrency, workflowFile: file, settleMs });
}

/** One line on stderr for a step of an unknown outcome's resolution (core/jobs/unknownOutcome.ts). */
function resolutionLine(e: SettleEvent): string {
  if (e.type === 'unknown')
    return `the answer to the submission under Idempotency-Key ${e.key} was lost${e.error !== undefined ? ` (${describe(e.error)})` : ''}; looking for its job in the server's job listing`;
  if (e.type === 'adopted')
    return `found job ${shown(e.jobId)} in the job listing: the submission under Idempotency-Key ${e.key} created it`;
  return `no job was made under Idempotency-Key ${e.key} (two readings of the job listing found none); submitting again under Idempotency-Key ${e.successorKey}`;
}

/**
 * After a submission that went on under a new key: one more reading of the listing, a settle window later, for a job
 * that turned up late for a retired key (core/jobs/lateJobs.ts `settleLateJobs`): canceled when still queued,
 * said either way. A reading that fails decides nothing (said).
 */
async function reportLateJobs(
  ctx: CliContext,
  jobs: CliJobs,
  key: string,
  settleMs: number | undefined,
): Promise<void> {
  const { output, io } = ctx;
  const { backend } = jobs.lease;
  const clock = systemClock;
  const origin = (await ctx.store().get(key))?.originKey ?? key;
  try {
    await clock.sleep(settleMs ?? DEFAULT_SETTLE_MS, io.signal);
    for (const late of await settleLateJobs(backend, ctx.store(), [origin], { clock, signal: io.signal })) {
      if (late.kind === 'adopted') continue;
      output.warn(
        `a late duplicate of this submission appeared (job ${shown(late.jobId)}, Idempotency-Key ${late.retiredKey}) and ${late.canceled ? 'was canceled' : `was not canceled (${shown(late.status)})`}`,
      );
    }
  } catch (err) {
    if (AbortError.is(err)) throw err;
    output.message(`could not look for late duplicates: ${describe(err)}`);
  }
}

/** The partner-service key of the run (`--partner-key`, else $COMFY_PARTNER_KEY), held by the Redactor from now on. */
function partnerKeyOf(ctx: CliContext, opts: SubmitOptions): string | undefined {
  const key = opts.partnerKey || ctx.io.env.COMFY_PARTNER_KEY || undefined;
  if (key) ctx.redactor.add(key);
  return key;
}

/**
 * `--partner-key` where the connection's API takes none (its backend's `acceptsPartnerKey`: the connection's own backend,
 * as a lease's does not carry the contract's optional members): bad usage, before any request.
 */
function refusePartnerKey(backend: JobBackend, opts: SubmitOptions): void {
  if (opts.partnerKey && !backend.acceptsPartnerKey)
    throw new UsageError(
      `--partner-key: the ${backend.api} API of this connection takes no partner-service key (drop --partner-key)`,
    );
}
