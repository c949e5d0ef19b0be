/**
 * The one resolution of an unknown outcome (core/jobs/unknownOutcome.ts), through the v2 backend's submit, against a
 * scripted server that records what it saw and when (the client's manual clock): Job and Asset API v2, POST
 * /api/v2/jobs, rules 3–5 (a key is single-use; after an unknown outcome it stays claimed even when no job was made;
 * the client lists its jobs instead of presenting it again).
 */
import * as assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ManualClock, OutcomeUnknownError, settleLateJobs, type SettleEvent } from '../../src/core';
import { StateStore, submissionChain, type JobRecord } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { canonicalJson, hashBytes } from '../../src/core/util';
import { errorEnvelope, invertWorkflow, job } from './builders';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

const T0 = Date.parse('2026-11-22T10:00:00Z');
const SETTLE = 3000;

/** One request as the scripted server saw it: when (the client's clock), what, and the Idempotency-Key. */
interface Seen {
  at: number;
  what: string;
  key?: string;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req) void _;
}

/**
 * A v2 server scripted by the test: `post(n)` answers the n-th submission (a status and body, or a job to create and
 * answer 201 with), the listing lists `jobs` (as they stand when asked), each job's workflow is `workflows[id]`
 * (undefined: 404), GET and cancel answer from `jobs`.
 */
class Scripted {
  readonly seen: Seen[] = [];
  jobs: Record<string, unknown>[] = [];
  readonly workflows = new Map<string, unknown>();
  /** A job's workflow answers 404 until the listing was read this many times (a server slow to show a new job). */
  workflowShownFromReading = 0;
  listing: 'ok' | 'absent' = 'ok';
  /** The listing shows the jobs from this reading on (1: the first); before, it lists none (a listing that lags). */
  listingFrom = 1;
  post: (n: number, workflow: unknown) => { status: number; body: unknown; create?: Record<string, unknown> } = () => ({
    status: 500,
    body: errorEnvelope('upstream_error'),
  });
  private posts = 0;
  server!: TestServer;

  constructor(private readonly clock: ManualClock) {}

  async start(): Promise<void> {
    this.server = await startServer((req, res) => void this.handle(req, res));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const at = this.clock.now();
    if (req.method === 'POST' && url.pathname === '/api/v2/jobs') {
      let text = '';
      for await (const chunk of req) text += chunk;
      this.seen.push({ at, what: 'POST', key: String(req.headers['idempotency-key']) });
      const workflow = (JSON.parse(text) as { workflow: unknown }).workflow;
      const answer = this.post(++this.posts, workflow);
      if (answer.create) {
        this.jobs.unshift(answer.create);
        this.workflows.set(answer.create.id as string, workflow);
      }
      return send(res, answer.status, answer.body);
    }
    await drain(req);
    if (req.method === 'GET' && url.pathname === '/api/v2/jobs') {
      this.seen.push({ at, what: 'LIST' });
      if (this.listing === 'absent') return send(res, 404, errorEnvelope('not_found'));
      return send(res, 200, { jobs: this.readings().length < this.listingFrom ? [] : this.jobs, truncated: false });
    }
    const m = /^\/api\/v2\/jobs\/([^/]+)(\/workflow|\/cancel|\/events)?$/.exec(url.pathname);
    const found = m ? this.jobs.find((j) => j.id === m[1]) : undefined;
    this.seen.push({ at, what: `${req.method} ${m?.[2] ?? 'job'}${m ? ` ${m[1]}` : ''}` });
    if (!m || !found) return send(res, 404, errorEnvelope('not_found'));
    if (m[2] === '/events') return send(res, 501, errorEnvelope('not_implemented'));
    if (m[2] === '/workflow') {
      if (this.readings().length < this.workflowShownFromReading) return send(res, 404, errorEnvelope('not_found'));
      return send(res, 200, { format: 'api', workflow: this.workflows.get(m[1]!) });
    }
    if (m[2] === '/cancel') found.status = found.status === 'queued' ? 'canceled' : found.status;
    return send(res, 200, found);
  }

