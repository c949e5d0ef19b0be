/**
 * What is particular to the fetch engine (the extension host's `fetch`, Node's global fetch, which is undici's fetch):
 * its requests and answers, and the idle timeout of a body kept by the core with an injected clock (no next byte
 * within it while the core waits for one). Each test is named after the rule it proves.
 */
import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import {
  BODY_IDLE_TIMEOUT,
  BodyIdleTimeoutError,
  FetchEngine,
  Transport,
  globalFetch,
  type RequestLogEntry,
} from '../../src/core/http';
import { ConnectionError, ManualClock } from '../../src/core';
import { WebStreamBody } from '../../src/core/http/bodies';
import { downloadToFile } from '../../src/core/http/download';
import { settle } from './fetch-transport.fixtures';
import { anySchema, closedPort, startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

describe('fetch engine: what is particular to fetch', () => {
  let server: TestServer;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  before(async () => {
    server = await startServer((req, res) => handler(req, res));
  });
  after(async () => server.close());

  it('Node\'s fetch (the extension host\'s) returns a 3xx as it is, with its Location, for redirect: "manual"', async () => {
    handler = (_req, res) => {
      res.writeHead(302, { location: '/elsewhere?sig=S' });
      res.end('moved');
    };
    const res = await globalFetch(`${server.origin}/redirect`, { redirect: 'manual' });
    await res.body?.cancel();
    assert.equal(res.status, 302);
    assert.equal(res.type, 'basic');
    assert.equal(res.headers.get('location'), '/elsewhere?sig=S');
  });

  it('a 302 from the configured origin is followed by the core, without Authorization, through fetch', async () => {
    const other = await startServer((_req, res) => res.end('signed-bytes'));
    handler = (_req, res) => {
      res.writeHead(302, { location: `${other.origin}/blob?sig=SECRET` });
      res.end();
    };
    const log: RequestLogEntry[] = [];
    const t = new Transport({
      baseUrl: server.origin,
      apiKey: 'KEY-1',
      engine: new FetchEngine(globalFetch),
      log: (e) => log.push(e),
    });
    const done = await downloadToFile(t, t.url('/content'), path.join(tempDir('cc-302-'), 'out.bin'));
    await t.close();
    await other.close();
    assert.equal(fs.readFileSync(done.path, 'utf8'), 'signed-bytes');
    assert.equal(server.seen.at(-1)!.headers.authorization, 'Bearer KEY-1');
    assert.equal(other.seen.at(-1)!.headers.authorization, undefined);
    assert.ok(!JSON.stringify(log).includes('SECRET'));
  });

  it('a refused connection (fetch\'s TypeError "fetch failed", cause.code ECONNREFUSED) is a ConnectionError connection_refused with requestSent: false', async () => {
    const port = await closedPort();
    const raw = await globalFetch(`http://127.0.0.1:${port}/x`, {}).then(
      () => undefined,
      (err: unknown) => err as TypeError & { cause?: { code?: string } },
    );
    assert.ok(raw instanceof TypeError && raw.message === 'fetch failed', String(raw));
    assert.equal(raw.cause?.code, 'ECONNREFUSED');
    const t = new Transport({ baseUrl: `http://127.0.0.1:${port}`, engine: new FetchEngine(globalFetch) });
    await assert.rejects(t.json('POST', '/api/v2/jobs', anySchema, { json: {} }), (err: unknown) => {
      assert.ok(ConnectionError.is(err), String(err));
      assert.equal(err.requestSent, false);
      assert.equal(err.code, 'connection_refused');
      assert.match(err.message, /nothing was sent: connection refused/);
      return true;
    });
  });

  it("a fetch that hides redirects (an opaque redirect, as a browser's) is refused saying so, never read as an answer", async () => {
    const opaque = { type: 'opaqueredirect', status: 0, headers: new Headers(), body: null } as unknown as Response;
    const t = new Transport({ baseUrl: server.origin, engine: new FetchEngine(() => Promise.resolve(opaque)) });
    await assert.rejects(
      t.json('GET', '/api/v2/jobs/x', anySchema),
      (err: unknown) => ConnectionError.is(err) && /hides redirects/.test(err.message),
    );
  });

  it('a 3xx answering an upload (a streamed body, sent without a copy kept for a redirect) is not followed and fails saying so', async () => {
    handler = (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(307, { location: 'https://elsewhere.example/upload' });
        res.end();
      });
    };
    const t = new Transport({ baseUrl: server.origin, apiKey: 'KEY-1', engine: new FetchEngine(globalFetch) });
    const form = t.formData();
    form.append('file', new Blob([Buffer.alloc(1024, 1)]), 'x.bin');
    server.seen.length = 0;
    await assert.rejects(
      t.json('POST', '/api/v2/assets', anySchema, { body: form }),
      (err: unknown) => ConnectionError.is(err) && /answered with a redirect, which is not followed/.test(err.message),
    );
    assert.equal(server.seen.length, 1);
  });

  it('bytes arrive as the server sent them: accept-encoding identity unless the caller set one', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    };
    const t = new Transport({ baseUrl: server.origin, engine: new FetchEngine(globalFetch) });
    await t.json('GET', '/a', anySchema);
    assert.equal(server.seen.at(-1)!.headers['accept-encoding'], 'identity');
    await t.json('GET', '/b', anySchema, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(server.seen.at(-1)!.headers['accept-encoding'], 'gzip');
  });
});

