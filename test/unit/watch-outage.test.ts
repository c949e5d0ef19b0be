/**
 * Watching a job rides out a server outage (Job and Asset API v2, Errors; Retry-After): 5xx, refused connections,
 * resets, timeouts and 429s are retried with capped backoff within the outage budget; past it the watch fails with the
 * last error. Injected clocks, no sleeps.
 */
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AbortError,
  ForbiddenError,
  ManualClock,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamError,
} from '../../src/core';
import { JobSchema } from '../../src/core/v2/schemas';
import { V2Client } from '../../src/core/v2/client';
import { type WatchUpdate } from '../../src/core/v2/events';
import { job } from './builders';
import { startServer } from './httpServer';
import { answerError, answerJob, HookedClock, retries } from './watch.fixtures';

describe('watching a job: riding out a server outage', () => {
  const base = job('running');
  const id = base.id as string;
  const at = (status: string, extra: Record<string, unknown> = {}) => ({ ...base, status, ...extra });

  it("a 3-minute run of 503s is ridden out with capped backoff; the watch ends with the job's final state", async () => {
    const clock = new ManualClock(0, { autoAdvance: true });
    const server = await startServer((_req, res) => {
      const now = clock.now();
      if (now >= 1000 && now < 181_000) return answerError(res, 503, 'upstream_error', 'service unavailable');
      answerJob(res, now >= 181_000 ? at('succeeded') : at('running'));
    });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, { stream: false, onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(clock.now() >= 181_000);
      const r = retries(updates);
      assert.ok(r.length >= 5, `${r.length} retries`);
      assert.ok(
        r.every((u) => u.delayMs <= 30_000 && /upstream_error \(HTTP 503\)/.test(u.reason)),
        JSON.stringify(r),
      );
      assert.equal(new Set(r.map((u) => u.failingSinceMs)).size, 1, 'one run of failures');
      assert.ok(r[0].failingSinceMs >= 1000 && r[0].failingSinceMs < 6000);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("3 minutes of refused connections (the server is down, stream and polls) are ridden out; the watch ends with the job's final state", async () => {
    let down = false;
    let back = false;
    const server = http.createServer((req, res) => {
      if (req.url?.endsWith('/events')) return answerError(res, 503, 'upstream_error');
      answerJob(res, back ? at('succeeded') : at('running'));
    });
    const listen = (port: number): Promise<void> => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
    await listen(0);
    const { port } = server.address() as AddressInfo;
    const clock = new HookedClock(async (now) => {
      if (now >= 1000 && !down) {
        down = true;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      } else if (now >= 181_000 && down && !back) {
        back = true;
        await listen(port);
      }
    });
    const client = new V2Client({ baseUrl: `http://127.0.0.1:${port}`, clock });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, { onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(back && clock.now() >= 181_000);
      const r = retries(updates);
      assert.ok(r.length >= 5, `${r.length} retries`);
      assert.ok(
        r.every(
          (u) =>
            /^connection_(error|refused): (could not reach|nothing was sent)/.test(u.reason) && u.delayMs <= 30_000,
        ),
        JSON.stringify(r),
      );
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('every kind of transient failure is retried: 5xx, a reset connection, a timeout, 429 without Retry-After, a body that is not JSON, a 200 that is not a job', async () => {
    const held: ServerResponse[] = [];
    // The request timeout runs on the test's clock: it passes once the server holds the request, on any machine.
    const timeoutClock = new ManualClock(0);
    const script: ((res: ServerResponse) => void)[] = [
      (res) => answerJob(res, at('running')),
      (res) => answerError(res, 502, 'upstream_error'),
      (res) => res.socket?.destroy(),
      (res) => {
        held.push(res); // never answered: the request times out
        timeoutClock.advance(200);
      },
      (res) => answerError(res, 429, 'rate_limited'),
      (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>maintenance</html>');
      },
      (res) => answerJob(res, { hello: 'world' }),
      (res) => answerError(res, 504, 'gateway_timeout'),
    ];
    let n = 0;
    const server = await startServer((_req, res) =>
      (script[n++] ?? ((r: ServerResponse) => answerJob(r, at('succeeded'))))(res),
    );
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock, timeoutMs: 200, timeoutClock });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, { stream: false, onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      const reasons = retries(updates).map((u) => u.reason.split(':')[0].split(' ')[0]);
      assert.deepEqual(reasons, [
        'upstream_error',
        'connection_error',
        'timeout',
        'rate_limited',
        'bad_response',
        'bad_response',
        'gateway_timeout',
      ]);
    } finally {
      for (const r of held) r.destroy();
      await client.close();
      await server.close();
    }
  });

  it('a run of failures longer than the outage budget fails with the last error, at the end of the budget and not before', async () => {
    let n = 0;
    const server = await startServer((_req, res) => {
      if (++n === 1) return answerJob(res, at('running'));
      answerError(res, 503, 'upstream_error', `outage #${n}`);
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      await assert.rejects(
        client.watch(id, { stream: false, outageBudgetMs: 60_000, onUpdate: (u) => updates.push(u) }),
        (e: unknown) => {
          assert.ok(e instanceof UpstreamError, String(e));
          assert.equal(e.message, `outage #${n}`, 'the last error');
          return true;
        },
      );
      const r = retries(updates);
      assert.equal(clock.now(), r[0].failingSinceMs + 60_000, 'the last try falls at the end of the budget');
      assert.ok(r.every((u) => u.failingSinceMs + 60_000 >= clock.now()));
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('the outage budget resets after a success: two runs of 100 s of failures, each under a 120 s budget, are ridden out', async () => {
    let okAt: number | undefined;
    const clock = new ManualClock(0, { autoAdvance: true });
    const server = await startServer((_req, res) => {
      const now = clock.now();
      if (now === 0) return answerJob(res, at('running'));
      if (okAt === undefined && now >= 100_000) {
        okAt = now;
        return answerJob(res, at('running'));
      }
      if (okAt !== undefined && now > okAt && now >= okAt + 100_000) return answerJob(res, at('succeeded'));
      answerError(res, 500, 'upstream_error');
    });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, {
        stream: false,
        outageBudgetMs: 120_000,
        onUpdate: (u) => updates.push(u),
      });
      assert.equal(final.job.status, 'succeeded');
      const since = [...new Set(retries(updates).map((u) => u.failingSinceMs))];
      assert.equal(since.length, 2, 'two runs of failures');
      assert.ok(since[1] > okAt! && clock.now() - since[0] > 120_000, 'together longer than the budget');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('the first read rides out an outage (3 minutes of 503s before any answer)', async () => {
    const clock = new ManualClock(0, { autoAdvance: true });
    const server = await startServer((_req, res) => {
      const now = clock.now();
      if (now < 180_000) return answerError(res, 503, 'upstream_error');
      answerJob(res, now >= 185_000 ? at('succeeded') : at('running'));
    });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, { stream: false, onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      assert.equal(updates[0].type, 'retrying', 'the outage came before any status');
      assert.equal(retries(updates)[0].failingSinceMs, 0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('the last read of a job handed in as terminal rides out an outage; the final state comes from GET', async () => {
    const clock = new ManualClock(0, { autoAdvance: true });
    const server = await startServer((_req, res) => {
      if (clock.now() < 180_000) return answerError(res, 503, 'upstream_error');
      answerJob(res, at('succeeded', { metrics: { queue_ms: 7, execution_ms: 9 } }));
    });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      const handedIn = {
        job: JobSchema.parse(at('succeeded')),
        source: new URL(`${server.origin}/api/v2/jobs/${id}`),
        requestId: undefined,
      };
      const final = await client.watch(handedIn);
      assert.deepEqual(final.job.metrics, { queue_ms: 7, execution_ms: 9 });
      assert.ok(clock.now() >= 180_000);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("the retrying update carries the wait: the backoff slept, and a 429's Retry-After to the second", async () => {
    let n = 0;
    const server = await startServer((_req, res) => {
      n++;
      if (n === 2) return answerError(res, 503, 'upstream_error');
      if (n === 3) return answerError(res, 429, 'rate_limited', 'slow down', 7);
      answerJob(res, n >= 4 ? at('succeeded') : at('running'));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      await client.watch(id, { stream: false, onUpdate: (u) => updates.push(u) });
      const r = retries(updates);
      assert.equal(r.length, 2);
      assert.deepEqual(
        clock.sleeps.slice(1),
        r.map((u) => u.delayMs),
        'each wait is the one reported',
      );
      assert.equal(r[1].delayMs, 7000);
      assert.match(r[1].reason, /rate_limited \(HTTP 429\)/);
      assert.equal(r[0].failingSinceMs, r[1].failingSinceMs);
      assert.equal(r[0].failingSinceMs, clock.sleeps[0], 'the run began at the failed poll');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a Retry-After that ends after the outage budget is not waited for: the 429 ends the watch', async () => {
    const server = await startServer((_req, res) => answerError(res, 429, 'rate_limited', 'slow down', 3600));
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      await assert.rejects(
        client.watch(id, { stream: false, outageBudgetMs: 60_000 }),
        (e: unknown) => e instanceof RateLimitedError && e.retryAfter === 3600,
      );
      assert.equal(clock.now(), 0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  for (const [status, code, type] of [
    [401, 'unauthorized', UnauthorizedError],
    [403, 'forbidden', ForbiddenError],
    [404, 'not_found', NotFoundError],
  ] as const) {
    it(`a definitive ${status} ${code} during a watch ends it at once, without retrying`, async () => {
      let n = 0;
      const server = await startServer((_req, res) =>
        ++n === 1 ? answerJob(res, at('running')) : answerError(res, status, code),
      );
      const client = new V2Client({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
      const updates: WatchUpdate[] = [];
      try {
        await assert.rejects(
          client.watch(id, { stream: false, onUpdate: (u) => updates.push(u) }),
          (e: unknown) => e instanceof type && e.code === code,
        );
        assert.equal(n, 2);
        assert.equal(retries(updates).length, 0);
      } finally {
        await client.close();
        await server.close();
      }
    });
  }

  it('aborting during an outage ends the watch with AbortError at once', async () => {
    const server = await startServer((_req, res) => answerError(res, 503, 'upstream_error'));
    const clock = new ManualClock(0);
    const client = new V2Client({ baseUrl: server.origin, clock });
    const abort = new AbortController();
    try {
      const watching = client.watch(id, {
        stream: false,
        signal: abort.signal,
        onUpdate: (u) => u.type === 'retrying' && abort.abort(),
      });
      await assert.rejects(watching, (e: unknown) => e instanceof AbortError);
      assert.equal(clock.now(), 0);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
