/**
 * Memory and time are bounded whatever the server sends, and a created job is never forgotten; retries
 * follow the contract; against small hostile servers on loopback (random ports, bounded loops; no HTTP mocking).
 * Each test is named after the rule it proves. The transport's own bounds (endless and oversized JSON bodies,
 * stalled bodies and downloads, redirects of JSON requests) are proven over both engines, undici and fetch, in
 * fetch-transport-engines.test.ts.
 */
import * as assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent } from 'undici';
import {
  AbortError,
  ConnectionError,
  ManualClock,
  OutcomeUnknownError,
  RedirectError,
  UpstreamError,
} from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { JobCreatedUnreadableError } from '../../src/core/v2/jobs';
import { StateStore } from '../../src/core/state';
import { Transport } from '../../src/core/http';
import { errorFromResponse } from '../../src/core/v2/errors';
import { submitDurably } from '../../src/core/v2/submission';
import { UndiciEngine } from '../../src/core/http/undiciEngine';
import { errorEnvelope, invertWorkflow, job } from './builders';
import { CountingEngine } from './engines';
import { anySchema, closedPort, pushEndlessly, startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

const MiB = 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

describe('hostile server: bounded memory and time', () => {
  let server: TestServer;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  before(async () => {
    server = await startServer((req, res) => handler(req, res));
  });
  after(async () => server.close());

  it("rule: an error body is read with a cap too (an endless error page still gives the status's typed error, and at most 1 MiB of it is read)", async () => {
    // The cap of an error body (TransportOptions.errorFactory: "body text (at most 1 MiB)").
    const cap = MiB;
    handler = (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      pushEndlessly(res, Buffer.alloc(64 * 1024, '<'), 64 * MiB);
    };
    const counting = new CountingEngine(new UndiciEngine());
    const t = new Transport({ baseUrl: server.origin, errorFactory: errorFromResponse, engine: counting });
    await assert.rejects(
      t.json('GET', '/api/v2/jobs/z', anySchema),
      (err: unknown) => UpstreamError.is(err) && err.status === 503 && err.code === 'upstream_error',
    );
    await counting.close();
    assert.ok(counting.pulled > cap, `only ${counting.pulled} bytes read: the cap was not what stopped the read`);
    // The chunk that crossed the cap and one in hand, each at most what the engine had buffered.
    assert.ok(
      counting.pulled <= cap + 512 * 1024,
      `${counting.pulled} bytes of an endless error page read, with a cap of ${cap}`,
    );
  });

  it('rule: a redirect whose Location is not a valid http(s) URL is named as such', async () => {
    for (const location of ['javascript:alert(1)', 'http://[::1', 'file:///etc/passwd']) {
      handler = (_req, res) => {
        res.writeHead(302, { location });
        res.end();
      };
      const t = new Transport({ baseUrl: server.origin });
      await assert.rejects(
        t.json('GET', '/api/v2/jobs/x', anySchema),
        (err: unknown) =>
          RedirectError.is(err) &&
          /not an http\(s\) URL/.test(err.message) &&
          err.message.includes(JSON.stringify(location)),
      );
      await t.close();
    }
  });

  it('rule: only id and status are essential: odd values elsewhere (urls.cancel null, a metric that is not a number) never fail a GET', async () => {
    const odd = job('running', {
      urls: { self: null, events: 5, cancel: null },
      metrics: { queue_ms: 'fast', execution_ms: null, other: 12 },
      progress: { value: 'half', nodes_done: 1, nodes_total: '3', message: 42 },
      outputs: [{ name: 'no id here' }, { id: 'out-1', name: 7, size_bytes: 'big', hash: null }],
      error: 'a plain string',
      queue_position: 'first',
      started_at: 12,
    });
    handler = (_req, res) => send(res, 200, odd);
    const c = new V2Client({ baseUrl: server.origin });
    const { job: read } = await c.jobs.get(String(odd.id));
    await c.close();
    assert.equal(read.id, odd.id);
    assert.equal(read.status, 'running');
    assert.deepEqual(read.urls, {});
    assert.deepEqual(read.metrics, { execution_ms: null, other: 12 });
    assert.equal(read.progress?.value, null);
    assert.equal(read.progress?.nodes_done, 1);
    assert.deepEqual(
      read.outputs.map((o) => [o.id, o.name, o.size_bytes]),
      [['out-1', null, null]],
    );
    assert.equal(read.error?.message, 'a plain string');
    assert.equal(read.queue_position, null);
    // The links that were odd are built from the base URL instead (a bare id's links).
    assert.equal(
      c.jobs.link({ job: read, source: new URL(server.origin), requestId: undefined }, 'cancel').pathname,
      `/api/v2/jobs/${odd.id}/cancel`,
    );
  });

  it('rule: a body without the essential id or status names that field in one line', async () => {
    handler = (_req, res) => send(res, 200, { id: 'j1', status: 7 });
    const c = new V2Client({ baseUrl: server.origin });
    await assert.rejects(c.jobs.get('j1'), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'bad_response');
      assert.match(err.message, /field "status": /);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    await c.close();
  });
});

describe('hostile server: a created job is never forgotten; retries follow the contract', () => {
  let server: TestServer;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  before(async () => {
    server = await startServer((req, res) => handler(req, res));
  });
  after(async () => server.close());

  function client(clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'), { autoAdvance: true })): V2Client {
    return new V2Client({ baseUrl: server.origin, clock });
  }
  const store = (): StateStore => new StateStore(tempDir('cc-store-'));
  const posts = (): string[] =>
    server.seen.filter((s) => s.method === 'POST').map((s) => String(s.headers['idempotency-key']));

  it('rule: a 201 whose body is not JSON keeps the record and its key (outcome unknown), never releases it', async () => {
    server.seen.length = 0;
    handler = (req, res) => {
      if (req.method === 'POST') send(res, 201, '<html>created</html>');
      else send(res, 404, errorEnvelope('not_found'));
    };
    const s = store();
    const c = client();
    await assert.rejects(submitDurably(c, invertWorkflow(), { store: s }), (err: unknown) => {
      assert.ok(OutcomeUnknownError.is(err), String(err));
      assert.equal(err.record.state, 'outcome_unknown');
      assert.match(err.message, /check your jobs before submitting again/);
      return true;
    });
    await c.close();
    const records = await s.list();
    assert.equal(records.length, 1, 'the record of a created job was dropped');
    assert.equal(records[0].state, 'outcome_unknown');
    assert.equal(records[0].idempotencyKey, posts()[0]);
    assert.equal(posts().length, 1, 'the submission was sent again');
  });

  it('rule: a 201 whose body is not a Job but names the id: remembered as created with that id, and read by GET', async () => {
    server.seen.length = 0;
    const created = job('queued');
    handler = (req, res) => {
      if (req.method === 'POST') send(res, 201, { id: created.id, status: { odd: true }, outputs: 'none' });
      else send(res, 200, created);
    };
    const s = store();
    const c = client();
    const result = await submitDurably(c, invertWorkflow(), { store: s });
    await c.close();
    assert.equal(result.snapshot.job.id, created.id);
    assert.equal(result.record.state, 'created');
    assert.equal((await s.list())[0].jobId, created.id);
    assert.equal(posts().length, 1);
  });

  it('rule: a 201 with a body that breaks off is an unknown outcome: the record is kept with its key', async () => {
    server.seen.length = 0;
    handler = (req, res) => {
      if (req.method !== 'POST') return send(res, 404, errorEnvelope('not_found'));
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id": "j-');
      setImmediate(() => res.destroy());
    };
    const s = store();
    const c = client();
    await assert.rejects(
      submitDurably(c, invertWorkflow(), { store: s }),
      (err: unknown) => OutcomeUnknownError.is(err) && JobCreatedUnreadableError.is(err.cause),
    );
    await c.close();
    assert.equal((await s.list())[0]?.state, 'outcome_unknown');
  });

  it('rule: rate_limited on a submission is retried after Retry-After with the SAME key', async () => {
    server.seen.length = 0;
    let n = 0;
    const created = job('queued');
    handler = (_req, res) =>
      n++ === 0 ? send(res, 429, errorEnvelope('rate_limited'), { 'retry-after': '2' }) : send(res, 201, created);
    const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'), { autoAdvance: true });
    const s = store();
    const c = client(clock);
    const waits: number[] = [];
    const result = await submitDurably(c, invertWorkflow(), { store: s, onWait: (w) => waits.push(w.delayMs) });
    await c.close();
    assert.equal(result.snapshot.job.id, created.id);
    assert.equal(posts().length, 2);
    assert.equal(posts()[0], posts()[1], 'a new key was minted for the retry');
    assert.deepEqual(waits, [2000]);
    assert.ok(clock.sleeps.includes(2000));
  });

  it('rule: a key refused as reused after our own retry stands for our earlier attempt: outcome unknown, the record kept', async () => {
    server.seen.length = 0;
    let n = 0;
    handler = (req, res) => {
      if (req.method !== 'POST') return send(res, 404, errorEnvelope('not_found'));
      if (n++ === 0) send(res, 429, errorEnvelope('some_new_limit'), { 'retry-after': '1' });
      else send(res, 422, errorEnvelope('idempotency_key_reuse'));
    };
    const s = store();
    const c = client();
    await assert.rejects(submitDurably(c, invertWorkflow(), { store: s }), (err: unknown) =>
      OutcomeUnknownError.is(err),
    );
    await c.close();
    assert.equal((await s.list())[0]?.state, 'outcome_unknown');
  });

  it('rule: an unknown 429 code on a GET is backed off and retried', async () => {
    let n = 0;
    const running = job('running');
    handler = (_req, res) =>
      n++ < 2 ? send(res, 429, errorEnvelope('too_busy_today'), { 'retry-after': '4' }) : send(res, 200, running);
    const clock = new ManualClock(0, { autoAdvance: true });
    const c = client(clock);
    const read = await c.getJob(String(running.id));
    await c.close();
    assert.equal(read.job.id, running.id);
    assert.deepEqual(clock.sleeps, [4000, 4000]);
  });

  it('rule: a refused connection sent nothing: definitive, the key released, "nothing was sent; is the server running at URL?"', async () => {
    const port = await closedPort();
    const s = store();
    const c = new V2Client({ baseUrl: `http://127.0.0.1:${port}`, clock: new ManualClock(0, { autoAdvance: true }) });
    await assert.rejects(submitDurably(c, invertWorkflow(), { store: s }), (err: unknown) => {
      assert.ok(ConnectionError.is(err), String(err));
      assert.equal(err.requestSent, false);
      assert.equal(err.code, 'connection_refused');
      assert.match(err.message, /nothing was sent/);
      assert.match(err.message, new RegExp(`is the server running at http://127\\.0\\.0\\.1:${port}\\?`));
      return true;
    });
    await c.close();
    assert.deepEqual(await s.list(), [], 'a submission that sent nothing was remembered as unknown');
  });

  it('rule: a host that is not found sent nothing either: definitive, the key released', async () => {
    // The name lookup is answered here (no DNS query leaves the machine): as a resolver says "no such host".
    const dispatcher = new Agent({
      connect: {
        lookup: (
          _host: string,
          _opts: unknown,
          cb: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
        ) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND comfy.invalid'), { code: 'ENOTFOUND' }), '', 4),
      },
    });
    const s = store();
    const c = new V2Client({
      baseUrl: 'http://comfy.invalid:8189',
      dispatcher,
      clock: new ManualClock(0, { autoAdvance: true }),
    });
    await assert.rejects(submitDurably(c, invertWorkflow(), { store: s }), (err: unknown) => {
      assert.ok(ConnectionError.is(err), String(err));
      assert.equal(err.requestSent, false);
      assert.match(err.message, /nothing was sent: host not found/);
      assert.match(err.message, /is the server running at http:\/\/comfy\.invalid:8189\?/);
      return true;
    });
    await dispatcher.close();
    assert.deepEqual(await s.list(), []);
  });

  it('rule: aborting during a Retry-After wait is definitive: nothing is under way, the record goes', async () => {
    server.seen.length = 0;
    handler = (_req, res) => send(res, 429, errorEnvelope('queue_full'), { 'retry-after': '30' });
    const clock = new ManualClock(0); // sleeps wait for advance(), which never comes: the abort ends the wait
    const s = store();
    const c = client(clock);
    const abort = new AbortController();
    const pending = submitDurably(c, invertWorkflow(), {
      store: s,
      signal: abort.signal,
      onWait: () => setImmediate(() => abort.abort()),
    });
    await assert.rejects(pending, (err: unknown) => AbortError.is(err) && err.requestSent === false);
    await c.close();
    assert.deepEqual(await s.list(), []);
    assert.equal(posts().length, 1);
  });
});
