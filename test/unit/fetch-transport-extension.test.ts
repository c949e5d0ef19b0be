/**
 * VS Code's networking in the extension: the extension sends with the extension host's `fetch` through its clients,
 * and its default engine is that fetch (undici is not in the extension bundle; the shipped dist/extension.js itself is
 * checked by bundles.test.ts).
 */
import * as assert from 'node:assert/strict';
import { FetchEngine, type RequestLogEntry } from '../../src/core/http';
import { surfaceFromBaseUrl } from '../../src/core/v2/surface';
import { defaultEngine as extensionDefaultEngine } from '../../src/core/http/defaultEngine.extension';
import { Clients } from '../../src/extension/platform/clients';
import type { Config } from '../../src/extension/platform/config';
import type { Log } from '../../src/extension/platform/log';
import type { ApiKeys } from '../../src/extension/platform/secrets';
import { type Json } from './harness';
import { anySchema, startServer, type TestServer } from './httpServer';

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
