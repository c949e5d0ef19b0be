/**
 * `comfy-cloud forget <job-id|idempotency-key>`: removes a remembered submission from this machine's list (the state
 * store shared with VS Code); the job itself is not touched. Prints the removed record's Idempotency-Key (with
 * `--json`, the record). Needs no server. An id that matches no record is bad usage (exit 2), naming how to list them.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { UsageError, shown } from '../output';

/** Registers `forget` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { output } = ctx;
  return program
    .command('forget')
    .description(
      "remove a remembered submission (by job id or Idempotency-Key) from this machine's list; the job itself is not touched",
    )
    .argument('<job-id|idempotency-key>')
    .action(async (id: string) => {
      const removed = await ctx.store().forget(id);
      if (!removed)
        throw new UsageError(
          `no remembered submission has the job id or Idempotency-Key ${id} (list them with: comfy-cloud jobs)`,
        );
      output.message(
        `forgot the submission of ${removed.submittedAt}${removed.jobId ? ` (job ${shown(removed.jobId)})` : ''}, Idempotency-Key ${removed.idempotencyKey}`,
      );
      if (output.json) output.document(removed);
      else output.result(removed.idempotencyKey);
    });
}
