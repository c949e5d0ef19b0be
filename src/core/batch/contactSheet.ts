/**
 * The contact sheet of a batch: every variation as one cell (its values, where its job stands, its first image), laid
 * out as a table when the batch is a two-input grid, else as a flow in index order. Pure but for {@link variationFiles}:
 * the panel reads the stores and the output folders, this says what the sheet shows, the webview only draws it.
 *
 * Rules:
 * - a batch is drawn as a grid when exactly two of its inputs vary (take more than one value) and its variations are
 *   their full cartesian product in `--set` order, the first varying slowest (variations.ts `combine`, grid mode):
 *   rows are the first input's values, columns the second's, the cell at row r and column c is variation
 *   `r * columns + c`; anything else (one input, three, `--zip`, an explicit list) is a flow of cells in index order;
 * - a cell's label names only the inputs that vary (`3.seed=7, 6.text=a cat`), each value cut short; an input with
 *   one value across the batch says nothing about a cell (it is in the sheet's `constants`);
 * - a cell's state is one of the sheet's seven ({@link CellState}) from the variation's state (status.ts): `expired`
 *   and the client's `lost` are failures (their job and outputs are gone), a submission in flight is `queued`;
 * - a cell's image is its first file with an image extension, the other files counted beside it;
 * - a variation's files are the regular files of its output folder that are not hidden: a download in progress is a
 *   hidden partial file, so a partial image is never shown as an output ({@link variationFiles}, the one function
 *   here that reads the disk).
 */
import type { Dirent } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { isEndedStatus } from '../jobs/model';
import { describeCounts, type BatchStatus, type VariationState } from './status';
import type { CellState, ContactSheetModel, SheetAxis, SheetCell } from './sheetProtocol';

export {
  CELL_STATES,
  type CellState,
  type ContactSheetModel,
  type SheetAxis,
  type SheetCell,
  type SheetLayout,
} from './sheetProtocol';

/** What the panel found for one variation: its files (absolute paths, any order) and why it failed, if known. */
export interface VariationFiles {
  files: readonly string[];
  error?: string;
}

/** The longest a value is shown in a label or a header (characters); longer values end in `…`. */
export const VALUE_CHARS = 32;

/** File extensions shown as images (lower case, with the dot). */
const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.webp', '.gif', '.bmp', '.avif']);

/** True when `file` is shown as an image (by its extension). */
export function isImageFile(file: string): boolean {
  return IMAGE_EXTENSIONS.has(path.extname(file).toLowerCase());
}

/** The cell state of a variation state (see the module's rules). */
export function cellState(state: VariationState): CellState {
  switch (state) {
    case 'not_sent':
    case 'unknown':
    case 'succeeded':
    case 'failed':
    case 'canceled':
    case 'running':
    case 'queued':
      return state as CellState;
    case 'submitting':
    case 'submitted':
      return 'queued';
    default:
      // expired and lost are ends without outputs; a status this client does not know is taken as running (as
      // status.ts counts it), so the sheet never says a job ended that may not have.
      return isEndedStatus(state) ? 'failed' : 'running';
  }
}

/** A stored variation value as text: a file by its name, a literal as itself. Read tolerantly (a record is data). */
function valueText(value: unknown): string {
  if (value && typeof value === 'object') {
    const v = value as { kind?: unknown; path?: unknown; value?: unknown };
    if (v.kind === 'file' && typeof v.path === 'string') return path.basename(v.path);
    if (v.kind === 'literal') return v.value === null ? 'null' : String(v.value);
  }
  return String(value);
}

/** `text` cut to {@link VALUE_CHARS} characters (code points), ending in `…` when cut. */
function short(text: string): string {
  const chars = [...text];
  return chars.length <= VALUE_CHARS ? text : `${chars.slice(0, VALUE_CHARS - 1).join('')}…`;
}

/** The two varying inputs' axes when the batch is their full grid (see the module's rules), else undefined. */
function gridAxes(
  keys: string[],
  texts: string[][],
  varying: number[],
): { rows: SheetAxis; columns: SheetAxis } | undefined {
  if (varying.length !== 2) return undefined;
  const [a, b] = varying as [number, number];
  const distinct = (i: number): string[] => [...new Set(texts.map((t) => t[i]!))];
  const rows = distinct(a);
  const columns = distinct(b);
  if (rows.length * columns.length !== texts.length) return undefined;
  const full = texts.every(
    (t, index) => t[a] === rows[Math.floor(index / columns.length)] && t[b] === columns[index % columns.length],
  );
  if (!full) return undefined;
  return {
    rows: { input: keys[a]!, values: rows.map(short) },
    columns: { input: keys[b]!, values: columns.map(short) },
  };
}

/**
 * The sheet of `status` (status.ts `batchStatus`), with `files` per variation index (absent: none found yet).
 * Variations whose inputs are not the batch's first variation's inputs (a damaged record) make it a flow.
 */
export function contactSheet(status: BatchStatus, files: ReadonlyMap<number, VariationFiles>): ContactSheetModel {
  const variations = status.variations;
  const first = variations[0]?.variation.inputs ?? [];
  const keys = first.map((i) => `${i.nodeId}.${i.field}`);
  const sameInputs = variations.every(
    (v) =>
      v.variation.inputs.length === keys.length &&
      v.variation.inputs.every((i, n) => `${i.nodeId}.${i.field}` === keys[n]),
  );
  // Values compared by their full text (not the short one), so two long values that share a start stay apart.
  const texts = variations.map((v) => v.variation.inputs.map((i) => valueText(i.value)));
  const varying = sameInputs
    ? keys.map((_, n) => n).filter((n) => new Set(texts.map((t) => t[n])).size > 1)
    : keys.map((_, n) => n);
  const constants =
    sameInputs && variations.length > 0
      ? keys
          .map((k, n) => (varying.includes(n) ? undefined : `${k}=${short(texts[0]![n]!)}`))
          .filter((c): c is string => c !== undefined)
      : [];
  const axes = sameInputs ? gridAxes(keys, texts, varying) : undefined;
  const cells = variations.map((v, n): SheetCell => {
    const inputs = v.variation.inputs;
    const shown = sameInputs ? varying : inputs.map((_, i) => i);
    const label = (shown.length > 0 ? shown : inputs.map((_, i) => i))
      .map((i) => `${inputs[i]!.nodeId}.${inputs[i]!.field}=${short(texts[n]![i]!)}`)
      .join(', ');
    const found = files.get(v.variation.index);
    const image = found?.files.find(isImageFile) ?? null;
    const state = cellState(v.state);
    return {
      index: v.variation.index,
      label,
      folder: v.label,
      state,
      detail: v.state,
      jobId: v.jobId ?? null,
      image,
      otherFiles: (found?.files.length ?? 0) - (image === null ? 0 : 1),
      error: state === 'failed' ? (found?.error ?? null) : null,
    };
  });
  return {
    batchId: status.batch.batchId,
    layout: axes ? { kind: 'grid', ...axes } : { kind: 'flow' },
    cells,
    constants,
    counts: describeCounts(status.counts),
    anyEnded: status.counts.ended > 0,
    finished: status.finished,
  };
}

/**
 * The files of one variation's output folder: its regular files as absolute paths, by name; none when the folder is
 * not there (not downloaded yet).
 */
export async function variationFiles(folder: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  // A download in progress is a hidden `.<hash>.part` file, renamed when whole (core/v2/download.ts): hidden files are
  // never shown, so a partial image never looks complete.
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => path.join(folder, e.name))
    .sort();
}
