/**
 * `comfy-cloud upload <file>`: uploads a file as an asset; prints the asset id (with `--json`, the asset record).
 *
 * Rules: identical bytes are never uploaded twice (the client hashes the file and asks the server first; a known
 * hash sends no bytes, and says so on stderr); `--file-path` names the asset (default: the file's name); `--tag`
 * is repeatable.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { collect } from '../options';

interface UploadOptions {
  filePath?: string;
  tag: string[];
}

/** Registers `upload` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('upload')
    .description('upload a file as an asset (identical bytes are never uploaded twice); prints the asset id')
    .argument('<file>')
    .option('--file-path <name>', 'name kept with the asset (default: the file\'s name)')
    .option('--tag <tag>', 'tag (repeatable)', collect, [] as string[])
    .action(async (file: string, opts: UploadOptions) => {
      await ctx.withClient(async (c) => {
        const up = await c.uploadFile(file, { filePath: opts.filePath, tags: opts.tag }, { signal: io.signal });
        output.message(up.dedup ? `already there (${up.hash}): no bytes sent` : `uploaded ${up.hash}`);
        if (output.json) output.document(up.asset);
        else output.result(up.asset.id);
      });
    });
}
