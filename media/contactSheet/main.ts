/**
 * The batch contact sheet page: draws the sheet the host posts (src/core/batch/sheetProtocol.ts) into `#sheet`, the
 * page the host builds (nonce CSP, no network).
 *
 * Rules it keeps:
 * - Safe: every host message goes through `parseSheetHostMessage` (an invalid one is dropped); data is only ever set
 *   as text (`textContent`, attributes), never as HTML; images are the host's webview resource URIs; the page names a
 *   cell to the host by its index only.
 * - Updated in place: a cell keeps its element (and the focus) across sheets; its content is made again only when
 *   what it shows changed, and its image's `src` set only when the file changed, so nothing flickers.
 * - A two-input grid is a table whose row and column headers stay in view (sticky); any other batch a flow of cells.
 * - Keyboard and screen readers: each cell is focusable, named by its label and state, Enter or a click opens its
 *   image; the job link is a button named after the job; a running cell shows a spinning icon; the counts line is in
 *   the live region the host's page gives (`#sheet`, `aria-live="polite"`).
 * - DOM hooks for UI steps: each cell carries `data-cell-index` and `data-state`.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import {
  parseSheetHostMessage,
  SHEET_PROTOCOL_VERSION,
  type CellState,
  type SheetCellView,
  type SheetLayout,
  type SheetStrings,
  type SheetView,
  type SheetWebviewMessage,
} from '../../src/core/batch/sheetProtocol';

interface VsCodeApi {
  postMessage(message: SheetWebviewMessage): void;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById('sheet') ?? document.body;

/** The codicon of each state (the badge says it in words too: never colour alone). */
const STATE_ICONS: Record<CellState, string> = {
  not_sent: 'circle-large-outline',
  unknown: 'question',
  queued: 'clock',
  running: 'loading',
  succeeded: 'pass',
  failed: 'error',
  canceled: 'circle-slash',
};

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** `template` with `{0}`, `{1}` replaced by `args`. */
function fill(template: string, ...args: Array<string | number>): string {
  return template.replace(/\{(\d+)\}/g, (all, n: string) =>
    args[Number(n)] === undefined ? all : String(args[Number(n)]),
  );
}

// ---- the page's fixed parts -----------------------------------------------------------------------------------------

const header = el('header', 'sheet-header');
const title = el('h1', 'sheet-title');
const counts = el('vscode-badge', 'sheet-counts');
const constants = el('p', 'sheet-constants');
header.append(title, counts, constants);
const empty = el('p', 'sheet-empty');
empty.hidden = true;
const body = el('div', 'sheet-body');
root.append(header, empty, body);

// ---- cells ----------------------------------------------------------------------------------------------------------

interface DrawnCell {
  element: HTMLElement;
  /** What it was drawn from (JSON of the cell and the words), to skip cells that did not change. */
  key: string;
}

const cells = new Map<number, DrawnCell>();
/** The layout drawn (JSON), to build the container again only when it changes. */
let drawnLayout: string | undefined;

function openImage(index: number): void {
  vscode.postMessage({ type: 'openImage', index });
}

/** A cell's element: made once per index, its content filled by {@link fillCell}. */
function makeCell(index: number): HTMLElement {
  const element = el('div', 'cell');
  element.tabIndex = 0;
  element.setAttribute('role', 'group');
  element.dataset.cellIndex = String(index);
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && event.target === element && element.dataset.hasImage === 'true') {
      event.preventDefault();
      openImage(index);
    }
  });
  return element;
}

function fillCell(element: HTMLElement, cell: SheetCellView, strings: SheetStrings): void {
  const stateName = strings.states[cell.state];
  element.dataset.state = cell.state;
  element.dataset.hasImage = String(cell.imageUri !== null);
  element.title =
    cell.error === null ? `${cell.label}\n${stateName} (${cell.detail})` : `${cell.label}\n${stateName}: ${cell.error}`;
  element.setAttribute(
    'aria-label',
    cell.imageUri === null ? `${cell.label}: ${stateName}` : `${fill(strings.openImage, cell.label)}: ${stateName}`,
  );

  // The thumbnail: the previous <img> kept when its file is the same (no reload, no flicker).
  const oldImg = element.querySelector<HTMLImageElement>('img.thumb');
  const thumb = el('div', 'thumb-box');
  if (cell.imageUri !== null) {
    const img = oldImg && oldImg.dataset.src === cell.imageUri ? oldImg : el('img', 'thumb');
    if (img !== oldImg) {
      img.loading = 'lazy';
      img.decoding = 'async';
      img.dataset.src = cell.imageUri;
      img.src = cell.imageUri;
    }
    img.alt = cell.imageName ?? cell.label;
    thumb.append(img);
  } else {
    const icon = el('vscode-icon', 'thumb-icon');
    icon.setAttribute('name', STATE_ICONS[cell.state]);
    icon.setAttribute('size', '32');
    if (cell.state === 'running') icon.setAttribute('spin', '');
    icon.setAttribute('aria-hidden', 'true');
    thumb.append(icon);
  }

  const state = el('div', `state state-${cell.state}`);
  const stateIcon = el('vscode-icon');
  stateIcon.setAttribute('name', STATE_ICONS[cell.state]);
  if (cell.state === 'running') stateIcon.setAttribute('spin', '');
  stateIcon.setAttribute('aria-hidden', 'true');
  state.append(stateIcon, el('span', 'state-name', stateName));
  if (cell.otherFiles > 0) state.append(el('span', 'more-files', fill(strings.moreFiles, cell.otherFiles)));

  const label = el('div', 'label', cell.label);
  const parts: HTMLElement[] = [thumb, state, label];
  if (cell.error !== null) parts.push(el('div', 'error', cell.error));
  if (cell.jobId !== null) {
    const jobLink = el('button', 'job-link', cell.jobId.slice(0, 8));
    jobLink.type = 'button';
    jobLink.setAttribute('aria-label', fill(strings.openJob, cell.jobId));
    jobLink.title = fill(strings.openJob, cell.jobId);
    jobLink.addEventListener('click', (event) => {
      event.stopPropagation();
      vscode.postMessage({ type: 'openJob', index: cell.index });
    });
    parts.push(jobLink);
  }
  element.replaceChildren(...parts);
}

