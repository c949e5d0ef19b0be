/**
 * The ComfyUI native API's job backend against scripted loopback servers whose answers are a real server's recordings
 * (test/fixtures/comfyui): ComfyUI server API (observed), Submitting, Reading state, Cancelling, Following a job.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as http from 'node:http';
import { ComfyUIClient } from '../../src/core/comfyui/client';
import { ComfyUIJobBackend } from '../../src/core/comfyui/jobBackend';
import { InvalidWorkflowError } from '../../src/core/http/errors';
import type { JobUpdate } from '../../src/core/jobs/backend';
import { StateStore } from '../../src/core/state/stateStore';
import { readBody, sendJson, startV1Server, type V1TestServer } from './v1Server';

/** The body of a recording in test/fixtures/comfyui. */
function recorded(name: string): { status: number; body: Record<string, unknown>; frames?: unknown[] } {
  const file = path.join(__dirname, '../../../test/fixtures/comfyui', `${name}.json`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as { status: number; body: Record<string, unknown> };
}

const WORKFLOW = recorded('http_post_prompt_client_prompt_id') as unknown as {
  request: { json: { prompt: Record<string, unknown> } };
};
const PROMPT = WORKFLOW.request.json.prompt;
/** A recorded history entry, re-keyed under `id` (its `prompt[1]` too). */
function historyOf(name: string, id: string): Record<string, unknown> {
  const [entry] = Object.values(recorded(name).body) as { prompt: unknown[] }[];
  return { [id]: { ...entry, prompt: [entry!.prompt[0], id, ...entry!.prompt.slice(2)] } };
}
const QUEUE = recorded('http_get_queue_running_and_pending').body as {
  queue_running: unknown[][];
  queue_pending: unknown[][];
};
const RUNNING_ID = QUEUE.queue_running[0]![1] as string;
const PENDING_ID = QUEUE.queue_pending[0]![1] as string;

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void;

describe('comfyui: the job backend against recorded answers', function () {
  this.timeout(20_000);
  let server: V1TestServer | undefined;
  let dir: string;
  let backend: ComfyUIJobBackend | undefined;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfyui-'));
  });
  afterEach(async () => {
    await backend?.close();
    await server?.close();
    backend = undefined;
    server = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function serve(handler: Handler, useSocket = false): Promise<ComfyUIJobBackend> {
    server = await startV1Server((req, res) => {
      void readBody(req).then((body) => handler(req, res, body));
    });
    backend = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin }), { useSocket });
    return backend;
  }

  it('writes the prompt_id to the store before POST /prompt, and sends that id', async () => {
    const store = new StateStore(path.join(dir, 'state'));
    const seenAtPost: unknown[] = [];
    let posted: { prompt_id?: string } = {};
    const b = await serve((req, res, body) => {
      if (req.url === '/prompt') {
        posted = JSON.parse(body.toString('utf8')) as { prompt_id?: string };
        void store.list().then((records) => {
          seenAtPost.push(...records.map((r) => ({ state: r.state, jobId: r.jobId })));
          sendJson(res, 200, { prompt_id: posted.prompt_id, number: 1, node_errors: {} });
        });
        return;
      }
      sendJson(res, 404, {});
    });
    const accepted = await b.submit(PROMPT, { store });
    assert.equal(accepted.job.id, posted.prompt_id);
    assert.deepEqual(seenAtPost, [{ state: 'pending', jobId: posted.prompt_id }]);
    assert.equal((await store.get(accepted.recordKey))?.state, 'created');
  });

  it('sends a uiWorkflow as extra_data.extra_pnginfo.workflow (written into the PNGs), and no extra_data without one', async () => {
    const bodies: Record<string, unknown>[] = [];
    const b = await serve((_req, res, body) => {
      const posted = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      bodies.push(posted);
      sendJson(res, 200, { prompt_id: posted.prompt_id, number: bodies.length, node_errors: {} });
    });
    const ui = { nodes: [{ id: 1, type: 'EmptyImage' }], links: [], version: 0.4 };
    await b.submit(PROMPT, { uiWorkflow: ui });
    await b.submit(PROMPT, {});
    assert.deepEqual(bodies[0]!.extra_data, { extra_pnginfo: { workflow: ui } });
    assert.deepEqual(bodies[0]!.prompt, PROMPT);
    assert.equal('extra_data' in bodies[1]!, false);
  });

  it('resolves a lost answer by looking the prompt_id up in /queue: adopted, sent once', async () => {
    const store = new StateStore(path.join(dir, 'state'));
    let promptId = '';
    let posts = 0;
    const b = await serve((req, res, body) => {
      if (req.url === '/prompt') {
        posts++;
        promptId = (JSON.parse(body.toString('utf8')) as { prompt_id: string }).prompt_id;
        req.socket.destroy(); // the answer is lost
        return;
      }
      if (req.url === '/queue')
        return sendJson(res, 200, { queue_running: [], queue_pending: [[1, promptId, PROMPT, {}, ['3']]] });
      sendJson(res, 200, {});
    });
    const accepted = await b.submit(PROMPT, { store });
    assert.equal(posts, 1);
    assert.equal(accepted.adopted, true);
    assert.equal(accepted.job.id, promptId);
    assert.equal(accepted.job.status, 'queued');
    assert.equal((await store.get(accepted.recordKey))?.state, 'created');
  });

  it('a submission aborted once sent keeps its record (outcome_unknown) for reconcile to look its prompt_id up', async () => {
    const store = new StateStore(path.join(dir, 'state'));
    const abort = new AbortController();
    const b = await serve((req) => {
      if (req.url === '/prompt') abort.abort(); // the server has it; no answer comes before the abort
    });
    await assert.rejects(b.submit(PROMPT, { store, signal: abort.signal }), { name: 'AbortError' });
    const records = await store.list();
    assert.deepEqual(
      records.map((r) => r.state),
      ['outcome_unknown'],
    );
  });

  it('a 400 with node_errors names each node and input; nothing stays remembered', async () => {
    const store = new StateStore(path.join(dir, 'state'));
    const refusal = recorded('http_post_prompt_err_missing_input');
    const b = await serve((_req, res) => sendJson(res, refusal.status, refusal.body));
    const err = await b.submit(PROMPT, { store }).then(
      () => assert.fail('accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof InvalidWorkflowError);
    assert.deepEqual(
      err.nodeErrors.map((n) => [n.nodeId, n.field, n.classType]),
      [['1', 'width', 'EmptyImage']],
    );
    assert.deepEqual(await store.list(), []);
  });

  it('a server that is not ComfyUI says so in one line', async () => {
    const b = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404: Not Found');
    });
    await assert.rejects(b.submit(PROMPT), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'not_comfyui');
      assert.match(e.message, /is not a ComfyUI server \(POST \/prompt answered HTTP 404\)/);
      assert.ok(!e.message.includes('\n'));
      return true;
    });
  });

  it('reads status from /queue then /history: running, queued, succeeded, canceled (interrupted), lost', async () => {
    const done = historyOf('http_get_history_id', 'done');
    const stopped = historyOf('http_get_history_A_interrupted', 'stopped');
    const b = await serve((req, res) => {
      if (req.url === '/queue') return sendJson(res, 200, QUEUE);
      if (req.url === '/history/done') return sendJson(res, 200, done);
      if (req.url === '/history/stopped') return sendJson(res, 200, stopped);
      sendJson(res, 200, recorded('http_get_history_unknown_id').body);
    });
    assert.equal((await b.get(RUNNING_ID)).job.status, 'running');
    const pending = (await b.get(PENDING_ID)).job;
    assert.deepEqual([pending.status, pending.queuePosition], ['queued', 0]);
    const ok = (await b.get('done')).job;
    assert.equal(ok.status, 'succeeded');
    assert.deepEqual(
      ok.outputs.map((o) => o.url),
      [`${server!.origin}/view?filename=invert_00001_.png&subfolder=&type=output`],
    );
    const canceled = (await b.get('stopped')).job;
    assert.deepEqual([canceled.status, canceled.error], ['canceled', null]);
    const lost = (await b.get('forgotten')).job;
    assert.equal(lost.status, 'lost');
  });

  it('cancel: /interrupt when running (answered canceling while it still runs), /queue delete when pending; a removed prompt reads canceled, not lost', async () => {
    const posts: string[] = [];
    let deleted = false;
    const b = await serve((req, res, body) => {
      if (req.method === 'POST') {
        posts.push(`${req.url} ${body.toString('utf8')}`);
        if (req.url === '/queue') deleted = true;
        res.writeHead(200, { 'content-length': '0' });
        return res.end();
      }
      if (req.url === '/queue') return sendJson(res, 200, deleted ? { ...QUEUE, queue_pending: [] } : QUEUE);
      sendJson(res, 200, {});
    });
    // The running prompt still runs after /interrupt (it stops between nodes): canceling, not running.
    assert.equal((await b.cancel(RUNNING_ID)).job.status, 'canceling');
    const after = await b.cancel(PENDING_ID);
    assert.deepEqual(posts, [
      `/interrupt ${JSON.stringify({ prompt_id: RUNNING_ID })}`,
      `/queue ${JSON.stringify({ delete: [PENDING_ID] })}`,
    ]);
    assert.equal(after.job.status, 'canceled');
  });

  it('watch: a run answered from the cache succeeds with its outputs; other prompts are filtered out', async () => {
    const run = recorded('ws_run2_cached') as unknown as {
      prompt_id: string;
      frames: { kind: string; msg?: unknown }[];
    };
    let promptId = '';
    let ended = false;
    const b = await serve((req, res, body) => {
      if (req.url === '/prompt') {
        promptId = (JSON.parse(body.toString('utf8')) as { prompt_id: string }).prompt_id;
        sendJson(res, 200, { prompt_id: promptId, number: 2, node_errors: {} });
        const retag = (text: string, id: string) => JSON.parse(text.split(run.prompt_id).join(id)) as unknown;
        // Another prompt's executed first, then the recorded cached run under our id.
        const other = run.frames
          .filter((f) => f.kind === 'text')
          .map((f) => retag(JSON.stringify(f.msg).replace('invert_00001_', 'other_'), 'someone-else'));
        const ours = run.frames.filter((f) => f.kind === 'text').map((f) => retag(JSON.stringify(f.msg), promptId));
        void (async () => {
          for (const m of [...other, ...ours]) await server!.broadcast(m);
          ended = true;
        })();
        return;
      }
      if (req.url === '/queue')
        return sendJson(
          res,
          200,
          ended
            ? { queue_running: [], queue_pending: [] }
            : { queue_running: [[2, promptId, PROMPT, {}, ['3']]], queue_pending: [] },
        );
      if (req.url === `/history/${promptId}` && ended)
        return sendJson(res, 200, historyOf('http_get_history_id', promptId));
      sendJson(res, 200, {});
    }, true);
    const accepted = await b.submit(PROMPT);
    const updates: JobUpdate[] = [];
    const final = await b.watch(accepted, { onUpdate: (u) => updates.push(u) });
    assert.equal(final.job.status, 'succeeded');
    const heard = updates.flatMap((u) => (u.type === 'output' ? [u.output.name] : []));
    assert.deepEqual(heard, ['invert_00001_.png']);
    assert.ok(server!.sockets.some((s) => s.url.searchParams.get('clientId')));
    // execution_cached names the nodes answered from the cache: the progress carries them (the graph shows them cached).
    const cached = updates.flatMap((u) => (u.type === 'progress' ? [u.progress.cachedNodes] : [])).filter(Boolean);
    assert.deepEqual(cached.at(-1), ['1', '2', '3']);
  });
});
