/**
 * `comfy-cloud status <job-id>`: prints a job's current state as one summary line (with `--json`, the job). Retried
 * reads are said on stderr.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { printJob } from '../jobSummary';
import { v1Status } from '../v1Commands';

/** Registers `status` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('status')
    .description('print a job\'s current state (with --api v1: a prompt\'s status)')
    .argument('<job-id>')
    .action(async (id: string) => {
      if (ctx.api() === 'v1') return v1Status(ctx, id);
      await ctx.withClient(async (c) => {
        const { job } = await c.getJob(id, { signal: io.signal, onRetry: ctx.retryLine });
        printJob(output, job);
      });
    });
}
