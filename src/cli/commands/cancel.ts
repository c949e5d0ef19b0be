/**
 * `comfy-cloud cancel <job-id>`: requests cancellation of a job and prints its state after the request, as one
 * summary line (with `--json`, the job). Retried requests are said on stderr.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { printJob } from '../jobSummary';

/** Registers `cancel` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('cancel')
    .description('request cancellation of a job')
    .argument('<job-id>')
    .action(async (id: string) => {
      await ctx.withClient(async (c) => {
        const { job } = await c.cancelJob(id, { signal: io.signal, onRetry: ctx.retryLine });
        printJob(output, job);
      });
    });
}
