/**
 * The emulator's fault plan (so that "never lose or duplicate a job" can be tested): each kind of fault fires as
 * configured and stops when exhausted, over real HTTP; the client core rides them out where the contract says it can
 * (Job and Asset API v2, POST /api/v2/jobs, rules 3–7, Errors, Events; public sources: 429 codes with
 * Retry-After, `too_many_streams`, `not_implemented`). No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { ManualClock, TimeoutError } from '../../src/core';
import { StateStore } from '../../src/core/state';
import type { WatchUpdate } from '../../src/core/v2/events';
import {
  checkFaultPlan,
  parseFaultSpec,
  startEmulator,
  type Emulator,
  type EmulatorOptions,
  type FaultRule,
} from '../../src/emulator';
import { TERMINAL, call, submit, useEmulator as useBareEmulator, type Answer, type Json } from './harness';
import { tempDir } from './tmp';

/** EmptyImage → ImageInvert → SaveImage. */
function sample(prefix = 'fault'): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 16711680 } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

/** EmptyImage 1×1 → `length` ImageInverts → PreviewImage. */
function chain(length: number): Json {
  const workflow: Json = {
    '0': { class_type: 'EmptyImage', inputs: { width: 1, height: 1, batch_size: 1, color: 0 } },
  };
  for (let i = 1; i <= length; i++)
    workflow[String(i)] = { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] } };
  workflow.out = { class_type: 'PreviewImage', inputs: { images: [String(length), 0] } };
  return workflow;
}

async function until(emu: Emulator, id: string, predicate: (job: Json) => boolean): Promise<Json> {
  for (let i = 0; i < 5000; i++) {
    const { status, body } = await call(`${emu.baseUrl}/api/v2/jobs/${id}`);
    if (status === 200 && predicate(body)) return body;
  }
  throw new Error(`job ${id}: the condition never held`);
}

async function jobIds(emu: Emulator): Promise<string[]> {
  return (await call(`${emu.baseUrl}/api/v2/jobs?limit=1000`)).body.jobs.map((j: Json) => j.id);
}

interface SseRead {
  events: { event: string; data: Json }[];
  comments: string[];
  /** How the stream ended: the server ended it, reset it, or the reader stopped. */
  end: 'ended' | 'reset' | 'stopped';
}

/** Reads an event stream until it ends or breaks, or until `stop` holds. */
async function readStream(res: Response, stop?: (s: SseRead) => boolean): Promise<SseRead> {
  const out: SseRead = { events: [], comments: [], end: 'ended' };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      out.end = 'reset';
      return out;
    }
    if (chunk.done) return out;
    buffer += decoder.decode(chunk.value, { stream: true });
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at).split('\n');
      buffer = buffer.slice(at + 2);
      for (const l of block) if (l.startsWith(':')) out.comments.push(l);
      const event = block.find((l) => l.startsWith('event: '))?.slice(7);
      const data = block.find((l) => l.startsWith('data: '))?.slice(6);
      if (event !== undefined && data !== undefined) out.events.push({ event, data: JSON.parse(data) });
    }
    if (stop?.(out)) {
      out.end = 'stopped';
      await reader.cancel();
      return out;
    }
  }
}

/** Resolves once the emulator's fault log has grown past `length` entries (a fault fired on a request it received). */
async function faultFired(emu: Emulator, length: number): Promise<void> {
  while (emu.faultLog.length <= length) await new Promise((resolve) => setImmediate(resolve));
}

function openEvents(url: string): Promise<Response> {
  return fetch(url, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(15_000) });
}

/** An emulator for one suite whose fault plan is emptied after each test. */
function useEmulator(options: EmulatorOptions = {}): () => Emulator {
  const emu = useBareEmulator(options);
  afterEach(() => emu()?.setFaults({ rules: [] }));
  return emu;
}

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

