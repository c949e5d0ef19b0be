/**
 * The model router on the emulator (Model router API), over real HTTP with plain fetch: the fake models (echo byte for
 * byte, solid PNG, slow then collected with its key, strict 422), every error bucket on demand through the fault
 * plan, and `comfy-cloud emulator` printing the router's URL. No sleeps: the slow model is collected by repeated
 * requests, each held by the router's own (short) deadline.
 */
import * as assert from 'node:assert/strict';
import { runCli } from '../../src/cli/cli';
import { BUCKETS, BUCKET_STATUS, parseFaultSpec, startEmulator, type Emulator } from '../../src/emulator';
import { assertBucket, collect, get, post } from './emulator-router.fixtures';
import { Buffered, abortingWhen, assertSolid, call, type Json } from './harness';

describe('emulator model router', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startEmulator({ port: 0, control: true, router: { deadlineMs: 40, slowMs: 300 } });
  });
  after(async () => emu?.close());
  afterEach(() => emu.setFaults({ rules: [] }));

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
