/**
 * The emulator's running jobs, over real HTTP: the queue and cancel (concurrency 1, a long per-node delay), the event
 * stream (GET /api/v2/jobs/{id}/events: snapshot on connect, keep-alive comments) and asset content with Range (GET
 * /api/v2/assets/{id}/content). No sleeps: every wait is on an event or a bounded series of GETs.
 */
import * as assert from 'node:assert/strict';
import { PNG } from 'pngjs';
import { startEmulator, type Emulator } from '../../src/emulator';
import { assertSolid, chain, openEvents, readStream, sample, submit } from './emulator.fixtures';
import { TERMINAL, UUID, call, until, useEmulator } from './harness';

describe('emulator: queue and cancel (concurrency 1, a long per-node delay)', () => {
  let emu: Emulator;
  beforeEach(async () => {
    emu = await startEmulator({ port: 0, nodeDelayMs: 60_000, concurrency: 1 });
  });
  afterEach(async () => {
    await emu.close();
  });

  it('FIFO: the second job waits queued with queue_position 0, the third with 1', async () => {
    const first = (await submit(emu, { workflow: sample() })).body;
    const running = await until(emu, first.id, (j) => j.status === 'running');
    assert.ok(running.started_at);
    assert.equal(running.queue_position, null);
    assert.equal(running.progress.current_node, '1', 'progress names the node being executed');
    assert.equal(running.progress.nodes_done, 0);
    assert.equal(running.metrics.execution_ms, null, 'null while not available');
    const second = (await submit(emu, { workflow: sample() })).body;
    const third = (await submit(emu, { workflow: sample() })).body;
    assert.equal(second.queue_position, 0);
    assert.equal(third.queue_position, 1);
    const g = await call(second.urls.self);
    assert.equal(g.body.status, 'queued');
    assert.equal(g.body.started_at, null);
  });

  it('cancel of a queued job: canceled at once (dequeued); the jobs behind it move up', async () => {
    const first = (await submit(emu, { workflow: sample() })).body;
    await until(emu, first.id, (j) => j.status === 'running');
    const second = (await submit(emu, { workflow: sample() })).body;
    const third = (await submit(emu, { workflow: sample() })).body;
    const answer = await call(second.urls.cancel, { method: 'POST' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.status, 'canceled');
    assert.ok(answer.body.completed_at);
    assert.equal(answer.body.started_at, null, 'it never started');
    assert.ok(!('logs' in answer.body));
    assert.equal((await call(second.urls.self)).body.status, 'canceled');
    assert.equal((await call(third.urls.self)).body.queue_position, 0);
  });

  it('cancel of a running job: canceling, then canceled; the stream shows both and ends', async () => {
    const job = (await submit(emu, { workflow: sample() })).body;
    await until(emu, job.id, (j) => j.status === 'running');
    const stream = await openEvents(job.urls.events);
    const answer = await call(job.urls.cancel, { method: 'POST' });
    assert.equal(answer.status, 200);
    assert.ok(['canceling', 'canceled'].includes(answer.body.status), answer.body.status);
    const seen = await readStream(stream);
    assert.ok(seen.ended, 'the stream ends after the terminal status');
    const statuses = seen.events.filter((e) => e.event === 'status').map((e) => e.data.status);
    assert.deepEqual(statuses, ['running', 'canceling', 'canceled']);
    const final = await until(emu, job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(final.status, 'canceled');
    assert.deepEqual(final.outputs, []);
  });

  it('cancel is idempotent: a canceled job is returned unchanged, and so is a canceling one', async () => {
    const job = (await submit(emu, { workflow: sample() })).body;
    await until(emu, job.id, (j) => j.status === 'running');
    await call(job.urls.cancel, { method: 'POST' });
    const final = await until(emu, job.id, (j) => TERMINAL.includes(j.status));
    const again = await call(job.urls.cancel, { method: 'POST' });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, final);
    assert.equal(
      (await call(`${emu.baseUrl}/api/v2/jobs/nope/cancel`, { method: 'POST' })).body.error.code,
      'not_found',
    );
  });

  it('the next queued job starts when the running one is canceled', async () => {
    const first = (await submit(emu, { workflow: sample() })).body;
    await until(emu, first.id, (j) => j.status === 'running');
    const second = (await submit(emu, { workflow: sample() })).body;
    await call(first.urls.cancel, { method: 'POST' });
    const started = await until(emu, second.id, (j) => j.status === 'running');
    assert.ok(started.metrics.queue_ms !== null);
  });

  it('close() ends open event streams and interrupts running jobs', async () => {
    const job = (await submit(emu, { workflow: sample() })).body;
    await until(emu, job.id, (j) => j.status === 'running');
    const stream = await openEvents(job.urls.events);
    // Read to the end: a stream that breaks off (its connection destroyed, not ended) is a failure.
    const reading = readStream(stream).catch((err: unknown) =>
      assert.fail(`the stream broke off instead of being ended: ${String(err)}`),
    );
    // close() waits for the runs to settle: with a minute per node it returns only if the run was interrupted.
    await emu.close();
    const seen = await reading;
    assert.ok(seen.ended, 'the stream did not end');
    // The job runs for a minute per node: nothing but close() could have ended its stream.
    const statuses = seen.events.filter((e) => e.event === 'status').map((e) => e.data.status);
    assert.deepEqual(
      statuses,
      ['running'],
      'the stream ended for another reason than close(): it carried a terminal status',
    );
  });
});

describe('emulator: the event stream (GET /api/v2/jobs/{id}/events)', () => {
  const emu = useEmulator();

  it('a run streams status at each transition, progress snapshots with nodes_done/nodes_total, a PNG preview, the output, and ends after the terminal status', async () => {
    // The stream must be open before the job starts: it waits queued behind a long chain of 2 ms nodes,
    // which is canceled once the stream is open.
    const slow = await startEmulator({ port: 0, nodeDelayMs: 2 });
    try {
      const blocker = (await submit(slow, { workflow: chain(5000) })).body;
      await until(slow, blocker.id, (j) => j.status === 'running');
      const job = (await submit(slow, { workflow: sample({ prefix: 'sse' }) })).body;
      const res = await openEvents(job.urls.events);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(res.headers.get('x-svc-request-id') ?? '', UUID);
      await call(blocker.urls.cancel, { method: 'POST' });
      const seen = await readStream(res);
      assert.ok(seen.ended);
      const names = seen.events.map((e) => e.event);
      assert.deepEqual(
        seen.events[0],
        { event: 'status', data: { status: 'queued', queue_position: 0 } },
        'the status snapshot first',
      );
      const statuses = seen.events.filter((e) => e.event === 'status').map((e) => e.data.status);
      assert.deepEqual(statuses, ['queued', 'running', 'succeeded']);
      const last = seen.events.at(-1)!;
      assert.equal(last.event, 'status', 'the stream ends after the terminal status');
      assert.equal(last.data.outputs.length, 1, 'the terminal status carries the outputs');
      assert.ok(!('logs' in last.data));
      const progress = seen.events.filter((e) => e.event === 'progress').map((e) => e.data);
      assert.deepEqual(
        progress.map((p) => [p.nodes_done, p.current_node]),
        [
          [0, '1'],
          [1, '1'],
          [1, '2'],
          [2, '2'],
          [2, '3'],
          [3, '3'],
        ],
      );
      assert.ok(progress.every((p) => p.nodes_total === 3 && p.value === p.nodes_done / p.nodes_total));
      assert.deepEqual(
        progress.map((p) => p.current_node_class),
        ['EmptyImage', 'EmptyImage', 'ImageInvert', 'ImageInvert', 'SaveImage', 'SaveImage'],
      );
      const previews = seen.events.filter((e) => e.event === 'preview').map((e) => e.data);
      assert.deepEqual(
        previews.map((p) => p.node_id),
        ['1', '2'],
        'a preview after each image-producing node',
      );
      assert.equal(previews[1].content_type, 'image/png');
      assertSolid(PNG.sync.read(Buffer.from(previews[1].data_base64, 'base64')), 64, 64, [0, 255, 255]);
      const outputs = seen.events.filter((e) => e.event === 'output').map((e) => e.data);
      assert.equal(outputs.length, 1);
      assert.equal(outputs[0].name, 'sse_00001_.png');
      assert.deepEqual(outputs[0], last.data.outputs[0]);
      assert.ok(names.indexOf('output') < names.lastIndexOf('status'));
      const final = await call(job.urls.self);
      assert.deepEqual(final.body.progress, progress.at(-1), 'GET has the same data the stream pushed');
    } finally {
      await slow.close();
    }
  });

  it('connecting to a finished job: the latest progress and preview, then the terminal status, then the end', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    const seen = await readStream(await openEvents(job.urls.events));
    assert.ok(seen.ended);
    assert.deepEqual(
      seen.events.map((e) => e.event),
      ['progress', 'preview', 'status'],
    );
    assert.equal(seen.events[2].data.status, 'succeeded');
  });

  it('an unknown job is a 404 JSON envelope, not a stream', async () => {
    const res = await call(`${emu().baseUrl}/api/v2/jobs/00000000-0000-4000-8000-000000000000/events`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(res.body.error.code, 'not_found');
  });
});

describe('emulator: stream snapshot on connect and keep-alive comments', () => {
  const emu = useEmulator({ nodeDelayMs: 60_000, keepAliveMs: 20 });

  it('a running job: status, then the latest progress, then keep-alive comment lines while nothing happens', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    await until(emu(), job.id, (j) => j.status === 'running');
    const seen = await readStream(await openEvents(job.urls.events), (s) => s.comments.length >= 2);
    assert.deepEqual(
      seen.events.map((e) => e.event),
      ['status', 'progress'],
    );
    assert.deepEqual(seen.events[0].data, { status: 'running', queue_position: null });
    assert.equal(seen.events[1].data.current_node, '1');
    assert.deepEqual(seen.comments.slice(0, 2), [': keep-alive', ': keep-alive']);
    await call(job.urls.cancel, { method: 'POST' });
  });

  it('a queued job: the status event carries its queue position', async () => {
    const first = (await submit(emu(), { workflow: sample() })).body;
    const second = (await submit(emu(), { workflow: sample() })).body;
    const seen = await readStream(await openEvents(second.urls.events), (s) => s.events.length >= 1);
    assert.equal(seen.events[0].event, 'status');
    assert.equal(seen.events[0].data.status, 'queued');
    assert.equal(typeof seen.events[0].data.queue_position, 'number');
    await call(second.urls.cancel, { method: 'POST' });
    await call(first.urls.cancel, { method: 'POST' });
  });
});