describe('fault plan: event stream (dropStream, silentStream)', () => {
  const emu = useEmulator({ nodeDelayMs: 60_000, keepAliveMs: 5 });
  let job: Json;
  beforeEach(async () => {
    job = (await submit(emu(), sample())).body;
    await until(emu(), job.id, (j) => j.status === 'running');
  });
  afterEach(async () => {
    await call(job.urls.cancel, { method: 'POST' });
  });

  it('dropStream after 1 frame: the stream ends after exactly that frame, no terminal status; the next stream is whole', async () => {
    emu().setFaults({ rules: ['events:dropAfter=1:times=1'] });
    const cut = await readStream(await openEvents(job.urls.events));
    assert.equal(cut.end, 'ended');
    assert.deepEqual(
      cut.events.map((e) => e.event),
      ['status'],
    );
    assert.equal(cut.events[0].data.status, 'running', 'not a terminal status');
    assert.deepEqual(cut.comments, []);
    const whole = await readStream(await openEvents(job.urls.events), (s) => s.comments.length >= 1);
    assert.deepEqual(
      whole.events.map((e) => e.event),
      ['status', 'progress'],
    );
    assert.equal(whole.end, 'stopped', 'still open');
  });

  it('dropStream how=reset: the connection is reset after N frames', async () => {
    emu().setFaults({ rules: ['events:dropAfter=2:how=reset:times=1'] });
    const cut = await readStream(await openEvents(job.urls.events));
    assert.equal(cut.end, 'reset');
    assert.deepEqual(
      cut.events.map((e) => e.event),
      ['status', 'progress'],
    );
  });

  it('silentStream: the headers and N frames, then nothing at all (no keep-alive, no event, no end) until the emulator closes', async () => {
    const own = await startEmulator({
      port: 0,
      nodeDelayMs: 60_000,
      keepAliveMs: 5,
      faults: { rules: ['events:silentAfter=1:times=1'] },
    });
    try {
      const running = (await submit(own, sample())).body;
      await until(own, running.id, (j) => j.status === 'running');
      const silent = await openEvents(running.urls.events);
      assert.equal(silent.status, 200);
      assert.match(silent.headers.get('content-type') ?? '', /text\/event-stream/);
      const silentRead = readStream(silent);
      // A healthy stream beside it gets its keep-alives meanwhile (every 5 ms).
      const healthy = await readStream(await openEvents(running.urls.events), (s) => s.comments.length >= 3);
      assert.deepEqual(healthy.comments, [': keep-alive', ': keep-alive', ': keep-alive']);
      await call(running.urls.cancel, { method: 'POST' });
      await until(own, running.id, (j) => TERMINAL.includes(j.status));
      await own.close(); // only now does the silent stream end
      const quiet = await silentRead;
      assert.deepEqual(
        quiet.events.map((e) => e.event),
        ['status'],
        'its one frame, and not the terminal status',
      );
      assert.deepEqual(quiet.comments, [], 'not even a keep-alive');
    } finally {
      await own.close();
    }
  });

  it('the client watch survives streams that always drop after 2 frames, and one refused with 501: the final job comes from GET', async () => {
    const own = await startEmulator({
      port: 0,
      nodeDelayMs: 5,
      faults: { rules: ['events:status=not_implemented:times=1', 'events:dropAfter=2'] },
    });
    const client = new V2Client({ baseUrl: own.baseUrl, clock: new ManualClock(Date.now(), { autoAdvance: true }) });
    try {
      const updates: WatchUpdate[] = [];
      const created = await client.jobs.submit(chain(20));
      const first = await client.watch(created, { onUpdate: (u) => updates.push(u) });
      assert.equal(first.job.status, 'succeeded');
      assert.ok(
        updates.some((u) => u.type === 'mode' && u.mode === 'polling' && /not_implemented/.test(u.reason ?? '')),
        JSON.stringify(updates.filter((u) => u.type === 'mode')),
      );
      const again = await client.jobs.submit(chain(20));
      const second = await client.watch(again, { onUpdate: (u) => updates.push(u) });
      assert.equal(second.job.status, 'succeeded');
      assert.ok(own.faultLog.some((f) => f.kind === 'dropStream'));
    } finally {
      await client.close();
      await own.close();
    }
  });
});

