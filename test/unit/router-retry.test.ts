// RouterClient's onRetry hook (a wait is never silent): told before each wait of a bounded retry or of a collect,
// with the attempt about to be made, the wait in ms and the bucket; the line the CLI and the extension show.
import * as assert from 'node:assert/strict';
import type * as http from 'node:http';
import { ManualClock } from '../../src/core';
import type { Translate } from '../../src/core/util';
import { RouterClient, RouterError, retryMessage, type RouterRetryInfo } from '../../src/core/router';
import { startServer, type TestServer } from './httpServer';

function answer(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

describe('router retry hook', () => {
  let server: TestServer | undefined;
  let client: RouterClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = server = undefined;
  });

  it('rule: onRetry is told before each wait of a rate_limited retry: the attempt about to be made, the wait (ms) from Retry-After, the bucket', async () => {
    let n = 0;
    server = await startServer((_req, res) =>
      ++n < 3
        ? answer(res, 429, { detail: 'slow down', error_type: 'rate_limited' }, { 'retry-after': String(n) })
        : answer(res, 200, '{"ok":1}'),
    );
    const clock = new ManualClock(0, { autoAdvance: true });
    const fromClient: RouterRetryInfo[] = [];
    const fromCall: RouterRetryInfo[] = [];
    client = new RouterClient({ baseUrl: server.origin, clock, onRetry: (i) => fromClient.push(i) });
    const out = await client.run('acme/echo', '{}', { idempotencyKey: 'k', onRetry: (i) => fromCall.push(i) });
    assert.equal(out.attempts, 3);
    const expected = [
      { attempt: 2, delayMs: 1000, reason: 'rate_limited', request: 'POST /v1/models/acme/echo' },
      { attempt: 3, delayMs: 2000, reason: 'rate_limited', request: 'POST /v1/models/acme/echo' },
    ];
    assert.deepEqual(fromClient, expected);
    assert.deepEqual(fromCall, expected);
    assert.deepEqual(clock.sleeps, [1000, 2000]);
  });

  it('rule: a listener added with onRetry() hears reads too until removed, and a listener that throws does not change the outcome', async () => {
    let n = 0;
    server = await startServer((_req, res) =>
      ++n % 2 === 1
        ? answer(res, 503, { detail: 'busy', error_type: 'service_unavailable' }, { 'retry-after': '1' })
        : answer(res, 200, { data: [], has_more: false, limit: 20 }),
    );
    client = new RouterClient({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
    const heard: RouterRetryInfo[] = [];
    const remove = client.onRetry((i) => heard.push(i));
    client.onRetry(() => {
      throw new Error('a closed stream');
    });
    const page = await client.listModels();
    assert.equal(page.entries.length, 0);
    assert.deepEqual(heard, [{ attempt: 2, delayMs: 1000, reason: 'service_unavailable', request: 'GET /v1/models' }]);
    remove();
    await client.listModels();
    assert.equal(heard.length, 1);
  });

  it('rule: collecting after a 504 with Retry-After is told as a retry (bucket deadline_exceeded); a bucket never retried is never told', async () => {
    let n = 0;
    server = await startServer((_req, res) =>
      ++n === 1
        ? answer(res, 504, { detail: 'deadline', error_type: 'deadline_exceeded' }, { 'retry-after': '3' })
        : n === 2
          ? answer(res, 200, '{"done":1}')
          : answer(res, 400, { detail: 'bad', error_type: 'invalid_input' }),
    );
    client = new RouterClient({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
    const heard: RouterRetryInfo[] = [];
    client.onRetry((i) => heard.push(i));
    assert.equal((await client.run('acme/slow', '{}', { idempotencyKey: 'k' })).bytes.toString(), '{"done":1}');
    assert.deepEqual(heard, [
      { attempt: 2, delayMs: 3000, reason: 'deadline_exceeded', request: 'POST /v1/models/acme/slow' },
    ]);
    await assert.rejects(
      client.run('acme/slow', '{}', { idempotencyKey: 'k2' }),
      (e: unknown) => RouterError.is(e) && e.bucket === 'invalid_input',
    );
    assert.equal(heard.length, 1);
  });

  it('rule: the retry line reads "<bucket>: retrying in <s> s (attempt <n>)", seconds with at most one decimal, through the translation', () => {
    assert.equal(
      retryMessage({ attempt: 2, delayMs: 2000, reason: 'rate_limited', request: 'GET /v1/models' }),
      'rate_limited: retrying in 2 s (attempt 2)',
    );
    assert.equal(
      retryMessage({ attempt: 3, delayMs: 1250, reason: 'service_unavailable', request: 'GET /v1/models' }),
      'service_unavailable: retrying in 1.3 s (attempt 3)',
    );
    const upper: Translate = (m, ...a) => `${m.toUpperCase()}|${a.join(',')}`;
    assert.equal(
      retryMessage({ attempt: 2, delayMs: 0, reason: 'rate_limited', request: 'x' }, upper),
      '{0}: RETRYING IN {1} S (ATTEMPT {2})|rate_limited,0,2',
    );
  });
});
