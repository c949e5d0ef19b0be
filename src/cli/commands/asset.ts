/**
 * `comfy-cloud asset <asset-id>`: prints an asset's record, as the server gives it now (so its url is a fresh one),
 * as one JSON document on stdout, with or without `--json`.
 */
import type { Command } from 'commander';
import { withAssets } from '../capabilities';
import type { CliContext } from '../context';

/** Registers `asset` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('asset')
    .description("print an asset's record (with a fresh url) as JSON")
    .argument('<asset-id>')
    .action(async (id: string) => {
      await withAssets(ctx, async (c) => {
        output.document((await c.assets.get(id, io.signal)).asset);
      });
    });
}
