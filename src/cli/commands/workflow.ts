/**
 * `comfy-cloud workflow <job-id>`: prints the workflow behind a job as JSON on stdout, and its format on stderr;
 * with `--json`, the whole answer (format and workflow) as one document.
 *
 * Rule (Job and Asset API v2, GET /api/v2/jobs/{id}/workflow, rule 1): always branch on `format`: `api` is the executed
 * graph, `save` the editor's saved workflow; another value is shown as it is (escaped). Read through the run's backend;
 * where its API keeps no workflow of a job (`capabilities.storedWorkflow`), refused in the core's words (exit 2).
 */
import type { Command } from 'commander';
import { capable } from '../capabilities';
import type { CliContext } from '../context';
import { shown } from '../output';

/** Registers `workflow` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('workflow')
    .description('print the workflow behind a job (its format on stderr)')
    .argument('<job-id>')
    .action(async (id: string) => {
      const { lease } = await capable(ctx, 'storedWorkflow');
      const res = await lease.backend.workflow(id, io.signal);
      const { requestId: _requestId, ...body } = res;
      if (output.json) output.document(body);
      else {
        // Always branch on format: `api` is the executed graph, `save` the editor's saved workflow.
        output.message(
          res.format === 'api'
            ? 'format: api (the executed API-format graph)'
            : res.format === 'save'
              ? 'format: save (the workflow as saved in the editor)'
              : `format: ${shown(res.format)}`,
        );
        output.document(res.workflow);
      }
    });
}
