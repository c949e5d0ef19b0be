/**
 * Watching a v1 job (watch.ts): the socket opened before the POST, every message filtered by prompt_id, binary previews,
 * the status endpoint polled alongside and final, bounded jittered reconnects, outputs confirmed at the end; reported
 * as the job model's JobUpdates and JobAnswer. Against small hostile `node:http` + `ws` servers, on a ManualClock.
 */
import * as assert from 'node:assert/strict';
import type * as http from 'node:http';
import type { WebSocket } from 'ws';
import { AbortError, ManualClock, type JobUpdate } from '../../src/core';
import {
  QUICK_RECONNECTS,
  SLOW_RECONNECT_MIN_MS,
  MAX_RECONNECT_DELAY_MS,
  V1Client,
  reconnectDelay,
  submitAndWatch,
  watchV1Job,
} from '../../src/core/v1';
import {
  JPEG_BYTES,
  PNG_BYTES,
  metadataPreviewFrame,
  previewFrame,
  readBody,
  sendJson,
  startV1Server,
  textFrame,
  type V1TestServer,
} from './v1Server';

const KEY = 'k-v1';
const PROMPT = 'prompt-ours';
const OTHER = 'prompt-theirs';
const WORKFLOW = {
  '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 1 } },
  '3': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'fixture' } },
};

/** A file reference of an output. */
const ref = (filename: string, type = 'output'): { filename: string; subfolder: string; type: string } => ({
  filename,
  subfolder: '',
  type,
});

/** What a scenario's server does. */
interface Scenario {
  /** Successive answers of the status endpoint; the last one repeats. A function is asked each time. */
  statuses: string[] | (() => string);
  /** What the server sends on every open socket right after answering the POST. */
  afterPost?: (server: V1TestServer) => Promise<void>;
  /** What the server sends on every open socket BEFORE it answers the POST (the engine starts at once). */
  beforeAnswer?: (server: V1TestServer) => Promise<void>;
  /** Answer of GET /api/jobs/{id}; undefined: 404. */
  jobs?: unknown;
  /** Answer of GET /api/history_v2/{id}; undefined: 404. */
  history?: unknown;
  /** Called at each handshake (before it is accepted). */
  onHandshake?: () => void;
  /** Close every socket as soon as it opens. */
  closeSockets?: boolean;
  /** Called with the server's side of each accepted socket. */
  onSocket?: (ws: WebSocket) => void;
}

/** A v1 server playing `scenario`; `statusCalls` counts the status requests. */
async function scenarioServer(
  scenario: Scenario,
): Promise<{ server: V1TestServer; statusCalls: () => number; promptBodies: unknown[] }> {
  let calls = 0;
  const promptBodies: unknown[] = [];
  // The handler needs the server it belongs to (to broadcast): set once it is started.
  const self: { server?: V1TestServer } = {};
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/api/prompt') {
      void readBody(req).then(async (body) => {
        promptBodies.push(JSON.parse(body.toString('utf8')));
        await scenario.beforeAnswer?.(self.server!);
        sendJson(res, 200, { prompt_id: PROMPT, number: 1, node_errors: {} });
        await scenario.afterPost?.(self.server!);
      });
      return;
    }
    if (url.pathname === `/api/job/${PROMPT}/status`) {
      const list = scenario.statuses;
      const status = typeof list === 'function' ? list() : list[Math.min(calls, list.length - 1)];
      calls++;
      sendJson(res, 200, { id: PROMPT, status });
      return;
    }
    if (url.pathname === `/api/jobs/${PROMPT}` && scenario.jobs !== undefined) return sendJson(res, 200, scenario.jobs);
    if (url.pathname === `/api/history_v2/${PROMPT}` && scenario.history !== undefined)
      return sendJson(res, 200, scenario.history);
    sendJson(res, 404, { code: 'not_found', message: 'not found' });
  };
  const server = await startV1Server(handler, {
    upgrade: () => {
      scenario.onHandshake?.();
      return { accept: true };
    },
    onSocket: (ws) => {
      scenario.onSocket?.(ws);
      if (scenario.closeSockets) ws.close(1011, 'going away');
    },
  });
  self.server = server;
  return { server, statusCalls: () => calls, promptBodies };
}

