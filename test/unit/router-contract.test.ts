/**
 * Contract tests (Model router API): the core RouterClient against the emulator's model router, for the main rules:
 * paging through the empty and short pages, the limit clamp, segment validation before any request, every bucket and
 * an unknown one, the 422 mapping, a 504 collected with the same key, bytes unchanged, ETag/304 and stale on failure,
 * and credentials only to the router's origin. Waits go through a ManualClock that advances at once; each retry of the
 * slow model is held by the emulator's own short deadline, so nothing sleeps.
 */
import * as assert from 'node:assert/strict';
import { ManualClock } from '../../src/core';
import {
  DeadlineExceededError,
  ROUTER_BUCKETS,
  RouterClient,
  RouterError,
  fileKeyStore,
  removeTopLevelSchemaKey,
} from '../../src/core/router';
import { TEST_ROUTER_KEY, type Emulator } from '../../src/emulator';
import { startServer, type TestServer } from './httpServer';
import { useEmulator } from './harness';
import { tempDir } from './tmp';
import * as path from 'node:path';

describe('router contract: RouterClient against the emulator', () => {
  const emulator = useEmulator({ router: { deadlineMs: 60, slowMs: 200 } });
  let emu: Emulator;
  let client: RouterClient;
  let clock: ManualClock;
  beforeEach(() => {
    emu = emulator();
    clock = new ManualClock(Date.now(), { autoAdvance: true });
    const dir = tempDir('router-contract-');
    client = new RouterClient({
      baseUrl: emu.routerUrl!,
      apiKey: TEST_ROUTER_KEY,
      clock,
      schemaCacheDir: path.join(dir, 'schemas'),
      keyStore: fileKeyStore(path.join(dir, 'keys')),
    });
  });
  afterEach(async () => {
    emu.setFaults({ rules: [] });
    await client.close();
  });

  it('rule: the iterator pages while has_more, through the empty and the short page, each entry once in the order served', async () => {
    const pages: number[] = [];
    const ids: string[] = [];
    for await (const entry of client.models({ limit: 10, onPage: (p) => pages.push(p.entries.length) }))
      ids.push(entry.id);
    assert.deepEqual(
      ids,
      emu.routerCatalog.map((e) => e.id),
    );
    assert.ok(pages.includes(0), `an empty page was passed: ${pages.join(',')}`);
    assert.ok(
      pages.some((n) => n > 0 && n < 10) && pages.indexOf(0) < pages.length - 1,
      `a short page and more after the empty one: ${pages.join(',')}`,
    );
  });

  it('rule: limit above 100 is served as 100, 0 or negative as 20, and the served size is reported', async () => {
    assert.equal((await client.listModels({ limit: 500 })).limit, 100);
    assert.equal((await client.listModels({ limit: 500 })).entries.length, 100);
    assert.equal((await client.listModels({ limit: 0 })).limit, 20);
    assert.equal((await client.listModels({ limit: -3 })).entries.length, 20);
    assert.equal((await client.listModels({ limit: 7 })).limit, 7);
  });

  it('rule: a malformed model id or cursor is refused before any request', async () => {
    const before = emu.routerRequests.length;
    await assert.rejects(client.getModel('Emulator/echo'), { code: 'bad_model_id' });
    await assert.rejects(client.run('emulator', '{}'), { code: 'bad_model_id' });
    await assert.rejects(client.listModels({ cursor: 'no spaces allowed' }), { code: 'bad_cursor' });
    assert.equal(emu.routerRequests.length, before);
  });

  it('rule: every bucket that is not retried is thrown as itself with its request id after exactly one request; an unknown one as internal_error', async () => {
    for (const bucket of ROUTER_BUCKETS) {
      if (bucket === 'rate_limited' || bucket === 'service_unavailable' || bucket === 'deadline_exceeded') continue;
      emu.setFaults({ rules: [`router:get:bucket=${bucket}:times=1`] });
      const before = emu.routerRequests.length;
      await assert.rejects(
        client.getModel('emulator/echo'),
        (e: unknown) => e instanceof RouterError && e.bucket === bucket && typeof e.requestId === 'string',
      );
      assert.equal(emu.routerRequests.length - before, 1, bucket);
    }
    emu.setFaults({ rules: ['router:get:bucket=brand_new_bucket:status=418:times=1'] });
    await assert.rejects(
      client.getModel('emulator/echo'),
      (e: unknown) =>
        e instanceof RouterError && e.bucket === 'internal_error' && e.reportedBucket === 'brand_new_bucket',
    );
  });

  it('rule: rate_limited with Retry-After and service_unavailable are retried (bounded) and then succeed', async () => {
    emu.setFaults({
      rules: ['router:get:bucket=rate_limited:retryAfter=1:times=1', 'router:get:bucket=service_unavailable:times=1'],
    });
    const before = emu.routerRequests.length;
    const { model } = await client.getModel('emulator/echo');
    assert.equal(model.id, 'emulator/echo');
    assert.equal(emu.routerRequests.length - before, 3);
  });

  it('rule: a 422 body maps to field errors with loc paths, msg and type', async () => {
    await assert.rejects(client.run('emulator/strict', '{"prompt": "", "steps": 99}'), (e: unknown) => {
      assert.ok(e instanceof RouterError && e.status === 422 && e.bucket === 'invalid_input');
      assert.ok(e.fieldErrors.length >= 2);
      assert.ok(e.fieldErrors.every((f) => Array.isArray(f.loc) && f.loc.length > 0 && f.msg !== '' && f.type !== ''));
      assert.ok(e.fieldErrors.some((f) => f.loc.includes('steps')));
      return true;
    });
  });

  it('rule: the input is POSTed unchanged and the output returned as the exact bytes (big integers, spacing, escapes)', async () => {
    const text = '{"$schema":"x","big":123456789012345678901234567890,  "s":"\\u00e9\\n" ,"k":[1.0]}';
    const body = removeTopLevelSchemaKey(text);
    const result = await client.run('emulator/echo', body);
    assert.equal(result.bytes.toString('utf8'), body);
    assert.ok(!body.includes('$schema'));
  });

  it('rule: a 504 with Retry-After is collected with the SAME Idempotency-Key', async () => {
    const before = emu.routerRequests.length;
    const result = await client.run('emulator/slow', '{"n":1}');
    const posts = emu.routerRequests.slice(before);
    assert.ok(result.attempts >= 2 && posts.length === result.attempts);
    assert.deepEqual(new Set(posts.map((q) => q.headers['idempotency-key'])), new Set([result.idempotencyKey]));
    assert.ok(clock.sleeps.includes(1000), 'waited the Retry-After');
  });

  it('rule: a 504 without Retry-After stops after one request and names the key, which collects later', async () => {
    const before = emu.routerRequests.length;
    let key: string | undefined;
    await assert.rejects(client.run('emulator/slow/no-retry', '{"n":2}'), (e: unknown) => {
      assert.ok(e instanceof DeadlineExceededError);
      key = e.idempotencyKey;
      return true;
    });
    assert.equal(emu.routerRequests.length - before, 1);
    assert.ok(key);
    let collected = false;
    for (let i = 0; i < 50 && !collected; i++) {
      try {
        const r = await client.run('emulator/slow/no-retry', '{"n":2}', { idempotencyKey: key });
        assert.equal(r.idempotencyKey, key);
        collected = true;
      } catch (e) {
        if (!(e instanceof DeadlineExceededError)) throw e;
      }
    }
    assert.ok(collected);
    assert.ok(emu.routerRequests.slice(before).every((q) => q.headers['idempotency-key'] === key));
  });

  it('rule: the schema is cached with its ETag, revalidated with If-None-Match (304 keeps the bytes), refetched after a change, stale on failure', async () => {
    const fresh = await client.getInputSchema('emulator/strict');
    assert.equal(fresh.source, 'fresh');
    assert.ok(fresh.etag);
    const again = await client.getInputSchema('emulator/strict');
    assert.equal(again.source, 'not_modified');
    assert.ok(again.bytes.equals(fresh.bytes));
    assert.equal(emu.routerRequests.at(-1)!.headers['if-none-match'], fresh.etag);
    emu.bumpRouterSchema('emulator/strict');
    const changed = await client.getInputSchema('emulator/strict');
    assert.equal(changed.source, 'fresh');
    assert.notEqual(changed.etag, fresh.etag);
    emu.setFaults({ rules: ['router:schema:bucket=internal_error'] });
    const stale = await client.getInputSchema('emulator/strict');
    assert.equal(stale.source, 'stale');
    assert.ok(stale.bytes.equals(changed.bytes));
  });

  describe('credentials', () => {
    let other: TestServer;
    before(async () => {
      other = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"openapi":"3.0.3"}');
      });
    });
    after(() => other.close());

    it('rule: the Bearer router key goes to the router origin only; an input_schema_url elsewhere is fetched without it', async () => {
      const before = emu.routerRequests.length;
      await client.getModel('emulator/echo');
      assert.equal(emu.routerRequests[before].headers.authorization, `Bearer ${TEST_ROUTER_KEY}`);
      const doc = await client.getInputSchema('emulator/echo', { url: `${other.origin}/schemas/echo.json` });
      assert.equal(doc.bytes.toString(), '{"openapi":"3.0.3"}');
      assert.equal(other.seen.length, 1);
      assert.equal(other.seen[0].headers.authorization, undefined);
    });
  });
});
