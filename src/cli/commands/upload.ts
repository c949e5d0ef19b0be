/**
 * `comfy-cloud upload <file>`: uploads a file as an asset; prints the asset id (with `--json`, the asset record).
 *
 * Rules: identical bytes are never uploaded twice (the client hashes the file and asks the server first; a known
 * hash sends no bytes, and says so on stderr); `--file-path` names the asset (default: the file's name); `--tag`
 * is repeatable; the upload is remembered in the state dir's asset records (state/assetRecords.ts), shared with the
 * extension, so it shows in VS Code's Assets view; a record that cannot be written is said on stderr, the
 * upload itself stands.
 */
import type { Command } from 'commander';
import { withAssets } from '../capabilities';
import type { CliContext } from '../context';
import { collect } from '../options';
import { AssetRecords, uploadRecord } from '../../core';
import { UsageError, shown } from '../output';
import { v1Upload, type V1UploadCliOptions } from '../v1Commands';

interface UploadOptions extends V1UploadCliOptions {
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
    .option('--type <input|temp>', '(--api v1 only) where the server keeps the file (default input)')
    .option('--overwrite', '(--api v1 only) replace a file of the same name')
    .option('--mask', '(--api v1 only) upload a mask for the image named by --original-ref')
    .option('--original-ref <json>', '(--api v1 only) with --mask: the image masked, e.g. \'{"filename":"a.png","subfolder":"","type":"input"}\'')
    .action(async (file: string, opts: UploadOptions) => {
      if (ctx.api() === 'v1') {
        if (opts.filePath || opts.tag.length) throw new UsageError('--file-path and --tag exist only on the v2 API (drop --api v1)');
        return v1Upload(ctx, file, opts);
      }
      if (opts.type !== undefined || opts.overwrite || opts.mask || opts.originalRef !== undefined) throw new UsageError('--type, --overwrite, --mask and --original-ref exist only on the v1 API (--api v1)');
      await withAssets(ctx, async (c) => {
        const up = await c.uploadFile(file, { filePath: opts.filePath, tags: opts.tag }, { signal: io.signal });
        output.message(up.dedup ? `already there (${up.hash}): no bytes sent` : `uploaded ${up.hash}`);
        await new AssetRecords(ctx.store().dir)
          .put(uploadRecord(c.http.baseUrl, up, file, 'cli'))
          .catch((err: unknown) => output.message(`could not remember the upload in the state dir: ${shown((err as Error).message)}`));
        if (output.json) output.document(up.asset);
        else output.result(up.asset.id);
      });
    });
}
