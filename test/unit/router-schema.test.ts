/**
 * A router model's input schema and its ETag cache (Model router API, GET /v1/models/{provider}/{model}/openapi.json).
 */
import * as assert from 'node:assert/strict';
import type * as http from 'node:http';
import { ManualClock } from '../../src/core';
import { RouterClient, RouterError, weakEtagEqual } from '../../src/core/router';
import { closedPort, startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

const SCHEMA = Buffer.from('{"openapi" : "3.0.3",\n  "n": 12345678901234567890, "s":"\\u00e9"}\n');

/** Serves the schema with ETag `W/"v1"` and answers 304 when If-None-Match weakly matches; `mode` switches to failures. */
function schemaServer(state: { mode: 'ok' | '500' | '503' | 'wrong304'; etag: string }): Promise<TestServer> {
  return startServer((req: http.IncomingMessage, res: http.ServerResponse) => {
    res.setHeader('x-svc-request-id', `rid-${state.mode}`);
    if (state.mode === '500' || state.mode === '503') {
      res.statusCode = Number(state.mode);
      res.setHeader('x-svc-error-type', state.mode === '500' ? 'internal_error' : 'service_unavailable');
      res.end(
        JSON.stringify({ detail: 'down', error_type: state.mode === '500' ? 'internal_error' : 'service_unavailable' }),
      );
      return;
    }
    res.setHeader('etag', state.etag);
    res.setHeader('cache-control', 'no-cache');
    const inm = req.headers['if-none-match'];
    if (state.mode === 'wrong304' && inm !== undefined) {
      res.setHeader('etag', 'W/"other"');
      res.statusCode = 304;
      res.end();
      return;
    }
    if (inm !== undefined && weakEtagEqual(inm, state.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(SCHEMA);
  });
}

describe('router input schema', () => {
  let server: TestServer | undefined;
  let client: RouterClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('rule: ETags compare weakly (W/"x" equals "x")', () => {
    assert.ok(weakEtagEqual('W/"v1"', '"v1"'));
    assert.ok(weakEtagEqual('"v1"', '"v1"'));
    assert.ok(!weakEtagEqual('"v1"', '"v2"'));
  });

  it('rule: the schema is cached on disk with its ETag, revalidated with If-None-Match; a 304 keeps the cache; bytes exactly as served', async () => {
    const state = { mode: 'ok' as const, etag: 'W/"v1"' };
    server = await schemaServer(state);
    const dir = tempDir('router-schemas-');
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: dir });
    const first = await client.getInputSchema('acme/echo');
    assert.ok(first.bytes.equals(SCHEMA));
    assert.equal(first.source, 'fresh');
    assert.equal(first.etag, 'W/"v1"');
    // A new client on the same folder revalidates.
    await client.close();
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: dir });
    const second = await client.getInputSchema('acme/echo');
    assert.equal(second.source, 'not_modified');
    assert.equal(second.stale, false);
    assert.ok(second.bytes.equals(SCHEMA));
    assert.equal(second.requestId, 'rid-ok');
    assert.equal(server.seen[0].headers['if-none-match'], undefined);
    assert.equal(server.seen[1].headers['if-none-match'], 'W/"v1"');
    assert.equal(server.seen[1].url, '/v1/models/acme/echo/openapi.json');
  });

  it('rule: a 304 whose ETag does not weakly match the cached one refetches the document once, unconditionally', async () => {
    const state: { mode: 'ok' | 'wrong304'; etag: string } = { mode: 'ok', etag: '"v1"' };
    server = await schemaServer(state);
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: tempDir('router-schemas-') });
    await client.getInputSchema('acme/echo');
    state.mode = 'wrong304';
    const again = await client.getInputSchema('acme/echo');
    assert.equal(again.source, 'fresh');
    assert.equal(server.seen.length, 3);
    assert.equal(server.seen[2].headers['if-none-match'], undefined);
  });

  it('rule: on a 5xx the stale copy is served and its staleness reported', async () => {
    const state: { mode: 'ok' | '500'; etag: string } = { mode: 'ok', etag: '"v1"' };
    server = await schemaServer(state);
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: tempDir('router-schemas-') });
    await client.getInputSchema('acme/echo');
    state.mode = '500';
    const stale = await client.getInputSchema('acme/echo');
    assert.equal(stale.stale, true);
    assert.equal(stale.source, 'stale');
    assert.match(stale.staleReason ?? '', /internal_error/);
    assert.ok(stale.bytes.equals(SCHEMA));
    assert.equal(server.seen.length, 2); // internal_error is not retried
  });

  it('rule: service_unavailable is retried, bounded (about 10 s), then the stale copy is served', async () => {
    const state: { mode: 'ok' | '503'; etag: string } = { mode: 'ok', etag: '"v1"' };
    server = await schemaServer(state);
    const clock = new ManualClock(0, { autoAdvance: true });
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: tempDir('router-schemas-'), clock });
    await client.getInputSchema('acme/echo');
    state.mode = '503';
    const stale = await client.getInputSchema('acme/echo');
    assert.equal(stale.stale, true);
    assert.match(stale.staleReason ?? '', /service_unavailable/);
    assert.ok(server.seen.length > 2);
    assert.ok(clock.now() <= 10_000);
  });

  it('rule: on a network failure the stale copy is served; with nothing cached the failure is thrown', async () => {
    const state = { mode: 'ok' as const, etag: '"v1"' };
    server = await schemaServer(state);
    const dir = tempDir('router-schemas-');
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: dir });
    await client.getInputSchema('acme/echo');
    const origin = server.origin;
    await server.close();
    server = undefined;
    await client.close();
    // Same origin (the cache is keyed by URL), nothing listening now.
    client = new RouterClient({ baseUrl: origin, schemaCacheDir: dir });
    const stale = await client.getInputSchema('acme/echo');
    assert.equal(stale.stale, true);
    assert.match(stale.staleReason ?? '', /refused|nothing was sent/);
    assert.ok(stale.bytes.equals(SCHEMA));
    await assert.rejects(
      client.getInputSchema('acme/other'),
      (e: unknown) => (e as { code?: string }).code === 'connection_refused',
    );
    const port = await closedPort();
    await client.close();
    client = new RouterClient({ baseUrl: `http://127.0.0.1:${port}` });
    await assert.rejects(
      client.getInputSchema('acme/echo'),
      (e: unknown) => (e as { code?: string }).code === 'connection_refused',
    );
  });

  it('rule: a 4xx is thrown, not served stale', async () => {
    let n = 0;
    server = await startServer((_req, res) => {
      if (n++ === 0) {
        res.setHeader('etag', '"v1"');
        res.end('{}');
        return;
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ detail: 'gone', error_type: 'model_not_found' }));
    });
    client = new RouterClient({ baseUrl: server.origin, schemaCacheDir: tempDir('router-schemas-') });
    await client.getInputSchema('acme/echo');
    await assert.rejects(
      client.getInputSchema('acme/echo'),
      (e: unknown) => RouterError.is(e) && e.bucket === 'model_not_found',
    );
  });
});
