/**
 * The batch contact sheet's model (core/batch/contactSheet.ts): a two-input full grid is rows × columns (the first
 * input varying slowest), anything else a flow in index order; labels name only the varying inputs, values cut
 * short; each variation state becomes one of the sheet's seven; a cell's image is its first image file, the others
 * counted; a failure's reason is kept; the counts line and whether anything ended; a variation's files are its
 * folder's visible regular files (a hidden partial download is not one).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { batchStatus, combine, describeCounts, type ValueSource, type Variation } from '../../src/core/batch';
import type { BatchRecord, JobRecord } from '../../src/core/state';
import {
  cellState,
  contactSheet,
  VALUE_CHARS,
  variationFiles,
  type VariationFiles,
} from '../../src/core/batch/contactSheet';
import { tempDir } from './tmp';

const lit = (value: string | number) => ({ kind: 'literal' as const, value });

/** A batch record of `variations`, each with the key `k<index>`. */
function batchOf(variations: Variation[]): BatchRecord {
  return {
    batchId: 'b-sheet',
    baseUrl: 'http://127.0.0.1:1',
    workflow: {},
    createdAt: '2026-11-26T00:00:00.000Z',
    concurrency: 2,
    variations: variations.map((v) => ({ index: v.index, idempotencyKey: `k${v.index}`, inputs: v.inputs })),
  };
}

/** The job record of variation `index` with `lastStatus`. */
function record(index: number, lastStatus: string | undefined, state: JobRecord['state'] = 'created'): JobRecord {
  return {
    idempotencyKey: `k${index}`,
    baseUrl: 'http://127.0.0.1:1',
    state,
    jobId: state === 'created' ? `job-${index}` : undefined,
    submittedAt: '2026-11-26T00:00:00.000Z',
    lastStatus,
    batchId: 'b-sheet',
  };
}

const seeds: ValueSource = { nodeId: '3', field: 'seed', values: [lit(1), lit(2), lit(3)] };
const texts: ValueSource = { nodeId: '6', field: 'text', values: [lit('a cat'), lit('a dog')] };

