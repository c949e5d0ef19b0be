/**
 * `comfy-cloud cancel <job-id>`: requests cancellation of a job through the run's backend (CliContext `jobs`) and
 * prints its state after the request, as one summary line (with `--json`, the job). Where the API cancels only a job
 * not yet started (`capabilities.cancelRunning` false), a job still running is said on stderr in the core's words
 * (core/jobs/refusals.ts), exit 1.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { refusalText } from '../../core';
import { printJob } from '../jobSummary';
import { Exit, shown } from '../output';

/** Registers `cancel` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('cancel')
    .description('request cancellation of a job')
    .argument('<job-id>')
    .action(async (id: string) => {
      const { lease } = await ctx.jobs();
      const { backend } = lease;
      const answer = await backend.cancel(id, io.signal);
      printJob(output, answer);
      // An API that cancels only a job not yet started (capabilities.cancelRunning) leaves a running one running.
      if (answer.job.status === 'running' && !backend.capabilities.cancelRunning) {
        output.warn(
          `job ${shown(id)} could not be canceled: it is running, and ${refusalText('cancelRunning', backend.api)}`,
        );
        ctx.setExitCode(Exit.failed);
      }
    });
}
