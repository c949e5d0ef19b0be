/** Running a router model (Model router API, POST /v1/models/{provider}/{model}, and Authentication). */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as http from 'node:http';
import { AbortError, InputError, ManualClock } from '../../src/core';
import {
  DeadlineExceededError,
  RouterClient,
  RouterOutcomeUnknownError,
  fileKeyStore,
  inputSchemaUrlOf,
  removeTopLevelSchemaKey,
  type RouterKeyRecord,
} from '../../src/core/router';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

const deadline = (res: http.ServerResponse, retryAfter?: string): void => {
  res.statusCode = 504;
  res.setHeader('x-svc-error-type', 'deadline_exceeded');
  res.setHeader('x-svc-request-id', 'rid-504');
  if (retryAfter !== undefined) res.setHeader('retry-after', retryAfter);
  res.end(JSON.stringify({ detail: 'the router stopped waiting', error_type: 'deadline_exceeded' }));
};

describe('router invocation', () => {
  let server: TestServer | undefined;
  let other: TestServer | undefined;
  let client: RouterClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    await other?.close();
    client = undefined;
    server = undefined;
    other = undefined;
  });

  it('rule: the input is POSTed unchanged and the success body is returned as the exact bytes received, with its request id', async () => {
    const input = Buffer.from('{ "seed" : 123456789012345678901234567890,\n\t"prompt":"caf\\u00e9 \\"q\\"",  "z":1 }');
    // Not valid UTF-8 on purpose: a decode-and-encode would change these bytes.
    const output = Buffer.concat([
      Buffer.from('{"big": 9007199254740993, "s":"\\ud83d\\ude00",\n  "a" :1, "raw":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    let received: Buffer | undefined;
    server = await startServer(async (req, res) => {
      received = await readBody(req);
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-svc-request-id', 'rid-ok');
      res.end(output);
    });
    client = new RouterClient({ baseUrl: server.origin });
    const out = await client.run('acme/echo', input, { idempotencyKey: 'k-1' });
    assert.ok(received?.equals(input));
    assert.ok(out.bytes.equals(output));
    assert.equal(out.requestId, 'rid-ok');
    assert.equal(out.idempotencyKey, 'k-1');
    assert.equal(server.seen[0].method, 'POST');
    assert.equal(server.seen[0].url, '/v1/models/acme/echo');
    assert.equal(server.seen[0].headers['content-type'], 'application/json');
  });

  it('rule: removing $schema removes only that top-level key; big integers, key order, escapes and spacing survive', () => {
    const cases: [string, string][] = [
      [
        '{"$schema": "comfy-router-schema:/acme/echo",\n  "seed" :  12345678901234567890123,  "p":"a\\u00e9\\n"}',
        '{\n  "seed" :  12345678901234567890123,  "p":"a\\u00e9\\n"}',
      ],
      ['{ "b": 1.50, "$schema":"x", "a": {"$schema": "kept"} }', '{ "b": 1.50, "a": {"$schema": "kept"} }'],
      ['{"z":[1, 2,3],\t"$schema" : "x"}', '{"z":[1, 2,3]}'],
      ['{"n": 9007199254740993}', '{"n": 9007199254740993}'],
      ['[{"$schema": 1}]', '[{"$schema": 1}]'],
      ['{ "$schema": "x" }', '{  }'],
      ['{"$schema":"a","$schema":"b","k":-0.0e+10}', '{"k":-0.0e+10}'],
      // The editor's own layout (New Model Input): the `$schema` line goes whole, no blank line is left.
      ['{\n  "$schema": "comfy-router-schema:/a/b.json",\n  "prompt": "x"\n}\n', '{\n  "prompt": "x"\n}\n'],
      ['{\r\n  "$schema": "x",\r\n  "n": 1\r\n}', '{\r\n  "n": 1\r\n}'],
      ['{\n  "$schema": "x"\n}\n', '{\n}\n'],
    ];
    for (const [input, expected] of cases) assert.equal(removeTopLevelSchemaKey(input), expected, input);
  });

  it('rule: an Idempotency-Key is minted with randomUUID and persisted in the state dir BEFORE the request is sent', async () => {
    const dir = tempDir('router-keys-');
    let onDiskWhenSent: RouterKeyRecord | undefined;
    server = await startServer((req, res) => {
      const key = String(req.headers['idempotency-key']);
      const file = path.join(dir, `${key}.json`);
      onDiskWhenSent = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as RouterKeyRecord) : undefined;
      res.end('{}');
    });
    client = new RouterClient({
      baseUrl: server.origin,
      keyStore: fileKeyStore(dir),
      clock: new ManualClock(1_700_000_000_000),
    });
    const out = await client.run('acme/echo', '{"a":1}');
    assert.match(out.idempotencyKey, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(server.seen[0].headers['idempotency-key'], out.idempotencyKey);
    assert.deepEqual(onDiskWhenSent, {
      idempotencyKey: out.idempotencyKey,
      modelId: 'acme/echo',
      createdAt: 1_700_000_000_000,
      inputBytes: 7,
    });
  });

  it('rule: without a key store or a given key, nothing is sent; a malformed given key is refused before any request', async () => {
    server = await startServer((_req, res) => res.end('{}'));
    client = new RouterClient({ baseUrl: server.origin });
    await assert.rejects(client.run('acme/echo', '{}'), (e: unknown) => InputError.is(e) && e.code === 'no_key_store');
    await assert.rejects(
      client.run('acme/echo', '{}', { idempotencyKey: 'has space' }),
      (e: unknown) => InputError.is(e) && e.code === 'bad_idempotency_key',
    );
    await assert.rejects(
      client.run('acme/echo', '{}', { idempotencyKey: 'k'.repeat(256) }),
      (e: unknown) => InputError.is(e) && e.code === 'bad_idempotency_key',
    );
    assert.equal(server.seen.length, 0);
  });

  it('rule: a 504 deadline_exceeded WITH Retry-After is waited out and retried with the SAME key to collect the generation', async () => {
    let n = 0;
    server = await startServer((_req, res) => (++n <= 2 ? deadline(res, '3') : res.end('{"image":"done"}')));
    const clock = new ManualClock(0, { autoAdvance: true });
    const saved: RouterKeyRecord[] = [];
    client = new RouterClient({ baseUrl: server.origin, clock, keyStore: { save: async (r) => void saved.push(r) } });
    const out = await client.run('acme/slow', '{}');
    assert.equal(out.bytes.toString(), '{"image":"done"}');
    assert.deepEqual(clock.sleeps, [3000, 3000]);
    assert.equal(saved.length, 1);
    assert.deepEqual(
      server.seen.map((s) => s.headers['idempotency-key']),
      [saved[0].idempotencyKey, saved[0].idempotencyKey, saved[0].idempotencyKey],
    );
  });

  it('rule: collecting after 504s with Retry-After is bounded, and the error names the key', async () => {
    server = await startServer((_req, res) => deadline(res, '1'));
    const clock = new ManualClock(0, { autoAdvance: true });
    client = new RouterClient({ baseUrl: server.origin, clock, collect: { maxAttempts: 4 } });
    await assert.rejects(
      client.run('acme/slow', '{}', { idempotencyKey: 'collect-me' }),
      (e: unknown) => DeadlineExceededError.is(e) && e.idempotencyKey === 'collect-me' && /collect-me/.test(e.message),
    );
    assert.equal(server.seen.length, 4);
    assert.ok(server.seen.every((s) => s.headers['idempotency-key'] === 'collect-me'));
  });

  it('rule: aborting while waiting to collect stops at once and names the key to collect with later', async () => {
    server = await startServer((_req, res) => deadline(res, '30'));
    const clock = new ManualClock(0);
    client = new RouterClient({ baseUrl: server.origin, clock });
    const controller = new AbortController();
    const running = client.run('acme/slow', '{}', { idempotencyKey: 'later-key', signal: controller.signal });
    while (clock.sleeps.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    controller.abort();
    await assert.rejects(running, (e: unknown) => AbortError.is(e) && /later-key/.test(e.message));
    assert.deepEqual(clock.sleeps, [30_000]);
    assert.equal(server.seen.length, 1);
  });

  it('rule: a 504 deadline_exceeded WITHOUT Retry-After stops after one request and reports the key (DeadlineExceededError.idempotencyKey)', async () => {
    server = await startServer((_req, res) => deadline(res));
    const clock = new ManualClock(0, { autoAdvance: true });
    client = new RouterClient({ baseUrl: server.origin, clock, keyStore: { save: async () => undefined } });
    let key: string | undefined;
    await assert.rejects(client.run('acme/slow', '{}'), (e: unknown) => {
      assert.ok(DeadlineExceededError.is(e));
      assert.equal(e.requestId, 'rid-504');
      key = e.idempotencyKey;
      return true;
    });
    assert.equal(server.seen.length, 1);
    assert.equal(key, server.seen[0].headers['idempotency-key']);
    assert.deepEqual(clock.sleeps, []);
  });

  it('rule: a call that times out is not retried and never gets a new key: the error reports the key it was sent with', async () => {
    // The timeout's clock is the test's: its time runs out once the server has the call, on any machine.
    const timeoutClock = new ManualClock(0);
    server = await startServer(() => timeoutClock.advance(150)); // never answers
    client = new RouterClient({ baseUrl: server.origin, timeoutClock, keyStore: { save: async () => undefined } });
    await assert.rejects(
      client.run('acme/slow', '{}', { timeoutMs: 150 }),
      (e: unknown) =>
        RouterOutcomeUnknownError.is(e) &&
        e.idempotencyKey === server?.seen[0].headers['idempotency-key'] &&
        e.message.includes(e.idempotencyKey),
    );
    assert.equal(server.seen.length, 1);
  });

  it('rule: Authorization: Bearer goes only to the router origin; an input_schema_url on another origin is fetched without it', async () => {
    other = await startServer((_req, res) => {
      res.setHeader('etag', '"o1"');
      res.end('{"openapi":"3.0.3"}');
    });
    const schemaUrl = `${other.origin}/schemas/echo.json`;
    server = await startServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') res.end('{}');
      else if (req.url?.endsWith('/openapi.json')) res.end('{"openapi":"3.0.3"}');
      else res.end(JSON.stringify({ id: 'acme/echo', provider: 'acme', model: 'echo', input_schema_url: schemaUrl }));
    });
    client = new RouterClient({ baseUrl: server.origin, apiKey: 'router-secret' });
    const detail = await client.getModel('acme/echo');
    await client.getInputSchema('acme/echo');
    const foreign = await client.getInputSchema('acme/echo', { url: inputSchemaUrlOf(detail.model) });
    await client.run('acme/echo', '{}', { idempotencyKey: 'k' });
    assert.equal(foreign.bytes.toString(), '{"openapi":"3.0.3"}');
    assert.deepEqual(
      server.seen.map((s) => s.headers.authorization),
      ['Bearer router-secret', 'Bearer router-secret', 'Bearer router-secret'],
    );
    assert.equal(other.seen.length, 1);
    assert.equal(other.seen[0].headers.authorization, undefined);
  });
});
