/** The one-line summary of a job printed by `status` and `cancel`. */
import type { Job, JobAnswer } from '../core';
import { shown, type Output } from './output';

/** `ID STATUS · queue position N · node D/T · K output(s) · error: …`; server-chosen parts shown escaped. */
export function summarize(job: Job): string {
  const parts = [`${shown(job.id)} ${shown(job.status)}`];
  if (job.queuePosition != null) parts.push(`queue position ${job.queuePosition}`);
  if (job.progress?.nodesTotal) parts.push(`node ${job.progress.nodesDone ?? 0}/${job.progress.nodesTotal}`);
  if (job.outputs.length) parts.push(`${job.outputs.length} output(s)`);
  if (job.error?.message) parts.push(`error: ${shown(job.error.message)}`);
  return parts.join(' · ');
}

/**
 * A job as `status` and `cancel` print it: with `--json` the server's own document of it (`JobAnswer.wire`, else the
 * client's model of it), else its summary line.
 */
export function printJob(output: Output, answer: JobAnswer): void {
  if (output.json) output.document(answer.wire ?? answer.job);
  else output.result(summarize(answer.job));
}
