/** The one-line summary of a job printed by `status` and `cancel`. */
import { shown, type Output } from './output';

/** The parts of a job that {@link summarize} reads (a v2 job snapshot has them all). */
export interface SummarizedJob {
  id: string;
  status: string;
  queue_position?: number | null;
  progress?: { value?: number | null; nodes_done?: number | null; nodes_total?: number | null } | null;
  outputs: unknown[];
  error?: { message?: string | null } | null;
}

/** `ID STATUS · queue position N · node D/T · K output(s) · error: …`; server-chosen parts shown escaped. */
export function summarize(job: SummarizedJob): string {
  const parts = [`${shown(job.id)} ${shown(job.status)}`];
  if (job.queue_position != null) parts.push(`queue position ${job.queue_position}`);
  if (job.progress?.nodes_total) parts.push(`node ${job.progress.nodes_done ?? 0}/${job.progress.nodes_total}`);
  if (job.outputs.length) parts.push(`${job.outputs.length} output(s)`);
  if (job.error?.message) parts.push(`error: ${shown(job.error.message)}`);
  return parts.join(' · ');
}

/** A job as `status` and `cancel` print it: the API's object with `--json`, else its summary line. */
export function printJob(output: Output, job: SummarizedJob): void {
  if (output.json) output.document(job);
  else output.result(summarize(job));
}
