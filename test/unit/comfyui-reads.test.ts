/**
 * The ComfyUI native API's backend, beyond one job's life: the server's queue and history as a listing, the workflow
 * a server keeps, reconciling a submission whose answer was not heard by its prompt_id, and the socket's previews
 * (ComfyUI server API (observed), Reading state, Following a job: the WebSocket; answers from test/fixtures/comfyui).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as http from 'node:http';
import type { WebSocket } from 'ws';
import { ComfyUIClient } from '../../src/core/comfyui/client';
import { ComfyUIJobBackend } from '../../src/core/comfyui/jobBackend';
import type { JobUpdate } from '../../src/core/jobs/backend';
import { StateStore, submissionRecord } from '../../src/core/state/stateStore';
import {
  JPEG_BYTES,
  PNG_BYTES,
  metadataPreviewFrame,
  previewFrame,
  readBody,
  sendJson,
  startV1Server,
  type V1TestServer,
} from './v1Server';

/** A recording's body in test/fixtures/comfyui. */
function body(name: string): Record<string, unknown> {
  const file = path.join(__dirname, '../../../test/fixtures/comfyui', `${name}.json`);
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { body: Record<string, unknown> }).body;
}
const QUEUE = body('http_get_queue_running_and_pending') as { queue_running: unknown[][]; queue_pending: unknown[][] };
const HISTORY = body('http_get_history_max5');
const [OLDER, NEWER] = Object.keys(HISTORY) as [string, string];

