/**
 * Watching a job while its event stream misbehaves or lags (Job and Asset API v2, Events): a hostile stream is cut at
 * its line and frame caps, GET stays the source of truth while a stream is open, and a new job the server does not
 * show yet (a 404 right after its creation) is read again within its grace. Injected clocks, no sleeps.
 */
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { JobSchema } from '../../src/core/v2/schemas';
import { ManualClock, NotFoundError } from '../../src/core';
import { NOT_FOUND_GRACE_MS } from '../../src/core/v2/watch';
import { V2Client } from '../../src/core/v2/client';
import { type JobSnapshot } from '../../src/core/v2/jobs';
import { type WatchUpdate } from '../../src/core/v2/events';
import { UndiciEngine } from '../../src/core/http/undiciEngine';
import { job } from './builders';
import { CountingEngine } from './engines';
import { startServer } from './httpServer';
import { answerError, answerJob, pushUntilGone, retries, SteppedClock } from './watch.fixtures';

describe('watching a job: a hostile event stream', () => {
  const base = job('running');
  const id = base.id as string;
  const at = (status: string) => ({ ...base, status });

  /**
   * An events endpoint that pushes `head` then `chunk` up to `limit` bytes; GET answers running, running, then
   * succeeded. Runs a watch until the stream is given up, then lets time run.
   */
  async function watchAgainst(head: string, chunk: Buffer, limit: number) {
    let gets = 0;
    let opened = 0;
    let pushed: Promise<{ sent: number; gone: boolean }> | undefined;
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) {
        opened++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(head);
        pushed ??= pushUntilGone(res, chunk, limit); // the first stream
        return;
      }
      answerJob(res, ++gets >= 3 ? at('succeeded') : at('running'));
    });
    const clock = new ManualClock(0);
    // Counts what the client reads of every body (the stream's, and the small GET answers).
    const counting = new CountingEngine(new UndiciEngine());
    const client = new V2Client({ baseUrl: server.origin, clock, engine: counting });
    const modes: string[] = [];
    try {
      const final = await client.watch(id, {
        onUpdate: (u) => {
          if (u.type !== 'mode') return;
          modes.push(`${u.mode}: ${u.reason ?? ''}`);
          if (u.mode === 'polling') {
            clock.autoAdvance = true;
            clock.advance(60_000);
          }
        },
      });
      return { final, modes, opened, push: await pushed!, read: counting.pulled };
    } finally {
      await client.close();
      await counting.close();
      await server.close();
    }
  }

  it('an endless data: line ends the stream at the 1 MiB line cap: the watch ends with the final job from GET, memory stays bounded (at most the cap and one chunk is read), the server stops pushing', async () => {
    const limit = 64 * (1 << 20);
    const r = await watchAgainst('event: progress\ndata: ', Buffer.alloc(64 * 1024, 0x78), limit);
    assert.equal(r.final.job.status, 'succeeded');
    assert.ok(
      r.modes.some((m) => /polling: .*stream_too_large: the event stream sent a line over 1 MiB/.test(m)),
      r.modes.join(' | '),
    );
    assert.equal(r.opened, 1, 'a stream over its cap is not reopened');
    assert.ok(
      r.push.gone && r.push.sent < limit,
      `the client leaves at the cap: ${r.push.sent} bytes pushed, gone: ${r.push.gone}`,
    );
    // The stream's bytes and three small GET answers: the 1 MiB line cap, the chunk that crossed it, one in hand.
    assert.ok(r.read <= (1 << 20) + 512 * 1024, `${r.read} bytes read from an endless line with a cap of 1 MiB`);
  });

  it('a frame of endless short data: lines without a blank line ends the stream at the 1 MiB frame cap; the watch ends from GET', async () => {
    const lines = Buffer.from('data: {"value":0.5}\n'.repeat(1000));
    const limit = 64 * (1 << 20);
    const r = await watchAgainst('event: progress\n', lines, limit);
    assert.equal(r.final.job.status, 'succeeded');
    assert.ok(
      r.modes.some((m) => /stream_too_large: the event stream sent a frame over 1 MiB/.test(m)),
      r.modes.join(' | '),
    );
    assert.ok(
      r.push.gone && r.push.sent < limit,
      `the client leaves at the cap: ${r.push.sent} bytes pushed, gone: ${r.push.gone}`,
    );
    assert.ok(r.read <= (1 << 20) + 512 * 1024, `${r.read} bytes read from an endless frame with a cap of 1 MiB`);
  });
});

