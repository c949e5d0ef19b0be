/**
 * What a ComfyUI server cannot say itself, and how a client of it rides out its restart (ComfyUI server API
 * (observed), Reading state and Cancelling): a prompt this client removed from the queue leaves no trace on the
 * server, so its record says `canceled` to every later process; reads that fail while the server restarts are retried
 * within the watch's outage budget, after which the restarted server's answer (neither queue nor history) is `lost`.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ComfyUIClient } from '../../src/core/comfyui/client';
import { ComfyUIJobBackend } from '../../src/core/comfyui/jobBackend';
import { ManualClock } from '../../src/core/http/clock';
import type { JobUpdate } from '../../src/core/jobs/backend';
import { StateStore } from '../../src/core/state/stateStore';
import { readBody, sendJson, startV1Server, type V1TestServer } from './v1Server';

const ID = '4e1f6a0c-0000-4000-8000-00000000000a';
const PROMPT = { '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0 } } };

describe('comfyui: what only the record knows, and a restart ridden out', function () {
  this.timeout(20_000);
  let server: V1TestServer;
  let dir: string;
  afterEach(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a prompt removed from the queue reads canceled in a later process through its record; without the record, lost', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfyui-rec-'));
    let deleted = false;
    server = await startV1Server((req, res) => {
      void readBody(req).then(() => {
        if (req.method === 'POST' && req.url === '/queue') {
          deleted = true;
          res.writeHead(200, { 'content-length': '0' });
          return res.end();
        }
        if (req.url === '/queue')
          return sendJson(res, 200, {
            queue_running: [],
            queue_pending: deleted ? [] : [[3, ID, PROMPT, {}, ['1']]],
          });
        sendJson(res, 200, {});
      });
    });
    const store = new StateStore(dir);
    await store.put({
      idempotencyKey: `comfyui-${ID}`,
      baseUrl: server.origin,
      state: 'created',
      jobId: ID,
      lastStatus: 'queued',
      submittedAt: new Date().toISOString(),
      client: 'cli',
    });
    const first = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin }), { store });
    assert.equal((await first.cancel(ID)).job.status, 'canceled');
    await first.close();
    const later = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin }), { store });
    assert.equal((await later.get(ID)).job.status, 'canceled', 'the record did not say canceled');
    await later.close();
    const unrecorded = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin }));
    assert.equal((await unrecorded.get(ID)).job.status, 'lost');
    await unrecorded.close();
  });

  it('a watch rides out reads failing while the server restarts, then the restarted server forgets the prompt: lost', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfyui-rec-'));
    let restarting = 12; // answers of 503 before the server is back: more than one read's own retries
    server = await startV1Server((req, res) => {
      void readBody(req).then(() => {
        if (restarting > 0) {
          restarting--;
          return sendJson(res, 503, { error: 'restarting' });
        }
        if (req.url === '/queue') return sendJson(res, 200, { queue_running: [], queue_pending: [] });
        sendJson(res, 200, {});
      });
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const backend = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin, clock }), {
      useSocket: false,
    });
    const updates: JobUpdate[] = [];
    const final = await backend.watch(ID, { onUpdate: (u) => updates.push(u) });
    assert.equal(final.job.status, 'lost');
    assert.equal(restarting, 0);
    assert.ok(updates.some((u) => u.type === 'retrying'));
    await backend.close();
  });

  it('an outage longer than the budget ends the watch with the last error', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfyui-rec-'));
    server = await startV1Server((req, res) => {
      void readBody(req).then(() => sendJson(res, 503, { error: 'down' }));
    });
    const clock = new ManualClock(0, { autoAdvance: true });
    const backend = new ComfyUIJobBackend(new ComfyUIClient({ baseUrl: server.origin, clock }), {
      useSocket: false,
      outageBudgetMs: 60_000,
    });
    await assert.rejects(backend.watch(ID), (err: Error & { status?: number }) => err.status === 503);
    assert.ok(clock.now() >= 60_000, `gave up after ${clock.now()} ms`);
    await backend.close();
  });
});
