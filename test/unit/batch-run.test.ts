/**
 * The batch runner (core/batch/run.ts) against the emulator, real HTTP on loopback, waits on an injected clock:
 * every variation becomes exactly one job under faults (5xx and resets after the job was created, 429 `queue_full`
 * with Retry-After, resets before), a busy server pauses the whole batch, a resumed batch only follows what was
 * accepted, and a canceled batch sends nothing more.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BatchStore, StateStore } from '../../src/core/state';
import { ManualClock } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import {
  batchStatus,
  describeCounts,
  recordBatch,
  runBatch,
  variationsFromSetOptions,
  type BatchEvent,
} from '../../src/core/batch';
import { headlessJobService } from '../../src/core/backends';
import { startEmulator, type Emulator, type FaultPlan } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { tempDir } from './tmp';

const TOKEN = 'batch-run-token';

/** Jobs the emulator created, by color, whatever the client heard (a 502 or reset after creation included). */
async function createdColors(emu: Emulator): Promise<number[]> {
  const res = await fetch(`${emu.baseUrl}/api/v2/jobs?limit=1000`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const { jobs } = (await res.json()) as { jobs: { id: string }[] };
  const colors: number[] = [];
  for (const j of jobs) {
    const wf = (await (
      await fetch(`${emu.baseUrl}/api/v2/jobs/${j.id}/workflow`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { workflow: Record<string, { inputs: { color?: number } }> };
    colors.push(wf.workflow['1'].inputs.color!);
  }
  return colors.sort((a, b) => a - b);
}

describe('batch run (core/batch/run.ts)', function () {
  this.timeout(120_000);
  let emu: Emulator;
  afterEach(async () => emu?.close());

  async function setUp(faults: FaultPlan, count: number, concurrency = 4) {
    // Waits return at once; the emulator stamps its jobs with the same clock, so reconciliation (which matches a job's
    // creation time to its record's) sees one time.
    const clock = new ManualClock(Date.now(), { autoAdvance: true });
    emu = await startEmulator({ port: 0, tokens: [TOKEN], concurrency: 4, faults, now: () => clock.now() });
    const dir = tempDir('cc-batch-run-');
    const store = new StateStore(dir);
    const batches = new BatchStore(dir);
    const client = new V2Client({ baseUrl: emu.baseUrl, apiKey: TOKEN, clock, timeoutMs: 10_000 });
    const backend = new V2JobBackend(client);
    // The runner follows its jobs through a job service (one watch per job); the service closes the backend.
    const service = headlessJobService(() => ({ backend }), { store });
    const lease = await service.lease();
    const workflow = invertWorkflow({ prefix: 'batch' });
    const variations = await variationsFromSetOptions(workflow as never, [`1.color=1..${count}`], 'grid', dir);
    const batch = await recordBatch(batches, workflow as never, variations, {
      baseUrl: emu.baseUrl,
      concurrency,
      nowMs: clock.now(),
    });
    return { dir, store, batches, clock, service, lease, batch };
  }

  it('every variation is one job under faults after creation, resets and a busy server', async () => {
    const { dir, store, batches, clock, service, lease, batch } = await setUp(
      {
        seed: 3,
        rules: [
          { on: 'submit', kind: 'afterCreate', status: 502, every: 5 },
          { on: 'submit', kind: 'afterCreate', reset: true, every: 7 },
          // No job, the key left claimed (rule 5): a reset, a 503 `upstream_unreachable`; resolved through the listing.
          { on: 'submit', kind: 'reset', every: 11 },
          { on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable', every: 13 },
          // No job, nothing claimed: a proxy's reset in front of the service.
          { on: 'submit', kind: 'reset', every: 17, claims: false },
          { on: 'submit', kind: 'status', code: 'queue_full', retryAfter: 3, every: 4 },
          // A job the listing shows late, and whose own routes answer 404 for a while.
          { on: 'submit', kind: 'lag', listMs: 2000, getMs: 4000, every: 3 },
        ],
      },
      30,
    );
    const events: BatchEvent[] = [];
    const out = path.join(dir, 'out');
    try {
      const result = await runBatch(lease, batch.batchId, {
        store,
        batches,
        out,
        clock,
        onEvent: (e) => events.push(e),
      });
      assert.equal(
        result.allSucceeded,
        true,
        result.outcomes
          .filter((o) => o.state !== 'succeeded')
          .map((o) => `${o.label}: ${o.state} ${String(o.error)}`)
          .join('; '),
      );
      assert.deepEqual(
        await createdColors(emu),
        Array.from({ length: 30 }, (_, i) => i + 1),
        'one job per variation, none twice',
      );
      assert.equal(events.filter((e) => e.type === 'ended').length, 30);
      for (const o of result.outcomes) {
        assert.equal(o.dir, path.join(out, o.label));
        assert.ok(
          o.saved.length > 0 && o.saved.every((f) => fs.existsSync(f.path)),
          `${o.label} has its outputs on disk`,
        );
      }
      // The busy server's Retry-After paused the batch: each pause waited 3 s on the clock.
      assert.ok(events.some((e) => e.type === 'busy' && e.delayMs === 3000));
      // Each submission whose key was left claimed without a job was retired for a successor that has the job.
      const retired = (await store.list({ retired: true })).filter((r) => r.state === 'retired');
      assert.ok(retired.length >= 2, `${retired.length} keys retired`);
      for (const r of retired)
        assert.ok(
          (await store.chain(r.idempotencyKey)).current?.jobId,
          `a successor of ${r.idempotencyKey} has the job`,
        );
      assert.equal(events.filter((e) => e.type === 'retired').length, retired.length);
      const status = batchStatus(batch, await store.list());
      assert.equal(describeCounts(status.counts), '30 succeeded');
      assert.equal(status.finished, true);
    } finally {
      service.dispose();
    }
  });

  it('rule: an unheard submission is looked up before anything is sent again: a job it made is found and followed (never sent twice), and only one proven absent is sent again, under a new key', async () => {
    const { store, batches, clock, service, lease, batch } = await setUp(
      {
        rules: [
          // The first two submissions make their job and lose the answer; the next two make none and keep the key claimed.
          { on: 'submit', kind: 'afterCreate', status: 502, times: 2 },
          { on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable', after: 2, times: 2 },
        ],
      },
      4,
      1,
    );
    const events: BatchEvent[] = [];
    try {
      const result = await runBatch(lease, batch.batchId, { store, batches, clock, onEvent: (e) => events.push(e) });
      assert.equal(result.allSucceeded, true);
      assert.deepEqual(await createdColors(emu), [1, 2, 3, 4], 'one job per variation');
      const keys = emu.requests
        .filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path))
        .map((r) => r.headers['idempotency-key'] as string);
      assert.equal(keys.length, 6, 'four first sends, and one more for each key proven absent');
      assert.equal(new Set(keys).size, 6, 'no key presented twice');
      const submitted = events.filter((e): e is Extract<BatchEvent, { type: 'submitted' }> => e.type === 'submitted');
      assert.deepEqual(
        submitted.map((e) => [e.variation.index, e.adopted]),
        [
          [0, true],
          [1, true],
          [2, false],
          [3, false],
        ],
        'the jobs found are reported as found',
      );
      // Found before anything was sent again: the two jobs made were adopted, their variations never sent twice.
      const posted = (index: number) => keys.filter((k) => k === batch.variations[index]!.idempotencyKey).length;
      assert.deepEqual([posted(0), posted(1)], [1, 1]);
      // Variation 2's key and its successor both met a 503 (concurrency 1: the successor is sent before variation 3).
      assert.deepEqual(
        events
          .filter((e) => e.type === 'retired')
          .map((e) => (e as Extract<BatchEvent, { type: 'retired' }>).variation.index),
        [2, 2],
      );
      for (const o of result.outcomes)
        assert.equal(
          (await store.chain(o.variation.idempotencyKey)).current?.jobId,
          o.jobId,
          `${o.label}: its record holds the job followed`,
        );
    } finally {
      service.dispose();
    }
  });

  it('allSucceeded is false as soon as one variation did not succeed (a refused one here)', async () => {
    const { store, batches, clock, service, lease, batch } = await setUp(
      { rules: [{ on: 'submit', kind: 'status', code: 'invalid_workflow', times: 1 }] },
      3,
      1,
    );
    try {
      const result = await runBatch(lease, batch.batchId, { store, batches, clock });
      assert.deepEqual(
        result.outcomes.map((o) => o.state),
        ['refused', 'succeeded', 'succeeded'],
      );
      assert.equal(result.allSucceeded, false);
    } finally {
      service.dispose();
    }
  });

  it('rule: every created job is followed to its end: a job whose GET answers 404 for a while after its creation is not lost, and a cut download is resumed', async () => {
    const { dir, store, batches, clock, service, lease, batch } = await setUp(
      {
        rules: [
          { on: 'submit', kind: 'lag', listMs: 0, getMs: 8000 },
          { on: 'content', kind: 'cutAfterBytes', bytes: 20, times: 2 },
        ],
      },
      3,
      3,
    );
    try {
      const result = await runBatch(lease, batch.batchId, { store, batches, clock, out: path.join(dir, 'out') });
      assert.deepEqual(
        result.outcomes.map((o) => o.state),
        ['succeeded', 'succeeded', 'succeeded'],
        result.outcomes.map((o) => String(o.error)).join('; '),
      );
      for (const o of result.outcomes) assert.ok(o.saved.length === 1 && fs.existsSync(o.saved[0]!.path));
      assert.ok(emu.faultLog.some((f) => f.kind === 'cutAfterBytes'));
    } finally {
      service.dispose();
    }
  });

  it('a busy answer pauses every variation of the batch, not only the one refused', async () => {
    const { store, batches, clock, service, lease, batch } = await setUp(
      { rules: [{ on: 'submit', kind: 'status', code: 'queue_full', retryAfter: 5, times: 1 }] },
      6,
      2,
    );
    const submittedAt: number[] = [];
    let busyAt: number | undefined;
    try {
      await runBatch(lease, batch.batchId, {
        store,
        batches,
        clock,
        onEvent: (e) => {
          if (e.type === 'submitted') submittedAt.push(clock.now());
          if (e.type === 'busy') busyAt ??= clock.now();
        },
      });
      // The first 429 came before any job existed: no variation was submitted before its Retry-After had passed.
      assert.equal(submittedAt.length, 6);
      assert.ok(busyAt !== undefined);
      assert.ok(
        Math.min(...submittedAt) >= busyAt + 5000,
        `first submission ${Math.min(...submittedAt) - busyAt} ms after the 429`,
      );
    } finally {
      service.dispose();
    }
  });

  it('a resumed batch follows what was accepted and submits only the rest, under the same keys', async () => {
    const { store, batches, clock, service, lease, batch } = await setUp({ rules: [] }, 8);
    try {
      // A first run stopped after 3 jobs were accepted.
      const stop = new AbortController();
      let accepted = 0;
      await runBatch(lease, batch.batchId, {
        store,
        batches,
        clock,
        signal: stop.signal,
        onEvent: (e) => {
          if (e.type === 'submitted' && ++accepted === 3) stop.abort();
        },
      }).catch(() => undefined);
      const before = (await createdColors(emu)).length;
      const result = await runBatch(lease, batch.batchId, { store, batches, clock });
      assert.equal(result.allSucceeded, true);
      assert.deepEqual(await createdColors(emu), [1, 2, 3, 4, 5, 6, 7, 8]);
      assert.ok(before >= 3);
      const keys = emu.requests
        .filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path))
        .map((r) => r.headers['idempotency-key']);
      assert.ok(
        keys.every((k) => batch.variations.some((v) => v.idempotencyKey === k)),
        "only the batch's own keys were presented",
      );
    } finally {
      service.dispose();
    }
  });

  it('a canceled batch sends nothing more', async () => {
    const { store, batches, clock, service, lease, batch } = await setUp({ rules: [] }, 5);
    try {
      await batches.markCanceled(batch.batchId, new Date(clock.now()).toISOString());
      const result = await runBatch(lease, batch.batchId, { store, batches, clock });
      assert.deepEqual(
        result.outcomes.map((o) => o.state),
        ['not_sent', 'not_sent', 'not_sent', 'not_sent', 'not_sent'],
      );
      assert.deepEqual(await createdColors(emu), []);
      assert.equal(emu.requests.filter((r) => r.method === 'POST').length, 0);
    } finally {
      service.dispose();
    }
  });
});
