/**
 * A batch recorded before anything is sent (src/core/batch/plan.ts): one record, every variation with its own
 * Idempotency-Key (Job and Asset API v2, POST /api/v2/jobs, rules 3–5).
 */
import * as assert from 'node:assert/strict';
import { DEFAULT_CONCURRENCY, planBatch, recordBatch } from '../../src/core/batch/plan';
import { combine } from '../../src/core/batch/variations';
import { BatchStore } from '../../src/core/state/batchRecords';
import type { ApiWorkflow } from '../../src/core/util/workflow';
import { tempDir } from './tmp';

const workflow: ApiWorkflow = { '3': { class_type: 'KSampler', inputs: { seed: 0 } } };
const variations = combine(
  [
    {
      nodeId: '3',
      field: 'seed',
      values: Array.from({ length: 200 }, (_, i) => ({ kind: 'literal' as const, value: i })),
    },
  ],
  'grid',
);

describe('batch plan: every variation has its own Idempotency-Key, recorded before anything is sent', () => {
  it('200 variations get 200 distinct keys, in index order, the concurrency defaulting to 4', () => {
    const plan = planBatch(workflow, variations, { baseUrl: 'http://x', nowMs: 0 });
    assert.equal(plan.variations.length, 200);
    assert.equal(new Set(plan.variations.map((v) => v.idempotencyKey)).size, 200);
    assert.deepEqual(
      plan.variations.map((v) => v.index),
      variations.map((v) => v.index),
    );
    assert.equal(plan.concurrency, DEFAULT_CONCURRENCY);
    assert.equal(plan.createdAt, '1970-01-01T00:00:00.000Z');
  });

  it('a key generator that repeats itself is refused (a key stands for one job)', () => {
    assert.throws(
      () => planBatch(workflow, variations, { baseUrl: 'http://x', nowMs: 0, newKey: () => 'same' }),
      /twice/,
    );
  });

  it('recordBatch writes the whole record, read back as planned', async () => {
    const store = new BatchStore(tempDir('plan-'));
    const rec = await recordBatch(store, workflow, variations, { baseUrl: 'http://x', nowMs: 0, concurrency: 8 });
    assert.deepEqual(await store.get(rec.batchId), JSON.parse(JSON.stringify(rec)));
  });
});
