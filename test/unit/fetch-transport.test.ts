/**
 * VS Code's networking in the extension: the transport's engine is injected; the extension sends with the
 * extension host's `fetch` (Node's global fetch, which is undici's fetch, here as there), the CLI and the tests with
 * undici's `request()`. The rules for untrusted bodies (bounded bodies, idle timeouts, redirects, what was sent) are
 * run over both engines; then what is particular to fetch; then the extension's wiring and its bundle, which carries no
 * undici. Each test is named after the rule it proves.
 */
import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import { AbortError, ConnectionError, ManualClock, RedirectError } from '../../src/core';
import {
  BODY_IDLE_TIMEOUT,
  BodyIdleTimeoutError,
  FetchEngine,
  Transport,
  globalFetch,
  isBodyIdleTimeout,
  type RequestLogEntry,
} from '../../src/core/http';
import { V2Client } from '../../src/core/v2/client';
import { hashFile } from '../../src/core/util';
import { surfaceFromBaseUrl } from '../../src/core/v2/surface';
import { ResponseTooLargeError } from '../../src/core/http/errors';
import { downloadToFile } from '../../src/core/http/download';
import { WebStreamBody } from '../../src/core/http/bodies';
import { defaultEngine as extensionDefaultEngine } from '../../src/core/http/defaultEngine.extension';
import { Clients } from '../../src/extension/platform/clients';
import type { Config } from '../../src/extension/platform/config';
import type { Log } from '../../src/extension/platform/log';
import type { ApiKeys } from '../../src/extension/platform/secrets';
import { invertWorkflow } from './builders';
import { CountingEngine, ENGINES } from './engines';
import { useEmulator, type Json } from './harness';
import { anySchema, closedPort, pushEndlessly, startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

const MiB = 1024 * 1024;
/** What an endless body's server sends at most: far past any cap, so a read that ignores its cap reads all of it. */
const ENDLESS_BYTES = 64 * MiB;
/** How far past its cap a capped read may pull: the chunk that crossed the cap and one in hand (each at most 64 KiB plus what the engine had buffered). */
const READ_SLACK_BYTES = 512 * 1024;

/** Lets every pending callback and promise run (to assert that something did NOT happen after a clock step). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

for (const engine of ENGINES) {
  describe(`transport over ${engine.name}: untrusted bodies are bounded whichever engine sends`, () => {
    let server: TestServer;
    let handler: (req: IncomingMessage, res: ServerResponse) => void;
    before(async () => {
      server = await startServer((req, res) => handler(req, res));
    });
    after(async () => server.close());

    it('a JSON body that stalls after the headers ends as a ConnectionError "stalled: no byte for N ms", and its connection is closed', async () => {
      let closed!: Promise<unknown>;
      handler = (_req, res) => {
        closed = once(res, 'close');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id": "x",'); // …and nothing more, ever
      };
      // The wait for the headers is the default (30 s, never what decides here); the body's idle timeout is 300 ms,
      // and the body never sends its next byte: it ends as stalled however loaded the machine is.
      const t = new Transport({ baseUrl: server.origin, ...engine.options() });
      await assert.rejects(t.json('GET', '/api/v2/jobs/x', anySchema, { idleTimeoutMs: 300 }), (err: unknown) => {
        assert.ok(ConnectionError.is(err), String(err));
        assert.match(err.message, /stalled: no byte for 300 ms/);
        assert.ok(isBodyIdleTimeout(err.cause), `cause: ${String(err.cause)}`);
        return true;
      });
      await closed; // the request was given up, not left hanging on the server
      await t.close();
    });

    it('a download that stalls ends as a resumable failure (its .part kept), and the next call resumes it', async () => {
      const bytes = Buffer.alloc(200_000, 7);
      let stall = true;
      handler = (req, res) => {
        const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
        if (stall) {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
          res.write(bytes.subarray(0, 50_000)); // then silence
          return;
        }
        res.writeHead(206, {
          'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
          'content-length': String(bytes.length - start),
        });
        res.end(bytes.subarray(start));
      };
      const dir = tempDir('cc-stall-');
      const target = path.join(dir, 'out.bin');
      // 300 ms is the body's idle timeout (the body stalls for good: it ends as stalled however loaded the machine
      // is); the wait for the headers runs on a clock nobody advances, so it never decides.
      const t = new Transport({
        baseUrl: server.origin,
        timeoutMs: 300,
        timeoutClock: new ManualClock(0),
        ...engine.options(),
      });
      await assert.rejects(
        downloadToFile(t, t.url('/content'), target, { resumeKey: 'asset-1' }),
        (err: unknown) =>
          ConnectionError.is(err) &&
          /after 50000 bytes \(run it again to resume\): the server stopped sending/.test(err.message),
      );
      assert.ok(!fs.existsSync(target), 'a stalled download left a file that looks complete');
      assert.ok(
        fs.readdirSync(dir).some((f) => f.endsWith('.part')),
        'the partial download was not kept',
      );
      stall = false;
      const done = await downloadToFile(t, t.url('/content'), target, { resumeKey: 'asset-1' });
      await t.close();
      assert.equal(done.resumedFrom, 50_000);
      assert.deepEqual(fs.readFileSync(target), bytes);
    });

    it('an endless JSON body ends as response_too_large at the cap, with memory bounded: at most the cap and one chunk is read, and the connection is given up', async () => {
      let hungUp!: Promise<unknown>;
      handler = (_req, res) => {
        hungUp = once(res, 'close');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"pad": "');
        pushEndlessly(res, Buffer.alloc(64 * 1024, 'a'), ENDLESS_BYTES);
      };
      const counting = new CountingEngine(engine.make());
      const t = new Transport({ baseUrl: server.origin, maxJsonBytes: MiB, engine: counting });
      await assert.rejects(
        t.json('GET', '/api/v2/jobs/x', anySchema),
        (err: unknown) =>
          ResponseTooLargeError.is(err) && err.code === 'response_too_large' && /1 MiB/.test(err.message),
      );
      await hungUp; // the body was given up, not left hanging on the server
      await counting.close();
      assert.ok(counting.pulled > MiB, `only ${counting.pulled} bytes read: the cap was not what stopped the read`);
      assert.ok(
        counting.pulled <= MiB + READ_SLACK_BYTES,
        `${counting.pulled} bytes read from an endless body with a cap of ${MiB}`,
      );
    });

    it('a JSON body whose Content-Length is over the cap is refused before it is read', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * MiB) });
        res.write('{');
      };
      const t = new Transport({ baseUrl: server.origin, maxJsonBytes: MiB, ...engine.options() });
      await assert.rejects(
        t.json('GET', '/api/v2/jobs/y', anySchema),
        (err: Error & { code?: string }) => err.code === 'response_too_large',
      );
      await t.close();
    });

    it('a 3xx on a JSON endpoint is a RedirectError naming where it pointed (signature dropped), and is not followed', async () => {
      handler = (_req, res) => {
        res.writeHead(302, { location: 'https://elsewhere.example/api/v2/jobs/x?sig=SECRET' });
        res.end();
      };
      const t = new Transport({ baseUrl: server.origin, apiKey: 'KEY-1', ...engine.options() });
      server.seen.length = 0;
      await assert.rejects(t.json('GET', '/api/v2/jobs/x', anySchema), (err: unknown) => {
        assert.ok(RedirectError.is(err), String(err));
        assert.match(err.message, /answered 302, a redirect to https:\/\/elsewhere\.example\/api\/v2\/jobs\/x/);
        assert.doesNotMatch(err.message, /SECRET/);
        return true;
      });
      await t.close();
      assert.equal(server.seen.length, 1, 'the redirect was followed');
    });

    it("the caller's abort during a body read is an AbortError, not a connection error", async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id": ');
      };
      const t = new Transport({ baseUrl: server.origin, timeoutMs: 10_000, ...engine.options() });
      const ac = new AbortController();
      const res = await t.send('GET', '/api/v2/jobs/x', { signal: ac.signal });
      const reading = t.parse('GET', res, anySchema, { signal: ac.signal });
      ac.abort();
      await assert.rejects(reading, (err: unknown) => AbortError.is(err));
      await t.close();
    });

    it('a body cut off before its end is a ConnectionError saying it broke off', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"id": "x"', () => res.socket?.destroy());
      };
      const t = new Transport({ baseUrl: server.origin, ...engine.options() });
      await assert.rejects(
        t.json('GET', '/api/v2/jobs/x', anySchema),
        (err: unknown) => ConnectionError.is(err) && /broke off/.test(err.message),
      );
      await t.close();
    });

    it('a multipart upload streams its file from disk: 64 MiB sent whole', async function () {
      // The size proves the body is the whole file, not its speed (that the file is never held whole in memory is the
      // next test's): far more than any buffer between the file and the server, yet short on a loaded machine.
      this.timeout(120_000);
      let received = 0;
      handler = (req, res) => {
        req.on('data', (c: Buffer) => (received += c.length));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        });
      };
      const file = path.join(tempDir('cc-big-'), 'big.bin');
      fs.closeSync(fs.openSync(file, 'w'));
      fs.truncateSync(file, 64 * MiB); // sparse: no disk written, 64 MiB read
      const t = new Transport({ baseUrl: server.origin, ...engine.options() });
      const form = t.formData();
      form.append('file_path', 'big.bin');
      form.append('file', await fs.openAsBlob(file), 'big.bin');
      try {
        await t.json('POST', '/api/v2/assets', anySchema, { body: form });
      } finally {
        await t.close();
      }
      assert.ok(received > 64 * MiB, `the server received ${received} bytes`);
    });

    it('a multipart upload is read from disk as it is sent, never held whole in memory: a change to the file once the server has its first MiB breaks the upload (a copy held in memory would not notice)', async () => {
      const file = path.join(tempDir('cc-big-'), 'big.bin');
      fs.closeSync(fs.openSync(file, 'w'));
      fs.truncateSync(file, 512 * MiB); // sparse: far more than the buffers between the file and the server
      let received = 0;
      let changed = false;
      handler = (req, res) => {
        req.on('data', (c: Buffer) => {
          received += c.length;
          if (received < MiB || changed) return;
          // A file-backed Blob refuses to read a file changed since it was made: every later read fails.
          fs.appendFileSync(file, 'x');
          changed = true;
        });
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        });
      };
      const t = new Transport({ baseUrl: server.origin, ...engine.options() });
      const form = t.formData();
      form.append('file', await fs.openAsBlob(file), 'big.bin');
      try {
        await assert.rejects(t.json('POST', '/api/v2/assets', anySchema, { body: form }), (err: unknown) =>
          ConnectionError.is(err),
        );
      } finally {
        await t.close();
      }
      assert.ok(changed, `the server received only ${received} bytes`);
      assert.ok(
        received < 512 * MiB,
        `the whole file was sent (${received} bytes) although it changed after its first MiB: it was read before it was sent`,
      );
    });

    it('a request body given as a stream is sent whole', async () => {
      let received: Buffer | undefined;
      handler = (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received = Buffer.concat(chunks);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        });
      };
      const payload = Buffer.alloc(3 * MiB + 17, 'z');
      const t = new Transport({ baseUrl: server.origin, ...engine.options() });
      await t.json('POST', '/upload', anySchema, {
        body: Readable.from([payload.subarray(0, MiB), payload.subarray(MiB)]),
      });
      await t.close();
      assert.deepEqual(received, payload);
    });
  });

  describe(`client over ${engine.name} against the emulator: uploads stream the engine's own multipart form, jobs run end to end`, () => {
    const emu = useEmulator();

    it("an upload sends the file as a streamed multipart of the engine's own FormData: the asset has the file's hash, and its content comes back byte for byte", async () => {
      const dir = tempDir('cc-up-');
      const file = path.join(dir, 'random.bin');
      const bytes = Buffer.alloc(5 * MiB + 3);
      for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
      fs.writeFileSync(file, bytes);
      const client = new V2Client({ baseUrl: emu().baseUrl, ...engine.options() });
      const uploaded = await client.uploadFile(file);
      assert.equal(uploaded.dedup, false);
      assert.equal(uploaded.asset.hash, await hashFile(file));
      const back = await client.downloadAsset(uploaded.asset.id, path.join(dir, 'back.bin'));
      await client.close();
      assert.deepEqual(fs.readFileSync(back.path), bytes);
    });

    it('a job runs end to end: submitted, watched over the event stream to succeeded, its output downloaded', async () => {
      const dir = tempDir('cc-run-');
      const client = new V2Client({ baseUrl: emu().baseUrl, ...engine.options() });
      const modes: string[] = [];
      const result = await client.run(invertWorkflow({ prefix: 'via-engine' }), {
        outputDir: dir,
        onUpdate: (u) => (u.type === 'mode' ? modes.push(u.mode) : undefined),
      });
      await client.close();
      assert.equal(result.final.job.status, 'succeeded');
      assert.ok(modes.includes('stream'), `the event stream was not used (modes: ${modes.join(', ')})`);
      assert.equal(result.files.length, 1);
      assert.ok(fs.statSync(result.files[0].path).size > 0);
    });
  });
}

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

describe("the extension sends with the extension host's fetch", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok": true}');
    });
  });
  after(async () => server.close());

  it("the extension's clients send through the global fetch, looked up at each request (the host installs its own), with the API key", async () => {
    const log: RequestLogEntry[] = [];
    const clients = new Clients(
      {
        connection: () => ({ surface: surfaceFromBaseUrl(server.origin), api: 'v2' }),
        unknownOutcomeSettleMs: () => 3000,
      } as unknown as Config,
      { get: () => Promise.resolve('KEY-EXT') } as unknown as ApiKeys,
      { request: (entry: RequestLogEntry) => log.push(entry) } as unknown as Log,
    );
    const client = (await clients.create()).assets!;
    const original = globalThis.fetch;
    const seen: RequestInit[] = [];
    globalThis.fetch = ((input: string, init: RequestInit) => {
      seen.push(init);
      return original(input, init);
    }) as typeof fetch;
    try {
      const res = await client.http.json('GET', '/api/v2/jobs/x', anySchema);
      assert.deepEqual(res.data as Json, { ok: true });
    } finally {
      globalThis.fetch = original;
      await client.close();
    }
    assert.equal(seen.length, 1, 'the request did not go through the global fetch');
    assert.equal(seen[0].redirect, 'manual');
    assert.equal(server.seen.at(-1)!.headers.authorization, 'Bearer KEY-EXT');
    assert.equal(log.length, 1);
  });
});

// The shipped dist/extension.js itself: bundles.test.ts.
describe("the extension's default engine (undici is not in the extension bundle)", () => {
  it("in the extension bundle the default engine is the host's fetch, and an undici dispatcher is refused rather than ignored", () => {
    assert.ok(extensionDefaultEngine() instanceof FetchEngine);
    assert.throws(() => extensionDefaultEngine({ dispatcher: {} }), /the extension sends with the host's fetch/);
  });
});
