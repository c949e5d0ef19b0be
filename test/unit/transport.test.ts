import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AbortError, ConnectionError, ManualClock, TimeoutError } from '../../src/core';
import { Transport, type RequestLogEntry } from '../../src/core/http';
import { VERSION } from '../../src/core/util';
import { downloadToFile } from '../../src/core/http/download';
import { ENGINES } from './engines';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

for (const engine of ENGINES)
  describe(`transport over ${engine.name}: credentials, request ids, timeouts`, () => {
    let own: TestServer;
    let other: TestServer;
    /** Told when the server has a request for `/slow` (which it never answers). */
    let onSlow: (() => void) | undefined;
    before(async () => {
      other = await startServer((_req, res) => {
        res.setHeader('content-type', 'image/png');
        res.end('signed-bytes');
      });
      own = await startServer((req, res) => {
        if (req.url?.startsWith('/redirect')) {
          res.statusCode = 302;
          res.setHeader('location', `${other.origin}/signed/blob?sig=SECRET-SIGNATURE`);
          res.end();
          return;
        }
        if (req.url?.startsWith('/slow')) return onSlow?.(); // never answers: the timeout must fire
        res.setHeader('x-svc-request-id', 'rid-1');
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: true }));
      });
    });
    after(async () => {
      await own.close();
      await other.close();
    });

    const anySchema = { safeParse: (v: unknown) => ({ success: true as const, data: v }) };

    it('sends Authorization: Bearer and a User-Agent naming the client and its version to the configured origin', async () => {
      const t = new Transport({ baseUrl: own.origin, apiKey: 'KEY-123', ...engine.options() });
      const res = await t.json('GET', '/api/v2/jobs/x', anySchema);
      await t.close();
      const h = own.seen.at(-1)!.headers;
      assert.equal(h.authorization, 'Bearer KEY-123');
      assert.match(String(h['user-agent']), new RegExp(`^comfy-cloud/${VERSION.replace(/\./g, '\\.')} `));
      assert.equal(res.requestId, 'rid-1');
    });

    it('never sends credentials to another origin', async () => {
      const t = new Transport({ baseUrl: own.origin, apiKey: 'KEY-123', ...engine.options() });
      await t
        .json('GET', new URL(`${other.origin}/x`), { safeParse: () => ({ success: true as const, data: null }) })
        .catch(() => undefined);
      await t.close();
      assert.equal(other.seen.at(-1)!.headers.authorization, undefined);
    });

    it("keeps the base URL's path prefix when building an API path", () => {
      const t = new Transport({ baseUrl: `${own.origin}/deployment/d1/` });
      assert.equal(t.url('/api/v2/jobs').href, `${own.origin}/deployment/d1/api/v2/jobs`);
    });

    it('follows a 302 to a signed URL without Authorization, and keeps the signature out of the log', async () => {
      const log: RequestLogEntry[] = [];
      const t = new Transport({ baseUrl: own.origin, apiKey: 'KEY-123', log: (e) => log.push(e), ...engine.options() });
      const dir = tempDir('cc-dl-');
      const res = await downloadToFile(t, t.url('/redirect'), path.join(dir, 'out.png'));
      await t.close();
      assert.equal(fs.readFileSync(res.path, 'utf8'), 'signed-bytes');
      const signed = other.seen.at(-1)!;
      assert.equal(signed.url, '/signed/blob?sig=SECRET-SIGNATURE');
      assert.equal(signed.headers.authorization, undefined);
      assert.equal(signed.headers['x-api-key'], undefined);
      assert.ok(!JSON.stringify(log).includes('SECRET-SIGNATURE'), "the signed URL's query reached the log");
      assert.ok(!JSON.stringify(log).includes('KEY-123'), 'the API key reached the log');
    });

    it('a download never overwrites an existing file and leaves no partial file', async () => {
      const t = new Transport({ baseUrl: own.origin, ...engine.options() });
      const dir = tempDir('cc-dl-');
      const file = path.join(dir, 'taken.png');
      fs.writeFileSync(file, 'mine');
      await assert.rejects(
        downloadToFile(t, t.url('/redirect'), file),
        (e: unknown) => (e as { code?: string }).code === 'file_exists',
      );
      await t.close();
      assert.equal(fs.readFileSync(file, 'utf8'), 'mine');
      assert.deepEqual(fs.readdirSync(dir), ['taken.png']);
    });

    it('a request with no answer within the timeout is a TimeoutError', async () => {
      // The timeout's clock is the test's: its time runs out once the server has the request, on any machine.
      const clock = new ManualClock(0);
      const t = new Transport({ baseUrl: own.origin, timeoutMs: 150, timeoutClock: clock, ...engine.options() });
      onSlow = () => clock.advance(150);
      try {
        await assert.rejects(
          t.json('GET', '/slow', anySchema),
          (e: unknown) => TimeoutError.is(e) && e.timeoutMs === 150,
        );
        assert.deepEqual(clock.sleeps, [150], 'the wait for the headers is the timeout');
      } finally {
        onSlow = undefined;
        await t.close();
      }
    });

    it("the caller's AbortSignal aborts a request: AbortError, not a timeout", async () => {
      const t = new Transport({ baseUrl: own.origin, timeoutMs: 10_000, ...engine.options() });
      const ac = new AbortController();
      const p = t.json('GET', '/slow', anySchema, { signal: ac.signal });
      ac.abort();
      await assert.rejects(p, (e: unknown) => AbortError.is(e));
      await t.close();
    });

    it('a refused connection is a ConnectionError that says so, and that nothing was sent (requestSent: false)', async () => {
      const probe = net.createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
      const { port } = probe.address() as AddressInfo;
      await new Promise<void>((r) => probe.close(() => r()));
      const t = new Transport({ baseUrl: `http://127.0.0.1:${port}`, ...engine.options() });
      await assert.rejects(
        t.json('GET', '/x', anySchema),
        (e: unknown) =>
          ConnectionError.is(e) &&
          /refused/.test(e.message) &&
          e.requestSent === false &&
          e.code === 'connection_refused',
      );
      await t.close();
    });
  });

