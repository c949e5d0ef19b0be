/**
 * Watching rules with a scripted server and an injected clock (no sleeps): poll cadence (the official SDK's: 500 ms ×
 * 1.5 to 5 s), fallback to polling when the stream is refused or ends early, unknown events ignored, every progress
 * passed on (progress-rule.test.ts: the job service holds it from going backwards), final state from GET (Job and Asset API v2, What the service does, design rule 1; Events, rules 1–4).
 */
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UndiciEngine } from '../../src/core/http/undiciEngine';
import {
  AbortError,
  ForbiddenError,
  ManualClock,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamError,
} from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { JobSchema } from '../../src/core/v2/schemas';
import { NOT_FOUND_GRACE_MS } from '../../src/core/v2/watch';
import type { JobSnapshot } from '../../src/core/v2/jobs';
import type { WatchUpdate } from '../../src/core/v2/events';
import { job } from './builders';
import { CountingEngine } from './engines';
import { startServer, type TestServer } from './httpServer';

interface Script {
  /** Statuses GET answers in turn (the last repeats). */
  gets: Record<string, unknown>[];
  /** What the events endpoint does. */
  events: (res: ServerResponse) => void;
}

/**
 * A scripted server and a client on a manual clock. With `autoAdvance` every sleep returns at once (time jumps);
 * without it, polls wait until the stream wakes the watcher or the test advances time, so the order of stream
 * and polls is deterministic.
 */
async function scripted(
  script: Script,
  autoAdvance = true,
): Promise<{ server: TestServer; client: V2Client; clock: ManualClock }> {
  let i = 0;
  const server = await startServer((req, res) => {
    if (req.url?.endsWith('/events')) return script.events(res);
    const body = script.gets[Math.min(i++, script.gets.length - 1)];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  const clock = new ManualClock(0, { autoAdvance });
  return { server, client: new V2Client({ baseUrl: server.origin, clock }), clock };
}

function refuse(status: number, code: string) {
  return (res: ServerResponse): void => {
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: { code, message: code } }));
  };
}

function sse(frames: string[], end = true) {
  return (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const f of frames) res.write(f);
    if (end) res.end();
  };
}

