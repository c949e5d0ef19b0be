/**
 * `comfy-cloud --api v1 object-info [--class C]`: the server's node definitions (Cloud API v1 (deprecated), Endpoints,
 * `GET /api/object_info`),
 * one line per class (`class_type  display name  category`), or with `--json` the map. The v2 API has no such
 * endpoint: without `--api v1` the command is bad usage (exit 2) and says so.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { UsageError } from '../output';
import { v1ObjectInfo } from '../v1Commands';

/** Registers `object-info` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  return program
    .command('object-info')
    .description('(--api v1 only) list the node classes of the server: class_type, display name, category')
    .option('--class <class_type>', 'only this node class (exit 1 when the server has none)')
    .action(async (opts: { class?: string }) => {
      if (ctx.api() !== 'v1') throw new UsageError('object-info exists only on the v1 API: run it with --api v1 (or COMFY_API=v1)');
      await v1ObjectInfo(ctx, opts);
    });
}