  /** The times of the listing's readings. */
  readings(): number[] {
    return this.seen.filter((s) => s.what === 'LIST').map((s) => s.at);
  }

  posted(): Seen[] {
    return this.seen.filter((s) => s.what === 'POST');
  }
}

describe('an unknown outcome, resolved through the job listing (core/jobs/unknownOutcome.ts)', () => {
  let clock: ManualClock;
  let server: Scripted;
  let store: StateStore;
  let backend: V2JobBackend;
  const events: SettleEvent[] = [];

  beforeEach(async () => {
    clock = new ManualClock(T0, { autoAdvance: true });
    server = new Scripted(clock);
    await server.start();
    store = new StateStore(tempDir('cc-unknown-'));
    backend = new V2JobBackend(new V2Client({ baseUrl: server.server.origin, clock }), { settleMs: SETTLE });
    events.length = 0;
  });
  afterEach(async () => {
    await backend.close();
    await server.server.close();
  });

  const submit = (workflow: unknown, key?: string) =>
    backend.submit(workflow, { store, idempotencyKey: key, onResolution: (e) => events.push(e) });
  /** A job the server made at `at` (ms since the epoch). */
  const made = (at: number, status = 'queued') => job(status, { created_at: new Date(at).toISOString() });

  it('rule: the job an unheard submission made is found in the listing (its workflow, its time, the closest first) once the settle window passed, and adopted: nothing is sent again', async () => {
    const wf = invertWorkflow({ prefix: 'found' });
    const ours = made(T0 + 40_000);
    const decoy = made(T0 + 20_000); // closer in time, another workflow
    const earlier = made(T0 - 62_000); // the same workflow, outside the window
    server.jobs = [ours, decoy, earlier];
    server.workflows
      .set(ours.id as string, wf)
      .set(decoy.id as string, invertWorkflow({ prefix: 'other' }))
      .set(earlier.id as string, wf);
    server.post = () => ({ status: 502, body: 'Bad gateway' });
    const accepted = await submit(wf);
    assert.equal(accepted.job.id, ours.id);
    assert.equal(accepted.adopted, true);
    assert.equal(server.posted().length, 1, 'submitted exactly once');
    const [listed] = server.readings();
    assert.ok(
      listed !== undefined && listed >= server.posted()[0]!.at + SETTLE,
      'the listing is read once the settle window has passed since the send',
    );
    assert.deepEqual(
      server.seen.slice(1).map((s) => s.what),
      ['LIST', `GET /workflow ${decoy.id}`, `GET /workflow ${ours.id}`],
      "the candidates within the window, closest first; never the earlier job; no GET: the listing's answer is followed",
    );
    const record = await store.get(accepted.recordKey);
    assert.equal(record?.state, 'created');
    assert.equal(record?.jobId, ours.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['unknown', 'adopted'],
    );
  });

  it('rule: two complete readings a settle window apart without the job prove it absent: the key is retired (its send time, its successor named) and the workflow is sent again, once, under the successor', async () => {
    const wf = invertWorkflow({ prefix: 'absent' });
    server.post = (n) => {
      if (n === 1) return { status: 503, body: errorEnvelope('upstream_unreachable') };
      const created = made(clock.now());
      return { status: 201, body: created, create: created };
    };
    const accepted = await submit(wf, 'first-key');
    const posts = server.posted();
    assert.equal(posts.length, 2);
    assert.equal(posts[0]!.key, 'first-key');
    assert.notEqual(posts[1]!.key, 'first-key', 'never presented again');
    assert.equal(accepted.recordKey, posts[1]!.key);
    assert.equal(accepted.adopted, false);
    const readings = server.readings();
    assert.equal(readings.length, 2);
    assert.ok(readings[0]! >= posts[0]!.at + SETTLE, 'the first reading once the settle window passed');
    assert.ok(readings[1]! - readings[0]! >= SETTLE, 'the second a settle window later');
    assert.ok(posts[1]!.at >= readings[1]!, 'sent again only after the second reading');
    const retired = (await store.list({ retired: true })).find((r) => r.idempotencyKey === 'first-key')!;
    assert.equal(retired.state, 'retired');
    assert.equal(retired.retiredBy, 'listing');
    assert.equal(retired.successorKey, posts[1]!.key);
    assert.equal(retired.sentAt, new Date(posts[0]!.at).toISOString());
    const successor = await store.get(posts[1]!.key!);
    assert.equal(successor?.state, 'created');
    assert.equal(successor?.originKey, 'first-key');
    assert.deepEqual(accepted.retiredKeys, ['first-key']);
    assert.deepEqual(
      events.map((e) => e.type),
      ['unknown', 'retired'],
    );
    // A retired key stands for no job: lists of jobs leave it out.
    assert.ok(!(await store.list()).some((r) => r.idempotencyKey === 'first-key'));
  });

  it("rule: a reading that proves nothing (a candidate's workflow not shown yet, 404) does not count toward absence: the job is found when it shows", async () => {
    const wf = invertWorkflow({ prefix: 'lagging' });
    const ours = made(T0 + 1000);
    server.post = () => {
      server.jobs = [ours];
      server.workflows.set(ours.id as string, wf);
      return { status: 504, body: errorEnvelope('upstream_error') };
    };
    // Its workflow shows from the third reading on: the first two readings see a candidate they cannot read.
    server.workflowShownFromReading = 3;
    const accepted = await submit(wf);
    assert.equal(accepted.job.id, ours.id);
    assert.equal(
      server.posted().length,
      1,
      'never sent again: the readings that could not see the workflow proved nothing',
    );
    assert.equal(server.readings().length, 3);
  });

  it('rule: a 2xx whose body could not be read made a job: it is looked for until found, and never taken for absent (never sent again)', async () => {
    const wf = invertWorkflow({ prefix: 'unreadable' });
    const ours = made(T0 + 500);
    server.post = () => ({ status: 201, body: 'not json', create: ours });
    // The listing shows it only from the fourth reading on: two empty readings prove nothing about a heard 2xx.
    server.listingFrom = 4;
    const accepted = await submit(wf);
    assert.equal(accepted.job.id, ours.id);
    assert.equal(server.posted().length, 1);
    assert.ok(server.readings().length >= 4);
    assert.equal(
      (await store.get(accepted.recordKey))?.acceptedUnread,
      true,
      'remembered as answered, its body unread',
    );
    // One that never shows stays unknown: still never sent again.
    server.listingFrom = Infinity;
    await assert.rejects(submit(invertWorkflow({ prefix: 'unreadable-2' })), (e: unknown) => OutcomeUnknownError.is(e));
    assert.equal(server.posted().length, 2);
  });

  it('rule: where the surface lists no jobs (404), the outcome cannot be decided: OutcomeUnknownError, nothing sent again', async () => {
    server.listing = 'absent';
    server.post = () => ({ status: 502, body: 'Bad gateway' });
    await assert.rejects(submit(invertWorkflow({ prefix: 'nolisting' })), (e: unknown) => {
      assert.ok(OutcomeUnknownError.is(e), String(e));
      assert.equal(e.reason, 'no_listing');
      assert.match(e.message, /does not list its jobs/);
      return true;
    });
    assert.equal(server.posted().length, 1);
    const [record] = await store.list();
    assert.equal(record?.state, 'outcome_unknown');
  });

  it('rule: a crash between retiring a key and sending its successor leaves the successor unsent: the next submission sends it under that key, never the retired one', async () => {
    const wf = invertWorkflow({ prefix: 'crash' });
    const hash = await hashBytes(canonicalJson(wf));
    const retired: JobRecord = {
      idempotencyKey: 'k0',
      baseUrl: backend.baseUrl,
      state: 'retired',
      submittedAt: new Date(T0 - 10_000).toISOString(),
      sentAt: new Date(T0 - 10_000).toISOString(),
      retiredAt: new Date(T0 - 4000).toISOString(),
      retiredBy: 'listing',
      successorKey: 'k1',
      workflowHash: hash,
    };
    await store.put(retired);
    assert.deepEqual(submissionChain('k0', (k) => (k === 'k0' ? retired : undefined)).currentKey, 'k1');
    server.post = () => {
      const created = made(clock.now());
      return { status: 201, body: created, create: created };
    };
    const accepted = await submit(wf, 'k0');
    assert.deepEqual(
      server.posted().map((p) => p.key),
      ['k1'],
    );
    assert.equal(accepted.recordKey, 'k1');
    assert.equal((await store.get('k1'))?.originKey, 'k0');
  });

  it('rule: a job that turns up late for a retired key is a duplicate once the submission has its job: canceled while queued, noted on the retired record; with no job yet, it is adopted', async () => {
    const wf = invertWorkflow({ prefix: 'late' });
    const hash = await hashBytes(canonicalJson(wf));
    const sent = T0 - 20_000;
    const base = {
      baseUrl: backend.baseUrl,
      submittedAt: new Date(sent).toISOString(),
      sentAt: new Date(sent).toISOString(),
      workflowHash: hash,
    };
    // Variation A: k0 retired, k1 has its job; variation B: b0 retired, b1 not sent yet.
    await store.put({
      ...base,
      idempotencyKey: 'k0',
      state: 'retired',
      successorKey: 'k1',
      retiredAt: new Date(sent + 6000).toISOString(),
    });
    await store.put({
      ...base,
      idempotencyKey: 'k1',
      state: 'created',
      jobId: 'job-a',
      originKey: 'k0',
      submittedAt: new Date(sent + 6000).toISOString(),
    });
    const wfB = invertWorkflow({ prefix: 'late-b' });
    await store.put({
      ...base,
      idempotencyKey: 'b0',
      state: 'retired',
      successorKey: 'b1',
      retiredAt: new Date(sent + 6000).toISOString(),
      workflowHash: await hashBytes(canonicalJson(wfB)),
    });
    const lateA = made(sent + 500);
    const lateB = made(sent + 700, 'running');
    const jobA = made(sent + 6500, 'running');
    jobA.id = 'job-a';
    server.jobs = [jobA, lateB, lateA];
    server.workflows
      .set('job-a', wf)
      .set(lateA.id as string, wf)
      .set(lateB.id as string, wfB);
    const found = await settleLateJobs(backend, store, ['k0', 'b0'], { clock, reader: backend.reader });
    assert.deepEqual(
      found.map((f) => [f.originKey, f.kind, f.jobId, f.canceled]),
      [
        ['k0', 'duplicate', lateA.id, true],
        ['b0', 'adopted', lateB.id, false],
      ],
    );
    assert.ok(
      server.seen.some((s) => s.what === `POST /cancel ${lateA.id as string}`),
      'the queued duplicate was canceled',
    );
    const k0 = (await store.list({ retired: true })).find((r) => r.idempotencyKey === 'k0')!;
    assert.deepEqual(
      k0.lateJobs?.map((l) => [l.jobId, l.canceled, l.status]),
      [[lateA.id, true, 'canceled']],
    );
    assert.equal(
      (await store.get('b1'))?.jobId,
      lateB.id,
      'the variation without a job adopts it under the key it stands under',
    );
    // The next reading finds nothing more: each late job is held by a record now.
    assert.deepEqual(await settleLateJobs(backend, store, ['k0', 'b0'], { clock, reader: backend.reader }), []);
  });
});