describe('watching a job', () => {
  const base = job('running');
  const id = base.id as string;
  const at = (status: string, extra: Record<string, unknown> = {}) => ({ ...base, status, ...extra });

  it("polls at 500 ms growing 1.5× to a 5 s cap when there is no stream (the official SDK's cadence)", async () => {
    const gets = [...Array(10).fill(at('running')), at('succeeded')];
    const { server, client, clock } = await scripted({ gets, events: refuse(501, 'not_implemented') });
    try {
      const final = await client.watch(id, { stream: false });
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(clock.sleeps, [500, 750, 1125, 1687.5, 2531.25, 3796.875, 5000, 5000, 5000, 5000]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  for (const [status, code] of [
    [501, 'not_implemented'],
    [429, 'too_many_streams'],
  ] as const) {
    it(`falls back to polling when the stream is refused with ${status} ${code}`, async () => {
      const { server, client, clock } = await scripted(
        { gets: [at('running'), at('running'), at('succeeded')], events: refuse(status, code) },
        false,
      );
      const updates: WatchUpdate[] = [];
      // Polls wait until the refusal has been reported; then time runs freely.
      const onUpdate = (u: WatchUpdate): void => {
        updates.push(u);
        if (u.type === 'mode' && u.mode === 'polling') {
          clock.autoAdvance = true;
          clock.advance(60_000);
        }
      };
      try {
        const final = await client.watch(id, { onUpdate });
        assert.equal(final.job.status, 'succeeded');
        const mode = updates.find((u) => u.type === 'mode');
        assert.ok(
          mode && mode.type === 'mode' && mode.mode === 'polling' && mode.reason?.includes(code),
          JSON.stringify(updates),
        );
      } finally {
        await client.close();
        await server.close();
      }
    });
  }

  it('a stream that ends without a terminal status is followed by GET until the job ends', async () => {
    const frames = ['event: status\ndata: {"status":"running","queue_position":null}\n\n'];
    const { server, client } = await scripted({
      gets: [
        at('running'),
        at('running'),
        at('running'),
        at('failed', { error: { code: 'node_execution_error', message: 'boom' } }),
      ],
      events: sse(frames),
    });
    try {
      const final = await client.watch(id);
      assert.equal(final.job.status, 'failed');
      assert.equal(final.job.error?.message, 'boom');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('reads the stream: unknown events and keep-alive comments are ignored, every progress is passed on (the job service holds it from going backwards), the final state is from GET', async () => {
    const frames = [
      ': keep-alive\n\n',
      'event: status\ndata: {"status":"running","queue_position":null}\n\n',
      'event: progress\ndata: {"value":0.5,"nodes_done":1,"nodes_total":2}\n\n',
      'event: shiny_new_event\ndata: {"whatever":true}\n\n',
      'event: progress\ndata: {"value":0.25,"nodes_done":0,"nodes_total":2}\n\n',
      'event: progress\ndata: not json\n\n',
      'event: preview\ndata: {"node_id":"2","content_type":"image/png","data_base64":"iVBORw0KGgo="}\n\n',
      'event: progress\ndata: {"value":1,"nodes_done":2,"nodes_total":2}\n\n',
      'event: status\ndata: {"status":"succeeded","queue_position":null}\n\n',
    ];
    const finalJob = at('succeeded', {
      outputs: [{ id: 'a1', name: 'x.png', url: '/api/v2/assets/a1/content' }],
      metrics: { queue_ms: 3, execution_ms: null },
    });
    const { server, client } = await scripted({ gets: [at('running'), finalJob], events: sse(frames) }, false);
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, { onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(final.job.metrics, { queue_ms: 3, execution_ms: null }, 'null metrics are kept');
      const values = updates
        .filter((u) => u.type === 'progress')
        .map((u) => (u.type === 'progress' ? u.progress.value : -1));
      assert.deepEqual(values, [0.5, 0.25, 1]);
      assert.ok(updates.some((u) => u.type === 'preview'));
      assert.ok(
        updates.some((u) => u.type === 'output'),
        'outputs from the final GET are reported',
      );
      assert.equal(server.seen.at(-1)!.url, `/api/v2/jobs/${id}`, 'the last request is the GET of the job');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a UTF-8 character split across two chunks survives (decoding with stream: true)', async () => {
    const frame = Buffer.from(
      'event: progress\ndata: {"value":0.5,"nodes_done":1,"nodes_total":2,"message":"größe ✓"}\n\n',
    );
    const cut = frame.indexOf(Buffer.from('✓')) + 1;
    const { server, client } = await scripted(
      {
        gets: [at('running'), at('succeeded')],
        events: (res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(frame.subarray(0, cut));
          setImmediate(() => {
            res.write(frame.subarray(cut));
            res.end('event: status\ndata: {"status":"succeeded"}\n\n');
          });
        },
      },
      false,
    );
    const updates: WatchUpdate[] = [];
    try {
      await client.watch(id, { onUpdate: (u) => updates.push(u) });
      const p = updates.find((u) => u.type === 'progress');
      assert.ok(p && p.type === 'progress');
      assert.equal(p.progress.message, 'größe ✓');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('an unknown status value is kept and treated as in flight', async () => {
    const { server, client } = await scripted({
      gets: [at('warming_up'), at('warming_up'), at('succeeded')],
      events: refuse(501, 'not_implemented'),
    });
    const updates: WatchUpdate[] = [];
    try {
      const final = await client.watch(id, { onUpdate: (u) => updates.push(u) });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(updates.some((u) => u.type === 'status' && u.status === 'warming_up'));
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a 404 while polling ends the watch with NotFoundError', async () => {
    const server = await startServer((_req, res) => refuse(404, 'job_not_found')(res));
    const client = new V2Client({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
    try {
      await assert.rejects(client.watch(id), (e: unknown) => e instanceof NotFoundError && e.code === 'job_not_found');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('obeys Retry-After of a 429 rate_limited while polling, to the second', async () => {
    let n = 0;
    const server = await startServer((_req, res) => {
      n++;
      if (n >= 2 && n <= 3) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
        return res.end(JSON.stringify({ error: { code: 'rate_limited', message: 'slow down' } }));
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(n >= 4 ? at('succeeded') : at('running')));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      const final = await client.watch(id, { stream: false });
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(clock.sleeps, [500, 3000, 3000]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('no byte for 45 s means a dead stream: it is dropped, GET re-reads the job, and the stream is reopened', async () => {
    let opened = 0;
    let finished = false;
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) {
        opened++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: status\ndata: {"status":"running"}\n\n');
        return; // then silence
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(finished ? at('succeeded') : at('running')));
    });
    const clock = new ManualClock(0);
    const client = new V2Client({ baseUrl: server.origin, clock });
    const modes: string[] = [];
    try {
      const final = await client.watch(id, {
        onUpdate: (u) => {
          if (u.type !== 'mode') return;
          modes.push(u.mode + (u.reason ? `: ${u.reason}` : ''));
          // First connection: 45 s pass without a byte after its first frame.
          if (u.mode === 'stream' && opened === 1) clock.advance(45_000);
          // Dropped: from now on time runs freely (the reconnect backoff, polls).
          if (u.mode === 'polling' && /no byte/.test(u.reason ?? '')) {
            clock.autoAdvance = true;
            clock.advance(60_000);
          }
          // Reopened: let the job finish.
          if (u.mode === 'stream' && opened >= 2) finished = true;
        },
      });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(
        modes.some((m) => /no byte on the event stream for 45 s/.test(m)),
        modes.join(' | '),
      );
      assert.ok(opened >= 2, 'the stream was reopened');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('many watches share a bounded number of streams; the rest poll', async () => {
    const server = await startServer((req, res) => {
      if (req.url?.endsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end('event: status\ndata: {"status":"succeeded"}\n\n');
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(at('succeeded')));
    });
    const client = new V2Client({ baseUrl: server.origin, clock: new ManualClock(0), maxStreams: 1 });
    const lease = client.streams.acquire();
    const modes: string[] = [];
    try {
      const running = { job: JobSchema.parse(at('running')), source: new URL(server.origin), requestId: undefined };
      const final = await client.watch(running, {
        onUpdate: (u) => u.type === 'mode' && modes.push(`${u.mode}: ${u.reason}`),
        pollInitialMs: 0,
      });
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(modes, ['polling: all event streams of this client are in use']);
      assert.ok(!server.seen.some((r) => r.url?.endsWith('/events')));
      lease?.release();
      assert.equal(client.streams.inUse, 0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a transient 500 late in a long watch is retried: the retry budget counts from the failure, not the watch start', async () => {
    let n = 0;
    const server = await startServer((_req, res) => {
      n++;
      if (n === 41) {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { code: 'upstream_error', message: 'oops' } }));
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(n > 41 ? at('succeeded') : at('running')));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V2Client({ baseUrl: server.origin, clock });
    try {
      const final = await client.watch(id, { stream: false });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(clock.now() > 180_000, "the watch ran past the retry policy's elapsed bound");
    } finally {
      await client.close();
      await server.close();
    }
  });
});

/**
 * A manual clock that knows how many sleeps are pending, so that a test advances time only once every task of the
 * watch (the poll loop, the stream's idle watchdog) is asleep: event-driven steps, no sleeps as synchronisation.
 */
class SteppedClock extends ManualClock {
  private readonly pending = new Map<object, number>();
  private readonly asleepWaiters: { n: number; resolve: () => void }[] = [];

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const promise = super.sleep(ms, signal);
    if (ms <= 0 || this.autoAdvance) return promise;
    const token = {};
    this.pending.set(token, this.now() + ms);
    const done = (): void => {
      if (this.pending.delete(token)) this.check();
    };
    promise.then(done, done);
    this.check();
    return promise;
  }

  override advance(ms: number): void {
    super.advance(ms);
    // The woken sleeps stop counting at once (their promises settle a microtask later).
    for (const [token, at] of this.pending) if (at <= this.now()) this.pending.delete(token);
  }

  /** Resolves once exactly `n` sleeps are pending. */
  asleep(n: number): Promise<void> {
    return new Promise((resolve) => {
      this.asleepWaiters.push({ n, resolve });
      this.check();
    });
  }

  private check(): void {
    for (const w of [...this.asleepWaiters]) {
      if (this.pending.size === w.n) {
        this.asleepWaiters.splice(this.asleepWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
}

/** A clock whose every sleep jumps time forward (autoAdvance), then runs `hook` with the new time before it returns. */
class HookedClock extends ManualClock {
  constructor(private readonly hook: (now: number) => Promise<void> | void) {
    super(0, { autoAdvance: true });
  }
  override async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await super.sleep(ms, signal);
    await this.hook(this.now());
  }
}

/** Answers the error envelope of `code` with HTTP `status` (and Retry-After when given). */
function answerError(res: ServerResponse, status: number, code: string, message = code, retryAfter?: number): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
  });
  res.end(JSON.stringify({ error: { code, message } }));
}

function answerJob(res: ServerResponse, body: Record<string, unknown>): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

/** The `retrying` updates of a watch. */
function retries(updates: WatchUpdate[]): Extract<WatchUpdate, { type: 'retrying' }>[] {
  return updates.filter((u): u is Extract<WatchUpdate, { type: 'retrying' }> => u.type === 'retrying');
}

/**
 * Writes `chunk` to `res` until `limit` bytes are sent or the client goes away (backpressure obeyed); resolves with
 * the bytes sent and whether the client left first.
 */
async function pushUntilGone(
  res: ServerResponse,
  chunk: Buffer,
  limit: number,
): Promise<{ sent: number; gone: boolean }> {
  let gone = false;
  const left = new Promise<void>((resolve) =>
    res.once('close', () => {
      gone = !res.writableFinished;
      resolve();
    }),
  );
  let sent = 0;
  while (!res.destroyed && sent < limit) {
    const flushed = res.write(chunk);
    sent += chunk.length;
    if (!flushed) await Promise.race([new Promise<void>((resolve) => res.once('drain', resolve)), left]);
  }
  if (!res.destroyed) res.end();
  await left;
  return { sent, gone };
}

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
