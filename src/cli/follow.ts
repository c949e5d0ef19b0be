/**
 * Following a job to its end, shared by `submit --wait` and `watch`: the watch with its progress view, the outcome
 * line, the outputs downloaded with `--out`, the exit code (1 unless the job succeeded), and the truthful line when
 * Ctrl-C interrupts it.
 */
import { AssetRecords, savedOutputRecord } from '../core/state';
import { isTerminalStatus, type AcceptedJob, type JobAnswer } from '../core';
import type { CliContext, CliJobs } from './context';
import { Exit, describe, shown } from './output';

/** What a watch knows of its job, for telling the truth when interrupted; filled in as the watch goes. */
export interface Followed {
  jobId?: string;
  status?: string;
  /** True while the outputs are being downloaded. */
  downloading?: boolean;
}

/** Options of a follow: `out` the folder for the outputs. */
export interface FollowOptions {
  out?: string;
}

/**
 * Follows a job (one its backend just accepted, or its id) through the run's job service (CliContext `jobs`: the
 * service's one watch of the job, with the outage budget the backend was built with), prints its outcome, downloads its outputs into `opts.out` when it
 * succeeded and remembers each saved output in the state dir's asset records (state/assetRecords.ts
 * `savedOutputRecord`, shared with the extension's Assets view); sets exit code 1 unless it succeeded. With
 * `submission`, the remembered record is kept current and its Idempotency-Key said. stdout: with `--json` the final job
 * as one document (the server's own, `JobAnswer.wire`, where its API has one), else each path written.
 * @throws AbortError on Ctrl-C; the watch's and download's errors.
 */
export async function follow(
  ctx: CliContext,
  jobs: CliJobs,
  start: AcceptedJob | string,
  opts: FollowOptions,
  seen: Followed,
  submission?: { idempotencyKey: string },
): Promise<void> {
  const { output, io } = ctx;
  const { backend } = jobs.lease;
  const view = ctx.progressView();
  let final: JobAnswer;
  try {
    final = await backend.watch(start, {
      signal: io.signal,
      onUpdate: (u) => {
        if (u.type === 'status') seen.status = u.status;
        view.update(u);
      },
    });
  } finally {
    view.stop();
  }
  const job = final.job;
  seen.status = job.status;
  // Keep the remembered record current (the job list shows it without asking the server).
  const remembered =
    submission?.idempotencyKey ?? (await ctx.store().list()).find((r) => r.jobId === job.id)?.idempotencyKey;
  if (remembered)
    await ctx
      .store()
      .recordStatus(remembered, job)
      .catch(() => undefined);
  const files: string[] = [];
  if (job.status === 'succeeded' && opts.out) {
    seen.downloading = true;
    const saved = await backend.downloadOutputs(job, opts.out, { signal: io.signal });
    for (const f of saved) {
      files.push(f.path);
      output.message(`saved ${f.path} (${f.bytes} bytes)`);
    }
    seen.downloading = false;
    // Remembered in the state dir's asset records, as VS Code remembers the outputs it saves: they show in its Assets
    // view. A record that cannot be written is said; the files stand.
    const records = new AssetRecords(ctx.store().dir);
    for (const f of saved) {
      await records
        .put(savedOutputRecord(backend.baseUrl, job, { output: f.output, path: f.path }, 'cli'))
        .catch((err: unknown) =>
          output.message(
            `could not remember output ${shown(f.output.id)} in the state dir: ${shown((err as Error).message)}`,
          ),
        );
    }
  }
  const failure = job.error?.message
    ? `: ${shown(job.error.message)}${job.error.nodeId ? ` (node ${shown(job.error.nodeId)}${job.error.classType ? `, ${shown(job.error.classType)}` : ''})` : ''}`
    : '';
  // A job that did not succeed is said even with --quiet: it is why the exit code is 1.
  (job.status === 'succeeded' ? output.message : output.warn).call(
    output,
    `job ${shown(job.id)} ${shown(job.status)}${failure}`,
  );
  if (submission) output.message(recordLine(backend.capabilities.idempotentSubmit, submission.idempotencyKey));
  if (output.json) output.document(final.wire ?? job);
  else for (const f of files) output.result(f);
  if (job.status !== 'succeeded') ctx.setExitCode(Exit.failed);
}

/**
 * The truthful line for a Ctrl-C during a watch: a finished job is not "still running" (and outputs cut short are
 * said, with how to fetch them again); a running job keeps running unless `cancel`, in which case it is canceled
 * and its new status said. Nothing is said when the job id is not known yet. Never throws (a failed cancel is said).
 */
export function interrupted(ctx: CliContext, seen: Followed, jobs: CliJobs, cancel: boolean): Promise<void> | void {
  const { output } = ctx;
  const id = seen.jobId ? shown(seen.jobId) : undefined;
  if (!id) return;
  if (seen.status && isTerminalStatus(seen.status)) {
    output.warn(
      `interrupted: job ${id} had already ${shown(seen.status)}${seen.downloading ? `; its outputs were not all downloaded (again with: comfy-cloud watch ${id} --out DIR)` : ''}`,
    );
    return;
  }
  if (!cancel) {
    output.warn(`interrupted: job ${id} keeps running on the server (watch it with: comfy-cloud watch ${id})`);
    return;
  }
  output.warn(`interrupted: canceling job ${id}…`);
  return jobs.lease.backend
    .cancel(seen.jobId!)
    .then((canceled) => output.warn(`job ${id} is ${shown(canceled.job.status)}`))
    .catch((ce: unknown) => void output.warn(`cancel failed: ${describe(ce)}`));
}

/**
 * The stderr line naming a submission's record: its Idempotency-Key where the API has them (the backend's
 * `capabilities.idempotentSubmit`), else the local key that names it in the state store (never sent).
 */
export function recordLine(idempotentSubmit: boolean, recordKey: string): string {
  return idempotentSubmit
    ? `Idempotency-Key ${recordKey}`
    : `remembered as ${recordKey} (this API has no Idempotency-Key)`;
}
