/**
 * The batch contact sheet's webview protocol (core/batch/sheetProtocol.ts): a sheet round-trips through JSON and its
 * parser with images as webview URIs (never a file path); bad messages (unknown type, a state not of the seven, a
 * grid whose cells are not rows × columns, an index that is not a cell's) are refused; the page keeps a strict CSP.
 */
import * as assert from 'node:assert/strict';
import { batchStatus, combine } from '../../src/core/batch';
import type { BatchRecord } from '../../src/core/state';
import { contactSheet, type VariationFiles } from '../../src/core/batch/contactSheet';
import {
  contactSheetHtml,
  parseSheetHostMessage,
  parseSheetWebviewMessage,
  SHEET_MESSAGE_LIMITS,
  sheetView,
  type SheetHostMessage,
  type SheetStrings,
} from '../../src/core/batch/sheetProtocol';

/** A message as it crosses: through JSON (what postMessage's structured clone keeps of plain data). */
function across<T>(m: T): unknown {
  return JSON.parse(JSON.stringify(m));
}

const STRINGS: SheetStrings = {
  title: 'Batch b-sheet',
  empty: 'No variation has finished yet.',
  states: {
    not_sent: 'Not sent',
    unknown: 'Unknown',
    queued: 'Queued',
    running: 'Running',
    succeeded: 'Succeeded',
    failed: 'Failed',
    canceled: 'Canceled',
  },
  openJob: 'Open the monitor of job {0}',
  openImage: 'Open the image of {0}',
  moreFiles: '+{0} files',
  grid: '{0} by {1}',
};

/** The sheet message of a 2 × 2 grid whose variation 0 has an image. */
function gridMessage(): SheetHostMessage {
  const variations = combine(
    [
      {
        nodeId: '3',
        field: 'seed',
        values: [
          { kind: 'literal', value: 1 },
          { kind: 'literal', value: 2 },
        ],
      },
      {
        nodeId: '6',
        field: 'text',
        values: [
          { kind: 'literal', value: 'a cat' },
          { kind: 'literal', value: 'a dog' },
        ],
      },
    ],
    'grid',
  );
  const batch: BatchRecord = {
    batchId: 'b-sheet',
    baseUrl: 'http://127.0.0.1:1',
    workflow: {},
    createdAt: '2026-11-26T00:00:00.000Z',
    concurrency: 1,
    variations: variations.map((v) => ({ index: v.index, idempotencyKey: `k${v.index}`, inputs: v.inputs })),
  };
  const files = new Map<number, VariationFiles>([[0, { files: ['/home/me/out/0-1_a-cat/ComfyUI_00001_.png'] }]]);
  const model = contactSheet(batchStatus(batch, []), files);
  return { type: 'sheet', sheet: sheetView(model, (f) => `https://file+.vscode-resource.vscode-cdn.net${f}`, STRINGS) };
}

describe('contact sheet protocol: host → page', () => {
  it('a sheet round-trips, its images as webview URIs with their file names, never as file paths', () => {
    const m = gridMessage();
    assert.deepEqual(parseSheetHostMessage(across(m)), m);
    const cell = m.sheet.cells[0]!;
    assert.equal(
      cell.imageUri,
      'https://file+.vscode-resource.vscode-cdn.net/home/me/out/0-1_a-cat/ComfyUI_00001_.png',
    );
    assert.equal(cell.imageName, 'ComfyUI_00001_.png');
    assert.ok(!('image' in cell), 'the file path is not posted');
    assert.equal(m.sheet.cells[1]!.imageUri, null);
  });

  it('refuses an unknown type, a state not of the seven, and a grid whose cells are not rows × columns', () => {
    assert.equal(parseSheetHostMessage({ type: 'graph' }), undefined);
    const badState = across(gridMessage()) as { sheet: { cells: { state: string }[] } };
    badState.sheet.cells[0]!.state = 'exploded';
    assert.equal(parseSheetHostMessage(badState), undefined);
    const short = across(gridMessage()) as { sheet: { cells: unknown[] } };
    short.sheet.cells.pop();
    assert.equal(parseSheetHostMessage(short), undefined, 'a grid of 2 × 2 with 3 cells');
    const long = across(gridMessage()) as { sheet: { counts: string } };
    long.sheet.counts = 'x'.repeat(SHEET_MESSAGE_LIMITS.text + 1);
    assert.equal(parseSheetHostMessage(long), undefined, 'a string over the bound');
  });
});

describe('contact sheet protocol: page → host', () => {
  it("ready, openImage and openJob round-trip; an index that is not a cell's, or a path, is refused", () => {
    for (const m of [
      { type: 'ready', version: 1 },
      { type: 'openImage', index: 3 },
      { type: 'openJob', index: 0 },
    ] as const)
      assert.deepEqual(parseSheetWebviewMessage(across(m)), m);
    assert.equal(parseSheetWebviewMessage({ type: 'openImage', index: -1 }), undefined);
    assert.equal(parseSheetWebviewMessage({ type: 'openImage', index: 1.5 }), undefined);
    assert.equal(parseSheetWebviewMessage({ type: 'openImage', index: SHEET_MESSAGE_LIMITS.cells }), undefined);
    assert.equal(parseSheetWebviewMessage({ type: 'openImage', path: '/etc/passwd' }), undefined);
    assert.equal(parseSheetWebviewMessage({ type: 'openFile', index: 0 }), undefined);
  });
});

describe('contact sheet page', () => {
  it("a strict CSP: default-src 'none', scripts by nonce only, images from the webview's source only, no remote origin", () => {
    const html = contactSheetHtml({
      lang: 'en',
      cspSource: 'https://*.vscode-cdn.net',
      nonce: 'abc+/=',
      codiconCss: 'c.css',
      sheetCss: 's.css',
      sheetJs: 's.js',
      title: '<Batch>',
    });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-abc\+\/='/);
    assert.match(csp, /img-src https:\/\/\*\.vscode-cdn\.net;/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|http:|data:/);
    assert.match(html, /<script nonce="abc\+\/=" src="s\.js"><\/script>/);
    assert.match(html, /<title>&lt;Batch&gt;<\/title>/, 'the title is escaped');
  });
});
