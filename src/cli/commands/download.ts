/**
 * `comfy-cloud download <asset-id> [file-or-folder]`: downloads an asset's content to a file, or into an existing
 * folder under the asset's own name (through the one file-name sanitizer, kept inside the folder; the first free
 * name); prints the path written (with `--json`, `{path, bytes}`).
 *
 * Rules (client `downloadAsset`): an existing file is never replaced without `--force` (the error says to pass it);
 * a partial download of the same asset is resumed; the bytes are verified when the record has a hash. An asset this
 * machine remembers (state/assetRecords.ts, shared with VS Code's Assets view) gets the path it was saved to
 * when it is an output (an upload keeps the file it came from: `downloadedRecord`); a record that cannot be written
 * is said on stderr, the file stands.
 */
import type { Command } from 'commander';
import { AssetRecords, downloadedRecord } from '../../core/state';
import { withAssets } from '../capabilities';
import type { CliContext } from '../context';
import { shown } from '../output';

/** Registers `download` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('download')
    .description(
      "download an asset's content to a file, or into a folder under the asset's own name; prints the path written",
    )
    .argument('<asset-id>')
    .argument('[file-or-folder]', 'target file, or an existing folder (default: the current folder)', '.')
    .option('--force', 'replace the file if it exists')
    .action(async (assetId: string, file: string, opts: { force?: boolean }) => {
      await withAssets(ctx, async (c) => {
        const res = await c.downloadAsset(assetId, file, { signal: io.signal, overwrite: Boolean(opts.force) });
        output.message(`saved ${res.bytes} bytes`);
        const records = new AssetRecords(ctx.store().dir);
        await records
          .get(c.http.baseUrl, assetId)
          .then((record) => {
            const next = record && downloadedRecord(record, res.path);
            return next && records.put(next);
          })
          .catch((err: unknown) =>
            output.message(
              `could not remember where asset ${shown(assetId)} was saved: ${shown((err as Error).message)}`,
            ),
          );
        if (output.json) output.document({ path: res.path, bytes: res.bytes });
        else output.result(res.path);
      });
    });
}
