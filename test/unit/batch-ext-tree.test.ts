/**
 * The Jobs view's batch item (core views/jobTree.ts, no vscode): a batch is ONE item, its counts in its description,
 * its jobs beneath it labelled by their variation's label and never also loose at top level; its flags say when it
 * can be canceled and resumed.
 */
import * as assert from 'node:assert/strict';
import { JobSchema } from '../../src/core/v2/schemas';
import { buildJobTree, presentBatch, type JobEntry } from '../../src/core/views';
import { planBatch, variationsFromSetOptions } from '../../src/core/batch';
import type { BatchRecord, JobRecord } from '../../src/core/state';
import type { Job } from '../../src/core';
import { jobOf } from '../../src/core/v2/mapping';
import { invertWorkflow, job as rawJob } from './builders';

const BASE = 'http://127.0.0.1:8189';
const NOW = Date.parse('2026-11-22T10:05:00Z');

function job(status: string): Job {
  return jobOf(JobSchema.parse(rawJob(status)), undefined);
}

/** A batch of `count` variations of `1.color` recorded for BASE. */
async function batchOf(count: number, extra: Partial<BatchRecord> = {}): Promise<BatchRecord> {
  const workflow = invertWorkflow();
  const variations = await variationsFromSetOptions(workflow as never, [`1.color=1..${count}`], 'grid', '.');
  return {
    ...planBatch(workflow as never, variations, {
      baseUrl: BASE,
      nowMs: NOW,
      workflowFile: '/home/u/flows/invert.json',
      client: 'vscode',
    }),
    ...extra,
  };
}

/** The entry of variation `index` of `batch`, its job in `status`. */
function variationEntry(batch: BatchRecord, index: number, status: string): JobEntry {
  const j = job(status);
  const record: JobRecord = {
    idempotencyKey: batch.variations[index]!.idempotencyKey,
    baseUrl: BASE,
    state: 'created',
    submittedAt: '2026-11-22T10:00:00Z',
    jobId: j.id,
    batchId: batch.batchId,
    client: 'vscode',
  };
  return { baseUrl: BASE, jobId: j.id, job: j, record };
}

function looseEntry(status: string): JobEntry {
  const j = job(status);
  return {
    baseUrl: BASE,
    jobId: j.id,
    job: j,
    record: {
      idempotencyKey: `k-${j.id}`,
      baseUrl: BASE,
      state: 'created',
      submittedAt: '2026-11-22T10:00:00Z',
      jobId: j.id,
    },
  };
}

describe('batch in the Jobs view (core views/jobTree.ts)', () => {
  it('rule: a batch is one item with its jobs beneath; its jobs are not also listed loose at top level', async () => {
    const batch = await batchOf(3);
    const entries = [
      variationEntry(batch, 0, 'succeeded'),
      variationEntry(batch, 1, 'running'),
      looseEntry('succeeded'),
      looseEntry('running'),
    ];
    const tree = buildJobTree(entries, { now: NOW, batches: [{ batch, running: true }] });
    assert.equal(tree.running.length, 1, 'only the loose running job is at top level');
    assert.equal(tree.recent.length, 1, 'only the loose ended job is at top level');
    assert.equal(tree.runningBatches.length, 1);
    const item = tree.runningBatches[0]!;
    assert.deepEqual(
      item.jobs.map((j) => j.id).sort(),
      [entries[0]!, entries[1]!].map((e) => `${BASE} ${e.jobId}`).sort(),
    );
    assert.equal(tree.badge, 2, "the badge counts every running job, a batch's too");
  });

  it('rule: a batch job is labelled by its variation label, in variation order', async () => {
    const batch = await batchOf(3);
    const item = presentBatch(
      { batch, running: true },
      [variationEntry(batch, 2, 'queued'), variationEntry(batch, 0, 'succeeded')],
      { now: NOW },
    );
    assert.deepEqual(
      item.jobs.map((j) => j.label),
      ['0-1', '2-3'],
    );
  });

  it('rule: the description is the counts as the cards say them (`1 succeeded, 1 failed, 1 running`) and moves with the live job statuses', async () => {
    const batch = await batchOf(4);
    const entries = [
      variationEntry(batch, 0, 'succeeded'),
      variationEntry(batch, 1, 'failed'),
      variationEntry(batch, 2, 'running'),
    ];
    // The record says nothing yet of the end: the live job's status counts.
    const item = presentBatch({ batch, running: true }, entries, { now: NOW });
    assert.equal(item.description, '1 succeeded, 1 failed, 1 running, 1 not sent');
    assert.equal(item.label, 'invert.json');
    assert.equal(item.group, 'running');
    assert.match(item.tooltip, new RegExp(batch.batchId));
  });

  it('rule: a finished batch goes to Recent with a pass or failure icon; a running one spins', async () => {
    const batch = await batchOf(2);
    const ok = presentBatch(
      { batch, running: false },
      [variationEntry(batch, 0, 'succeeded'), variationEntry(batch, 1, 'succeeded')],
      { now: NOW },
    );
    assert.equal(ok.group, 'recent');
    assert.equal(ok.description, '2 succeeded');
    assert.equal(ok.icon.id, 'pass');
    assert.equal(ok.contextValue, 'batch:finished');
    const bad = presentBatch(
      { batch, running: false },
      [variationEntry(batch, 0, 'succeeded'), variationEntry(batch, 1, 'failed')],
      { now: NOW },
    );
    assert.equal(bad.icon.id, 'error');
    assert.equal(bad.contextValue, 'batch:failed');
    const running = presentBatch({ batch, running: true }, [variationEntry(batch, 0, 'running')], { now: NOW });
    assert.equal(running.icon.id, 'sync~spin');
  });

  it('rule: Cancel Batch only while not finished; Resume Batch only while not finished and not running in this window', async () => {
    const batch = await batchOf(2);
    const entries = [variationEntry(batch, 0, 'succeeded')];
    assert.equal(
      presentBatch({ batch, running: true }, entries, { now: NOW }).contextValue,
      'batch:running:cancellable',
    );
    assert.equal(
      presentBatch({ batch, running: false }, entries, { now: NOW }).contextValue,
      'batch:running:cancellable:resumable',
    );
    const canceled = { ...batch, canceledAt: '2026-11-22T10:01:00Z' };
    const item = presentBatch({ batch: canceled, running: false }, entries, { now: NOW });
    assert.equal(item.contextValue, 'batch:canceled', 'a canceled batch with nothing running is finished: neither');
    assert.equal(item.group, 'recent');
  });

  it("a job whose batch is not given (another server's, or its record gone) stays loose", async () => {
    const batch = await batchOf(1);
    const entry = variationEntry(batch, 0, 'succeeded');
    const tree = buildJobTree([entry], { now: NOW });
    assert.equal(tree.recent.length, 1);
    assert.equal(tree.recentBatches.length, 0);
  });
});
