/**
 * `comfy-cloud status <job-id>`: prints a job's current state, read through the run's backend (CliContext `jobs`), as
 * one summary line (with `--json`, the job).
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
      const { lease } = await ctx.jobs();
      printJob(output, await lease.backend.get(id, io.signal));
    });
}
