/**
 * Reconciling orphaned `pending` and `outcome_unknown` records (no job lost or duplicated: Job and Asset API v2,
 * POST /api/v2/jobs, rule 5; job listing is not shown there: the self-hosted companion's): against the in-process
 * emulator, whose listing is real, with jobs submitted through the client and records written by hand as a dead
 * submitter would have left them; and against a loopback server that has no listing.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { V2Client } from '../../src/core/v2/client';
import { StateStore, isOrphaned, isProcessAlive, type JobRecord } from '../../src/core/state';
import { canonicalJson, hashBytes } from '../../src/core/util';
import { findSubmittedJob, reconcilePending } from '../../src/core/v2/reconcile';
import type { Submission } from '../../src/core/v2/jobs';
import { errorEnvelope, invertWorkflow } from './builders';
import { useEmulator } from './harness';
import { startServer } from './httpServer';
import { tempDir } from './tmp';

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

const HOUR = 60 * 60 * 1000;

describe('reconcile: which pending records are orphaned', () => {
  const now = Date.parse('2026-11-22T10:05:00Z');
  const base: JobRecord = {
    idempotencyKey: 'k',
    baseUrl: 'http://a',
    state: 'pending',
    submittedAt: '2026-11-22T10:04:00.000Z',
    pid: 4242,
    hostname: 'here',
  };
  const alive = (): boolean => true;
  const dead = (): boolean => false;

  it('rule: a pending record of this machine whose pid is not alive is orphaned', () => {
    assert.equal(isOrphaned(base, { now, hostname: 'here', isAlive: dead }), true);
    assert.equal(isOrphaned(base, { now, hostname: 'here', isAlive: alive }), false);
  });

  it('rule: a pid of another machine means nothing: its pending record is orphaned only past 10 minutes', () => {
    assert.equal(isOrphaned(base, { now, hostname: 'elsewhere', isAlive: dead }), false);
    assert.equal(isOrphaned(base, { now: now + 10 * 60_000, hostname: 'elsewhere', isAlive: alive }), true);
    assert.equal(
      isOrphaned({ ...base, pid: undefined, hostname: undefined }, { now: now + 10 * 60_000, isAlive: alive }),
      true,
    );
    assert.equal(
      isOrphaned({ ...base, pid: undefined, hostname: undefined }, { now, hostname: 'here', isAlive: dead }),
      false,
    );
  });

  it('rule: only pending records are orphans', () => {
    for (const state of ['created', 'outcome_unknown'] as const)
      assert.equal(isOrphaned({ ...base, state }, { now: now + HOUR, hostname: 'here', isAlive: dead }), false);
  });

  it('rule: a pid is alive when process.kill(pid, 0) succeeds; an exited process is not', async () => {
    assert.equal(isProcessAlive(process.pid), true);
    assert.equal(isProcessAlive(await deadPid()), false);
    assert.equal(isProcessAlive(0), false);
  });
});

describe('reconcile: against the emulator listing', () => {
  const emu = useEmulator();
  let client: V2Client;
  let store: StateStore;
  let dead: number;
  before(async () => {
    dead = await deadPid();
  });
  beforeEach(() => {
    client = new V2Client({ baseUrl: emu().baseUrl });
    store = new StateStore(tempDir('cc-reconcile-'));
  });
  afterEach(async () => client.close());

  /** Submits `workflow` for real and returns the submission with the hash submission.ts would record. */
  async function submitted(workflow: unknown): Promise<{ sub: Submission; hash: string }> {
    const sub = await client.jobs.submit(workflow);
    return { sub, hash: await hashBytes(canonicalJson(workflow)) };
  }

  /** A record as a submitter that died before hearing back leaves it. */
  function orphan(key: string, submittedAt: string, workflowHash: string, extra: Partial<JobRecord> = {}): JobRecord {
    return {
      idempotencyKey: key,
      baseUrl: client.http.baseUrl,
      state: 'pending',
      submittedAt,
      workflowHash,
      pid: dead,
      hostname: os.hostname(),
      client: 'cli',
      ...extra,
    };
  }

  it('rule: an orphaned pending record is adopted: the job submitted at about its time with its workflow hash', async () => {
    const decoy = await submitted(invertWorkflow({ prefix: 'rc-decoy' }));
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-adopt' }));
    await store.put(orphan('k-adopt', sub.job.created_at!, hash));
    const results = await reconcilePending(client, store);
    assert.equal(results.length, 1);
    assert.equal(results[0].outcome, 'adopted');
    assert.equal(results[0].jobId, sub.job.id);
    assert.notEqual(results[0].jobId, decoy.sub.job.id);
    const stored = await store.get('k-adopt');
    assert.equal(stored?.state, 'created');
    assert.equal(stored?.jobId, sub.job.id);
    assert.equal(stored?.expiresAt, sub.job.expires_at ?? undefined);
    assert.deepEqual(results[0].record, stored);
  });

  it('rule: an orphan whose workflow hash matches no job becomes outcome_unknown: check before resubmitting', async () => {
    const { sub } = await submitted(invertWorkflow({ prefix: 'rc-nomatch' }));
    const other = await hashBytes(canonicalJson(invertWorkflow({ prefix: 'rc-never-submitted' })));
    await store.put(orphan('k-none', sub.job.created_at!, other));
    const [result] = await reconcilePending(client, store);
    assert.equal(result.outcome, 'unknown');
    assert.equal(result.reason, 'no_match');
    assert.match(result.message, /^unknown: check before resubmitting/);
    assert.equal((await store.get('k-none'))?.state, 'outcome_unknown');
    assert.equal((await store.get('k-none'))?.jobId, undefined);
  });

  it('rule: a job submitted outside the time window is not adopted', async () => {
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-window' }));
    const longBefore = new Date(Date.parse(sub.job.created_at!) - 10 * 60_000).toISOString();
    await store.put(orphan('k-window', longBefore, hash));
    const [result] = await reconcilePending(client, store, { matchWindowMs: 60_000, maxSubmitMs: 120_000 });
    assert.equal(result.outcome, 'unknown');
    assert.equal((await store.get('k-window'))?.state, 'outcome_unknown');
  });

  it('rule: a pending record of a live submitter (this process, recent) is left alone', async () => {
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-live' }));
    const live = orphan('k-live', sub.job.created_at!, hash, { pid: process.pid });
    await store.put(live);
    const [result] = await reconcilePending(client, store);
    assert.equal(result.outcome, 'skipped');
    assert.equal(result.reason, 'live');
    assert.deepEqual(await store.get('k-live'), live);
  });

  it('rule: a pending record older than 10 minutes is reconciled whatever its host', async () => {
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-aged' }));
    await store.put(orphan('k-aged', sub.job.created_at!, hash, { hostname: 'another-machine', pid: process.pid }));
    const soon = await reconcilePending(client, store, { now: () => Date.parse(sub.job.created_at!) + 60_000 });
    assert.equal(soon[0].outcome, 'skipped');
    const later = await reconcilePending(client, store, { now: () => Date.parse(sub.job.created_at!) + 11 * 60_000 });
    assert.equal(later[0].outcome, 'adopted');
    assert.equal(later[0].jobId, sub.job.id);
  });

  it('rule: an outcome_unknown record whose job is findable now is adopted', async () => {
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-unknown' }));
    await store.put(orphan('k-unknown', sub.job.created_at!, hash, { state: 'outcome_unknown', pid: process.pid }));
    const [result] = await reconcilePending(client, store);
    assert.equal(result.outcome, 'adopted');
    assert.equal((await store.get('k-unknown'))?.jobId, sub.job.id);
  });

  it('rule: a job another record already holds is never adopted again', async () => {
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-claimed' }));
    await store.put({ ...orphan('k-owner', sub.job.created_at!, hash), state: 'created', jobId: sub.job.id });
    await store.put(orphan('k-second', sub.job.created_at!, hash));
    const results = await reconcilePending(client, store);
    assert.deepEqual(
      results.map((r) => [r.record.idempotencyKey, r.outcome]),
      [['k-second', 'unknown']],
    );
    assert.equal((await store.get('k-owner'))?.jobId, sub.job.id);
  });

  it('rule: two orphans of the same workflow adopt two distinct jobs, each the closest in time', async () => {
    const workflow = invertWorkflow({ prefix: 'rc-twice' });
    const first = await submitted(workflow);
    const second = await submitted(workflow);
    // Each orphan submitted at its job's own creation time: its own job is at distance 0, the other at least 1 ms
    // (with an offset of -1 ms, jobs created 1 ms apart would tie the second orphan to the first job).
    await store.put(
      orphan('k-first', first.sub.job.created_at!, first.hash, { submittedAt: first.sub.job.created_at! }),
    );
    await store.put(
      orphan('k-second', second.sub.job.created_at!, second.hash, { submittedAt: second.sub.job.created_at! }),
    );
    const results = await reconcilePending(client, store);
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['adopted', 'adopted'],
    );
    const ids = [(await store.get('k-first'))?.jobId, (await store.get('k-second'))?.jobId];
    assert.deepEqual([...ids].sort(), [first.sub.job.id, second.sub.job.id].sort(), 'one job each');
    if (first.sub.job.created_at !== second.sub.job.created_at)
      assert.deepEqual(ids, [first.sub.job.id, second.sub.job.id], 'the closest in time');
  });

  it('rule: while a live submission of the same workflow is under way, the orphan waits (it could take that job)', async () => {
    const workflow = invertWorkflow({ prefix: 'rc-inflight' });
    const { sub, hash } = await submitted(workflow);
    await store.put(orphan('k-orphan', sub.job.created_at!, hash));
    await store.put(orphan('k-running', sub.job.created_at!, hash, { pid: process.pid }));
    const results = await reconcilePending(client, store);
    assert.deepEqual(results.map((r) => [r.record.idempotencyKey, r.outcome, r.reason]).sort(), [
      ['k-orphan', 'skipped', 'in_flight'],
      ['k-running', 'skipped', 'live'],
    ]);
    assert.equal((await store.get('k-orphan'))?.state, 'pending');
  });

  it('rule: records of another server are skipped', async () => {
    const { sub, hash } = await submitted(invertWorkflow({ prefix: 'rc-other' }));
    await store.put(orphan('k-other', sub.job.created_at!, hash, { baseUrl: 'http://127.0.0.1:9' }));
    const [result] = await reconcilePending(client, store);
    assert.equal(result.outcome, 'skipped');
    assert.equal(result.reason, 'other_server');
    assert.equal((await store.get('k-other'))?.state, 'pending');
  });

  it('rule: findSubmittedJob matches by workflow hash and time, and passes over claimed jobs', async () => {
    const workflow = invertWorkflow({ prefix: 'rc-find' });
    const { sub, hash } = await submitted(workflow);
    const wanted = { submittedAt: sub.job.created_at!, workflowHash: hash };
    assert.equal((await findSubmittedJob(client, wanted, new Set()))?.id, sub.job.id);
    assert.equal(await findSubmittedJob(client, wanted, new Set([sub.job.id])), undefined);
    assert.equal(
      await findSubmittedJob(client, { ...wanted, workflowHash: await hashBytes('{}') }, new Set()),
      undefined,
    );
  });
});