/** The cell of `index`, drawn from `cell` (made, or updated when what it shows changed). */
function drawCell(cell: SheetCellView, strings: SheetStrings): HTMLElement {
  let drawn = cells.get(cell.index);
  if (!drawn) {
    drawn = { element: makeCell(cell.index), key: '' };
    cells.set(cell.index, drawn);
  }
  const key = JSON.stringify([cell, strings.states, strings.openJob, strings.openImage, strings.moreFiles]);
  if (drawn.key !== key) {
    fillCell(drawn.element, cell, strings);
    drawn.key = key;
  }
  return drawn.element;
}

// ---- layouts --------------------------------------------------------------------------------------------------------

/** The grid: a table, the first input's values as row headers, the second's as column headers. */
function drawGrid(layout: Extract<SheetLayout, { kind: 'grid' }>, sheet: SheetView): HTMLElement {
  const table = el('table', 'sheet-grid');
  table.setAttribute('aria-label', fill(sheet.strings.grid, layout.rows.input, layout.columns.input));
  const head = el('thead');
  const headRow = el('tr');
  const corner = el('th', 'corner', `${layout.rows.input} \\ ${layout.columns.input}`);
  corner.scope = 'col';
  headRow.append(corner);
  for (const value of layout.columns.values) {
    const th = el('th', 'column-header', value);
    th.scope = 'col';
    th.title = `${layout.columns.input}=${value}`;
    headRow.append(th);
  }
  head.append(headRow);
  const tbody = el('tbody');
  const width = layout.columns.values.length;
  layout.rows.values.forEach((value, r) => {
    const tr = el('tr');
    const th = el('th', 'row-header', value);
    th.scope = 'row';
    th.title = `${layout.rows.input}=${value}`;
    tr.append(th);
    for (let c = 0; c < width; c++) {
      const td = el('td');
      const cell = sheet.cells[r * width + c];
      if (cell) td.append(drawCell(cell, sheet.strings));
      tr.append(td);
    }
    tbody.append(tr);
  });
  table.append(head, tbody);
  return table;
}

function drawFlow(sheet: SheetView): HTMLElement {
  const flow = el('div', 'sheet-flow');
  flow.setAttribute('role', 'list');
  for (const cell of sheet.cells) {
    const item = el('div', 'flow-item');
    item.setAttribute('role', 'listitem');
    item.append(drawCell(cell, sheet.strings));
    flow.append(item);
  }
  return flow;
}

function draw(sheet: SheetView): void {
  title.textContent = sheet.strings.title;
  document.title = sheet.strings.title;
  counts.textContent = sheet.counts;
  constants.textContent = sheet.constants.join('  ');
  constants.hidden = sheet.constants.length === 0;
  empty.textContent = sheet.strings.empty;
  empty.hidden = sheet.anyEnded;
  root.dataset.finished = String(sheet.finished);
  root.dataset.layout = sheet.layout.kind;

  // Cells no longer in the sheet are forgotten.
  const indexes = new Set(sheet.cells.map((c) => c.index));
  for (const index of [...cells.keys()]) if (!indexes.has(index)) cells.delete(index);

  const layoutKey = JSON.stringify([sheet.layout, sheet.cells.map((c) => c.index)]);
  if (layoutKey === drawnLayout) {
    // Same layout: the cells update in place (their elements are already in the container).
    for (const cell of sheet.cells) drawCell(cell, sheet.strings);
    return;
  }
  drawnLayout = layoutKey;
  const focused =
    document.activeElement instanceof HTMLElement
      ? document.activeElement.closest<HTMLElement>('.cell')?.dataset.cellIndex
      : undefined;
  body.replaceChildren(sheet.layout.kind === 'grid' ? drawGrid(sheet.layout, sheet) : drawFlow(sheet));
  if (focused !== undefined) cells.get(Number(focused))?.element.focus();
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const m = parseSheetHostMessage(event.data);
  if (!m) return;
  // Kept by VS Code across a window reload: the host reopens this batch's sheet from it (ContactSheetPanels.restore).
  vscode.setState({ batchId: m.sheet.batchId });
  draw(m.sheet);
});

// A click in a cell with an image opens it (the job link handles its own click).
body.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  if (target.closest('.job-link')) return;
  const cell = target.closest<HTMLElement>('.cell');
  if (cell?.dataset.hasImage === 'true' && cell.dataset.cellIndex !== undefined)
    openImage(Number(cell.dataset.cellIndex));
});

vscode.postMessage({ type: 'ready', version: SHEET_PROTOCOL_VERSION });
