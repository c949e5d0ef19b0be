/**
 * `comfy-cloud convert <workflow.json|image.png> [--object-info FILE] [--out FILE]`: converts a UI-format workflow
 * (the editor's save file, or the `workflow` chunk of a PNG ComfyUI saved) into the API format the job service runs,
 * and prints it (stdout), or writes it to `--out` (its path on stdout).
 *
 * Rules:
 * - the refusal of a workflow that cannot be converted exactly: exit 2, a first line saying so, then one line per node
 *   that cannot be converted (id, class, title, why, what to do) on stderr; nothing on stdout, nothing written;
 * - an API-format file is printed as it is (stderr says so), and an image without a `workflow` chunk gives its
 *   `prompt` chunk (already API format): no conversion, no node definitions needed;
 * - a bad input (not JSON, a malformed UI file, not a workflow, a PNG that is not one or carries no workflow, truncated,
 *   a text chunk past its bound): exit 2, before any request;
 * - `--out` is written atomically (a temporary file renamed over it): never a partial file; never the input file;
 * - node definitions: workflowInput.ts (`--object-info`, `--node-definitions-url`, the connection's, cached).
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import { InputError } from '../../core';
import { readWorkflowInput } from '../../core/convert/input';
import { writeFileAtomically } from '../../core/router';
import { assertApiWorkflow, isPlainObject } from '../../core/util/workflow';
import type { CliContext } from '../context';
import { UsageError } from '../output';
import { convertWithDefinitions, type DefinitionsOptions } from '../workflowInput';

interface ConvertOptions extends DefinitionsOptions {
  out?: string;
}

/** Registers `convert` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('convert')
    .description(
      'convert a UI-format workflow (or the workflow a ComfyUI PNG carries) to API format; prints it (refusals: one line per node, exit 2)',
    )
    .argument(
      '<workflow.json|image.png>',
      'a workflow JSON file (UI format; API format is printed as it is) or a PNG saved by ComfyUI',
    )
    .option(
      '--object-info <file>',
      "node definitions from this file (a saved GET /object_info answer) instead of the server's",
    )
    .option(
      '--node-definitions-url <url>',
      "node definitions from the ComfyUI engine at this URL (GET /object_info) instead of the server's",
    )
    .option('--refresh-definitions', 'fetch the node definitions again instead of using the cached ones')
    .option(
      '--out <file>',
      'write the API-format workflow to this file (written whole or not at all; its path on stdout)',
    )
    .action(async (file: string, opts: ConvertOptions) => {
      if (opts.out && path.resolve(opts.out) === path.resolve(file))
        throw new UsageError('--out names the input file: give another file (the UI-format workflow is kept)');
      const name = path.basename(file);
      const input = await readWorkflowInput(file);
      // The API-format graph, or the file's own text when it already was one (printed as it is).
      let graph: unknown;
      let asIs: string | undefined;
      if (input.kind === 'image' && input.image.workflow !== undefined) {
        output.message(`${name}: converting the image's workflow chunk (UI format)`);
        graph = await convertWithDefinitions(ctx, input.image.workflow, opts);
      } else if (input.kind === 'image') {
        assertApiWorkflow(input.image.prompt);
        output.message(
          `${name} carries no workflow chunk, only its prompt chunk: the API-format graph that made it, printed as it is`,
        );
        graph = input.image.prompt;
      } else if (input.format === 'api') {
        output.message(`${name} is already in API format: printed as it is`);
        asIs = input.text.endsWith('\n') ? input.text : `${input.text}\n`;
      } else if (input.format === 'ui' || (isPlainObject(input.workflow) && 'nodes' in input.workflow)) {
        graph = await convertWithDefinitions(ctx, input.workflow, opts);
      } else {
        throw new InputError(
          'not_a_workflow',
          `${name} is not a workflow: neither UI format (a top-level "nodes" array, the editor's save file) nor API format (an object of nodes, each with "class_type" and "inputs")`,
        );
      }
      if (opts.out) {
        await writeFileAtomically(opts.out, Buffer.from(asIs ?? `${JSON.stringify(graph, null, 2)}\n`, 'utf8'));
        output.result(opts.out);
      } else if (asIs !== undefined) {
        // Valid JSON has no raw control character but whitespace: the text is safe in a terminal as it is.
        io.stdout.write(asIs);
      } else {
        output.document(graph);
      }
    });
}
