/**
 * `comfy-cloud object-info [--class C]`: the server's node definitions (its `object_info`, read through the run's
 * backend: JobBackend `nodeDefinitions`), one line per class (`class_type  display name  category`), or with `--json`
 * the map (filtered to C with `--class`). An unknown `--class`: nothing printed and exit 1. Where the connection's API
 * serves no node definitions (its backend has no `nodeDefinitions`), bad usage (exit 2, nothing sent) that says so.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { UsageError, shown } from '../output';

/** Registers `object-info` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('object-info')
    .description(
      'list the node classes of the server: class_type, display name, category (where its API serves them: v1)',
    )
    .option('--class <class_type>', 'only this node class (exit 1 when the server has none)')
    .action(async (opts: { class?: string }) => {
      // The connection's own backend: a lease's carries the contract's required members only.
      const { backend } = (await ctx.jobs()).lease.connection;
      if (!backend.nodeDefinitions)
        throw new UsageError(
          `object-info: the ${backend.api} API of this connection serves no node definitions (convert takes them from --object-info FILE or --node-definitions-url URL)`,
        );
      const info = await backend.nodeDefinitions(opts.class, io.signal);
      if (opts.class !== undefined && !Object.prototype.hasOwnProperty.call(info, opts.class)) {
        output.warn(`no node class ${shown(opts.class)} on this server`);
        ctx.setExitCode(1);
      }
      if (output.json) {
        output.document(info);
        return;
      }
      for (const [name, def] of Object.entries(info)) {
        output.result(`${shown(name)}  ${shown(def.display_name ?? def.name ?? name)}  ${shown(def.category ?? '')}`);
      }
    });
}
