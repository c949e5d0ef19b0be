/**
 * Watching a v1 job (watch.ts; Cloud API v1 (deprecated), Events, and States and transitions) to its end: outputs
 * confirmed at the end, progress in v2's shape, onAnswer, the status endpoint polled at v2's cadence, bounded jittered
 * reconnects, refused handshakes and aborts. Against small hostile `node:http` + `ws` servers, on a ManualClock.
 */
import * as assert from 'node:assert/strict';
import type { WebSocket } from 'ws';
import { AbortError, ManualClock, type JobUpdate } from '../../src/core';
import {
  MAX_RECONNECT_DELAY_MS,
  QUICK_RECONNECTS,
  SLOW_RECONNECT_MIN_MS,
  V1Client,
  reconnectDelay,
  submitAndWatch,
  watchV1Job,
} from '../../src/core/v1';
import { KEY, OTHER, PROMPT, WORKFLOW, ref, run, scenarioServer } from './v1-watch.fixtures';
import { sendJson, startV1Server } from './v1Server';

describe('v1 watching (watch.ts; Cloud API v1 (deprecated), Events, and States and transitions)', () => {
  it('outputs are confirmed at the end by GET /api/jobs/{id}, else by GET /api/history_v2/{id}: the confirmed list is the final one', async () => {
    const viaJobs = await run({
      statuses: ['executing', 'success'],
      jobs: { id: PROMPT, status: 'completed', outputs: { '3': { images: [ref('confirmed.png')] } } },
    });
    assert.deepEqual(
      viaJobs.result.final.job.outputs.map((o) => o.name),
      ['confirmed.png'],
    );
    assert.ok(viaJobs.updates.some((u) => u.type === 'output' && u.output.name === 'confirmed.png'));
    const viaHistory = await run({
      statuses: ['executing', 'success'],
      history: { [PROMPT]: { outputs: { '3': { images: [ref('from-history.png')] } } } },
    });
    assert.deepEqual(
      viaHistory.result.final.job.outputs.map((o) => o.name),
      ['from-history.png'],
    );
    assert.ok(viaHistory.server.seen.some((s) => s.url === `/api/jobs/${PROMPT}`));
  });

  it("progress is reported in v2's shape: nodes of the workflow, steps, the node's class; never backwards", async () => {
    const { updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      afterPost: async (s) => {
        await s.broadcast({ type: 'execution_start', data: { prompt_id: PROMPT } });
        await s.broadcast({ type: 'executing', data: { prompt_id: PROMPT, node: '1' } });
        await s.broadcast({ type: 'progress', data: { prompt_id: PROMPT, node: '1', value: 5, max: 10 } });
        await s.broadcast({ type: 'progress', data: { prompt_id: OTHER, node: '1', value: 9, max: 10 } });
        await s.broadcast({ type: 'executing', data: { prompt_id: PROMPT, node: '3' } });
      },
    });
    const progress = updates.flatMap((u) => (u.type === 'progress' ? [u.progress] : []));
    const stepped = progress.find((p) => p.step === 5)!;
    assert.deepEqual(
      [stepped.nodesTotal, stepped.steps, stepped.currentNodeClass, stepped.value, stepped.message],
      [2, 10, 'EmptyImage', 0.25, 'EmptyImage 5/10'],
    );
    assert.ok(!progress.some((p) => p.step === 9), "another prompt's progress");
    const values = progress.map((p) => p.value ?? 0);
    assert.deepEqual(
      values,
      [...values].sort((a, b) => a - b),
    );
    assert.ok(updates.some((u) => u.type === 'status' && u.status === 'running'));
    assert.ok(updates.some((u) => u.type === 'mode' && u.mode === 'stream'));
  });

  it('onAnswer is told the job in the model after every status answer, the last one terminal and equal to the result', async () => {
    const { server } = await scenarioServer({ statuses: ['submitted', 'executing', 'success'] });
    const client = new V1Client({
      baseUrl: server.origin,
      apiKey: KEY,
      clock: new ManualClock(0, { autoAdvance: true }),
    });
    const seen: string[] = [];
    try {
      const final = await watchV1Job(client, PROMPT, { useSocket: false, onAnswer: (s) => seen.push(s.job.status) });
      assert.deepEqual(seen, ['queued', 'running', 'succeeded']);
      assert.equal(final.job.status, 'succeeded');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("the status endpoint is polled at v2's cadence when there is no socket: 500 ms, growing 1.5 times, at most 5 s", async () => {
    const { server } = await scenarioServer({
      statuses: [
        'executing',
        'executing',
        'executing',
        'executing',
        'executing',
        'executing',
        'executing',
        'executing',
        'success',
      ],
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const client = new V1Client({ baseUrl: server.origin, apiKey: KEY, clock });
    try {
      const final = await watchV1Job(client, PROMPT, { useSocket: false });
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(clock.sleeps, [500, 750, 1125, 1687.5, 2531.25, 3796.875, 5000, 5000]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a socket that keeps dying is reopened with bounded, jittered backoff: 3 quick tries, then at least 6 s apart, at most maxReconnects times; polling carries the job to its end', async () => {
    const clock = new ManualClock(0, { autoAdvance: true });
    const handshakes: number[] = [];
    const maxReconnects = 5;
    const { result, updates } = await run(
      {
        // In flight until the watch has given the socket every chance: then polling alone ends the job.
        statuses: () => (handshakes.length >= maxReconnects + 1 ? 'success' : 'executing'),
        onHandshake: () => handshakes.push(clock.now()),
        closeSockets: true,
      },
      { clock, maxReconnects, random: () => 0.5 },
    );
    assert.equal(result.final.job.status, 'succeeded');
    assert.equal(handshakes.length, maxReconnects + 1, 'the first connection and maxReconnects reconnects, no more');
    for (let k = 1; k < handshakes.length; k++) {
      const gap = handshakes[k] - handshakes[k - 1];
      assert.ok(gap >= reconnectDelay(k, () => 0.5), `reconnect ${k} after ${gap} ms`);
      if (k > QUICK_RECONNECTS) assert.ok(gap >= SLOW_RECONNECT_MIN_MS, `reconnect ${k} after ${gap} ms, under 6 s`);
    }
    assert.ok(updates.some((u) => u.type === 'mode' && u.mode === 'polling'));
  });

  it('reconnectDelay: the first 3 tries are quick (at most 2 s), every later one at least 6 s and at most 60 s, jittered', () => {
    for (const r of [0, 0.25, 0.5, 0.999]) {
      for (let attempt = 1; attempt <= 30; attempt++) {
        const d = reconnectDelay(attempt, () => r);
        if (attempt <= QUICK_RECONNECTS) assert.ok(d > 0 && d <= 2_000, `attempt ${attempt}: ${d}`);
        else assert.ok(d >= SLOW_RECONNECT_MIN_MS && d <= MAX_RECONNECT_DELAY_MS, `attempt ${attempt}: ${d}`);
      }
    }
    assert.notEqual(
      reconnectDelay(5, () => 0),
      reconnectDelay(5, () => 0.9),
      'jittered',
    );
    assert.ok(reconnectDelay(1, () => 0) > 0, 'never 0: never a tight loop');
  });

  it('a handshake refused with a 4xx is not retried: the watch polls', async () => {
    let handshakes = 0;
    let connects = 0;
    let pollingSaid = false;
    // Resolved when the server has seen a handshake for every connection the client started.
    let caughtUp: (() => void) | undefined;
    const refusing = await startV1Server(
      (req, res) => {
        if (req.url !== `/api/job/${PROMPT}/status`) return sendJson(res, 404, {});
        // In flight until the watch said it polls; then final, but only once every connection the client started
        // since (a retry would start one at once: its reconnect delay passes at once on this clock) has reached the
        // server, so that a retry is counted here before the watch can end.
        if (!pollingSaid) return sendJson(res, 200, { status: 'executing' });
        void new Promise<void>((resolve) => (handshakes >= connects ? resolve() : (caughtUp = resolve))).then(() =>
          sendJson(res, 200, { status: 'success' }),
        );
      },
      {
        upgrade: () => {
          handshakes++;
          if (handshakes >= connects) caughtUp?.();
          return { status: 403 };
        },
      },
    );
    const client = new V1Client({
      baseUrl: refusing.origin,
      apiKey: KEY,
      clock: new ManualClock(0, { autoAdvance: true }),
    });
    const connect = client.connect.bind(client);
    client.connect = (options) => {
      connects++;
      return connect(options);
    };
    const updates: JobUpdate[] = [];
    try {
      const final = await watchV1Job(client, PROMPT, {
        onUpdate: (u) => {
          updates.push(u);
          if (u.type === 'mode' && u.mode === 'polling') pollingSaid = true;
        },
      });
      assert.equal(final.job.status, 'succeeded');
      assert.equal(handshakes, 1, 'the server saw the refused handshake tried again');
      assert.equal(connects, 1);
      assert.ok(updates.some((u) => u.type === 'mode' && u.mode === 'polling' && /refused/.test(u.reason ?? '')));
    } finally {
      await client.close();
      await refusing.close();
    }
  });

  it('an abort ends the watch with AbortError and closes its socket', async () => {
    const serverSide: WebSocket[] = [];
    const { server } = await scenarioServer({ statuses: ['executing'], onSocket: (ws) => serverSide.push(ws) });
    const client = new V1Client({
      baseUrl: server.origin,
      apiKey: KEY,
      clock: new ManualClock(0, { autoAdvance: true }),
    });
    const controller = new AbortController();
    try {
      await assert.rejects(
        submitAndWatch(client, WORKFLOW, {
          signal: controller.signal,
          onUpdate: (u) => (u.type === 'status' ? controller.abort() : undefined),
        }),
        (err: unknown) => AbortError.is(err),
      );
      assert.equal(serverSide.length, 1, 'one socket was opened');
      // The server sees the connection close (nothing else closes it before the test's end). A ping tells without a
      // timer: a socket the client still holds open answers it (the `ws` client always does); a closed one never can.
      const [ws] = serverSide;
      const outcome = await new Promise<string>((resolve) => {
        if (ws.readyState === ws.CLOSED) return resolve('closed');
        ws.once('close', () => resolve('closed'));
        ws.once('pong', () => resolve('the client answered a ping after the abort: its socket is still open'));
        if (ws.readyState === ws.OPEN) ws.ping();
      });
      assert.equal(outcome, 'closed');
    } finally {
      await client.close();
      await server.close();
    }
  });
});
