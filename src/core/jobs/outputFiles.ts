/**
 * The rules of an output's file on this machine, pure (no file system: the monitor's page model uses them too): the
 * name its download gets and the size to show. Which file is the output complete is proven, not read from a name
 * (savedOutputs.ts).
 */
import { safeFileName } from '../util/fileNames';
import type { JobOutput } from './model';

/**
 * The file name an output's download gets in its folder: its `name`, else its id (`.png` added for a PNG), through
 * the one sanitizer (the v2 client's `downloadOutputs` rule; a Content-Disposition name is not known before the
 * download, so an output without a name is found by its id only).
 */
export function outputFileName(output: Pick<JobOutput, 'id' | 'name' | 'contentType'>): string {
  return safeFileName(output.name, `${output.id}${output.contentType === 'image/png' ? '.png' : ''}`);
}

/**
 * The size to show for an output, in bytes: the server's when above 0, else the file's on disk when it is saved here
 * (`fileBytes`), else the server's 0 is not shown (null: unknown; the self-hosted companion answers 0 until it has
 * computed the size).
 */
export function outputBytes(output: Pick<JobOutput, 'sizeBytes'>, fileBytes?: number): number | null {
  if (typeof output.sizeBytes === 'number' && Number.isFinite(output.sizeBytes) && output.sizeBytes > 0)
    return output.sizeBytes;
  return fileBytes ?? null;
}
