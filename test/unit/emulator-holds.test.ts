/**
 * The emulator's node holds (src/emulator/holds.ts) over real HTTP: a node the hold plan names stands still at its
 * start, after the progress snapshot that names it, until released through the control endpoint; the next one then
 * holds in turn; a class-type plan holds only those nodes; clearing the plan lets the job finish; cancel ends a held
 * job as canceled; an invalid plan is refused and the plan in force kept; v1 prompts hold the same way. The emulator
 * runs with no node delay: without the hold a job ends within a few turns of the event loop, so a job seen still at
 * the same node over several requests is held, not slow. No sleeps as synchronisation: every wait is on the
 * emulator's own "held" signal (whenHeld) or a bounded series of requests.
 */
import * as assert from 'node:assert/strict';
import { startEmulator, type Emulator } from '../../src/emulator';
import { TERMINAL, call, submit, until, useEmulator, type Answer, type Json } from './harness';

/** EmptyImage → ImageInvert → SaveImage: three nodes, one output. */
function sample(prefix = 'held'): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 16711680 } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

function control(emu: Emulator, path: string, method = 'GET', body?: unknown): Promise<Answer> {
  return call(`${emu.origin}/__emulator/${path}`, {
    method,
    ...(body === undefined
      ? {}
      : {
          headers: { 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
  });
}

/** The held node of `jobId` at execution position `index`, once held (the emulator's own signal). */
function heldAt(emu: Emulator, jobId: string, index: number): Promise<Json> {
  return emu.whenHeld((n) => n.jobId === jobId && n.index === index) as Promise<Json>;
}

/** GETs the job `times` times and asserts each answer shows it running at node `nodeId`, `done` nodes done. */
async function assertStillAt(emu: Emulator, jobId: string, nodeId: string, done: number, times = 5): Promise<void> {
  for (let i = 0; i < times; i++) {
    const { body } = await call(`${emu.baseUrl}/api/v2/jobs/${jobId}`);
    assert.equal(body.status, 'running', JSON.stringify(body));
    assert.equal(body.progress?.current_node, nodeId, JSON.stringify(body.progress));
    assert.equal(body.progress?.nodes_done, done);
    assert.equal(body.progress?.nodes_total, 3);
    assert.equal(body.progress?.value, done / 3);
  }
}

describe('emulator node holds: the control endpoint (control: true)', () => {
  const emu = useEmulator({ control: true, mountPrefix: '/deployment/holds' });
  afterEach(async () => {
    await control(emu(), 'holds', 'DELETE');
  });

  it('a plan of {} holds every node at its start (its progress snapshot published) until released; each release lets one node run, the next holds', async () => {
    const set = await control(emu(), 'holds', 'POST', {});
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { plan: {}, held: [] });
    const job = (await submit(emu(), sample())).body;
    for (const [index, nodeId, classType] of [
      [0, '1', 'EmptyImage'],
      [1, '2', 'ImageInvert'],
      [2, '3', 'SaveImage'],
    ] as const) {
      await heldAt(emu(), job.id, index);
      const state = await control(emu(), 'holds');
      assert.equal(state.status, 200);
      assert.equal(state.body.held.length, 1, JSON.stringify(state.body));
      const [held] = state.body.held;
      assert.deepEqual(
        { ...held, since: undefined },
        { jobId: job.id, nodeId, classType, index, total: 3, since: undefined },
      );
      assert.ok(!Number.isNaN(Date.parse(held.since)), held.since);
      await assertStillAt(emu(), job.id, nodeId, index);
      assert.equal(
        (await call(`${emu().baseUrl}/api/v2/jobs/${job.id}`)).body.outputs.length,
        0,
        'an output before SaveImage ran',
      );
      const released = await control(emu(), 'holds/release', 'POST', { jobId: job.id });
      assert.equal(released.status, 200, released.text);
      assert.deepEqual(
        released.body.released.map((n: Json) => n.nodeId),
        [nodeId],
      );
    }
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded');
    assert.equal(done.outputs.length, 1);
    assert.deepEqual((await control(emu(), 'holds')).body, { plan: {}, held: [] });
  });

  it('a plan of classTypes holds only those nodes; DELETE clears the plan and the held job runs to its end', async () => {
    const set = await control(emu(), 'holds', 'POST', { classTypes: ['SaveImage'] });
    assert.deepEqual(set.body.plan, { classTypes: ['SaveImage'] });
    const job = (await submit(emu(), sample())).body;
    const held = await heldAt(emu(), job.id, 2);
    assert.equal(held.classType, 'SaveImage');
    // EmptyImage and ImageInvert ran without holding: the job is at its last node.
    await assertStillAt(emu(), job.id, '3', 2);
    assert.deepEqual(
      (await control(emu(), 'holds')).body.held.map((n: Json) => n.index),
      [2],
    );
    const cleared = await control(emu(), 'holds', 'DELETE');
    assert.deepEqual(cleared.body, { plan: null, held: [] });
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded');
  });

  it('a plan of nodeIds holds the nodes with those ids', async () => {
    await control(emu(), 'holds', 'POST', { nodeIds: ['2'] });
    const job = (await submit(emu(), sample())).body;
    const held = await heldAt(emu(), job.id, 1);
    assert.equal(held.nodeId, '2');
    await assertStillAt(emu(), job.id, '2', 1);
    // A release without a body lets every held node go on.
    const released = await call(`${emu().origin}/__emulator/holds/release`, { method: 'POST' });
    assert.deepEqual(
      released.body.released.map((n: Json) => n.jobId),
      [job.id],
    );
    assert.equal((await until(emu(), job.id, (j) => TERMINAL.includes(j.status))).status, 'succeeded');
  });

  it('cancel ends a held job as canceled, and it is no longer held', async () => {
    await control(emu(), 'holds', 'POST', {});
    const job = (await submit(emu(), sample())).body;
    await heldAt(emu(), job.id, 0);
    const canceled = await call(`${emu().baseUrl}/api/v2/jobs/${job.id}/cancel`, { method: 'POST' });
    assert.ok([200, 202].includes(canceled.status), canceled.text);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'canceled');
    assert.deepEqual((await control(emu(), 'holds')).body.held, []);
  });

  it('an invalid plan or release is 400 invalid_hold_plan and the plan in force is kept; other paths are 404', async () => {
    await control(emu(), 'holds', 'POST', { classTypes: ['SaveImage'] });
    for (const body of [
      '[]',
      'null',
      '{"classTypes": []}',
      '{"classTypes": ["ok", 3]}',
      '{"nodeIds": "2"}',
      '{"everything": true}',
      'not json',
      '',
    ]) {
      const res = await control(emu(), 'holds', 'POST', body);
      assert.equal(res.status, 400, `${body}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_hold_plan', body);
    }
    assert.deepEqual((await control(emu(), 'holds')).body.plan, { classTypes: ['SaveImage'] });
    for (const body of ['{"jobId": 3}', '{"job": "x"}', '[]', 'not json']) {
      const res = await control(emu(), 'holds/release', 'POST', body);
      assert.equal(res.status, 400, `${body}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_hold_plan', body);
    }
    assert.equal((await control(emu(), 'holds/release', 'GET')).status, 404);
    assert.equal((await control(emu(), 'holds', 'PUT', {})).status, 404);
    assert.equal((await control(emu(), 'holds/other')).status, 404);
  });

  it("the holds' control requests are not recorded", async () => {
    const recorded = emu().requests.length;
    await control(emu(), 'holds', 'POST', {});
    await control(emu(), 'holds');
    await control(emu(), 'holds', 'DELETE');
    assert.equal(emu().requests.length, recorded);
  });
});

describe('emulator node holds: v1 prompts and the library', () => {
  it('a v1 prompt holds the same way: the held node names its prompt_id', async () => {
    const emu = await startEmulator({ port: 0, control: true });
    try {
      emu.holdNodes({ classTypes: ['ImageInvert'] });
      const answer = await call(`${emu.baseUrl}/api/prompt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: sample('v1-held') }),
      });
      assert.equal(answer.status, 200, answer.text);
      const held = await emu.whenHeld();
      assert.equal(held.jobId, answer.body.prompt_id);
      assert.equal(held.classType, 'ImageInvert');
      assert.deepEqual(emu.holdState().held, [held]);
      assert.deepEqual(emu.releaseNodes('another-job'), [], "another job's release let it go");
      assert.deepEqual(emu.releaseNodes(held.jobId), [held]);
      const status = async (): Promise<string> =>
        (await call(`${emu.baseUrl}/api/job/${held.jobId}/status`)).body.status;
      let last = await status();
      for (let i = 0; i < 5000 && !['success', 'completed'].includes(last); i++) last = await status();
      assert.ok(['success', 'completed'].includes(last), last);
    } finally {
      await emu.close();
    }
  });

  it("holdNodes checks the plan; closing the emulator rejects a pending whenHeld and ends the held job's run", async () => {
    const emu = await startEmulator({ port: 0 });
    assert.throws(() => emu.holdNodes({ classTypes: 'SaveImage' } as never), TypeError);
    assert.equal(emu.holdState().plan, null, 'an invalid plan was taken');
    emu.holdNodes({});
    const job = (await submit(emu, sample())).body;
    await emu.whenHeld((n) => n.jobId === job.id);
    const never = assert.rejects(
      emu.whenHeld((n) => n.index === 99),
      /closing/,
    );
    // close() resolves only once every run settled: a held node that kept its run waiting would hang it here.
    await emu.close();
    await never;
    await assert.rejects(emu.whenHeld(), /closing/);
  });
});
