/**
 * `comfy-cloud watch <job-id>`: watches a job to its end, with progress on stderr; with `--out`, downloads its
 * outputs when it succeeded (printing each path). Exit code 1 unless it succeeded.
 *
 * Rules: `--outage-budget` (seconds the server may stay unreachable) is checked before any request; Ctrl-C never
 * cancels the job, and says whether it is still running or had already ended (follow.ts).
 */
import type { Command } from 'commander';
import { AbortError } from '../../core';
import type { CliContext } from '../context';
import { follow, interrupted, type Followed } from '../follow';
import { seconds } from '../options';

/** Registers `watch` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  return program
    .command('watch')
    .description('watch a job to its end (exit 1 unless it succeeded)')
    .argument('<job-id>')
    .option('--out <dir>', 'download every output into this folder when it succeeded')
    .option('--outage-budget <seconds>', 'how long the server may stay unreachable before giving up', '600')
    .action(async (id: string, opts: { out?: string; outageBudget: string }) => {
      const jobs = await ctx.jobs({ outageBudgetMs: seconds('--outage-budget', opts.outageBudget) * 1000 });
      const seen: Followed = { jobId: id };
      try {
        await follow(ctx, jobs, id, opts, seen);
      } catch (e) {
        if (AbortError.is(e)) await interrupted(ctx, seen, jobs, false);
        throw e;
      }
    });
}
