/**
 * The model router's errors (Model router API, Errors; statuses per bucket from public sources): buckets, retries
 * counted by requests.
 */
import * as assert from 'node:assert/strict';
import type * as http from 'node:http';
import { ManualClock } from '../../src/core';
import {
  ROUTER_BUCKETS,
  RouterClient,
  RouterError,
  routerErrorFromResponse,
  type RouterBucket,
} from '../../src/core/router';
import { startServer, type TestServer } from './httpServer';

const STATUS: Record<RouterBucket, number> = {
  invalid_input: 400,
  content_policy_violation: 400,
  provider_error: 502,
  provider_timeout: 504,
  insufficient_credits: 402,
  model_not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  concurrency_limit_exceeded: 429,
  client_disconnected: 499,
  internal_error: 500,
  deadline_exceeded: 504,
  not_enabled: 403,
  service_unavailable: 503,
  rate_limited: 429,
};

/** Answers every request with the router error of `bucket` (in the body, the header, or both). */
function answer(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name.toLowerCase()] ?? null });

describe('router errors', () => {
  let server: TestServer | undefined;
  let client: RouterClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('rule: the set of buckets is closed at fifteen', () => {
    assert.equal(new Set(ROUTER_BUCKETS).size, 15);
  });

  it('rule: the bucket comes from the body error_type, else X-Svc-Error-Type, else X-Comfy-Error-Type; an unknown one is internal_error', () => {
    assert.equal(
      routerErrorFromResponse(
        400,
        JSON.stringify({ detail: 'x', error_type: 'content_policy_violation' }),
        headers({ 'x-svc-error-type': 'invalid_input' }),
      ).bucket,
      'content_policy_violation',
    );
    assert.equal(
      routerErrorFromResponse(403, JSON.stringify({ detail: 'x' }), headers({ 'x-svc-error-type': 'not_enabled' }))
        .bucket,
      'not_enabled',
    );
    assert.equal(
      routerErrorFromResponse(403, '<html>proxy</html>', headers({ 'x-comfy-error-type': 'not_enabled' })).bucket,
      'not_enabled',
    );
    const unknown = routerErrorFromResponse(
      418,
      JSON.stringify({ detail: 'teapot', error_type: 'teapot_overflow' }),
      headers({}),
    );
    assert.equal(unknown.bucket, 'internal_error');
    assert.equal(unknown.code, 'internal_error');
    assert.equal(unknown.reportedBucket, 'teapot_overflow');
    assert.equal(unknown.detail, 'teapot');
  });

  for (const bucket of ROUTER_BUCKETS.filter(
    (b) => b !== 'rate_limited' && b !== 'service_unavailable' && b !== 'deadline_exceeded',
  )) {
    it(`rule: ${bucket} is answered after exactly one request, never retried, with its request id`, async () => {
      server = await startServer((_req, res) =>
        answer(
          res,
          STATUS[bucket],
          { detail: `the ${bucket} detail`, error_type: bucket },
          { 'x-svc-error-type': bucket, 'x-svc-request-id': `rid-${bucket}`, 'retry-after': '1' },
        ),
      );
      const clock = new ManualClock(0, { autoAdvance: true });
      client = new RouterClient({ baseUrl: server.origin, clock });
      await assert.rejects(
        client.run('acme/echo', '{}', { idempotencyKey: 'key-1' }),
        (e: unknown) =>
          RouterError.is(e) &&
          e.bucket === bucket &&
          e.requestId === `rid-${bucket}` &&
          e.detail === `the ${bucket} detail` &&
          e.idempotencyKey === 'key-1',
      );
      await assert.rejects(client.getModel('acme/echo'), (e: unknown) => RouterError.is(e) && e.bucket === bucket);
      assert.equal(server.seen.length, 2);
      assert.deepEqual(clock.sleeps, []);
    });
  }

  it('rule: an unknown bucket is internal_error and is not retried', async () => {
    server = await startServer((_req, res) =>
      answer(res, 503, { detail: 'new', error_type: 'quantum_flux' }, { 'x-svc-request-id': 'rid-q' }),
    );
    client = new RouterClient({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
    await assert.rejects(
      client.getModel('acme/echo'),
      (e: unknown) =>
        RouterError.is(e) &&
        e.bucket === 'internal_error' &&
        e.reportedBucket === 'quantum_flux' &&
        e.requestId === 'rid-q',
    );
    assert.equal(server.seen.length, 1);
  });

  it('rule: X-Comfy-Request-Id is kept when X-Svc-Request-Id is absent', async () => {
    server = await startServer((_req, res) =>
      answer(
        res,
        404,
        { detail: 'no such model', error_type: 'model_not_found' },
        { 'x-comfy-request-id': 'rid-public' },
      ),
    );
    client = new RouterClient({ baseUrl: server.origin });
    await assert.rejects(
      client.getModel('acme/nope'),
      (e: unknown) => RouterError.is(e) && e.requestId === 'rid-public',
    );
  });

  it('rule: model_not_found carries its suggestions (up to three)', () => {
    const e = routerErrorFromResponse(
      404,
      JSON.stringify({
        detail: { message: 'no model acme/ech', suggestions: ['acme/echo', 'acme/echo2', 'acme/each', 'acme/x'] },
        error_type: 'model_not_found',
      }),
      headers({}),
    );
    assert.deepEqual(e.suggestions, ['acme/echo', 'acme/echo2', 'acme/each']);
    assert.equal(e.detail, 'no model acme/ech');
  });

  it('rule: the 422 validation body (detail[] with loc, msg, type, ctx, input; no error_type) becomes field errors, bucket from the header', async () => {
    const detail = [
      { loc: ['body', 'size', 0], msg: 'must be at least 64', type: 'greater_than_equal', ctx: { ge: 64 }, input: 8 },
      { loc: ['body', 'prompt'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'seed'], msg: 'null not allowed', type: 'int_type', input: null },
    ];
    server = await startServer((_req, res) =>
      answer(res, 422, { detail }, { 'x-svc-error-type': 'invalid_input', 'x-svc-request-id': 'rid-422' }),
    );
    client = new RouterClient({ baseUrl: server.origin });
    await assert.rejects(client.run('acme/strict', '{"size":[8]}', { idempotencyKey: 'k422' }), (e: unknown) => {
      assert.ok(RouterError.is(e));
      assert.equal(e.bucket, 'invalid_input');
      assert.equal(e.status, 422);
      assert.equal(e.requestId, 'rid-422');
      assert.deepEqual(e.fieldErrors, [
        {
          loc: ['body', 'size', 0],
          msg: 'must be at least 64',
          type: 'greater_than_equal',
          ctx: { ge: 64 },
          input: 8,
          hasInput: true,
        },
        { loc: ['body', 'prompt'], msg: 'Field required', type: 'missing', hasInput: false },
        { loc: ['body', 'seed'], msg: 'null not allowed', type: 'int_type', input: null, hasInput: true },
      ]);
      return true;
    });
    assert.equal(server.seen.length, 1);
  });

  it('rule: committed-spend headers (USD cents) are surfaced on 429 concurrency_limit_exceeded, which is not retried', async () => {
    server = await startServer((_req, res) =>
      answer(
        res,
        429,
        { detail: 'spend bound', error_type: 'concurrency_limit_exceeded' },
        {
          'x-svc-error-type': 'concurrency_limit_exceeded',
          'x-committed-spend-limit': '5000',
          'x-committed-spend-current': '4875',
          'x-committed-spend-remaining': '125',
          'retry-after': '1',
        },
      ),
    );
    client = new RouterClient({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
    await assert.rejects(
      client.run('acme/echo', '{}', { idempotencyKey: 'k' }),
      (e: unknown) =>
        RouterError.is(e) &&
        e.bucket === 'concurrency_limit_exceeded' &&
        e.spend?.limitCents === 5000 &&
        e.spend.currentCents === 4875 &&
        e.spend.remainingCents === 125,
    );
    assert.equal(server.seen.length, 1);
  });

  it('rule: rate_limited with Retry-After is retried after it with the same key, bounded to about 10 s in all', async () => {
    let n = 0;
    server = await startServer((_req, res) =>
      ++n < 3
        ? answer(res, 429, { detail: 'slow down', error_type: 'rate_limited' }, { 'retry-after': '2' })
        : answer(res, 200, '{"ok":1}'),
    );
    const clock = new ManualClock(0, { autoAdvance: true });
    client = new RouterClient({ baseUrl: server.origin, clock });
    const out = await client.run('acme/echo', '{}', { idempotencyKey: 'same' });
    assert.equal(out.bytes.toString(), '{"ok":1}');
    assert.equal(out.attempts, 3);
    assert.deepEqual(clock.sleeps, [2000, 2000]);
    assert.deepEqual(
      server.seen.map((s) => s.headers['idempotency-key']),
      ['same', 'same', 'same'],
    );

    // Always limited: the waits stop before 10 s in all.
    await server.close();
    server = await startServer((_req, res) =>
      answer(res, 429, { detail: 'slow down', error_type: 'rate_limited' }, { 'retry-after': '4' }),
    );
    const clock2 = new ManualClock(0, { autoAdvance: true });
    await client.close();
    client = new RouterClient({ baseUrl: server.origin, clock: clock2 });
    await assert.rejects(
      client.listModels(),
      (e: unknown) => RouterError.is(e) && e.bucket === 'rate_limited' && e.retries?.attempts === 3,
    );
    assert.deepEqual(clock2.sleeps, [4000, 4000]);
    assert.ok(clock2.now() <= 10_000);
  });

  it('rule: rate_limited without Retry-After is answered after one request', async () => {
    server = await startServer((_req, res) => answer(res, 429, { detail: 'slow down', error_type: 'rate_limited' }));
    const clock = new ManualClock(0, { autoAdvance: true });
    client = new RouterClient({ baseUrl: server.origin, clock });
    await assert.rejects(client.listModels(), (e: unknown) => RouterError.is(e) && e.bucket === 'rate_limited');
    assert.equal(server.seen.length, 1);
  });

  it('rule: service_unavailable is retried with backoff, bounded to about 10 s in all, then reported', async () => {
    server = await startServer((_req, res) =>
      answer(res, 503, '', { 'x-svc-error-type': 'service_unavailable', 'x-svc-request-id': 'rid-503' }),
    );
    const clock = new ManualClock(0, { autoAdvance: true });
    client = new RouterClient({ baseUrl: server.origin, clock });
    await assert.rejects(
      client.getModel('acme/echo'),
      (e: unknown) => RouterError.is(e) && e.bucket === 'service_unavailable' && e.requestId === 'rid-503',
    );
    assert.ok(server.seen.length >= 2 && server.seen.length <= 5, `${server.seen.length} requests`);
    assert.equal(clock.sleeps.length, server.seen.length - 1);
    assert.ok(clock.now() <= 10_000, `${clock.now()} ms`);
  });
});
