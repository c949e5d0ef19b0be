/**
 * The batch contact sheet's webview protocol (one protocol shared by host and webview): every message between the
 * extension host and the contact sheet page (media/contactSheet/), typed both ways and validated on receipt by each
 * side (`parseSheetHostMessage` in the page, `parseSheetWebviewMessage` in the host): a message that does not parse is
 * dropped, never acted on. Also the sheet's data types (made by contactSheet.ts, drawn by the page) and the page's HTML.
 *
 * Rules the types carry:
 * - The page says `ready` (with its protocol version) before the host posts; the host then posts `sheet` on every
 *   change, the whole sheet each time (a batch is at most 10 000 cells of a few short strings).
 * - The page names a cell by its variation index only (`openImage`, `openJob`): the host looks the file or the job up
 *   in its own model, so a page can never make the host open a path or a job of its choosing.
 * - Images reach the page as the host's webview resource URIs (`asWebviewUri`), never as file paths or remote URLs;
 *   the page reaches no network.
 * - Every string the page shows is set as text (`textContent`, attributes), never as HTML; the words are the host's
 *   (translated there), the page has none of its own.
 *
 * Plain data, no `vscode`, no DOM: imported by the host, the page's bundle and the unit tests.
 */
import * as z from 'zod/mini';
import { lazy, parsedOrUndefined } from '../util/lazySchema';
import { webviewPageHtml } from '../util/webviewPage';

/** What the sheet shows of a variation's state (the model's: contactSheet.ts). */
export type CellState = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled' | 'not_sent' | 'unknown';

/** Every {@link CellState}, in the order of a job's life (for the protocol's check and the page's legend). */
export const CELL_STATES: readonly CellState[] = [
  'not_sent',
  'unknown',
  'queued',
  'running',
  'succeeded',
  'failed',
  'canceled',
];

/** One cell: one variation. */
export interface SheetCell {
  /** The variation's 0-based index in the batch. */
  index: number;
  /** `<input>=<value>` of each varying input, joined by `, ` (values cut short: contactSheet.ts `VALUE_CHARS`). */
  label: string;
  /** The variation's output folder name (`<index>-<short values>`, status.ts `label`). */
  folder: string;
  state: CellState;
  /** The variation's state as status.ts gives it (e.g. `expired`, `lost`, `submitting`), for a tooltip. */
  detail: string;
  jobId: string | null;
  /** Absolute path of its first image file, or null. */
  image: string | null;
  /** How many of its files are not {@link image}. */
  otherFiles: number;
  /** Why it failed, when it failed and a reason is known; else null. */
  error: string | null;
}

/** One axis of a grid: the input (`<node id>.<input name>`) and its values as shown, in order. */
export interface SheetAxis {
  input: string;
  values: string[];
}

/** How the cells are laid out: a grid of two inputs (rows × columns, cells row by row), or a flow in index order. */
export type SheetLayout = { kind: 'grid'; rows: SheetAxis; columns: SheetAxis } | { kind: 'flow' };

/** The whole sheet of one batch. */
export interface ContactSheetModel {
  batchId: string;
  layout: SheetLayout;
  /** Every cell, in index order (for a grid: row by row). */
  cells: SheetCell[];
  /** The inputs that take one value across the batch, as `<input>=<value>`. */
  constants: string[];
  /** describeCounts's line, e.g. `10 succeeded, 2 failed, 4 running`. */
  counts: string;
  /** Whether any variation has ended (the page shows its empty text until one has). */
  anyEnded: boolean;
  /** Nothing of the batch is left to run (status.ts `finished`). */
  finished: boolean;
}

/** Bumped when a message changes shape; the host builds the page of another version again. */
export const SHEET_PROTOCOL_VERSION = 1;

/** Bounds on what a message may carry, so a bad message cannot make the receiver hold megabytes of strings. */
export const SHEET_MESSAGE_LIMITS = {
  /** Cells of one sheet: a batch's most variations (variations.ts MAX_VARIATIONS). */
  cells: 10_000,
  text: 2_000,
  uri: 4_000,
} as const;

/** One cell as the page draws it: the model's cell with its image as a webview URI (and the image's file name). */
export interface SheetCellView extends Omit<SheetCell, 'image'> {
  /** `asWebviewUri` of the image, or null. */
  imageUri: string | null;
  /** The image's file name (its alternative text), or null. */
  imageName: string | null;
}

/** The words of the page, translated by the host. `{0}` in a template is replaced by the page. */
export interface SheetStrings {
  /** The page's title, e.g. `Batch b-1234…`. */
  title: string;
  /** Shown while no variation has ended. */
  empty: string;
  /** Each state's name. */
  states: Record<CellState, string>;
  /** The job link's accessible name, `{0}` the job id. */
  openJob: string;
  /** A cell's accessible name when Enter opens its image, `{0}` the cell's label. */
  openImage: string;
  /** The count of a cell's other files, `{0}` the count. */
  moreFiles: string;
  /** The grid's accessible name, `{0}` the rows' input and `{1}` the columns'. */
  grid: string;
}