describe('transport over undici (the default in Node): HTTP_PROXY / NO_PROXY', () => {
  let own: TestServer;
  before(async () => {
    own = await startServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    });
  });
  after(async () => own.close());
  const anySchema = { safeParse: (v: unknown) => ({ success: true as const, data: v }) };
  let proxy: http.Server;
  let proxied: string[];
  const saved = { ...process.env };
  before(async () => {
    proxied = [];
    proxy = http.createServer((req, res) => {
      // A plain forward proxy for absolute-URI requests.
      proxied.push(`${req.method} ${req.url}`);
      const target = new URL(req.url!);
      const up = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: req.method,
          headers: req.headers,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      req.pipe(up);
    });
    proxy.on('connect', (req, socket: net.Socket, head) => {
      proxied.push(`CONNECT ${req.url}`);
      const [host, port] = String(req.url).split(':');
      const up = net.connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        up.write(head);
        up.pipe(socket);
        socket.pipe(up);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    process.env = saved;
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
  });

  it('goes through HTTP_PROXY, and around it for a NO_PROXY host', async () => {
    const { port } = proxy.address() as AddressInfo;
    process.env.HTTP_PROXY = `http://127.0.0.1:${port}`;
    process.env.http_proxy = `http://127.0.0.1:${port}`;
    delete process.env.NO_PROXY;
    delete process.env.no_proxy;
    const t = new Transport({ baseUrl: own.origin });
    await t.json('GET', '/via-proxy', anySchema);
    await t.close();
    assert.ok(
      proxied.some((l) => l.includes(new URL(own.origin).host) || l.includes('/via-proxy')),
      `proxy saw: ${proxied.join(', ')}`,
    );

    proxied.length = 0;
    process.env.NO_PROXY = '127.0.0.1';
    process.env.no_proxy = '127.0.0.1';
    const t2 = new Transport({ baseUrl: own.origin });
    await t2.json('GET', '/direct', anySchema);
    await t2.close();
    assert.deepEqual(proxied, []);
  });
});
