/**
 * Following a job to its end, shared by `submit --wait` and `watch`: the watch with its progress view, the outcome
 * line, the outputs downloaded with `--out`, the exit code (1 unless the job succeeded), and the truthful line when
 * Ctrl-C interrupts it.
 */
import { AssetRecords, isTerminalStatus, savedOutputRecord, type V2Client, type DurableSubmission, type JobSnapshot } from '../core';
import { jobOf, outputOf, updateOf } from '../core/v2/mapping';
import type { CliContext } from './context';
import { seconds } from './options';
import { Exit, describe, shown } from './output';

/** What a watch knows of its job, for telling the truth when interrupted; filled in as the watch goes. */
export interface Followed {
  jobId?: string;
  status?: string;
  /** True while the outputs are being downloaded. */
  downloading?: boolean;
}

/** Options of a follow: `out` the folder for the outputs; `outageBudget` in seconds, as typed (default 600). */
export interface FollowOptions {
  out?: string;
  outageBudget?: string;
}

/**
 * Watches a job (from its snapshot, or its id), prints its outcome, downloads its outputs into `opts.out` when it
 * succeeded and remembers each saved output in the state dir's asset records (state/assetRecords.ts
 * `savedOutputRecord`, shared with the extension's Assets view); sets exit code 1 unless it succeeded. With
 * `submission`, the remembered record is kept current and its Idempotency-Key said. stdout: with `--json` the final job
 * as one document, else each path written.
 * @throws UsageError for a bad `--outage-budget`; AbortError on Ctrl-C; the watch's and download's errors.
 */
export async function follow(ctx: CliContext, c: V2Client, start: JobSnapshot | string, opts: FollowOptions, seen: Followed, submission?: DurableSubmission): Promise<void> {
  const { output, io } = ctx;
  const view = ctx.progressView();
  let final: JobSnapshot;
  try {
    final = await c.watch(start, {
      signal: io.signal,
      outageBudgetMs: seconds('--outage-budget', opts.outageBudget ?? '600') * 1000,
      onUpdate: (u) => {
        if (u.type === 'status') seen.status = u.status;
        view.update(updateOf(u, typeof start === 'string' ? undefined : start.source));
      },
    });
  } finally {
    view.stop();
  }
  const job = final.job;
  seen.status = job.status;
  // Keep the remembered record current (the job list shows it without asking the server).
  const remembered = submission?.idempotencyKey ?? (await ctx.store().list()).find((r) => r.jobId === job.id)?.idempotencyKey;
  if (remembered) await ctx.store().update(remembered, { lastStatus: job.status, expiresAt: job.expires_at ?? undefined }).catch(() => undefined);
  const files: string[] = [];
  if (job.status === 'succeeded' && opts.out) {
    seen.downloading = true;
    const saved = await c.downloadOutputs(final, opts.out, { signal: io.signal });
    for (const f of saved) {
      files.push(f.path);
      output.message(`saved ${f.path} (${f.bytes} bytes)`);
    }
    seen.downloading = false;
    // Remembered in the state dir's asset records, as VS Code remembers the outputs it saves: they show in its Assets
    // view. A record that cannot be written is said; the files stand.
    const records = new AssetRecords(ctx.store().dir);
    const model = jobOf(job, final.source);
    for (const f of saved) {
      await records
        .put(savedOutputRecord(c.http.baseUrl, model, { output: outputOf(f.output, final.source), path: f.path }, 'cli'))
        .catch((err: unknown) => output.message(`could not remember output ${shown(f.output.id)} in the state dir: ${shown((err as Error).message)}`));
    }
  }
  const failure = job.error?.message ? `: ${shown(job.error.message)}${job.error.node_id ? ` (node ${shown(job.error.node_id)}${job.error.class_type ? `, ${shown(job.error.class_type)}` : ''})` : ''}` : '';
  // A job that did not succeed is said even with --quiet: it is why the exit code is 1.
  (job.status === 'succeeded' ? output.message : output.warn).call(output, `job ${shown(job.id)} ${shown(job.status)}${failure}`);
  if (submission) output.message(`Idempotency-Key ${submission.idempotencyKey}`);
  if (output.json) output.document(job);
  else for (const f of files) output.result(f);
  if (job.status !== 'succeeded') ctx.setExitCode(Exit.failed);
}

/**
 * The truthful line for a Ctrl-C during a watch: a finished job is not "still running" (and outputs cut short are
 * said, with how to fetch them again); a running job keeps running unless `cancel`, in which case it is canceled
 * and its new status said. Nothing is said when the job id is not known yet. Never throws (a failed cancel is said).
 */
export function interrupted(ctx: CliContext, seen: Followed, c: V2Client, cancel: boolean): Promise<void> | void {
  const { output } = ctx;
  const id = seen.jobId ? shown(seen.jobId) : undefined;
  if (!id) return;
  if (seen.status && isTerminalStatus(seen.status)) {
    output.warn(`interrupted: job ${id} had already ${shown(seen.status)}${seen.downloading ? `; its outputs were not all downloaded (again with: comfy-cloud watch ${id} --out DIR)` : ''}`);
    return;
  }
  if (!cancel) {
    output.warn(`interrupted: job ${id} keeps running on the server (watch it with: comfy-cloud watch ${id})`);
    return;
  }
  output.warn(`interrupted: canceling job ${id}…`);
  return c
    .cancelJob(seen.jobId!)
    .then((canceled) => output.warn(`job ${id} is ${shown(canceled.job.status)}`))
    .catch((ce: unknown) => void output.warn(`cancel failed: ${describe(ce)}`));
}