describe('fault plan: content (cutAfterBytes)', () => {
  const emu = useEmulator();

  it('the body breaks off after exactly N bytes, at most `times` times; a Range response is cut N bytes after its start', async () => {
    const job = (
      await submit(emu(), {
        '1': { class_type: 'EmptyImage', inputs: { width: 256, height: 256, batch_size: 1, color: 0x804020 } },
        '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
      })
    ).body;
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    const url = done.outputs[0].url as string;
    const size = done.outputs[0].size_bytes as number;
    emu().setFaults({ rules: ['content:cutAfter=100:times=2'] });
    const bodyLength = async (headers: Record<string, string> = {}): Promise<{ received: number; broke: boolean }> => {
      const res = await fetch(url, { headers });
      let received = 0;
      try {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) received += chunk.length;
        return { received, broke: false };
      } catch {
        return { received, broke: true };
      }
    };
    assert.deepEqual(await bodyLength(), { received: 100, broke: true });
    assert.deepEqual(await bodyLength({ range: 'bytes=50-' }), { received: 100, broke: true });
    assert.deepEqual(await bodyLength(), { received: size, broke: false }, 'exhausted after 2');
  });
});

describe('fault plan: control endpoint (control: true)', () => {
  const emu = useEmulator({ control: true, tokens: ['t'], mountPrefix: '/deployment/dep-1' });
  const auth = { authorization: 'Bearer t' };

  it('POST /__emulator/faults sets the plan (objects and CLI specs), outside the mount prefix and without auth; GET answers it with counters and log; control requests are not recorded', async () => {
    const recorded = emu().requests.length;
    const set = await call(`${emu().origin}/__emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seed: 7, rules: ['health:status=503:times=1', { on: 'list', kind: 'reset', times: 1 }] }),
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.seed, 7);
    assert.deepEqual(set.body.rules, [
      { on: 'health', kind: 'status', status: 503, code: 'upstream_error', times: 1 },
      { on: 'list', kind: 'reset', times: 1 },
    ]);
    const hit = await call(`${emu().baseUrl}/api/v2/health`, { headers: auth });
    assert.equal(hit.status, 503);
    assert.equal(hit.headers.get('retry-after'), '1');
    const state = await call(`${emu().origin}/__emulator/faults`);
    assert.deepEqual(state.body.counters, [
      { seen: 1, fired: 1 },
      { seen: 0, fired: 0 },
    ]);
    assert.equal(state.body.log.length, 1);
    assert.equal(state.body.log[0].path, '/api/v2/health');
    assert.equal(emu().requests.length, recorded + 1, 'only the API request is recorded');
  });

  it('an invalid plan is 400 invalid_fault_plan and the plan in force is kept', async () => {
    emu().setFaults({ rules: ['health:status=500:times=5'] });
    for (const body of [
      '{"rules": [{"on": "nowhere", "kind": "reset"}]}',
      '{"rules": ["get:explode"]}',
      '{"rules": {}}',
      'not json',
    ]) {
      const res = await call(`${emu().origin}/__emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(res.status, 400, body);
      assert.equal(res.body.error.code, 'invalid_fault_plan');
    }
    assert.equal((await call(`${emu().origin}/__emulator/faults`)).body.rules[0].status, 500);
    assert.equal((await call(`${emu().origin}/__emulator/nothing`)).status, 404);
  });

  it('without control: true the path is not served', async () => {
    const plain = await startEmulator({ port: 0 });
    try {
      const res = await call(`${plain.origin}/__emulator/faults`);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
    } finally {
      await plain.close();
    }
  });
});

