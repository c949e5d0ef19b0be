/**
 * `comfy-cloud status <job-id>`: prints a job's current state, read through the run's backend (CliContext `jobs`), as
 * one summary line (with `--json`, the job), whatever the connection's API.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { printJob } from '../jobSummary';

/** Registers `status` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('status')
    .description("print a job's current state")
    .argument('<job-id>')
    .action(async (id: string) => {
      const { lease } = await ctx.jobs();
      printJob(output, await lease.backend.get(id, io.signal));
    });
}
