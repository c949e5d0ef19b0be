/**
 * Shared by the v1-watch-*.test.ts suites (watching a v1 job against small hostile `node:http` + `ws` servers, on a
 * ManualClock): our prompt and another's, output references, a scenario server that answers the status endpoint in turn
 * and talks on the socket as a scenario says, and a run of one watch over it that collects its updates.
 */
import type * as http from 'node:http';
import type { WebSocket } from 'ws';
import { ManualClock, type JobUpdate } from '../../src/core';
import { V1Client, submitAndWatch } from '../../src/core/v1';
import { readBody, sendJson, startV1Server, type V1TestServer } from './v1Server';

export const KEY = 'k-v1';
export const PROMPT = 'prompt-ours';
export const OTHER = 'prompt-theirs';
export const WORKFLOW = {
  '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 1 } },
  '3': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'fixture' } },
};

/** A file reference of an output. */
export const ref = (filename: string, type = 'output'): { filename: string; subfolder: string; type: string } => ({
  filename,
  subfolder: '',
  type,
});

/** What a scenario's server does. */
export interface Scenario {
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
export async function scenarioServer(
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
export async function run(
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