/** Runs one scenario through submitAndWatch on a ManualClock that advances by itself; closes everything after. */
async function run(
  scenario: Scenario,
  options: { maxReconnects?: number; random?: () => number; clock?: ManualClock } = {},
) {
  const { server, statusCalls, promptBodies } = await scenarioServer(scenario);
  const clock = options.clock ?? new ManualClock(0, { autoAdvance: true });
  const client = new V1Client({ baseUrl: server.origin, apiKey: KEY, clock, random: options.random ?? (() => 0.5) });
  const updates: JobUpdate[] = [];
  try {
    const result = await submitAndWatch(client, WORKFLOW, {
      onUpdate: (u) => updates.push(u),
      maxReconnects: options.maxReconnects,
    });
    return { result, updates, server, statusCalls: statusCalls(), promptBodies, clock };
  } finally {
    await client.close();
    await server.close();
  }
}

describe('v1 watching (watch.ts; Cloud API v1 (deprecated), Events, and States and transitions)', () => {
  it("the socket is open before the prompt is posted, with the socket's clientId: events sent right after the POST are not lost", async () => {
    const { result, updates, server, promptBodies } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      afterPost: (s) =>
        s.broadcast({
          type: 'executed',
          data: { prompt_id: PROMPT, node: '3', output: { images: [ref('early.png')] } },
        }),
    });
    assert.match(server.log[0], /^ws-open /, `log: ${server.log.join(', ')}`);
    assert.equal(server.log[1], 'POST /api/prompt');
    assert.equal(
      (promptBodies[0] as { client_id?: string }).client_id,
      server.sockets[0].url.searchParams.get('clientId'),
    );
    assert.deepEqual(
      updates.filter((u) => u.type === 'output').map((u) => u.type === 'output' && u.output.name),
      ['early.png'],
    );
    // Both confirmation endpoints answer 404 here, so the executed event's output stands.
    assert.deepEqual(
      result.final.job.outputs.map((o) => o.name),
      ['early.png'],
    );
    assert.equal(result.final.job.status, 'succeeded');
  });

  it('events that arrive before the POST is answered are kept (a bounded backlog) and filtered once the prompt_id is known', async () => {
    const { result, updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      beforeAnswer: async (s) => {
        await s.broadcast({ type: 'execution_start', data: { prompt_id: PROMPT } });
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: OTHER, node: '3', output: { images: [ref('theirs-early.png')] } },
        });
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: PROMPT, node: '3', output: { images: [ref('before-answer.png')] } },
        });
      },
    });
    assert.deepEqual(
      updates.filter((u) => u.type === 'output').map((u) => u.type === 'output' && u.output.name),
      ['before-answer.png'],
    );
    assert.deepEqual(
      result.final.job.outputs.map((o) => o.name),
      ['before-answer.png'],
    );
  });

  it("every message is filtered by prompt_id: another job's executed on the same socket never becomes our output", async () => {
    const { result, updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      afterPost: async (s) => {
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: OTHER, node: '3', output: { images: [ref('theirs.png')] } },
        });
        await s.broadcast({ type: 'executed', data: { node: '3', output: { images: [ref('nobodys.png')] } } });
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: PROMPT, node: '3', output: { images: [ref('ours.png'), ref('preview.png', 'temp')] } },
        });
      },
    });
    assert.deepEqual(
      updates.filter((u) => u.type === 'output').map((u) => u.type === 'output' && u.output.name),
      ['ours.png'],
    );
    assert.deepEqual(
      result.final.job.outputs.map((o) => o.name),
      ['ours.png'],
    );
  });

  it("previews: a type-4 frame is ours only by its prompt_id; a type-1 frame only while our prompt is the one executing; decoded bytes and MIME type as v2's preview", async () => {
    const { updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'executing', 'success'],
      afterPost: async (s) => {
        await s.broadcast(
          metadataPreviewFrame(
            { node_id: '2', display_node_id: '2', real_node_id: '2', prompt_id: OTHER, parent_node_id: null },
            PNG_BYTES,
          ),
        );
        await s.broadcast(
          metadataPreviewFrame(
            { node_id: '1', display_node_id: '1', real_node_id: '1', prompt_id: PROMPT, parent_node_id: null },
            JPEG_BYTES,
          ),
        );
        await s.broadcast({ type: 'executing', data: { prompt_id: OTHER, node: '5' } });
        await s.broadcast(previewFrame(2, Buffer.from('THEIRS')));
        await s.broadcast(textFrame('5', 'theirs 1/2'));
        await s.broadcast({ type: 'executing', data: { prompt_id: PROMPT, node: '1' } });
        await s.broadcast(previewFrame(2, PNG_BYTES));
        await s.broadcast(Buffer.from([0, 0, 0, 4, 0, 0, 1, 0])); // truncated: counted, ignored
        await s.broadcast(textFrame('1', 'ours 1/2'));
      },
    });
    const previews = updates.flatMap((u) => (u.type === 'preview' ? [u.preview] : []));
    assert.deepEqual(
      previews.map((p) => [p.nodeId, p.contentType, Buffer.from(p.dataBase64, 'base64').toString('hex')]),
      [
        ['1', 'image/jpeg', JPEG_BYTES.toString('hex')],
        ['1', 'image/png', PNG_BYTES.toString('hex')],
      ],
    );
    const messages = updates.flatMap((u) => (u.type === 'progress' && u.progress.message ? [u.progress.message] : []));
    assert.deepEqual(messages, ['ours 1/2']);
  });

  it('the final state comes from the status endpoint: execution_success on the socket alone does not end the watch', async () => {
    const { result, statusCalls } = await run({
      statuses: ['executing', 'executing', 'executing', 'executing', 'executing', 'error'],
      afterPost: async (s) => {
        await s.broadcast({ type: 'execution_success', data: { prompt_id: PROMPT } });
        await s.broadcast({ type: 'executing', data: { prompt_id: PROMPT, node: null } });
      },
    });
    assert.equal(statusCalls, 6);
    assert.equal(result.final.job.status, 'failed');
    assert.equal(result.final.job.error?.code, 'error', "the v1 status is the error's code");
  });

  it('an unknown status value (weird_new_state) keeps polling; completed ends the watch as succeeded', async () => {
    const { result, statusCalls, updates } = await run({
      statuses: ['weird_new_state', 'weird_new_state', 'weird_new_state', 'completed'],
    });
    assert.equal(statusCalls, 4);
    assert.equal(result.final.job.status, 'succeeded');
    const statuses = updates.flatMap((u) => (u.type === 'status' ? [u.status] : []));
    assert.deepEqual(statuses, ['queued', 'succeeded']);
  });

  it('lost ends the watch as failed with a reason; cancelled as canceled', async () => {
    const lost = await run({ statuses: ['submitted', 'lost'] });
    assert.equal(lost.result.final.job.status, 'failed');
    assert.equal(lost.result.final.job.error?.code, 'lost');
    const cancelled = await run({ statuses: ['cancel_requested', 'cancelled'] });
    assert.equal(cancelled.result.final.job.status, 'canceled');
    assert.deepEqual(
      cancelled.updates.flatMap((u) => (u.type === 'status' ? [u.status] : [])),
      ['canceling', 'canceled'],
    );
  });

  it("execution_error of our prompt becomes the failed job's error (with the engine's exception)", async () => {
    const { result } = await run({
      statuses: ['executing', 'executing', 'executing', 'error'],
      afterPost: async (s) => {
        await s.broadcast({
          type: 'execution_error',
          data: { prompt_id: OTHER, exception_type: 'Nope', exception_message: 'not ours' },
        });
        await s.broadcast({
          type: 'execution_error',
          data: {
            prompt_id: PROMPT,
            node_id: '1',
            node_type: 'EmptyImage',
            exception_type: 'ValueError',
            exception_message: 'width must be > 0',
            traceback: ['x'],
          },
        });
      },
    });
    assert.equal(result.final.job.error?.message, 'ValueError: width must be > 0');
    assert.equal(result.final.job.error?.nodeId, '1');
    assert.equal(result.final.job.error?.classType, 'EmptyImage');
  });

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