describe('reconcile: a surface without a listing', () => {
  for (const [status, code] of [
    [404, 'not_found'],
    [501, 'not_implemented'],
  ] as const) {
    it(`rule: with no listing (${status}), an orphaned pending record becomes outcome_unknown`, async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(errorEnvelope(code));
      });
      const client = new V2Client({ baseUrl: server.origin });
      try {
        const store = new StateStore(tempDir('cc-reconcile-'));
        const hash = await hashBytes(canonicalJson(invertWorkflow()));
        await store.put({
          idempotencyKey: 'k',
          baseUrl: client.http.baseUrl,
          state: 'pending',
          submittedAt: new Date().toISOString(),
          workflowHash: hash,
          pid: await deadPid(),
          hostname: os.hostname(),
        });
        const [result] = await reconcilePending(client, store);
        assert.equal(result.outcome, 'unknown');
        assert.equal(result.reason, 'no_listing');
        assert.match(result.message, /check before resubmitting/);
        assert.equal((await store.get('k'))?.state, 'outcome_unknown');
        assert.ok(
          server.seen.some((s) => s.method === 'GET' && s.url.startsWith('/api/v2/jobs')),
          'the listing was asked',
        );
        assert.ok(!server.seen.some((s) => s.method === 'POST'), 'nothing resubmitted');
      } finally {
        await client.close();
        await server.close();
      }
    });
  }
});