describe('watching a job: GET stays the source of truth while a stream is open', () => {
  const base = job('running');
  const id = base.id as string;
  const at = (status: string) => ({ ...base, status });

  it('while a healthy stream sends only keep-alives for 30 s, GET is called at least every 5 s; a terminal GET ends the watch with the stream still open', async () => {
    const clock = new SteppedClock(0);
    const getTimes: number[] = [];
    const streams: ServerResponse[] = [];
    let finished = false;
    let streamOpenAtTerminalGet = false;
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) {
        streams.push(res);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: status\ndata: {"status":"running","queue_position":null}\n\n');
        return; // open for good; keep-alives follow each GET
      }
      getTimes.push(clock.now());
      for (const s of streams) if (!s.destroyed) s.write(': keep-alive\n\n');
      if (finished) streamOpenAtTerminalGet = streams.some((s) => !s.destroyed);
      answerJob(res, finished ? at('succeeded') : at('running'));
    });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const modes: string[] = [];
    try {
      let settled = false;
      const watching = client
        .watch(id, { onUpdate: (u) => u.type === 'mode' && modes.push(u.mode) })
        .finally(() => (settled = true));
      await clock.asleep(2); // the poll loop and the stream's idle watchdog
      assert.deepEqual(modes, ['stream']);
      for (let second = 0; second < 30; second++) {
        clock.advance(1000);
        await clock.asleep(2);
      }
      assert.equal(clock.now(), 30_000);
      const gaps = getTimes.map((t, i) => t - (i === 0 ? 0 : getTimes[i - 1]));
      assert.ok(
        gaps.every((g) => g <= 5000),
        `GET at ${getTimes.join(', ')} ms`,
      );
      assert.ok(30_000 - getTimes.at(-1)! <= 5000, `GET at ${getTimes.join(', ')} ms`);
      assert.equal(streams.length, 1, 'one stream, open all along');
      assert.deepEqual(modes, ['stream']);

      finished = true;
      for (let second = 0; second < 10 && !settled; second++) {
        clock.advance(1000);
        await Promise.race([clock.asleep(2), watching]);
      }
      const final = await watching;
      assert.equal(final.job.status, 'succeeded');
      assert.ok(streamOpenAtTerminalGet, 'the stream was still open when GET said the job ended');
      await new Promise<void>((resolve) => (streams[0].destroyed ? resolve() : streams[0].once('close', resolve)));
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('watching a job: a new job the server does not show yet (a 404 right after its creation)', () => {
  const base = job('queued');
  const id = base.id as string;
  const at = (status: string) => ({ ...base, status });
  /** The job as the submission's 201 gave it: the watch starts from this answer. */
  const accepted = (origin: string): JobSnapshot => ({
    job: JobSchema.parse(base),
    source: new URL(`${origin}/api/v2/jobs`),
    requestId: undefined,
  });

  it('reads of a job just accepted that answer 404 are retried within the grace: the job is followed to its end, never lost', async () => {
    let n = 0;
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) return answerError(res, 404, 'not_found');
      n++;
      if (n <= 3) return answerError(res, 404, 'job_not_found');
      answerJob(res, at(n >= 5 ? 'succeeded' : 'running'));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(accepted(server.origin), { onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(
        retries(updates).map((u) => u.reason),
        ['not_found (HTTP 404)', 'not_found (HTTP 404)', 'not_found (HTTP 404)'].map((r) =>
          r.replace('not_found', 'job_not_found'),
        ),
      );
      assert.ok(clock.now() < NOT_FOUND_GRACE_MS);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a 404 that lasts past the grace ends the watch with NotFoundError, at the end of the grace and not before', async () => {
    const server = await startServer((_req, res) => answerError(res, 404, 'job_not_found'));
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      await assert.rejects(client.watch(accepted(server.origin)), (e: unknown) => e instanceof NotFoundError);
      assert.ok(
        clock.now() >= NOT_FOUND_GRACE_MS && clock.now() < NOT_FOUND_GRACE_MS + 5000,
        `gave up at ${clock.now()} ms`,
      );
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('once the job was read, a 404 means it is gone: the watch ends at once', async () => {
    let n = 0;
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) return answerError(res, 501, 'not_implemented');
      return ++n === 1 ? answerJob(res, at('running')) : answerError(res, 404, 'job_not_found');
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    const updates: WatchUpdate[] = [];
    try {
      await assert.rejects(
        client.watch(accepted(server.origin), { onUpdate: (u) => updates.push(u) }),
        (e: unknown) => e instanceof NotFoundError,
      );
      assert.equal(n, 2);
      assert.equal(retries(updates).length, 0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a job id given with its grace (notFoundUntil: a job created a moment ago) is read again until then', async () => {
    let n = 0;
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) return answerError(res, 501, 'not_implemented');
      return ++n <= 2 ? answerError(res, 404, 'job_not_found') : answerJob(res, at('succeeded'));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      assert.equal((await client.watch(id, { notFoundUntil: 10_000 })).job.status, 'succeeded');
      // Without a grace, a job id's first 404 is believed.
      n = 0;
      await assert.rejects(client.watch(id), (e: unknown) => e instanceof NotFoundError);
      assert.equal(n, 1);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
