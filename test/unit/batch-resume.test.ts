/**
 * Resuming a batch (src/core/batch/resume.ts): only what was never accepted is submitted, outcome-unknown ones go to
 * reconciliation, a key that may stand for a job is never submitted as new (Job and Asset API v2, POST /api/v2/jobs,
 * rules 3–5).
 */
import * as assert from 'node:assert/strict';
import { batchesToResume, resumePlan } from '../../src/core/batch/resume';
import { batchStatus } from '../../src/core/batch/status';
import type { BatchRecord } from '../../src/core/state/batchRecords';
import type { JobRecord } from '../../src/core/state/stateStore';

const batch: BatchRecord = {
  batchId: 'b-1',
  baseUrl: 'http://x',
  workflow: {},
  createdAt: '2026-01-01T00:00:00.000Z',
  concurrency: 4,
  variations: ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'].map((idempotencyKey, index) => ({
    index,
    idempotencyKey,
    inputs: [],
  })),
};

function record(idempotencyKey: string, fields: Partial<JobRecord>): JobRecord {
  return { idempotencyKey, baseUrl: 'http://x', state: 'pending', submittedAt: '2026-01-01T00:00:00.000Z', ...fields };
}

describe('batch resume: submit only what was never accepted, never a key that may stand for a job', () => {
  it("no record: unsent; created: accepted; outcome_unknown or a dead submitter's pending: unknown; a live pending: in_flight", () => {
    const records = new Map<string, JobRecord>([
      ['k1', record('k1', { state: 'created', jobId: 'j1' })],
      ['k2', record('k2', { state: 'outcome_unknown' })],
      ['k3', record('k3', { state: 'pending', pid: 1 })],
      ['k4', record('k4', { state: 'pending', pid: 2 })],
      ['k5', record('k5', { state: 'created' })], // created without a readable id: a job exists, look for it
    ]);
    const plan = resumePlan(batch, records, (r) => r.pid === 1);
    assert.deepEqual(
      plan.map((s) => [s.variation.index, s.action]),
      [
        [0, 'unsent'],
        [1, 'accepted'],
        [2, 'unknown'],
        [3, 'unknown'],
        [4, 'in_flight'],
        [5, 'unknown'],
      ],
    );
  });

  it('only variations without a record are ever unsent (a key with a record is never submitted as new)', () => {
    const records = new Map<string, JobRecord>(
      batch.variations.map((v, i) => [
        v.idempotencyKey,
        record(v.idempotencyKey, {
          state: (['pending', 'created', 'outcome_unknown'] as const)[i % 3],
          jobId: i % 3 === 1 ? `j${i}` : undefined,
        }),
      ]),
    );
    for (const orphaned of [true, false]) {
      assert.deepEqual(
        resumePlan(batch, records, () => orphaned).filter((s) => s.action === 'unsent'),
        [],
      );
    }
  });
});

