/**
 * The rules for untrusted bodies (bounded bodies, idle timeouts, redirects, what was sent), run over both engines the
 * transport is given: undici's `request()` (the CLI and the tests) and `fetch` (the extension host's, Node's global
 * fetch); and the client over each engine against the emulator. Each test is named after the rule it proves.
 */
import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { AbortError, ConnectionError, ManualClock, RedirectError } from '../../src/core';
import { Transport, isBodyIdleTimeout } from '../../src/core/http';
import { V2Client } from '../../src/core/v2/client';
import { hashFile } from '../../src/core/util';
import { downloadToFile } from '../../src/core/http/download';
import { ResponseTooLargeError } from '../../src/core/http/errors';
import { invertWorkflow } from './builders';
import { CountingEngine, ENGINES } from './engines';
import { ENDLESS_BYTES, MiB, READ_SLACK_BYTES } from './fetch-transport.fixtures';
import { useEmulator } from './harness';
import { anySchema, pushEndlessly, startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

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