describe('fault specs (parseFaultSpec) and plan checking', () => {
  it('reads the CLI forms into canonical rules', () => {
    const cases: [string, FaultRule][] = [
      ['submit:afterCreate=502', { on: 'submit', kind: 'afterCreate', status: 502, code: 'upstream_error' }],
      ['submit:afterCreate=reset:times=1', { on: 'submit', kind: 'afterCreate', reset: true, times: 1 }],
      ['submit:afterCreate', { on: 'submit', kind: 'afterCreate', status: 502, code: 'upstream_error' }],
      ['submit:afterCreate=201:delay=40000', { on: 'submit', kind: 'afterCreate', status: 201, delayMs: 40_000 }],
      [
        'submit:afterCreate=503:code=queue_gone:delay=5',
        { on: 'submit', kind: 'afterCreate', status: 503, code: 'queue_gone', delayMs: 5 },
      ],
      ['get:status=500:every=3', { on: 'get', kind: 'status', status: 500, code: 'upstream_error', every: 3 }],
      [
        'get:status=rate_limited:retryAfter=2:times=2',
        { on: 'get', kind: 'status', status: 429, code: 'rate_limited', retryAfter: 2, times: 2 },
      ],
      ['submit:status=429:code=queue_full', { on: 'submit', kind: 'status', status: 429, code: 'queue_full' }],
      ['events:status=not_implemented', { on: 'events', kind: 'status', status: 501, code: 'not_implemented' }],
      ['events:dropAfter=2', { on: 'events', kind: 'dropStream', afterFrames: 2, how: 'end' }],
      ['events:dropAfter=0:how=reset', { on: 'events', kind: 'dropStream', afterFrames: 0, how: 'reset' }],
      ['events:silent', { on: 'events', kind: 'silentStream', afterFrames: 0 }],
      ['events:silentAfter=3', { on: 'events', kind: 'silentStream', afterFrames: 3 }],
      ['content:cutAfter=100000:times=3', { on: 'content', kind: 'cutAfterBytes', bytes: 100_000, times: 3 }],
      ['get:reset:share=0.3', { on: 'get', kind: 'reset', share: 0.3 }],
      ['any:delay=40000:after=1:times=1', { on: 'any', kind: 'delay', ms: 40_000, after: 1, times: 1 }],
      [' upload:status=502 ', { on: 'upload', kind: 'status', status: 502, code: 'upstream_error' }],
      [
        'submit:status=upstream_unreachable',
        { on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable' },
      ],
      [
        'submit:status=502:claims=false',
        { on: 'submit', kind: 'status', status: 502, code: 'upstream_error', claims: false },
      ],
      ['submit:reset:claims=true', { on: 'submit', kind: 'reset', claims: true }],
      ['submit:lag=5000:get=1000:every=2', { on: 'submit', kind: 'lag', listMs: 5000, getMs: 1000, every: 2 }],
      ['submit:lag=0', { on: 'submit', kind: 'lag', listMs: 0, getMs: 0 }],
    ];
    for (const [spec, rule] of cases) assert.deepEqual(parseFaultSpec(spec), rule, spec);
  });

  it('refuses a bad spec with a TypeError saying what is wrong', () => {
    const cases: [string, RegExp][] = [
      ['get', /ON:ACTION/],
      ['nowhere:reset', /"on" must be one of/],
      ['get:explode', /unknown action "explode"/],
      ['get:status', /status needs a value/],
      ['get:status=418', /no default code/],
      ['get:status=teapot', /give a status/],
      ['get:cutAfter=10', /cutAfterBytes applies to "on": "content" only/],
      ['content:dropAfter=1', /dropStream applies to "on": "events" only/],
      ['get:afterCreate=502', /afterCreate applies to "on": "submit" only/],
      ['submit:afterCreate=429', /answers 201 \(late\) or a 5xx/],
      ['get:status=500:every=2:share=0.5', /every or share, not both/],
      ['get:status=500:share=2', /"share" must be a number in 0..1/],
      ['get:status=500:every=0', /"every" must be an integer of at least 1/],
      ['get:status=500:times=x', /times needs a number/],
      ['get:reset:color=red', /unknown option "color"/],
      ['events:dropAfter=-1', /"afterFrames" must be an integer/],
      ['get:status=500:delay=10', /delay= goes with afterCreate/],
      ['get:lag=10', /lag applies to "on": "submit" only/],
      ['submit:lag', /lag needs a number/],
      ['submit:status=500:get=10', /get= goes with lag/],
      ['get:status=500:claims=false', /"claims" applies to "on": "submit" only/],
      ['submit:reset:claims=maybe', /claims= takes true or false/],
    ];
    for (const [spec, message] of cases)
      assert.throws(
        () => parseFaultSpec(spec),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
        spec,
      );
  });

  it('a plan is {seed?, rules}: unknown fields of a rule or a plan are refused', () => {
    assert.deepEqual(checkFaultPlan({ rules: ['get:reset'] }), { seed: 1, rules: [{ on: 'get', kind: 'reset' }] });
    assert.throws(() => checkFaultPlan({ rules: [{ on: 'get', kind: 'reset', time: 1 }] }), /takes no field "time"/);
    assert.throws(() => checkFaultPlan({ rule: [] }), /takes "seed" and "rules"/);
    assert.throws(() => checkFaultPlan([]), TypeError);
  });

  it('a refusal names the rule (its index), the field (its path) and what is allowed', () => {
    const cases: [unknown, RegExp][] = [
      [
        {
          rules: [
            'get:reset',
            {
              on: 'router:invoke',
              kind: 'bucket',
              bucket: 'concurrency_limit_exceeded',
              spendCents: { limit: -1, current: 0 },
            },
          ],
        },
        /^fault rule 1: "spendCents\.limit" must be an integer of at least 0; got -1$/,
      ],
      [
        { rules: [{ on: 'get', kind: 'explode' }] },
        /^fault rule 0: "kind" must be one of status, reset, delay, lag, afterCreate, dropStream, silentStream, cutAfterBytes, bucket; got "explode"$/,
      ],
      [
        {
          rules: [
            { on: 'get', kind: 'delay', ms: 1 },
            { on: 'get', kind: 'delay', ms: 1.5 },
          ],
        },
        /^fault rule 1: "ms" must be an integer in 0\.\.86400000; got 1\.5$/,
      ],
      [
        { rules: [{ on: 'submit', kind: 'lag', listMs: 5, every: 2, share: 0.5 }] },
        /^fault rule 0: give every or share, not both$/,
      ],
      [
        { rules: [{ on: 'events', kind: 'dropStream', afterFrames: 1, how: 'later' }] },
        /^fault rule 0: "how" must be "end" or "reset"; got "later"$/,
      ],
      [
        { rules: [{ on: 'submit', kind: 'reset', claims: 'yes' }] },
        /^fault rule 0: "claims" must be true or false; got "yes"$/,
      ],
      [
        { rules: [{ on: 'get', kind: 'status', status: 500, color: 'red' }] },
        /^fault rule 0: status takes no field "color" \(it takes on, kind, status, code, retryAfter, message, claims, times, every, share, after\)$/,
      ],
      [{ seed: -1, rules: [] }, /^fault plan: "seed" must be an integer in 0\.\.4294967295; got -1$/],
      [{ rules: 'get:reset' }, /^fault plan: "rules" must be an array of rules/],
      [{ rules: [], extra: 1 }, /^fault plan: takes "seed" and "rules" only; got "extra"$/],
    ];
    for (const [plan, message] of cases)
      assert.throws(
        () => checkFaultPlan(plan),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
        JSON.stringify(plan),
      );
  });

  it('startEmulator refuses an invalid plan; setFaults refuses one and keeps the plan in force; a plan given at start applies', async () => {
    await assert.rejects(startEmulator({ port: 0, faults: { rules: ['get:explode'] } }), TypeError);
    const emu = await startEmulator({ port: 0, faults: { rules: ['health:status=500:times=1'] } });
    try {
      assert.throws(
        () => emu.setFaults({ rules: [{ on: 'get', kind: 'delay' } as unknown as FaultRule] }),
        /"ms" must be an integer/,
      );
      assert.equal((await call(`${emu.baseUrl}/api/v2/health`)).status, 500);
      assert.equal((await call(`${emu.baseUrl}/api/v2/health`)).status, 200);
    } finally {
      await emu.close();
    }
  });
});
