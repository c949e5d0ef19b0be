/**
 * The model router on the emulator (Model router API, and public sources where it says "not shown"), over
 * real HTTP with plain fetch: keys, catalog paging through empty and short pages, limit clamping, opaque cursors,
 * ETag/304 on detail and schema, the fake models (echo byte for byte, solid PNG, slow then collected with its key,
 * strict 422), and every error bucket on demand through the fault plan. No sleeps: the slow model is collected by
 * repeated requests, each held by the router's own (short) deadline.
 */
import * as assert from 'node:assert/strict';
import { runCli } from '../../src/cli/cli';
import {
  BUCKETS,
  BUCKET_STATUS,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  TEST_ROUTER_KEY,
  parseFaultSpec,
  startEmulator,
  type Emulator,
} from '../../src/emulator';
import { Buffered, abortingWhen, assertSolid, call, type Answer, type Json } from './harness';

const AUTH = { authorization: `Bearer ${TEST_ROUTER_KEY}` };

function get(emu: Emulator, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.routerUrl}${path}`, { headers: { ...AUTH, ...headers } });
}

function post(emu: Emulator, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.routerUrl}${path}`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json', ...headers },
    body,
  });
}

/** Asserts a router error: status, `{detail, error_type}` and both headers. */
function assertBucket(a: Answer, status: number, bucket: string): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.body.error_type, bucket, a.text);
  assert.equal(typeof a.body.detail, 'string');
  assert.equal(a.headers.get('x-svc-error-type'), bucket);
  assert.ok(a.headers.get('x-svc-request-id'));
}

