/**
 * `comfy-cloud upload <file>`: uploads a file where the connection's API keeps what a workflow reads: as an asset where
 * it has assets (its backend's `capabilities.assets`), else as an engine input file (JobBackend `uploadInput`: the
 * image a LoadImage node names). stdout: the asset id, or the input's name (`subfolder/name` in a subfolder); with
 * `--json`, the asset record, or the input's `{name, subfolder, type}`.
 *
 * Rules:
 * - assets: identical bytes are never uploaded twice (the client hashes the file and asks the server first; a known
 *   hash sends no bytes, and says so on stderr); `--file-path` names the asset (default: the file's name); `--tag` is
 *   repeatable; the upload is remembered in the state dir's asset records (state/assetRecords.ts), shared with the
 *   extension, so it shows in VS Code's Assets view; a record that cannot be written is said on stderr, the upload
 *   itself stands;
 * - input files: `--type input|temp`, `--overwrite`, and a mask with `--mask --original-ref JSON` (the image masked);
 * - every option is checked before any request (exit 2): an option of the other way in is refused in the core's words.
 */
import type { Command } from 'commander';
import * as fs from 'node:fs';
import * as z from 'zod/mini';
import { AssetRecords, uploadRecord } from '../../core/state';
import { refusalText } from '../../core';
import type { InputFileRef } from '../../core/jobs/backend';
import { withAssets } from '../capabilities';
import type { CliContext } from '../context';
import { collect } from '../options';
import { UsageError, shown } from '../output';

interface UploadOptions {
  filePath?: string;
  tag: string[];
  type?: string;
  overwrite?: boolean;
  mask?: boolean;
  originalRef?: string;
}

/** `--original-ref`: the image a mask is for, as an engine input names a file. */
const OriginalRefSchema = z.object({
  filename: z.string().check(z.minLength(1)),
  subfolder: z.optional(z.string()),
  type: z.optional(z.string()),
});

/** Registers `upload` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('upload')
    .description(
      "upload a file as an asset (identical bytes are never uploaded twice), or as an input file where the API has no assets (v1); prints the asset id or the input's name",
    )
    .argument('<file>')
    .option('--file-path <name>', "assets: name kept with the asset (default: the file's name)")
    .option('--tag <tag>', 'assets: tag (repeatable)', collect, [] as string[])
    .option('--type <input|temp>', 'input files (v1): where the server keeps the file (default input)')
    .option('--overwrite', 'input files (v1): replace a file of the same name')
    .option('--mask', 'input files (v1): upload a mask for the image named by --original-ref')
    .option(
      '--original-ref <json>',
      'input files (v1), with --mask: the image masked, e.g. \'{"filename":"a.png","subfolder":"","type":"input"}\'',
    )
    .action(async (file: string, opts: UploadOptions) => {
      const inputOptions = opts.type !== undefined || opts.overwrite || opts.mask || opts.originalRef !== undefined;
      const type = opts.type ?? 'input';
      if (type !== 'input' && type !== 'temp')
        throw new UsageError(`--type must be input or temp (got ${shown(type)})`);
      if (opts.originalRef !== undefined && !opts.mask) throw new UsageError('--original-ref goes with --mask');
      if (opts.mask && opts.originalRef === undefined)
        throw new UsageError(
          '--mask needs --original-ref \'{"filename":"…","subfolder":"","type":"input"}\' (the image it masks)',
        );
      if (opts.mask && opts.overwrite) throw new UsageError('--overwrite does not go with --mask');
      const maskFor = opts.originalRef !== undefined ? parseRef(opts.originalRef) : undefined;
      // The connection's own backend: a lease's carries the contract's required members only.
      const { backend } = (await ctx.jobs()).lease.connection;
      if (backend.capabilities.assets) {
        if (inputOptions)
          throw new UsageError(
            `--type, --overwrite, --mask and --original-ref upload an input file, and the ${backend.api} API of this connection keeps assets instead (drop them)`,
          );
        await withAssets(ctx, async (c) => {
          const up = await c.uploadFile(file, { filePath: opts.filePath, tags: opts.tag }, { signal: io.signal });
          output.message(up.dedup ? `already there (${up.hash}): no bytes sent` : `uploaded ${up.hash}`);
          await new AssetRecords(ctx.store().dir)
            .put(uploadRecord(c.http.baseUrl, up, file, 'cli'))
            .catch((err: unknown) =>
              output.message(`could not remember the upload in the state dir: ${shown((err as Error).message)}`),
            );
          if (output.json) output.document(up.asset);
          else output.result(up.asset.id);
        });
        return;
      }
      // No assets: the file goes in as an engine input where the API takes one, else the core's refusal of assets.
      if (!backend.uploadInput || opts.filePath || opts.tag.length)
        throw new UsageError(
          `${opts.filePath || opts.tag.length ? '--file-path, --tag: ' : ''}${refusalText('assets', backend.api)} (drop --api ${backend.api})`,
        );
      // A missing file is bad input, said before any request.
      if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile())
        throw new UsageError(`not a readable file: ${shown(file)}`);
      const up = await backend.uploadInput(file, {
        type,
        overwrite: Boolean(opts.overwrite),
        maskFor,
        signal: io.signal,
      });
      output.message(`uploaded ${shown(file)} as ${shown(up.name)}`);
      if (output.json) output.document(up);
      else output.result(up.subfolder ? `${up.subfolder}/${up.name}` : up.name);
    });
}

/** The `--original-ref` JSON (see OriginalRefSchema). @throws UsageError naming the expected shape. */
function parseRef(text: string): InputFileRef {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(
      '--original-ref must be JSON, e.g. \'{"filename":"photo.png","subfolder":"","type":"input"}\'',
    );
  }
  const parsed = OriginalRefSchema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(
      '--original-ref must be a JSON object with a non-empty string "filename" (and string "subfolder" and "type" when given)',
    );
  return parsed.data;
}
