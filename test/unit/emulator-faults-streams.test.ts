/**
 * The emulator's fault plan on streams and control: the event stream dropped or silent (Job and Asset API v2,
 * Events), content cut after some bytes, and the control endpoint (control: true). No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { ManualClock } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { type WatchUpdate } from '../../src/core/v2/events';
import { startEmulator } from '../../src/emulator';
import { chain, openEvents, readStream, sample, until, useEmulator } from './emulator-faults.fixtures';
import { TERMINAL, call, submit, type Json } from './harness';

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