describe('emulator: asset content with Range (GET /api/v2/assets/{id}/content)', () => {
  const emu = useEmulator();
  let url = '';
  let whole: Buffer;
  before(async () => {
    const job = (await submit(emu(), { workflow: sample({ prefix: 'range' }) })).body;
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    url = done.outputs[0].url;
    whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    assert.equal(whole.length, done.outputs[0].size_bytes);
  });

  it('no Range: 200, Content-Type, Content-Length, Accept-Ranges', async () => {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(whole.length));
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), whole);
  });

  it('bytes=a-b and bytes=a- are 206 with Content-Range and exactly those bytes', async () => {
    const part = await fetch(url, { headers: { range: 'bytes=8-15' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 8-15/${whole.length}`);
    assert.equal(part.headers.get('content-length'), '8');
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(8, 16));
    const rest = await fetch(url, { headers: { range: 'bytes=100-' } });
    assert.equal(rest.status, 206);
    assert.equal(rest.headers.get('content-range'), `bytes 100-${whole.length - 1}/${whole.length}`);
    assert.deepEqual(Buffer.from(await rest.arrayBuffer()), whole.subarray(100));
    const suffix = await fetch(url, { headers: { range: 'bytes=-4' } });
    assert.equal(suffix.status, 206);
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), whole.subarray(whole.length - 4));
  });

  it('a range starting past the end is 416 with Content-Range bytes */size', async () => {
    const res = await call(url, { headers: { range: `bytes=${whole.length}-` } });
    assert.equal(res.status, 416);
    assert.equal(res.headers.get('content-range'), `bytes */${whole.length}`);
    assert.ok(res.body.error.code);
  });

  it('an unknown asset is 404 not_found', async () => {
    const res = await call(`${emu().baseUrl}/api/v2/assets/00000000-0000-4000-8000-000000000000/content`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });
});