/** The sheet as posted: the model with webview URIs, and the page's words. */
export interface SheetView extends Omit<ContactSheetModel, 'cells'> {
  cells: SheetCellView[];
  strings: SheetStrings;
}

/** Host → page. */
export type SheetHostMessage = { type: 'sheet'; sheet: SheetView };

/** Page → host. Indexes are checked by the host against its model before it acts. */
export type SheetWebviewMessage =
  | { type: 'ready'; version: number }
  /** Open the cell's image file in the editor (a click, or Enter on the cell). */
  | { type: 'openImage'; index: number }
  /** Open the monitor of the cell's job. */
  | { type: 'openJob'; index: number };

/** `file`'s name: after the last `/` or `\` (the page's alternative text; no path module in a pure protocol). */
function baseName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}

/** The sheet as posted: each cell's image path made a webview URI by `toUri`, with `strings`. */
export function sheetView(model: ContactSheetModel, toUri: (file: string) => string, strings: SheetStrings): SheetView {
  const cells = model.cells.map(({ image, ...cell }): SheetCellView => ({
    ...cell,
    imageUri: image === null ? null : toUri(image),
    imageName: image === null ? null : baseName(image),
  }));
  return { ...model, cells, strings };
}

const schemas = lazy(() => {
  const text = z.string().check(z.maxLength(SHEET_MESSAGE_LIMITS.text));
  const index = z.number().check(z.int(), z.gte(0), z.lt(SHEET_MESSAGE_LIMITS.cells));
  const state = z.enum(CELL_STATES as [CellState, ...CellState[]]);
  const axis = z.object({ input: text, values: z.array(text).check(z.maxLength(SHEET_MESSAGE_LIMITS.cells)) });
  const layout = z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('grid'), rows: axis, columns: axis }),
    z.object({ kind: z.literal('flow') }),
  ]);
  const cell = z.object({
    index,
    label: text,
    folder: text,
    state,
    detail: text,
    jobId: z.nullable(text),
    imageUri: z.nullable(z.string().check(z.maxLength(SHEET_MESSAGE_LIMITS.uri))),
    imageName: z.nullable(text),
    otherFiles: z.number().check(z.int(), z.gte(0)),
    error: z.nullable(text),
  });
  const strings = z.object({
    title: text,
    empty: text,
    states: z.object(Object.fromEntries(CELL_STATES.map((s) => [s, text])) as Record<CellState, typeof text>),
    openJob: text,
    openImage: text,
    moreFiles: text,
    grid: text,
  });
  const sheet = z.object({
    batchId: text,
    layout,
    cells: z.array(cell).check(z.maxLength(SHEET_MESSAGE_LIMITS.cells)),
    constants: z.array(text).check(z.maxLength(1000)),
    counts: text,
    anyEnded: z.boolean(),
    finished: z.boolean(),
    strings,
  });
  const host = z.object({ type: z.literal('sheet'), sheet });
  const webview = z.discriminatedUnion('type', [
    z.object({ type: z.literal('ready'), version: z.number() }),
    z.object({ type: z.literal('openImage'), index }),
    z.object({ type: z.literal('openJob'), index }),
  ]);
  return { host, webview };
});

/** A message from the host as the page accepts it; undefined when it is not one (dropped). */
export function parseSheetHostMessage(value: unknown): SheetHostMessage | undefined {
  const m = parsedOrUndefined<SheetHostMessage>(schemas().host, value);
  // A grid's cells are its rows × columns, row by row: a sheet whose grid does not add up is not drawn.
  if (
    m &&
    m.sheet.layout.kind === 'grid' &&
    m.sheet.layout.rows.values.length * m.sheet.layout.columns.values.length !== m.sheet.cells.length
  )
    return undefined;
  return m;
}

/** A message from the page as the host accepts it; undefined when it is not one (dropped, logged by the host). */
export function parseSheetWebviewMessage(value: unknown): SheetWebviewMessage | undefined {
  return parsedOrUndefined<SheetWebviewMessage>(schemas().webview, value);
}

/** What the page is built from (see {@link contactSheetHtml}). */
export interface SheetPageInput {
  /** `vscode.env.language`. */
  lang: string;
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh nonce (base64 of `crypto.randomBytes`), new per render. */
  nonce: string;
  /** `asWebviewUri` of dist/webview/codicon.css, contactSheet.css and contactSheet.js. */
  codiconCss: string;
  sheetCss: string;
  sheetJs: string;
  /** The page's title, as text. */
  title: string;
}

/**
 * The contact sheet's page: CSP `default-src 'none'`; scripts only by the nonce; styles and fonts from `cspSource`;
 * images from `cspSource` only (the batch's outputs through `asWebviewUri`); no `unsafe-inline` script, no remote
 * origin; the stylesheets, the `#sheet` element the script fills, and the script by its nonce.
 */
export function contactSheetHtml(p: SheetPageInput): string {
  return webviewPageHtml({
    ...p,
    stylesheets: [{ href: p.codiconCss, id: 'vscode-codicon-stylesheet' }, { href: p.sheetCss }],
    body: '<main id="sheet" aria-live="polite"></main>',
    script: p.sheetJs,
  });
}