describe('contact sheet model (core/batch/contactSheet.ts)', () => {
  it("a full grid of two inputs: rows are the first input's values, columns the second's, cells row by row", () => {
    const batch = batchOf(combine([seeds, texts], 'grid'));
    const sheet = contactSheet(batchStatus(batch, []), new Map());
    assert.deepEqual(sheet.layout, {
      kind: 'grid',
      rows: { input: '3.seed', values: ['1', '2', '3'] },
      columns: { input: '6.text', values: ['a cat', 'a dog'] },
    });
    assert.deepEqual(
      sheet.cells.map((c) => c.index),
      [0, 1, 2, 3, 4, 5],
    );
    assert.equal(sheet.cells[3]!.label, '3.seed=2, 6.text=a dog', 'row 1, column 1 is variation 1 × 2 + 1');
    assert.equal(sheet.cells[3]!.folder, '3-2_a-dog');
  });

  it('an input with one value is not an axis: two varying inputs among three still make a grid', () => {
    const steps: ValueSource = { nodeId: '5', field: 'steps', values: [lit(20)] };
    const sheet = contactSheet(batchStatus(batchOf(combine([seeds, steps, texts], 'grid')), []), new Map());
    assert.equal(sheet.layout.kind, 'grid');
    assert.deepEqual(sheet.constants, ['5.steps=20']);
    assert.equal(sheet.cells[0]!.label, '3.seed=1, 6.text=a cat', 'a constant input is not in the labels');
  });

  it('one input, three varying inputs, or zipped inputs make a flow in index order', () => {
    const one = contactSheet(batchStatus(batchOf(combine([seeds], 'grid')), []), new Map());
    assert.deepEqual(one.layout, { kind: 'flow' });
    assert.deepEqual(
      one.cells.map((c) => c.label),
      ['3.seed=1', '3.seed=2', '3.seed=3'],
    );
    const cfg: ValueSource = { nodeId: '3', field: 'cfg', values: [lit(4), lit(7)] };
    assert.equal(
      contactSheet(batchStatus(batchOf(combine([seeds, texts, cfg], 'grid')), []), new Map()).layout.kind,
      'flow',
    );
    const zipped = contactSheet(
      batchStatus(batchOf(combine([{ ...seeds, values: seeds.values.slice(0, 2) }, texts], 'zip')), []),
      new Map(),
    );
    assert.deepEqual(zipped.layout, { kind: 'flow' });
    assert.deepEqual(
      zipped.cells.map((c) => c.label),
      ['3.seed=1, 6.text=a cat', '3.seed=2, 6.text=a dog'],
    );
  });

  it('a two-input list that is not their full grid (a cell missing, or out of order) is a flow', () => {
    const grid = combine([seeds, texts], 'grid');
    const missing = grid.slice(0, 5);
    assert.equal(contactSheet(batchStatus(batchOf(missing), []), new Map()).layout.kind, 'flow');
    // The second input varying slowest: not the --set order the rows and columns stand for.
    const swapped = grid.map((_, index) => ({ index, inputs: grid[(index % 3) * 2 + Math.floor(index / 3)]!.inputs }));
    assert.equal(contactSheet(batchStatus(batchOf(swapped), []), new Map()).layout.kind, 'flow');
  });

  it('labels: a file value by its name, a long value cut with …, compared in full (two long values sharing a start stay two columns)', () => {
    const long = 'x'.repeat(VALUE_CHARS + 10);
    const files: ValueSource = {
      nodeId: '10',
      field: 'image',
      values: [
        { kind: 'file', path: '/in/photos/cat.png' },
        { kind: 'file', path: '/in/photos/dog.png' },
      ],
    };
    const prompts: ValueSource = { nodeId: '6', field: 'text', values: [lit(`${long}1`), lit(`${long}2`)] };
    const sheet = contactSheet(batchStatus(batchOf(combine([files, prompts], 'grid')), []), new Map());
    assert.equal(sheet.layout.kind, 'grid');
    if (sheet.layout.kind !== 'grid') return;
    assert.deepEqual(sheet.layout.rows.values, ['cat.png', 'dog.png']);
    assert.equal(sheet.layout.columns.values.length, 2);
    assert.equal([...sheet.layout.columns.values[0]!].length, VALUE_CHARS);
    assert.ok(sheet.layout.columns.values[0]!.endsWith('…'));
    assert.ok(sheet.cells[0]!.label.startsWith('10.image=cat.png, 6.text=xxx'));
  });

  it('states: every variation state becomes one of the seven (expired and lost are failures, a submission in flight is queued)', () => {
    const expected: Record<string, string> = {
      not_sent: 'not_sent',
      submitting: 'queued',
      unknown: 'unknown',
      submitted: 'queued',
      queued: 'queued',
      running: 'running',
      succeeded: 'succeeded',
      failed: 'failed',
      canceled: 'canceled',
      expired: 'failed',
      lost: 'failed',
      some_new_status: 'running',
    };
    for (const [state, cell] of Object.entries(expected)) assert.equal(cellState(state), cell, state);
  });

  it('the counts say each state as the cards show it: queued is not running, a canceled batch is not "done"', () => {
    const four = batchOf(combine([{ ...seeds, values: [lit(1), lit(2), lit(3), lit(4)] }], 'grid'));
    const waiting = contactSheet(
      batchStatus(four, [record(0, 'succeeded'), record(1, 'queued'), record(2, undefined), record(3, 'queued')]),
      new Map(),
    );
    assert.deepEqual(
      waiting.cells.map((c) => c.state),
      ['succeeded', 'queued', 'queued', 'queued'],
    );
    assert.equal(waiting.counts, '1 succeeded, 3 queued');
    const five = batchOf(combine([{ ...seeds, values: [1, 2, 3, 4, 5].map(lit) }], 'grid'));
    const canceled = batchStatus({ ...five, canceledAt: '2026-11-26T00:01:00.000Z' }, [
      record(0, 'succeeded'),
      record(1, 'succeeded'),
      record(2, 'succeeded'),
      record(3, 'canceled'),
      record(4, 'canceled'),
    ]);
    assert.equal(describeCounts(canceled.counts), '3 succeeded, 2 canceled');
    assert.equal(
      describeCounts(batchStatus(five, [record(0, 'running'), record(1, undefined, 'outcome_unknown')]).counts),
      '1 running, 1 unknown, 3 not sent',
    );
  });

  it('cells carry their job id and state from the job records', () => {
    const batch = batchOf(combine([seeds], 'grid'));
    const sheet = contactSheet(
      batchStatus(batch, [record(0, 'succeeded'), record(1, 'running'), record(2, undefined, 'pending')]),
      new Map(),
    );
    assert.deepEqual(
      sheet.cells.map((c) => [c.state, c.jobId, c.detail]),
      [
        ['succeeded', 'job-0', 'succeeded'],
        ['running', 'job-1', 'running'],
        ['queued', null, 'submitting'],
      ],
    );
    assert.equal(sheet.counts, '1 succeeded, 1 running, 1 queued');
    assert.equal(sheet.anyEnded, true);
    assert.equal(sheet.finished, false);
    assert.equal(
      contactSheet(batchStatus(batch, [record(1, 'running')]), new Map()).anyEnded,
      false,
      'nothing ended yet',
    );
  });

  it("a cell's image is its first image file (by extension, whatever the order); the other files are counted", () => {
    const batch = batchOf(combine([seeds], 'grid'));
    const files = new Map<number, VariationFiles>([
      [0, { files: ['/out/0-1/log.txt', '/out/0-1/a.PNG', '/out/0-1/b.webp'] }],
      [1, { files: ['/out/1-2/data.json'] }],
    ]);
    const sheet = contactSheet(batchStatus(batch, [record(0, 'succeeded'), record(1, 'succeeded')]), files);
    assert.deepEqual(
      sheet.cells.map((c) => [c.image, c.otherFiles]),
      [
        ['/out/0-1/a.PNG', 2],
        [null, 1],
        [null, 0],
      ],
    );
  });

  it("a failed cell keeps its reason; another state's reason is not shown", () => {
    const batch = batchOf(combine([seeds], 'grid'));
    const files = new Map<number, VariationFiles>([
      [0, { files: [], error: 'KSampler: out of memory' }],
      [1, { files: [], error: 'stale' }],
    ]);
    const sheet = contactSheet(batchStatus(batch, [record(0, 'failed'), record(1, 'succeeded')]), files);
    assert.equal(sheet.cells[0]!.error, 'KSampler: out of memory');
    assert.equal(sheet.cells[1]!.error, null);
  });

  it("a variation's files are its folder's regular files by name; a hidden partial download and a sub-folder are not; no folder, no files", async () => {
    const folder = tempDir('cc-sheet-files-');
    fs.writeFileSync(path.join(folder, 'b.png'), 'x');
    fs.writeFileSync(path.join(folder, 'a.txt'), 'x');
    fs.writeFileSync(path.join(folder, '.0123abcd.part'), 'half a png');
    fs.mkdirSync(path.join(folder, 'sub'));
    assert.deepEqual(await variationFiles(folder), [path.join(folder, 'a.txt'), path.join(folder, 'b.png')]);
    assert.deepEqual(await variationFiles(path.join(folder, 'not-yet')), []);
  });
});
