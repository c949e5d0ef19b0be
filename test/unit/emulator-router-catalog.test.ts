/**
 * The model router on the emulator (Model router API, and public sources where it says "not shown"), over real HTTP
 * with plain fetch: keys, catalog paging through empty and short pages, limit clamping, opaque cursors, and ETag/304
 * on detail and schema.
 */
import * as assert from 'node:assert/strict';
import { DEFAULT_LIMIT, MAX_LIMIT, startEmulator, type Emulator } from '../../src/emulator';
import { AUTH, assertBucket, get, post, walk } from './emulator-router.fixtures';
import { call, type Json } from './harness';

describe('emulator model router', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startEmulator({ port: 0, control: true, router: { deadlineMs: 40, slowMs: 300 } });
  });
  after(async () => emu?.close());
  afterEach(() => emu.setFaults({ rules: [] }));

  describe('keys', () => {
    it('the router is served under <origin>/router, on by default', () => {
      assert.equal(emu.routerUrl, `${emu.origin}/router`);
    });

    it('no key: 401 unauthorized with the router error body and both headers; a wrong key too', async () => {
      assertBucket(await call(`${emu.routerUrl}/v1/models`), 401, 'unauthorized');
      assertBucket(
        await call(`${emu.routerUrl}/v1/models`, { headers: { authorization: 'Bearer nope' } }),
        401,
        'unauthorized',
      );
      assertBucket(
        await call(`${emu.routerUrl}/v1/models/emulator/echo`, { method: 'POST', body: '{}' }),
        401,
        'unauthorized',
      );
    });

    it('the job service token is not a router key and the router key opens no job route', async () => {
      const other = await startEmulator({ port: 0, tokens: ['job-token'], router: { keys: ['k-1'] } });
      try {
        assertBucket(
          await call(`${other.routerUrl}/v1/models`, { headers: { authorization: 'Bearer job-token' } }),
          401,
          'unauthorized',
        );
        assertBucket(await call(`${other.routerUrl}/v1/models`, { headers: AUTH }), 401, 'unauthorized');
        assert.equal(
          (await call(`${other.routerUrl}/v1/models`, { headers: { authorization: 'Bearer k-1' } })).status,
          200,
        );
        assert.equal((await call(`${other.routerUrl}/v1/models`, { headers: { 'x-api-key': 'k-1' } })).status, 200);
        assert.equal(
          (await call(`${other.baseUrl}/api/v2/jobs`, { headers: { authorization: 'Bearer k-1' } })).status,
          401,
        );
      } finally {
        await other.close();
      }
    });

    it('router: false serves no router', async () => {
      const other = await startEmulator({ port: 0, router: false });
      try {
        assert.equal(other.routerUrl, undefined);
        assert.equal((await call(`${other.origin}/router/v1/models`, { headers: AUTH })).status, 404);
      } finally {
        await other.close();
      }
    });
  });

  describe('catalog paging', () => {
    it('the catalog needs several pages: about 250 entries over several providers, in an unsorted order', () => {
      const ids = emu.routerCatalog.map((e) => e.id);
      assert.ok(ids.length >= 250, String(ids.length));
      assert.ok(new Set(emu.routerCatalog.map((e) => e.provider)).size >= 5);
      assert.notDeepEqual(ids, [...ids].sort());
    });

    for (const limit of [undefined, 7, 20, 100]) {
      it(`paging while has_more (limit ${limit ?? 'default'}) serves every entry once, in order, through an EMPTY page and a short page`, async () => {
        const pages = await walk(emu, limit);
        const served = pages.flatMap((p) => p.data.map((e: Json) => e.id));
        assert.deepEqual(
          served,
          emu.routerCatalog.map((e) => e.id),
        );
        const stride = limit ?? DEFAULT_LIMIT;
        for (const p of pages) assert.equal(p.limit, stride);
        const middle = pages.slice(0, -1);
        assert.ok(
          middle.some((p) => p.data.length === 0 && p.has_more === true && typeof p.next_cursor === 'string'),
          'an empty page mid-way',
        );
        if (stride < 100)
          assert.ok(
            middle.some((p) => p.data.length > 0 && p.data.length < stride && p.has_more === true),
            'a short page mid-way',
          );
        const last = pages[pages.length - 1];
        assert.equal(last.has_more, false);
        assert.equal(last.next_cursor, undefined);
        for (const e of pages[0].data) {
          assert.equal(e.id, `${e.provider}/${e.model}`);
          assert.match(e.billing.charges_on_policy_rejection, /^[a-z]+$/);
        }
      });
    }

    it('limit above 100 is served as 100, 0 or negative as 20, absent as 20; the served size is echoed', async () => {
      for (const [raw, served] of [
        ['1000', MAX_LIMIT],
        ['101', MAX_LIMIT],
        ['100', 100],
        ['0', DEFAULT_LIMIT],
        ['-5', DEFAULT_LIMIT],
        ['1', 1],
      ] as const) {
        const a = await get(emu, `/v1/models?limit=${raw}`);
        assert.equal(a.status, 200);
        assert.equal(a.body.limit, served, raw);
        assert.equal(a.body.data.length, served, raw);
      }
      const none = await get(emu, '/v1/models');
      assert.equal(none.body.limit, DEFAULT_LIMIT);
      assertBucket(await get(emu, '/v1/models?limit=ten'), 400, 'invalid_input');
    });

    it('cursors are opaque: not an offset, two cursors to the same place differ, and a forged one is refused', async () => {
      const a = await get(emu, '/v1/models?limit=20');
      const b = await get(emu, '/v1/models?limit=20');
      const cursor: string = a.body.next_cursor;
      assert.match(cursor, /^[A-Za-z0-9._~+/=-]{1,512}$/);
      assert.ok(!/^\d+$/.test(cursor), cursor);
      for (const forged of [
        '20',
        Buffer.from('20').toString('base64'),
        Buffer.from(JSON.stringify({ o: 20, p: 1 })).toString('base64url'),
      ]) {
        assertBucket(await get(emu, `/v1/models?limit=20&cursor=${encodeURIComponent(forged)}`), 400, 'invalid_input');
      }
      assert.notEqual(cursor, b.body.next_cursor);
      const next = await get(emu, `/v1/models?limit=20&cursor=${encodeURIComponent(b.body.next_cursor)}`);
      assert.equal(next.status, 200);
    });

    it('a tampered, malformed, too long or expired cursor answers 400 invalid_input', async () => {
      const cursor: string = (await get(emu, '/v1/models')).body.next_cursor;
      const flipped = cursor.slice(0, 3) + (cursor[3] === 'A' ? 'B' : 'A') + cursor.slice(4);
      const other = await startEmulator({ port: 0 });
      let expired: string;
      try {
        expired = (await get(other, '/v1/models')).body.next_cursor;
      } finally {
        await other.close();
      }
      for (const bad of [flipped, '20', 'not a cursor!', 'x'.repeat(513), expired, `${cursor}x`]) {
        assertBucket(await get(emu, `/v1/models?cursor=${encodeURIComponent(bad)}`), 400, 'invalid_input');
      }
    });
  });

  describe('detail and schema', () => {
    it('the detail is the entry plus input_schema_url, with an ETag; If-None-Match answers a bodyless 304 with the same ETag', async () => {
      const a = await get(emu, '/v1/models/emulator/strict');
      assert.equal(a.status, 200);
      assert.equal(a.body.id, 'emulator/strict');
      assert.equal(a.body.provider, 'emulator');
      assert.equal(a.body.model, 'strict');
      assert.equal(a.body.input_schema_url, `${emu.routerUrl}/v1/models/emulator/strict/openapi.json`);
      const etag = a.headers.get('etag')!;
      assert.ok(etag);
      const again = await get(emu, '/v1/models/emulator/strict', { 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      assert.equal(again.headers.get('etag'), etag);
    });

    it('openapi.json is an OpenAPI 3.0 document: a POST request body $ref into components, nullable, boolean exclusiveMinimum; ETag, Cache-Control, request id', async () => {
      const a = await get(emu, '/v1/models/emulator/strict/openapi.json');
      assert.equal(a.status, 200);
      assert.match(a.body.openapi, /^3\.0\./);
      const op = a.body.paths['/v1/models/emulator/strict'].post;
      const ref: string = op.requestBody.content['application/json'].schema.$ref;
      assert.match(ref, /^#\/components\/schemas\//);
      const root = a.body.components.schemas[ref.split('/').pop()!];
      assert.equal(root.properties.guidance.nullable, true);
      assert.equal(root.properties.guidance.exclusiveMinimum, true);
      assert.equal(root.properties.size.$ref, '#/components/schemas/Size');
      assert.match(a.headers.get('etag')!, /^"[^"]+"$/);
      assert.ok(a.headers.get('cache-control'));
      assert.ok(a.headers.get('x-svc-request-id'));
    });

    it('If-None-Match uses weak comparison: the same tag, its W/ form, a list holding it and * answer 304; another tag 200', async () => {
      const path = '/v1/models/emulator/solid-png/openapi.json';
      const first = await get(emu, path);
      const etag = first.headers.get('etag')!;
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const a = await get(emu, path, { 'if-none-match': header });
        assert.equal(a.status, 304, header);
        assert.equal(a.text, '');
        assert.equal(a.headers.get('etag'), etag);
        assert.ok(a.headers.get('cache-control'));
        assert.ok(a.headers.get('x-svc-request-id'));
      }
      const other = await get(emu, path, { 'if-none-match': '"other"' });
      assert.equal(other.status, 200);
      assert.equal(other.text, first.text);
    });

    it('a changed schema has a new ETag: the old one no longer matches', async () => {
      const path = '/v1/models/emulator/echo/openapi.json';
      const before = await get(emu, path);
      emu.bumpRouterSchema('emulator/echo');
      const after = await get(emu, path, { 'if-none-match': before.headers.get('etag')! });
      assert.equal(after.status, 200);
      assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
    });

    it('a variant is the third path segment: detail and schema of emulator/slow/no-retry', async () => {
      const d = await get(emu, '/v1/models/emulator/slow/no-retry');
      assert.equal(d.status, 200);
      assert.equal(d.body.input_schema_url, `${emu.routerUrl}/v1/models/emulator/slow/no-retry/openapi.json`);
      assert.equal((await get(emu, '/v1/models/emulator/slow/no-retry/openapi.json')).status, 200);
      assertBucket(await get(emu, '/v1/models/emulator/slow/turbo'), 404, 'model_not_found');
    });

    it('an unknown model answers 404 model_not_found with up to three suggestions; a malformed segment 400 invalid_input', async () => {
      const a = await get(emu, '/v1/models/emulator/ecko');
      assertBucket(a, 404, 'model_not_found');
      assert.ok(a.body.suggestions.length >= 1 && a.body.suggestions.length <= 3);
      assert.equal(a.body.suggestions[0], 'emulator/echo');
      assert.match(a.body.detail, /emulator\/echo/);
      assertBucket(await post(emu, '/v1/models/nobody/nothing', '{}'), 404, 'model_not_found');
      assertBucket(await get(emu, '/v1/models/Emulator/echo'), 400, 'invalid_input');
      assertBucket(await get(emu, `/v1/models/emulator/${'a'.repeat(129)}`), 400, 'invalid_input');
    });
  });
});