describe('comfyui: listing, stored workflows, reconciling and previews', function () {
  this.timeout(20_000);
  let server: V1TestServer | undefined;
  let dir: string;
  let backend: ComfyUIJobBackend | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfyui-reads-'));
  });
  afterEach(async () => {
    await backend?.close();
    await server?.close();
    backend = undefined;
    server = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function serve(
    handler: (req: http.IncomingMessage, res: http.ServerResponse, b: Buffer) => void,
    useSocket = false,
    onSocket?: (ws: WebSocket) => void,
  ): Promise<ComfyUIJobBackend> {
    server = await startV1Server((req, res) => void readBody(req).then((b) => handler(req, res, b)), { onSocket });
    backend = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin }), { useSocket });
    return backend;
  }

  it("list: the queue (running, then pending) and the history newest first, other clients' jobs included", async () => {
    const b = await serve((req, res) =>
      sendJson(res, 200, req.url === '/queue' ? QUEUE : req.url === '/history?max_items=11' ? HISTORY : {}),
    );
    const { jobs, truncated } = await b.list({ limit: 10 });
    assert.deepEqual(
      jobs.map((j) => [j.id, j.status]),
      [
        [QUEUE.queue_running[0]![1], 'running'],
        [QUEUE.queue_pending[0]![1], 'queued'],
        [NEWER, 'succeeded'],
        [OLDER, 'succeeded'],
      ],
    );
    assert.equal(truncated, false);
  });

  it('workflow: the prompt the queue or the history keeps, as sent; a forgotten job says so', async () => {
    const b = await serve((req, res) =>
      sendJson(
        res,
        200,
        req.url === '/queue' ? QUEUE : req.url === `/history/${OLDER}` ? { [OLDER]: HISTORY[OLDER] } : {},
      ),
    );
    const queued = await b.workflow(QUEUE.queue_pending[0]![1] as string);
    assert.deepEqual([queued.format, queued.workflow], ['api', QUEUE.queue_pending[0]![2]]);
    const done = await b.workflow(OLDER);
    assert.deepEqual(done.workflow, (HISTORY[OLDER] as { prompt: unknown[] }).prompt[2]);
    await assert.rejects(b.workflow('forgotten'), { code: 'workflow_gone' });
  });

  it('reconcile: an unheard submission found in history is adopted; one in neither is left and said unknown', async () => {
    const store = new StateStore(path.join(dir, 'state'));
    const b = await serve((req, res) =>
      sendJson(
        res,
        200,
        req.url === '/queue'
          ? { queue_running: [], queue_pending: [] }
          : req.url === `/history/${OLDER}`
            ? { [OLDER]: HISTORY[OLDER] }
            : {},
      ),
    );
    for (const [key, jobId] of [
      ['comfyui-a', OLDER],
      ['comfyui-b', 'never-made'],
    ] as const)
      await store.put(
        await submissionRecord({}, { idempotencyKey: key, baseUrl: b.baseUrl, state: 'outcome_unknown', jobId }, 0),
      );
    const reports = await b.reconcile(store);
    assert.deepEqual(reports.map((r) => [r.record.idempotencyKey, r.outcome]).sort(), [
      ['comfyui-a', 'adopted'],
      ['comfyui-b', 'unknown'],
    ]);
    assert.deepEqual(
      [(await store.get('comfyui-a'))?.state, (await store.get('comfyui-a'))?.lastStatus],
      ['created', 'succeeded'],
    );
    assert.equal((await store.get('comfyui-b'))?.state, 'outcome_unknown');
  });

  it('the socket announces supports_preview_metadata first; previews of types 1 and 4 are ours only when they are', async () => {
    let firstMessage: (m: unknown) => void = () => undefined;
    const announced = new Promise<unknown>((resolve) => (firstMessage = resolve));
    let promptId = '';
    let ended = false;
    const b = await serve(
      (req, res, raw) => {
        if (req.url === '/prompt') {
          promptId = (JSON.parse(raw.toString('utf8')) as { prompt_id: string }).prompt_id;
          sendJson(res, 200, { prompt_id: promptId, number: 1, node_errors: {} });
          void (async () => {
            const s = server!;
            await s.broadcast({ type: 'executing', data: { node: '2', prompt_id: 'someone-else' } });
            await s.broadcast(previewFrame(1, JPEG_BYTES)); // while another prompt runs: not ours
            await s.broadcast(metadataPreviewFrame({ prompt_id: 'someone-else', node_id: '9' }, PNG_BYTES));
            await s.broadcast({ type: 'executing', data: { node: '2', prompt_id: promptId } });
            await s.broadcast(previewFrame(2, PNG_BYTES));
            await s.broadcast(
              metadataPreviewFrame({ prompt_id: promptId, node_id: '2', display_node_id: '2' }, JPEG_BYTES),
            );
            ended = true;
            await s.broadcast({ type: 'executing', data: { node: null, prompt_id: promptId } });
          })();
          return;
        }
        if (req.url === '/queue')
          return sendJson(res, 200, { queue_running: ended ? [] : [[1, promptId, {}, {}, []]], queue_pending: [] });
        sendJson(
          res,
          200,
          ended
            ? { [promptId]: { outputs: {}, status: { status_str: 'success', completed: true, messages: [] } } }
            : {},
        );
      },
      true,
      (ws) => ws.once('message', (data: Buffer) => firstMessage(JSON.parse(data.toString('utf8')))),
    );
    const accepted = await b.submit({ '1': { class_type: 'SaveImage', inputs: {} } });
    const updates: JobUpdate[] = [];
    const final = await b.watch(accepted, { onUpdate: (u) => updates.push(u) });
    assert.equal(final.job.status, 'succeeded');
    assert.deepEqual(await announced, { type: 'feature_flags', data: { supports_preview_metadata: true } });
    const previews = updates.flatMap((u) => (u.type === 'preview' ? [[u.preview.contentType, u.preview.nodeId]] : []));
    assert.deepEqual(previews, [
      ['image/png', '2'],
      ['image/jpeg', '2'],
    ]);
  });

  it("a watch by id follows the socket as v1's does: a closed connection is reopened (engine/follow.ts)", async () => {
    let opened = 0;
    server = await startV1Server(
      (req, res) => {
        if (req.url === '/queue')
          return sendJson(res, 200, { queue_running: opened < 2 ? [[1, 'p-1', {}, {}, []]] : [], queue_pending: [] });
        sendJson(
          res,
          200,
          opened < 2 ? {} : { 'p-1': { outputs: {}, status: { status_str: 'success', messages: [] } } },
        );
      },
      {
        onSocket: (ws) => {
          opened++;
          if (opened === 1) ws.close(); // the first connection drops
        },
      },
    );
    backend = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin, random: () => 0 }));
    const modes: string[] = [];
    const final = await backend.watch('p-1', { onUpdate: (u) => u.type === 'mode' && modes.push(u.mode) });
    assert.equal(final.job.status, 'succeeded');
    assert.equal(server.sockets.length, 2);
    assert.deepEqual(modes.slice(0, 3), ['stream', 'polling', 'stream']);
  });
});
