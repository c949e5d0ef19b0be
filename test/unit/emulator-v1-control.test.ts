/**
 * The emulator's deprecated v1 surface beyond one prompt: cancel (POST /api/interrupt, POST /api/queue), faults on the
 * v1 routes (route kinds v1:*), a mount prefix and no keys, the surface turned off (v1: false), and `comfy-cloud
 * emulator`.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { runCli } from '../../src/cli/cli';
import { parseFaultSpec, startEmulator } from '../../src/emulator';
import {
  KEY,
  Socket,
  call,
  facts,
  get,
  postPrompt,
  runOn,
  socketUrl,
  statusesUntilTerminal,
} from './emulator-v1.fixtures';
import { Buffered, abortingWhen, useEmulator } from './harness';

describe('emulator v1: cancel (POST /api/interrupt, POST /api/queue)', () => {
  // Each node waits a minute unless interrupted: the job is running for as long as the test needs.
  const emu = useEmulator({ tokens: [KEY], nodeDelayMs: 60_000 });

  it('interrupting a running job gives execution_interrupted and status cancelled; deleting a queued one from the queue cancels it', async () => {
    const socket = await Socket.open(socketUrl(emu()));
    const running = (await postPrompt(emu(), { prompt: facts(0x000501) })).body.prompt_id as string;
    const queued = (await postPrompt(emu(), { prompt: facts(0x000502) })).body.prompt_id as string;
    await socket.message('executing', running, (m) => m.data.node === '1');
    const deleted = await call(`${emu().baseUrl}/api/queue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ delete: [queued] }),
    });
    assert.deepEqual(deleted.body.deleted, [queued]);
    assert.equal((await get(emu(), `/api/job/${queued}/status`)).body.status, 'cancelled');
    const interrupt = await call(`${emu().baseUrl}/api/interrupt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ prompt_id: running }),
    });
    assert.equal(interrupt.status, 200);
    const interrupted = await socket.message('execution_interrupted', running);
    assert.equal(interrupted.data.node_id, '1');
    assert.equal((await statusesUntilTerminal(emu(), running)).at(-1), 'cancelled');
    await socket.close();
  });
});

describe('emulator v1: faults on the v1 surface (faults.ts, route kinds v1:*)', () => {
  const emu = useEmulator({ tokens: [KEY], control: true });
  afterEach(() => emu().setFaults({ rules: [] }));

  it('fault specs name v1 route kinds (v1:ws, v1:jobs, …); dropAfter and silent apply to v1:ws, afterCreate to v1:prompt, and not elsewhere on v1', () => {
    assert.deepEqual(parseFaultSpec('v1:ws:dropAfter=3'), {
      on: 'v1:ws',
      kind: 'dropStream',
      afterFrames: 3,
      how: 'end',
    });
    assert.deepEqual(parseFaultSpec('v1:ws:status=503:times=2'), {
      on: 'v1:ws',
      kind: 'status',
      status: 503,
      code: 'upstream_error',
      times: 2,
    });
    assert.deepEqual(parseFaultSpec('v1:jobs:status=404'), {
      on: 'v1:jobs',
      kind: 'status',
      status: 404,
      code: 'not_found',
    });
    assert.equal(parseFaultSpec('v1:prompt:afterCreate=502').kind, 'afterCreate');
    assert.deepEqual(parseFaultSpec('v1:ws:silentAfter=2'), { on: 'v1:ws', kind: 'silentStream', afterFrames: 2 });
    assert.throws(() => parseFaultSpec('v1:view:dropAfter=1'), /dropStream applies to "on": "events" only, or "v1:ws"/);
    assert.throws(
      () => parseFaultSpec('v1:status:afterCreate=502'),
      /afterCreate applies to "on": "submit" only, or "v1:prompt"/,
    );
  });

  it('v1:ws:dropAfter=N closes the socket with 1001 after N frames; how=reset drops it without a close frame', async () => {
    emu().setFaults({ rules: ['v1:ws:dropAfter=1:times=1', 'v1:ws:dropAfter=1:how=reset:times=1'] });
    const ended = await Socket.open(socketUrl(emu()));
    assert.deepEqual(await ended.closed, { code: 1001, clean: true });
    assert.equal(ended.frames.length, 1, 'the one frame before the cut');
    const reset = await Socket.open(socketUrl(emu()));
    assert.deepEqual(await reset.closed, { code: 1006, clean: false });
    assert.equal(reset.frames.length, 1);
    const fine = await Socket.open(socketUrl(emu()));
    await fine.message('status');
    await fine.close();
  });

  it('v1:ws:status=503:times=2 refuses two upgrades with 503; the third connects (a client reconnects)', async () => {
    emu().setFaults({ rules: ['v1:ws:status=503:times=2'] });
    await assert.rejects(Socket.open(socketUrl(emu())), { status: 503 });
    await assert.rejects(Socket.open(socketUrl(emu())), { status: 503 });
    const socket = await Socket.open(socketUrl(emu()));
    await socket.message('status');
    await socket.close();
  });

  it('v1:jobs:status=404 answers GET /api/jobs/{id} 404 {code, message} while history still answers', async () => {
    const id = (await postPrompt(emu(), { prompt: facts(0x000601) })).body.prompt_id as string;
    await statusesUntilTerminal(emu(), id);
    emu().setFaults({ rules: ['v1:jobs:status=404'] });
    const jobs = await get(emu(), `/api/jobs/${id}`);
    assert.equal(jobs.status, 404);
    assert.deepEqual(Object.keys(jobs.body).sort(), ['code', 'message']);
    assert.equal((await get(emu(), `/api/history_v2/${id}`)).status, 200);
    assert.equal((await get(emu(), `/api/job/${id}/status`)).status, 200, 'v1:jobs targets /api/jobs/{id} only');
  });

  it('v1:prompt:afterCreate=502 creates the job but answers 502: the job runs all the same', async () => {
    emu().setFaults({ rules: ['v1:prompt:afterCreate=502:times=1'] });
    const before = emu().v1!.prompts.length;
    const answer = await postPrompt(emu(), { prompt: facts(0x000701) });
    assert.equal(answer.status, 502);
    const created = emu().v1!.prompts[before];
    assert.equal((await statusesUntilTerminal(emu(), created.promptId)).at(-1), 'success');
  });

  it('v1:any targets v1 routes and not v2 ones; any targets v2 routes and not v1 ones', async () => {
    emu().setFaults({ rules: ['v1:any:status=500'] });
    assert.equal((await get(emu(), '/api/object_info')).status, 500);
    assert.equal(
      (await call(`${emu().baseUrl}/api/v2/jobs`, { headers: { authorization: `Bearer ${KEY}` } })).status,
      200,
    );
    emu().setFaults({ rules: ['any:status=500'] });
    assert.equal((await get(emu(), '/api/object_info')).status, 200);
  });
});

describe('emulator v1: under a mount prefix, and without keys', () => {
  const emu = useEmulator({ tokens: [KEY], mountPrefix: '/deployment/dep-1' });

  it("the v1 paths and the WebSocket are served under the mount prefix (the same as v2's), and nowhere else", async () => {
    assert.equal(emu().v1!.wsUrl, `${emu().origin.replace('http', 'ws')}/deployment/dep-1/ws`);
    const socket = await Socket.open(socketUrl(emu()));
    const id = await runOn(emu(), socket, facts(0x000801));
    assert.equal((await get(emu(), `/api/job/${id}/status`)).body.status, 'success');
    assert.ok(emu().requests.some((r) => r.path === `/deployment/dep-1/api/job/${id}/status`));
    await socket.close();
    assert.equal((await call(`${emu().origin}/api/object_info`, { headers: { 'x-api-key': KEY } })).status, 404);
    await assert.rejects(Socket.open(`${emu().origin.replace('http', 'ws')}/ws?clientId=x&token=${KEY}`), {
      status: 404,
    });
  });

  it('without keys (the self-hosted default) v1 needs no credential, REST or WebSocket', async () => {
    const open = await startEmulator({ port: 0 });
    try {
      assert.equal((await call(`${open.baseUrl}/api/object_info`)).status, 200);
      const socket = await Socket.open(`${open.v1!.wsUrl}?clientId=${randomUUID()}`);
      await socket.message('status');
      await socket.close();
    } finally {
      await open.close();
    }
  });
});

describe('emulator v1: off (v1: false)', () => {
  it('serves no v1 route and no WebSocket', async () => {
    const emu = await startEmulator({ port: 0, v1: false });
    try {
      assert.equal(emu.v1, undefined);
      assert.equal((await call(`${emu.baseUrl}/api/object_info`)).status, 404);
      await assert.rejects(Socket.open(`${emu.origin.replace('http', 'ws')}/ws?clientId=x&token=y`), { status: 404 });
    } finally {
      await emu.close();
    }
  });
});

describe('emulator v1: comfy-cloud emulator', () => {
  it('says where the v1 WebSocket is, on stderr; stdout keeps the base URL and the router URL', async () => {
    const ac = new AbortController();
    const stdout = new Buffered();
    const stderr = abortingWhen(/WebSocket at/, ac); // stopped once it said where the socket is
    const code = await runCli(['emulator', '--port', '0'], {
      stdout,
      stderr,
      env: {},
      signal: ac.signal,
      startEmulator: (o) => startEmulator({ host: o.host, port: o.port }),
    });
    assert.equal(code, 0, stderr.text);
    const lines = stdout.text.trim().split('\n');
    assert.equal(lines.length, 2, stdout.text);
    assert.match(
      stderr.text,
      new RegExp(
        `WebSocket at ${lines[0].replace(/^http/, 'ws').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/ws\\?clientId=`,
      ),
    );
  });
});
