/**
 * The emulator's fault plan on answers (so that "never lose or duplicate a job" can be tested): status answers with
 * the error envelope and Retry-After, reset and delay, and afterCreate (the job exists, the answer says otherwise);
 * the client core rides them out where the contract says it can (Job and Asset API v2, POST /api/v2/jobs, rules 3–7,
 * Errors). No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { ManualClock, TimeoutError } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { startEmulator, type FaultRule } from '../../src/emulator';
import { faultFired, jobIds, sample, until, useEmulator } from './emulator-faults.fixtures';
import { TERMINAL, call, submit, type Answer, type Json } from './harness';
import { tempDir } from './tmp';

describe('fault plan: status answers (envelope, Retry-After)', () => {
  const emu = useEmulator();
  let job: Json;
  before(async () => {
    job = (await submit(emu(), sample())).body;
    await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
  });

  it('every=3: every third GET of a job is 500 upstream_error, the others 200; the log names each firing', async () => {
    emu().setFaults({ rules: ['get:status=500:every=3'] });
    const logged = emu().faultLog.length;
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      const res = await call(job.urls.self);
      statuses.push(res.status);
      if (res.status === 500) {
        assert.equal(res.body.error.code, 'upstream_error');
        assert.match(res.body.error.message, /failed unexpectedly/);
        assert.match(res.headers.get('x-svc-request-id') ?? '', /^[0-9a-f-]{36}$/);
      }
    }
    assert.deepEqual(statuses, [200, 200, 500, 200, 200, 500, 200, 200, 500]);
    const fired = emu().faultLog.slice(logged);
    assert.equal(fired.length, 3);
    for (const f of fired) {
      assert.deepEqual(
        { rule: f.rule, on: f.on, kind: f.kind, method: f.method, path: f.path },
        { rule: 0, on: 'get', kind: 'status', method: 'GET', path: `/api/v2/jobs/${job.id}` },
      );
    }
    assert.equal((await call(`${job.urls.self}/workflow`)).status, 200, 'other routes are untouched');
  });

  it('429 with Retry-After for each 429 code: rate_limited on GET and cancel, queue_full and deployment_not_ready on submit, too_many_streams on the event stream', async () => {
    const cases: [FaultRule, () => Promise<Answer>, string][] = [
      [{ on: 'get', kind: 'status', code: 'rate_limited', retryAfter: 2, times: 1 }, () => call(job.urls.self), '2'],
      [{ on: 'cancel', kind: 'status', status: 429, times: 1 }, () => call(job.urls.cancel, { method: 'POST' }), '1'],
      [{ on: 'submit', kind: 'status', code: 'queue_full', times: 1 }, () => submit(emu(), sample()), '1'],
      [
        { on: 'submit', kind: 'status', code: 'deployment_not_ready', retryAfter: 5, times: 1 },
        () => submit(emu(), sample()),
        '5',
      ],
      [{ on: 'events', kind: 'status', code: 'too_many_streams', times: 1 }, () => call(job.urls.events), '1'],
    ];
    for (const [rule, request, retryAfter] of cases) {
      emu().setFaults({ rules: [rule] });
      const res = await request();
      const code = rule.kind === 'status' ? (rule.code ?? 'rate_limited') : '';
      assert.equal(res.status, 429, code);
      assert.equal(res.body.error.code, code);
      assert.equal(res.headers.get('retry-after'), retryAfter, code);
      assert.notEqual((await request()).status, 429, `${code}: times 1, then exhausted`);
    }
  });

  it('rate_limited is account-scoped: it answers for a job id that does not exist too', async () => {
    emu().setFaults({ rules: ['get:status=rate_limited:times=1'] });
    const res = await call(`${emu().baseUrl}/api/v2/jobs/${randomUUID()}`);
    assert.equal(res.status, 429);
    assert.equal(res.body.error.code, 'rate_limited');
  });

  it('the event stream can answer 501 not_implemented (no Retry-After)', async () => {
    emu().setFaults({ rules: ['events:status=not_implemented:times=1'] });
    const res = await call(job.urls.events);
    assert.equal(res.status, 501);
    assert.equal(res.body.error.code, 'not_implemented');
    assert.equal(res.headers.get('retry-after'), null);
  });

  it('a 429 on submit creates no job and claims no key: the same key then gives 201', async () => {
    emu().setFaults({ rules: ['submit:status=queue_full:times=1'] });
    const before = await jobIds(emu());
    const key = randomUUID();
    assert.equal((await submit(emu(), sample(), { 'idempotency-key': key })).status, 429);
    assert.deepEqual(await jobIds(emu()), before);
    assert.equal((await submit(emu(), sample(), { 'idempotency-key': key })).status, 201);
  });

  it('times and after: it lets `after` requests through, fires `times` times, then stops', async () => {
    emu().setFaults({ rules: [{ on: 'get', kind: 'status', status: 503, after: 2, times: 2 }] });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(job.urls.self)).status);
    assert.deepEqual(statuses, [200, 200, 503, 503, 200, 200]);
    assert.deepEqual(emu().faultState().counters, [{ seen: 6, fired: 2 }]);
  });

  it('share draws from the seeded PRNG: the same plan fires on the same requests every time; another seed differs', async () => {
    const pattern = async (seed: number): Promise<string> => {
      emu().setFaults({ seed, rules: [{ on: 'get', kind: 'status', status: 502, share: 0.3 }] });
      let out = '';
      for (let i = 0; i < 40; i++) out += (await call(job.urls.self)).status === 502 ? 'x' : '.';
      return out;
    };
    const first = await pattern(42);
    assert.equal(await pattern(42), first);
    assert.notEqual(await pattern(43), first);
    const fired = first.split('').filter((c) => c === 'x').length;
    assert.ok(fired >= 4 && fired <= 20, `${fired} of 40 at 0.3: ${first}`);
  });

  it('the first due rule fires, every matching rule counts; `any` targets every route', async () => {
    emu().setFaults({ rules: [{ on: 'any', kind: 'status', status: 500, every: 2 }, 'get:status=404:times=1'] });
    assert.equal((await call(job.urls.self)).status, 404, 'rule 0 not due, rule 1 fires');
    assert.equal((await call(`${job.urls.self}/workflow`)).status, 500, 'rule 0: 2nd request of any route');
    assert.equal((await call(job.urls.self)).status, 200);
    assert.deepEqual(emu().faultState().counters, [
      { seen: 3, fired: 1 },
      { seen: 2, fired: 1 },
    ]);
  });

  it('the client watch rides out 502 on every other GET and a rate_limited with Retry-After, and ends with the job from GET', async () => {
    const client = new V2Client({ baseUrl: emu().baseUrl, clock: new ManualClock(Date.now(), { autoAdvance: true }) });
    try {
      const created = await client.jobs.submit(sample('ride'));
      emu().setFaults({ rules: ['get:status=rate_limited:retryAfter=3:times=1', 'get:status=502:every=2'] });
      const final = await client.watch(created, { stream: false });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(emu().faultLog.some((f) => f.rule === 0) && emu().faultLog.some((f) => f.rule === 1));
    } finally {
      await client.close();
    }
  });
});

describe('fault plan: reset and delay', () => {
  const emu = useEmulator();

  it('reset: the first GET breaks at the connection (no answer at all), the next is answered', async () => {
    const job = (await submit(emu(), sample())).body;
    emu().setFaults({ rules: ['get:reset:times=1'] });
    await assert.rejects(fetch(job.urls.self), TypeError);
    assert.equal((await call(job.urls.self)).status, 200);
  });

  it('reset before a submission is handled: no job is created', async () => {
    const before = await jobIds(emu());
    emu().setFaults({ rules: ['submit:reset:times=1'] });
    await assert.rejects(submit(emu(), sample()));
    assert.deepEqual(await jobIds(emu()), before);
  });

  it('delay: a GET held past the client timeout times out (TimeoutError); the next is answered at once', async () => {
    const job = (await submit(emu(), sample())).body;
    emu().setFaults({ rules: ['get:delay=600000:times=1'] });
    // The client's timeout runs on the test's clock: it passes once the emulator holds the GET, on any machine.
    const timeoutClock = new ManualClock(0);
    const client = new V2Client({ baseUrl: emu().baseUrl, timeoutMs: 1000, timeoutClock });
    try {
      const fired = emu().faultLog.length;
      const held = client.jobs.get(job.id);
      await faultFired(emu(), fired);
      assert.equal(emu().faultLog.at(-1)!.kind, 'delay');
      timeoutClock.advance(1000);
      await assert.rejects(held, (e: unknown) => TimeoutError.is(e));
      assert.equal((await client.jobs.get(job.id)).job.id, job.id);
    } finally {
      await client.close();
    }
  });

  it('close() ends a delayed request at once', async () => {
    const own = await startEmulator({ port: 0, faults: { rules: ['health:delay=600000'] } });
    const pending = fetch(`${own.baseUrl}/api/v2/health`).then(
      () => 'answered',
      () => 'broken',
    );
    while (own.faultLog.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await own.close();
    assert.equal(await pending, 'broken');
  });
});

describe('fault plan: afterCreate (the job exists, the answer says otherwise)', () => {
  const emu = useEmulator();

  it('afterCreate=502: the answer is 502 upstream_error, yet the job exists and runs; its key stays claimed', async () => {
    emu().setFaults({ rules: ['submit:afterCreate=502:times=1'] });
    const before = await jobIds(emu());
    const key = randomUUID();
    const res = await submit(emu(), sample('after'), { 'idempotency-key': key });
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'upstream_error');
    const after = await jobIds(emu());
    assert.equal(after.length, before.length + 1, 'the job was created');
    const id = after.find((j) => !before.includes(j))!;
    assert.equal((await until(emu(), id, (j) => TERMINAL.includes(j.status))).status, 'succeeded');
    const again = await submit(emu(), sample('after'), { 'idempotency-key': key });
    assert.equal(again.status, 422);
    assert.equal(again.body.error.code, 'idempotency_key_reuse', 'an unknown outcome keeps the key claimed (rule 5)');
    assert.equal((await submit(emu(), sample('after'))).status, 201, 'exhausted after once');
  });

  it('afterCreate=201 with a delay past the client timeout: the client gives up, the job exists; a durable submission adopts it, never submitting twice', async () => {
    emu().setFaults({ rules: ['submit:afterCreate=201:delay=600000:times=1'] });
    // The client's timeout runs on the test's clock: it passes once the emulator has created the job and holds its
    // answer, on any machine.
    const timeoutClock = new ManualClock(0);
    const client = new V2Client({ baseUrl: emu().baseUrl, timeoutMs: 1000, timeoutClock });
    // The backend's submission settles an unknown outcome through the listing (core/jobs/unknownOutcome.ts).
    const backend = new V2JobBackend(client, { settleMs: 50 });
    const store = new StateStore(tempDir('cc-faults-store-'));
    try {
      const before = await jobIds(emu());
      const fired = emu().faultLog.length;
      const submitting = backend.submit(sample(`late-${randomUUID()}`), { store });
      await faultFired(emu(), fired);
      timeoutClock.advance(1000);
      const accepted = await submitting;
      assert.equal(accepted.adopted, true, 'found in the listing after the timeout');
      const after = await jobIds(emu());
      assert.equal(after.length, before.length + 1, 'one job, not two');
      assert.equal(
        accepted.job.id,
        after.find((j) => !before.includes(j)),
      );
      const posts = emu().requests.filter(
        (r) => r.method === 'POST' && r.path === '/api/v2/jobs' && r.headers['idempotency-key'] === accepted.recordKey,
      );
      assert.equal(posts.length, 1, 'never resubmitted');
    } finally {
      await backend.close();
      fs.rmSync(store.dir, { recursive: true, force: true });
    }
  });

  it('afterCreate=reset: the connection breaks after the job is created; a durable submission adopts it from the listing instead of submitting twice', async () => {
    emu().setFaults({ rules: [{ on: 'submit', kind: 'afterCreate', reset: true, times: 1 }] });
    const backend = new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl }), { settleMs: 50 });
    const store = new StateStore(tempDir('cc-faults-store-'));
    try {
      const before = await jobIds(emu());
      const accepted = await backend.submit(sample(`adopt-${randomUUID()}`), { store });
      assert.equal(accepted.adopted, true);
      const after = await jobIds(emu());
      assert.equal(after.length, before.length + 1, 'one job, not two');
      assert.equal(
        accepted.job.id,
        after.find((j) => !before.includes(j)),
      );
      assert.equal((await store.get(accepted.recordKey))?.state, 'created');
      assert.equal(emu().faultLog.at(-1)!.kind, 'afterCreate');
    } finally {
      await backend.close();
      fs.rmSync(store.dir, { recursive: true, force: true });
    }
  });
});
