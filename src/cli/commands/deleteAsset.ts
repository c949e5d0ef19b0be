/**
 * `comfy-cloud delete-asset <asset-id>`: deletes an asset. Says so on stderr; with `--json`, prints
 * `{"deleted": id}` on stdout (nothing on stdout otherwise).
 */
import type { Command } from 'commander';
import { withAssets } from '../capabilities';
import type { CliContext } from '../context';
import { shown } from '../output';

/** Registers `delete-asset` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('delete-asset')
    .description('delete an asset')
    .argument('<asset-id>')
    .action(async (id: string) => {
      await withAssets(ctx, async (c) => {
        await c.assets.delete(id, io.signal);
        output.message(`deleted asset ${shown(id)}`);
        if (output.json) output.document({ deleted: id });
      });
    });
}
