/**
 * Watching rules with a scripted server and an injected clock (no sleeps): poll cadence (the official SDK's: 500 ms ×
 * 1.5 to 5 s), fallback to polling when the stream is refused or ends early, unknown events ignored, every progress
 * passed on (progress-rule.test.ts: the job service holds it from going backwards), final state from GET (Job and Asset API v2, What the service does, design rule 1; Events, rules 1–4).
 */
import * as assert from 'node:assert/strict';
import { JobSchema } from '../../src/core/v2/schemas';
import { ManualClock, NotFoundError } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { type WatchUpdate } from '../../src/core/v2/events';
import { job } from './builders';
import { startServer } from './httpServer';
import { refuse, scripted, sse } from './watch.fixtures';

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
