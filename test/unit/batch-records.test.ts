/**
 * Remembered batches (src/core/state/batchRecords.ts): a batch record is written whole before anything is sent,
 * never replaced, and read tolerantly.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BatchStore, newBatchId, type BatchRecord } from '../../src/core/state/batchRecords';
import { ComfyError } from '../../src/core/http/errors';
import { tempDir } from './tmp';

function batch(batchId: string, createdAt = '2026-01-01T00:00:00.000Z'): BatchRecord {
  return {
    batchId,
    baseUrl: 'http://127.0.0.1:1',
    workflow: { '3': { class_type: 'KSampler', inputs: { seed: 0 } } },
    createdAt,
    concurrency: 4,
    variations: [1, 2, 3].map((seed, index) => ({
      index,
      idempotencyKey: `${batchId}-k${index}`,
      inputs: [{ nodeId: '3', field: 'seed', value: { kind: 'literal', value: seed } }],
    })),
  };
}

describe('batch records: written whole before anything is sent, never replaced', () => {
  it('a created batch reads back whole, each variation with its own Idempotency-Key', async () => {
    const store = new BatchStore(tempDir('batches-'));
    const id = newBatchId();
    await store.create(batch(id));
    const got = await store.get(id);
    assert.deepEqual(got, batch(id));
    assert.equal(new Set(got!.variations.map((v) => v.idempotencyKey)).size, 3);
    assert.deepEqual(fs.readdirSync(path.join(store.dir, 'tmp')), [], 'no temporary file is left');
  });

  it('a batch id recorded already is never replaced (batch_exists), the first record kept', async () => {
    const store = new BatchStore(tempDir('batches-'));
    await store.create(batch('b-1'));
    const other = { ...batch('b-1'), concurrency: 9 };
    await assert.rejects(store.create(other), (err: unknown) => ComfyError.is(err) && err.code === 'batch_exists');
    assert.equal((await store.get('b-1'))!.concurrency, 4);
  });

  it('concurrent creates of one id: exactly one wins', async () => {
    const store = new BatchStore(tempDir('batches-'));
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.create({ ...batch('b-race'), concurrency: i + 1 })),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  });

  it('rule: a cancel is seen by canceledAt at once, from another store of the same folder (another process), its first time kept', async () => {
    const dir = tempDir('batches-');
    const runner = new BatchStore(dir);
    await runner.create(batch('b-cancel'));
    assert.equal(await runner.canceledAt('b-cancel'), undefined);
    assert.equal(await runner.canceledAt('b-cancel'), undefined, 'asked again, unchanged');
    const other = new BatchStore(dir);
    await other.markCanceled('b-cancel', '2026-01-03T00:00:00.000Z');
    assert.equal(await runner.canceledAt('b-cancel'), '2026-01-03T00:00:00.000Z');
    await other.markCanceled('b-cancel', '2026-01-04T00:00:00.000Z');
    assert.equal(await runner.canceledAt('b-cancel'), '2026-01-03T00:00:00.000Z');
    assert.deepEqual(
      (await runner.get('b-cancel'))!.variations,
      batch('b-cancel').variations,
      'the variations and keys as they were',
    );
    assert.equal(await runner.canceledAt('b-none'), undefined);
  });

  it('list is newest first and skips damaged or foreign files; a hostile id names no path outside batches/', async () => {
    const store = new BatchStore(tempDir('batches-'));
    await store.create(batch('b-old', '2026-01-01T00:00:00.000Z'));
    await store.create(batch('b-new', '2026-01-02T00:00:00.000Z'));
    fs.writeFileSync(path.join(store.dir, 'batches', 'b-bad.json'), '{"createdAt": 1');
    fs.writeFileSync(path.join(store.dir, 'batches', 'b-foreign.json'), '[1, 2]');
    fs.writeFileSync(path.join(store.dir, 'batches', 'b-other.json'), '{"batchId": "b-other", "variations": {}}');
    assert.deepEqual(
      (await store.list()).map((b) => b.batchId),
      ['b-new', 'b-old'],
    );
    await assert.rejects(store.create(batch('../x')), /not a usable batch id/);
    assert.equal(await store.get('../x'), undefined);
  });
});