/** A ManualClock that says when a sleep begins, so a test advances time only once the idle timer is waiting. */
class SignallingClock extends ManualClock {
  private sleepers: (() => void)[] = [];

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const slept = super.sleep(ms, signal);
    for (const wake of this.sleepers.splice(0)) wake();
    return slept;
  }

  /** Resolves at the next sleep that begins. */
  nextSleep(): Promise<void> {
    return new Promise((resolve) => this.sleepers.push(resolve));
  }
}

describe('fetch engine: the idle timeout of a body, kept by the core (no next byte within it while the core waits for one)', () => {
  /** A body over a web stream fed by hand, with a 1000 ms idle timeout on `clock`. */
  function body(clock: ManualClock): {
    body: WebStreamBody;
    feed: ReadableStreamDefaultController<Uint8Array>;
    ended: (Error | null)[];
  } {
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) }, { highWaterMark: 0 });
    const ended: (Error | null)[] = [];
    return { body: new WebStreamBody(stream, 1000, clock, (err) => ended.push(err)), feed, ended };
  }

  it('a consumer that is not reading (its buffer full) is no stall, however long it waits', async () => {
    const clock = new SignallingClock(0);
    const b = body(clock);
    b.feed.enqueue(new Uint8Array(100 * 1024)); // more than the body's buffer: it stops asking for more
    const sleeping = clock.nextSleep();
    b.body.read(0);
    await sleeping;
    await once(b.body, 'readable');
    clock.advance(60_000);
    await settle();
    assert.equal(b.body.destroyed, false);
    assert.deepEqual(b.ended, []);
    assert.deepEqual(clock.sleeps, [1000], 'the idle timer kept running while nothing was asked');
    b.body.destroy();
  });

  it('no byte within the idle timeout while a read waits ends the body with a BodyIdleTimeoutError and gives up the request; a byte within it moves the deadline', async () => {
    const clock = new SignallingClock(0);
    const b = body(clock);
    const sleeping = clock.nextSleep();
    b.body.read(0); // a read now waits for the first byte, from t=0
    await sleeping;
    clock.advance(600);
    b.feed.enqueue(new Uint8Array([1]));
    await once(b.body, 'readable');
    assert.deepEqual([...(b.body.read() as Buffer)], [1]); // taken at t=600: the next wait starts there
    clock.advance(400); // t=1000: the first wait's deadline, but a byte came at 600
    await settle();
    assert.equal(b.body.destroyed, false, 'a byte within the timeout did not move the deadline');
    clock.advance(599);
    await settle();
    assert.equal(b.body.destroyed, false);
    const failed = once(b.body, 'error');
    clock.advance(1); // t=1600: 1000 ms without a byte since 600
    const [err] = (await failed) as [Error];
    assert.ok(err instanceof BodyIdleTimeoutError);
    assert.equal((err as BodyIdleTimeoutError).code, BODY_IDLE_TIMEOUT);
    assert.equal((err as BodyIdleTimeoutError).idleTimeoutMs, 1000);
    assert.deepEqual(b.ended, [err], 'the request was not given up');
  });

  it('no idle timeout (0, an event stream) never ends a body, however long it is silent', async () => {
    const clock = new SignallingClock(0);
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) }, { highWaterMark: 0 });
    const silent = new WebStreamBody(stream, 0, clock);
    silent.read(0);
    clock.advance(3_600_000);
    await settle();
    assert.equal(silent.destroyed, false);
    assert.deepEqual(clock.sleeps, []);
    feed.close();
    silent.resume();
    await once(silent, 'end');
  });
});