describe('batch resume at start-up: which batches a window resumes unasked (core batchesToResume)', () => {
  /** A batch of two variations recorded by `client`; its first variation's job is running, the second not sent. */
  function unfinished(
    batchId: string,
    fields: Partial<BatchRecord> = {},
  ): { batch: BatchRecord; records: JobRecord[] } {
    const variations = [0, 1].map((index) => ({ index, idempotencyKey: `${batchId}-k${index}`, inputs: [] }));
    return {
      batch: { ...batch, batchId, client: 'vscode', variations, ...fields },
      records: [
        record(`${batchId}-k0`, {
          state: 'created',
          jobId: `${batchId}-j0`,
          lastStatus: 'running',
          batchId,
          client: 'vscode',
        }),
      ],
    };
  }

  it('a canceled batch is never restarted, even with a job still running and a variation never sent (run.ts rule 5)', () => {
    const running = unfinished('b-running');
    const canceled = unfinished('b-canceled', { canceledAt: '2026-01-01T00:01:00.000Z' });
    const records = [...running.records, ...canceled.records];
    assert.deepEqual(
      batchesToResume([running.batch, canceled.batch], records, 'http://x', 'vscode').map((b) => b.batchId),
      ['b-running'],
    );
  });

  it("only this server's unfinished batches that this program recorded (the batch's client, else its job records')", () => {
    const own = unfinished('b-own');
    const cli = unfinished('b-cli', { client: 'cli' });
    const otherServer = unfinished('b-other', { baseUrl: 'http://y' });
    const unnamed = unfinished('b-unnamed', { client: undefined }); // an older record: its job records say who
    const finished = unfinished('b-done');
    finished.records = finished.batch.variations.map((v) =>
      record(v.idempotencyKey, {
        state: 'created',
        jobId: `${v.idempotencyKey}-j`,
        lastStatus: 'succeeded',
        batchId: 'b-done',
      }),
    );
    const all = [own, cli, otherServer, unnamed, finished];
    const resumed = batchesToResume(
      all.map((b) => b.batch),
      all.flatMap((b) => b.records),
      'http://x',
      'vscode',
    );
    assert.deepEqual(
      resumed.map((b) => b.batchId),
      ['b-own', 'b-unnamed'],
    );
  });
});

describe('batch resume: a variation whose key was retired stands under its successor', () => {
  const retired = (key: string, successorKey: string): JobRecord =>
    record(key, { state: 'retired', successorKey, retiredBy: 'listing' });

  it('the retired key is never the one acted on: a successor without a record is unsent (a crash between naming and sending it), one with a record goes by it', () => {
    const records = new Map<string, JobRecord>([
      ['k0', retired('k0', 'k0-1')],
      ['k1', retired('k1', 'k1-1')],
      ['k1-1', record('k1-1', { state: 'created', jobId: 'j1', originKey: 'k1' })],
      ['k2', retired('k2', 'k2-1')],
      ['k2-1', retired('k2-1', 'k2-2')],
      ['k2-2', record('k2-2', { state: 'outcome_unknown', originKey: 'k2' })],
    ]);
    const plan = resumePlan(batch, records, () => true);
    assert.deepEqual(
      plan.slice(0, 3).map((s) => [s.variation.index, s.action, s.key, s.retired.map((r) => r.idempotencyKey)]),
      [
        [0, 'unsent', 'k0-1', ['k0']],
        [1, 'accepted', 'k1-1', ['k1']],
        [2, 'unknown', 'k2-2', ['k2', 'k2-1']],
      ],
    );
  });
});

describe('batch status: a variation under its successor key, its retired keys and late duplicates', () => {
  it("the successor's record says where the variation stands, whether the retired records are given (batch status) or left out (StateStore list(): the Jobs view)", () => {
    const late = { jobId: 'late-0', foundAt: '2026-01-01T00:01:00.000Z', canceled: true, status: 'canceled' };
    const records: JobRecord[] = [
      record('k0', { state: 'retired', successorKey: 'k0-1', retiredBy: 'listing', lateJobs: [late] }),
      record('k0-1', { state: 'created', jobId: 'j0', lastStatus: 'succeeded', originKey: 'k0' }),
      record('k1', { state: 'retired', successorKey: 'k1-1', retiredBy: 'user' }),
    ];
    const full = batchStatus(batch, records);
    assert.deepEqual(
      full.variations.slice(0, 2).map((v) => [v.state, v.jobId, v.retired.map((r) => r.idempotencyKey), v.lateJobs]),
      [
        ['succeeded', 'j0', ['k0'], [late]],
        ['not_sent', undefined, ['k1'], []],
      ],
    );
    const listed = batchStatus(
      batch,
      records.filter((r) => r.state !== 'retired'),
    );
    assert.deepEqual(
      listed.variations.slice(0, 2).map((v) => [v.state, v.jobId]),
      [
        ['succeeded', 'j0'],
        ['not_sent', undefined],
      ],
    );
    assert.equal(listed.counts.succeeded, 1);
  });
});