/** Walks the catalog with `limit`, following next_cursor while has_more (bounded). */
async function walk(emu: Emulator, limit?: number): Promise<Json[]> {
  const pages: Json[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const q = new URLSearchParams();
    if (limit !== undefined) q.set('limit', String(limit));
    if (cursor !== undefined) q.set('cursor', cursor);
    const a = await get(emu, `/v1/models?${q}`);
    assert.equal(a.status, 200, a.text);
    pages.push(a.body);
    if (!a.body.has_more) return pages;
    cursor = a.body.next_cursor;
  }
  throw new Error('the catalog never ended');
}

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

  describe('fake models', () => {
    it('echo returns the input bytes unchanged: big integers, key order, escapes and spacing', async () => {
      const body =
        '{ "z": 12345678901234567890123456789, "a":[1.0, 2e3,\n -0],  "s": "\\u00e9\\n\\"", "nested": {"b": null, "a": true} }';
      const a = await post(emu, '/v1/models/emulator/echo', body);
      assert.equal(a.status, 200);
      assert.equal(a.text, body);
      assert.ok(a.headers.get('x-svc-request-id'));
    });

    it('a body that is not JSON answers 400 invalid_input', async () => {
      assertBucket(await post(emu, '/v1/models/emulator/echo', '{nope'), 400, 'invalid_input');
      assertBucket(await post(emu, '/v1/models/emulator/echo', ''), 400, 'invalid_input');
    });

    it('solid-png renders a PNG of the colour and size asked, base64 in the native output', async () => {
      const a = await post(
        emu,
        '/v1/models/emulator/solid-png',
        JSON.stringify({ color: '#10a0f0', width: 5, height: 3 }),
      );
      assert.equal(a.status, 200, a.text);
      const image = a.body.data[0];
      assert.equal(image.mime_type, 'image/png');
      assertSolid(Buffer.from(image.b64_json, 'base64'), 5, 3, [0x10, 0xa0, 0xf0]);
    });

    it('slow: 504 deadline_exceeded WITH Retry-After, then a retry with the SAME key collects the finished generation', async () => {
      const first = await post(emu, '/v1/models/emulator/slow', '{"prompt":"p"}', { 'idempotency-key': 'k-slow-1' });
      assertBucket(first, 504, 'deadline_exceeded');
      assert.equal(first.headers.get('retry-after'), '1');
      const done = await collect(emu, '/v1/models/emulator/slow', '{"prompt":"p"}', 'k-slow-1');
      assert.deepEqual(done.body.input, { prompt: 'p' });
      // Collected again: the same generation, not a new one.
      const again = await post(emu, '/v1/models/emulator/slow', '{"prompt":"p"}', { 'idempotency-key': 'k-slow-1' });
      assert.equal(again.status, 200);
      assert.equal(again.text, done.text);
    });

    it('slow: a different key starts a new generation', async () => {
      assertBucket(
        await post(emu, '/v1/models/emulator/slow', '{}', { 'idempotency-key': 'k-a' }),
        504,
        'deadline_exceeded',
      );
      assertBucket(
        await post(emu, '/v1/models/emulator/slow', '{}', { 'idempotency-key': 'k-b' }),
        504,
        'deadline_exceeded',
      );
      const a = await collect(emu, '/v1/models/emulator/slow', '{}', 'k-a');
      const b = await collect(emu, '/v1/models/emulator/slow', '{}', 'k-b');
      assert.notEqual(a.body.generation, b.body.generation);
      assert.notEqual(a.body.id, b.body.id);
    });

    it('slow/no-retry: the 504 has no Retry-After, and the same key still collects later; without a key the 504 has none either', async () => {
      const first = await post(emu, '/v1/models/emulator/slow/no-retry', '{}', { 'idempotency-key': 'k-nr' });
      assertBucket(first, 504, 'deadline_exceeded');
      assert.equal(first.headers.get('retry-after'), null);
      await collect(emu, '/v1/models/emulator/slow/no-retry', '{}', 'k-nr');
      const keyless = await post(emu, '/v1/models/emulator/slow', '{}');
      assertBucket(keyless, 504, 'deadline_exceeded');
      assert.equal(keyless.headers.get('retry-after'), null);
    });

    it('the same Idempotency-Key with the same request answers the same generation (no new one)', async () => {
      const body = JSON.stringify({ prompt: 'x', steps: 2 });
      const a = await post(emu, '/v1/models/emulator/strict', body, { 'idempotency-key': 'k-strict' });
      const b = await post(emu, '/v1/models/emulator/strict', body, { 'idempotency-key': 'k-strict' });
      const c = await post(emu, '/v1/models/emulator/strict', body, { 'idempotency-key': 'k-strict-2' });
      assert.equal(a.status, 200);
      assert.equal(b.text, a.text);
      assert.notEqual(c.body.id, a.body.id);
    });

    it('an Idempotency-Key reused with another body answers 400 invalid_input; a key over 255 characters too', async () => {
      assert.equal(
        (await post(emu, '/v1/models/emulator/echo', '{"a":1}', { 'idempotency-key': 'k-echo' })).status,
        200,
      );
      assertBucket(
        await post(emu, '/v1/models/emulator/echo', '{"a":2}', { 'idempotency-key': 'k-echo' }),
        400,
        'invalid_input',
      );
      assertBucket(
        await post(emu, '/v1/models/emulator/echo', '{}', { 'idempotency-key': 'k'.repeat(256) }),
        400,
        'invalid_input',
      );
    });

    it('strict: 422 with one detail item per field {loc, msg, type, ctx, input}, no error_type; bucket invalid_input in the header', async () => {
      const input = {
        prompt: '',
        guidance: 0,
        sampler: 'ddim',
        size: { width: 100, height: 64 },
        loras: [{ name: 'a' }, { name: 'b', weight: 5 }],
        extra: 1,
      };
      const a = await post(emu, '/v1/models/emulator/strict', JSON.stringify(input));
      assert.equal(a.status, 422, a.text);
      assert.equal(a.headers.get('x-svc-error-type'), 'invalid_input');
      assert.ok(a.headers.get('x-svc-request-id'));
      assert.equal(a.body.error_type, undefined);
      assert.deepEqual(Object.keys(a.body), ['detail']);
      const byLoc = new Map<string, Json>(a.body.detail.map((d: Json) => [JSON.stringify(d.loc), d]));
      for (const d of a.body.detail) {
        assert.ok(Array.isArray(d.loc) && typeof d.msg === 'string' && typeof d.type === 'string', JSON.stringify(d));
      }
      assert.equal(byLoc.get('["steps"]')?.type, 'missing');
      assert.equal(byLoc.get('["prompt"]')?.type, 'string_too_short');
      const guidance = byLoc.get('["guidance"]')!;
      assert.equal(guidance.type, 'greater_than');
      assert.deepEqual(guidance.ctx, { gt: 0 });
      assert.equal(guidance.input, 0);
      assert.equal(byLoc.get('["sampler"]')?.type, 'literal_error');
      assert.equal(byLoc.get('["size","width"]')?.type, 'multiple_of');
      const weight = byLoc.get('["loras",1,"weight"]')!;
      assert.equal(weight.type, 'less_than_equal');
      assert.deepEqual(weight.ctx, { le: 2 });
      assert.equal(weight.input, 5);
      assert.equal(byLoc.get('["extra"]')?.type, 'extra_forbidden');
      assert.equal(a.body.detail.length, 7);
    });

    it('strict: a valid input (nullable fields null) answers 200', async () => {
      const a = await post(
        emu,
        '/v1/models/emulator/strict',
        JSON.stringify({
          prompt: 'x',
          steps: 4,
          guidance: null,
          negative_prompt: null,
          size: { width: 512, height: 512 },
        }),
      );
      assert.equal(a.status, 200, a.text);
    });
  });

  describe('error buckets on demand (fault plan)', () => {
    for (const bucket of BUCKETS) {
      it(`router:invoke:bucket=${bucket} answers ${BUCKET_STATUS[bucket]} ${bucket} once, with X-Svc-Error-Type and X-Svc-Request-Id`, async () => {
        emu.setFaults({ rules: [`router:invoke:bucket=${bucket}:times=1`] });
        const a = await post(emu, '/v1/models/emulator/echo', '{}');
        assertBucket(a, BUCKET_STATUS[bucket], bucket);
        assert.equal(a.headers.get('retry-after'), bucket === 'rate_limited' ? '1' : null);
        const spend = ['limit', 'current', 'remaining'].map((n) => a.headers.get(`x-committed-spend-${n}`));
        if (bucket === 'concurrency_limit_exceeded') assert.deepEqual(spend, ['5000', '4990', '10']);
        else assert.deepEqual(spend, [null, null, null]);
        if (bucket === 'model_not_found') assert.deepEqual(a.body.suggestions[0], 'emulator/echo');
        assert.equal((await post(emu, '/v1/models/emulator/echo', '{}')).status, 200);
      });
    }

    it('spend figures, Retry-After and status are options; spend=none leaves the spend headers out', async () => {
      emu.setFaults({
        rules: [
          'router:invoke:bucket=concurrency_limit_exceeded:spend=2500/2600:times=1',
          'router:invoke:bucket=concurrency_limit_exceeded:spend=none:times=1',
        ],
      });
      const a = await post(emu, '/v1/models/emulator/echo', '{}');
      assert.deepEqual(
        ['limit', 'current', 'remaining'].map((n) => a.headers.get(`x-committed-spend-${n}`)),
        ['2500', '2600', '0'],
      );
      const b = await post(emu, '/v1/models/emulator/echo', '{}');
      assertBucket(b, 429, 'concurrency_limit_exceeded');
      assert.equal(b.headers.get('x-committed-spend-limit'), null);
      emu.setFaults({
        rules: [
          'router:list:bucket=deadline_exceeded:retryAfter=3:times=1',
          'router:get:bucket=brand_new_bucket:status=418:times=1',
        ],
      });
      const c = await get(emu, '/v1/models');
      assertBucket(c, 504, 'deadline_exceeded');
      assert.equal(c.headers.get('retry-after'), '3');
      assertBucket(await get(emu, '/v1/models/emulator/echo'), 418, 'brand_new_bucket');
    });

    it('router:any targets every router route and `any` none of them; the control endpoint takes router rules', async () => {
      emu.setFaults({ rules: ['any:status=500'] });
      assert.equal((await get(emu, '/v1/models')).status, 200);
      const set = await call(`${emu.origin}/__emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: ['router:any:bucket=service_unavailable:times=2'] }),
      });
      assert.equal(set.status, 200, set.text);
      assertBucket(await get(emu, '/v1/models'), 503, 'service_unavailable');
      assertBucket(await get(emu, '/v1/models/emulator/echo/openapi.json'), 503, 'service_unavailable');
      assert.equal((await get(emu, '/v1/models')).status, 200);
    });

    it('fault specs: router:KIND:bucket=NAME reads as a bucket rule on the router kind; bucket= elsewhere is refused', () => {
      assert.deepEqual(parseFaultSpec('router:invoke:bucket=content_policy_violation'), {
        on: 'router:invoke',
        kind: 'bucket',
        bucket: 'content_policy_violation',
      });
      assert.throws(() => parseFaultSpec('get:bucket=rate_limited'), TypeError);
      assert.throws(() => parseFaultSpec('router:invoke:bucket=rate_limited:spend=1/2'), TypeError);
      assert.throws(() => parseFaultSpec('router:nowhere:bucket=rate_limited'), TypeError);
    });
  });

  it('comfy-cloud emulator prints the router base URL on its second stdout line', async () => {
    const ac = new AbortController();
    const stdout = abortingWhen(/\/router\n/, ac);
    const stderr = new Buffered();
    const code = await runCli(['emulator', '--port', '0'], {
      stdout,
      stderr,
      env: {},
      signal: ac.signal,
      startEmulator: (o) => startEmulator({ host: o.host, port: o.port }),
    });
    assert.equal(code, 0, stderr.text);
    const [base, router] = stdout.text.trim().split('\n');
    assert.equal(router, `${base}/router`);
    assert.match(stderr.text, /model router on http/);
  });
});

/** Retries the POST with the same key until it answers 200, each attempt held by the router's deadline (bounded). */
async function collect(emu: Emulator, path: string, body: string, key: string): Promise<Answer> {
  for (let i = 0; i < 200; i++) {
    const a = await post(emu, path, body, { 'idempotency-key': key });
    if (a.status === 200) return a;
    assertBucket(a, 504, 'deadline_exceeded');
  }
  throw new Error(`key ${key} never collected`);
}
