/** The retry policy (v2 "Errors": 429 by code, Retry-After; POST /api/v2/jobs rules 4–5), with an injected clock. */
import * as assert from 'node:assert/strict';
import { AbortError, ConnectionError, ManualClock, TimeoutError } from '../../src/core';
import {
  DEFAULT_RETRY_POLICY,
  backoff,
  decideRetry,
  isBusyRefusal,
  withRetry,
  type RequestKind,
} from '../../src/core/http';
import { errorFromResponse } from '../../src/core/v2/errors';
import { STATUS_OF_CODE, errorEnvelope, headers } from './builders';

const policy = { ...DEFAULT_RETRY_POLICY, random: () => 0.5 };
const apiError = (code: string, retryAfter?: number) =>
  errorFromResponse(
    STATUS_OF_CODE[code] ?? 500,
    errorEnvelope(code),
    headers(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
  );

describe('retry policy', () => {
  it('rate_limited on GET and cancel is retried after exactly Retry-After', () => {
    for (const kind of ['read', 'cancel'] as RequestKind[]) {
      assert.deepEqual(decideRetry(apiError('rate_limited', 7), kind, 1, 0, policy), {
        retry: true,
        delayMs: 7000,
        reason: 'rate_limited: Retry-After 7 s',
      });
    }
  });

  it('rule: any 429 with Retry-After is backed off and retried, whatever its code and request (rate_limited on a submission too)', () => {
    for (const code of ['queue_full', 'deployment_not_ready', 'rate_limited', 'some_new_limit']) {
      for (const kind of ['read', 'cancel', 'submit'] as RequestKind[]) {
        const error = errorFromResponse(429, errorEnvelope(code), headers({ 'retry-after': '3' }));
        assert.deepEqual(
          decideRetry(error, kind, 1, 0, policy),
          { retry: true, delayMs: 3000, reason: `${code}: Retry-After 3 s` },
          `${code} ${kind}`,
        );
      }
    }
  });

  it('rule: a 429 whose Retry-After is not integer seconds (1.5, -1, "10, 20", a past date) waits the normal backoff, never 0', () => {
    for (const odd of ['1.5', '-1', '10, 20', new Date(0).toUTCString(), 'now']) {
      const error = errorFromResponse(429, errorEnvelope('rate_limited'), headers({ 'retry-after': odd }));
      for (const kind of ['read', 'submit'] as RequestKind[]) {
        const d = decideRetry(error, kind, 1, 0, policy);
        assert.ok(d.retry, `${odd} ${kind}`);
        assert.equal(d.delayMs, backoff(1, policy), `${odd} ${kind}`);
        assert.ok(d.delayMs > 0);
      }
    }
  });

  it('an unknown outcome of a submission (timeout, reset, 5xx) is never retried', () => {
    assert.equal(decideRetry(new TimeoutError(100), 'submit', 1, 0, policy).retry, false);
    assert.equal(decideRetry(new ConnectionError('reset'), 'submit', 1, 0, policy).retry, false);
    assert.equal(decideRetry(apiError('upstream_error'), 'submit', 1, 0, policy).retry, false);
  });

  it('5xx and network errors on GET and cancel are retried with jittered exponential backoff, bounded', () => {
    const d1 = decideRetry(apiError('upstream_error'), 'read', 1, 0, policy);
    const d3 = decideRetry(new ConnectionError('reset'), 'cancel', 3, 0, policy);
    assert.ok(d1.retry && d3.retry);
    assert.equal(d1.delayMs, backoff(1, policy));
    assert.ok(d3.delayMs > d1.delayMs);
    assert.equal(decideRetry(apiError('upstream_error'), 'read', policy.maxAttempts, 0, policy).retry, false);
    assert.equal(decideRetry(apiError('upstream_error'), 'read', 1, policy.maxElapsedMs, policy).retry, false);
    for (let a = 1; a < 20; a++) assert.ok(backoff(a, { ...policy, random: () => 0.999 }) <= policy.maxDelayMs);
  });

  it('nothing else is retried: terminal codes, other 4xx, aborts', () => {
    for (const code of [
      'deployment_stopped',
      'idempotency_key_reuse',
      'invalid_workflow',
      'unauthorized',
      'forbidden',
      'not_found',
    ]) {
      for (const kind of ['read', 'cancel', 'submit'] as RequestKind[])
        assert.equal(decideRetry(apiError(code, 1), kind, 1, 0, policy).retry, false, `${code} ${kind}`);
    }
    assert.equal(decideRetry(apiError('insufficient_credits'), 'submit', 1, 0, policy).retry, false);
    assert.equal(decideRetry(new AbortError(), 'read', 1, 0, policy).retry, false);
  });

  it('a 402 insufficient_credits is definitive, unless it says when to come back: with a Retry-After it is waited out like a 429 (isBusyRefusal)', () => {
    assert.equal(isBusyRefusal(apiError('insufficient_credits')), false);
    assert.equal(isBusyRefusal(apiError('insufficient_credits', 4)), true);
    assert.equal(isBusyRefusal(apiError('queue_full')), true, 'any 429');
    assert.equal(isBusyRefusal(apiError('invalid_workflow', 4)), false);
    assert.deepEqual(decideRetry(apiError('insufficient_credits', 4), 'submit', 1, 0, policy), {
      retry: true,
      delayMs: 4000,
      reason: 'insufficient_credits: Retry-After 4 s',
    });
  });

  it('a Retry-After beyond the cap is not waited for', () => {
    assert.equal(decideRetry(apiError('rate_limited', 100_000), 'read', 1, 0, policy).retry, false);
  });

  it('withRetry waits on the injected clock exactly as decided, and a wait can be aborted', async () => {
    const clock = new ManualClock(0, { autoAdvance: true });
    let calls = 0;
    const value = await withRetry(
      'read',
      async () => {
        if (++calls < 3) throw apiError('rate_limited', 2);
        return 'ok';
      },
      { clock, policy },
    );
    assert.equal(value, 'ok');
    assert.deepEqual(clock.sleeps, [2000, 2000]);

    const manual = new ManualClock(0);
    const ac = new AbortController();
    const p = withRetry(
      'read',
      async () => {
        throw apiError('rate_limited', 5);
      },
      { clock: manual, policy, signal: ac.signal },
    );
    await Promise.resolve();
    ac.abort();
    await assert.rejects(p, (e: unknown) => AbortError.is(e));
  });
});

describe('retries of GET and cancel in the client', () => {
  it('GET of a job is retried after 502 and network resets, and cancel after 429 rate_limited (Retry-After obeyed)', async () => {
    const { V2Client } = await import('../../src/core/v2/client');
    const { startServer } = await import('./httpServer');
    const { job } = await import('./builders');
    let gets = 0;
    let cancels = 0;
    const server = await startServer((req, res) => {
      if (req.method === 'GET') {
        gets++;
        if (gets === 1) return req.socket.destroy();
        if (gets === 2) {
          res.writeHead(502, { 'content-type': 'text/html' });
          return res.end('<h1>bad gateway</h1>');
        }
      } else {
        cancels++;
        if (cancels === 1) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '6' });
          return res.end(errorEnvelope('rate_limited'));
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(job(req.method === 'GET' ? 'running' : 'canceling')));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      assert.equal((await client.getJob('j1')).job.status, 'running');
      assert.equal(gets, 3);
      assert.equal((await client.cancelJob('j1')).job.status, 'canceling');
      assert.equal(cancels, 2);
      assert.equal(clock.sleeps.at(-1), 6000);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
