/**
 * Contract tests of the v2 job client against the emulator over real HTTP on a random port
 * (Job and Asset API v2: Endpoints, States and transitions, Events, Errors; public sources for the inner fields).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { PNG } from 'pngjs';
import { V2Client } from '../../src/core/v2/client';
import { IdempotencyKeyReuseError, WorkflowFormatUiError } from '../../src/core/v2/errors';
import { InputError, InvalidWorkflowError, NotFoundError, UnauthorizedError, isTerminalStatus } from '../../src/core';
import type { WatchUpdate } from '../../src/core/v2/events';
import { startEmulator, type Emulator } from '../../src/emulator';
import { invertWorkflow, job, uiWorkflowSchema1 } from './builders';
import { startServer } from './httpServer';
import { tempDir } from './tmp';

function tmpDir(): string {
  return tempDir('cc-jobs-');
}

/** Every pixel of the PNG at `file` is `rgb`. */
function assertSolidPng(file: string, width: number, height: number, rgb: [number, number, number]): void {
  const png = PNG.sync.read(fs.readFileSync(file));
  assert.equal(png.width, width);
  assert.equal(png.height, height);
  for (let i = 0; i < png.data.length; i += 4) {
    assert.deepEqual([png.data[i], png.data[i + 1], png.data[i + 2]], rgb, `pixel ${i / 4}`);
  }
}

describe('v2 jobs against the emulator', () => {
  let emu: Emulator;
  let client: V2Client;
  before(async () => {
    emu = await startEmulator({ port: 0 });
    client = new V2Client({ baseUrl: emu.baseUrl });
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  it('submit → 201 queued job with an Idempotency-Key presented and returned', async () => {
    const sub = await client.jobs.submit(invertWorkflow({ prefix: 'a' }));
    assert.match(sub.idempotencyKey, /^[0-9a-f-]{36}$/);
    assert.equal(emu.requests.at(-1)!.headers['idempotency-key'], sub.idempotencyKey);
    assert.ok(['queued', 'running', 'succeeded'].includes(sub.job.status));
    assert.ok(sub.requestId, 'request id kept on the result');
    assert.equal(sub.job.logs, undefined, 'no logs on the POST answer');
  });

  it('run: submit, watch over the event stream to succeeded, download the PNG: 64×64, every pixel #00FFFF', async () => {
    const updates: WatchUpdate[] = [];
    const dir = tmpDir();
    const result = await client.run(invertWorkflow({ prefix: 'run' }), {
      outputDir: dir,
      onUpdate: (u) => updates.push(u),
    });
    assert.equal(result.final.job.status, 'succeeded');
    assert.equal(result.files.length, 1);
    assertSolidPng(result.files[0].path, 64, 64, [0, 255, 255]);
    const statuses = updates.filter((u) => u.type === 'status').map((u) => (u as { status: string }).status);
    assert.equal(statuses.at(-1), 'succeeded');
    const progress = updates
      .filter((u) => u.type === 'progress')
      .map((u) => (u as { progress: { nodes_done?: number | null; nodes_total?: number | null } }).progress);
    assert.ok(progress.length > 0, 'progress reported');
    assert.equal(progress.at(-1)!.nodes_total, 3);
    assert.ok(
      updates.some((u) => u.type === 'mode' && u.mode === 'stream'),
      'the event stream was used',
    );
  });

  it('the final state comes from GET /api/v2/jobs/{id}', async () => {
    const sub = await client.jobs.submit(invertWorkflow({ prefix: 'final' }));
    const before = emu.requests.length;
    const final = await client.watch(sub);
    const after = emu.requests.slice(before);
    assert.equal(final.job.status, 'succeeded');
    const last = after.filter((r) => r.method === 'GET' && !r.path.endsWith('/events')).at(-1);
    assert.ok(last && last.path.endsWith(`/api/v2/jobs/${sub.job.id}`), 'last request is the GET of the job');
  });

  it('get of an unknown job is NotFoundError with the request id', async () => {
    await assert.rejects(
      client.jobs.get('00000000-0000-4000-8000-000000000000'),
      (e: unknown) => e instanceof NotFoundError && e.status === 404 && Boolean(e.requestId),
    );
  });

  it('workflow: branches on format; a v2 submission always gets `api`, verbatim', async () => {
    const wf = invertWorkflow({ prefix: 'wf' });
    const sub = await client.jobs.submit(wf);
    const res = await client.jobs.workflow(sub);
    assert.equal(res.format, 'api');
    assert.deepEqual(res.workflow, wf);
  });

  it("a UI-format workflow is refused before any request, with the server's code workflow_format_ui", async () => {
    const before = emu.requests.length;
    await assert.rejects(
      client.jobs.submit(uiWorkflowSchema1()),
      (e: unknown) => InputError.is(e) && e.code === 'workflow_format_ui',
    );
    assert.equal(emu.requests.length, before, 'no request was sent');
  });

  it('the server also refuses a UI-format workflow with 422 workflow_format_ui (typed)', async () => {
    const res = await fetch(`${emu.baseUrl}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: uiWorkflowSchema1() }),
    });
    const { errorFromResponse } = await import('../../src/core/v2/errors');
    const e = errorFromResponse(res.status, await res.text(), res.headers);
    assert.ok(e instanceof WorkflowFormatUiError);
  });

  it('invalid_workflow: 422 with node_errors naming node, field and reason', async () => {
    await assert.rejects(client.jobs.submit(invertWorkflow({ width: 0 })), (e: unknown) => {
      assert.ok(e instanceof InvalidWorkflowError, String(e));
      assert.equal(e.status, 422);
      const hit = e.nodeErrors.find((n) => n.nodeId === '1' && n.field === 'width');
      assert.ok(hit, JSON.stringify(e.nodeErrors));
      assert.match(hit.reason, /minimum|min/i);
      return true;
    });
    const unknown = {
      '1': { class_type: 'NoSuchNode', inputs: {} },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
    };
    await assert.rejects(
      client.jobs.submit(unknown),
      (e: unknown) => e instanceof InvalidWorkflowError && e.nodeErrors.some((n) => n.nodeId === '1'),
    );
  });

  it('Idempotency-Key is reject-on-duplicate: the same key again is 422 idempotency_key_reuse and not re-executed', async () => {
    const key = crypto.randomUUID();
    const first = await client.jobs.submit(invertWorkflow({ prefix: 'idem' }), { idempotencyKey: key });
    await assert.rejects(
      client.jobs.submit(invertWorkflow({ prefix: 'idem' }), { idempotencyKey: key }),
      (e: unknown) => e instanceof IdempotencyKeyReuseError && e.status === 422,
    );
    const list = await client.jobs.list();
    assert.equal(list.jobs.filter((j) => j.id === first.job.id).length, 1);
  });

  it('a key is released when the submission fails validation: the same key then proceeds', async () => {
    const key = crypto.randomUUID();
    await assert.rejects(
      client.jobs.submit(invertWorkflow({ width: 0 }), { idempotencyKey: key }),
      InvalidWorkflowError,
    );
    const ok = await client.jobs.submit(invertWorkflow({ prefix: 'released' }), { idempotencyKey: key });
    assert.ok(ok.job.id);
  });

  it('cancel is idempotent: cancelling a finished job returns it unchanged', async () => {
    const sub = await client.jobs.submit(invertWorkflow({ prefix: 'done' }));
    const final = await client.watch(sub);
    const again = await client.jobs.cancel(final);
    assert.equal(again.job.status, 'succeeded');
  });
});

describe('v2 jobs: cancel, queue and polling (emulator with a per-node delay, concurrency 1)', () => {
  let emu: Emulator;
  let client: V2Client;
  beforeEach(async () => {
    emu = await startEmulator({ port: 0, nodeDelayMs: 60_000, concurrency: 1 });
    client = new V2Client({ baseUrl: emu.baseUrl });
  });
  afterEach(async () => {
    await client.close();
    await emu.close();
  });

  /** Polls GET until `predicate` holds (bounded; no sleeps as synchronisation: each step is a request). */
  async function until(id: string, predicate: (status: string) => boolean): Promise<string> {
    for (let i = 0; i < 2000; i++) {
      const { job } = await client.jobs.get(id);
      if (predicate(job.status)) return job.status;
    }
    throw new Error('condition never held');
  }

  it("cancel of a running job: canceling, then canceled (POST cancel, the watch ends with the server's state)", async () => {
    const sub = await client.jobs.submit(invertWorkflow({ prefix: 'r' }));
    await until(sub.job.id, (s) => s === 'running');
    const watching = client.watch(sub);
    const answer = await client.jobs.cancel(sub);
    assert.ok(['canceling', 'canceled'].includes(answer.job.status), answer.job.status);
    const final = await watching;
    assert.equal(final.job.status, 'canceled');
    assert.ok(emu.requests.some((r) => r.method === 'POST' && r.path.endsWith(`/jobs/${sub.job.id}/cancel`)));
  });

  it('cancel of a queued job: dequeued, canceled', async () => {
    const running = await client.jobs.submit(invertWorkflow({ prefix: 'first' }));
    await until(running.job.id, (s) => s === 'running');
    const queued = await client.jobs.submit(invertWorkflow({ prefix: 'second' }));
    const q = await client.jobs.get(queued);
    assert.equal(q.job.status, 'queued');
    assert.equal(typeof q.job.queue_position, 'number');
    const answer = await client.jobs.cancel(queued);
    assert.equal(answer.job.status, 'canceled');
    assert.equal((await client.jobs.get(queued)).job.status, 'canceled');
    await client.jobs.cancel(running);
  });

  it('a watch can be aborted: AbortError, and the job keeps running on the server', async () => {
    const sub = await client.jobs.submit(invertWorkflow({ prefix: 'abort' }));
    const ac = new AbortController();
    const watching = client.watch(sub, { signal: ac.signal });
    ac.abort();
    await assert.rejects(watching, (e: unknown) => (e as { code?: string }).code === 'aborted');
    assert.ok(!isTerminalStatus((await client.jobs.get(sub)).job.status));
    await client.jobs.cancel(sub);
  });
});

describe('v2 submission body (POST /api/v2/jobs)', () => {
  it('sends the workflow verbatim, never webhook_url or inputs, and extra_data only when it has a partner key', async () => {
    const bodies: Record<string, unknown>[] = [];
    const server = await startServer((req, res) => {
      let text = '';
      req.on('data', (d) => (text += d));
      req.on('end', () => {
        bodies.push(JSON.parse(text));
        res.statusCode = 201;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(job('queued')));
      });
    });
    const client = new V2Client({ baseUrl: server.origin });
    try {
      const wf = invertWorkflow();
      await client.jobs.submit(wf);
      await client.jobs.submit(wf, { partnerApiKey: 'partner-key' });
      assert.deepEqual(Object.keys(bodies[0]), ['workflow']);
      assert.deepEqual(bodies[0].workflow, wf);
      assert.deepEqual(Object.keys(bodies[1]).sort(), ['extra_data', 'workflow']);
      assert.deepEqual(bodies[1].extra_data, { api_key_svc_org: 'partner-key' });
      assert.match(String(server.seen[0].headers['idempotency-key']), /^[0-9a-f-]{36}$/);
      assert.notEqual(
        server.seen[0].headers['idempotency-key'],
        server.seen[1].headers['idempotency-key'],
        'one key per submission',
      );
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('v2 jobs: watching without the event stream (poll-first)', () => {
  it('polling alone reaches the terminal status (stream off)', async () => {
    const emu = await startEmulator({ port: 0 });
    const client = new V2Client({ baseUrl: emu.baseUrl });
    try {
      const sub = await client.jobs.submit(invertWorkflow({ prefix: 'poll' }));
      const final = await client.watch(sub, { stream: false, pollInitialMs: 5, pollMaxMs: 20 });
      assert.equal(final.job.status, 'succeeded');
      assert.ok(!emu.requests.some((r) => r.path.endsWith('/events')), 'no stream was opened');
    } finally {
      await client.close();
      await emu.close();
    }
  });
});

describe('v2 jobs under a mount prefix (serverless deployment): host-relative links', () => {
  let emu: Emulator;
  let client: V2Client;
  before(async () => {
    emu = await startEmulator({ port: 0, mountPrefix: '/deployment/dep-1' });
    client = new V2Client({ baseUrl: emu.baseUrl });
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  it('links are host-relative with the prefix, and following them reaches the job and its outputs', async () => {
    assert.equal(client.surface.kind, 'deployment');
    const sub = await client.jobs.submit(invertWorkflow({ prefix: 'dep' }));
    assert.ok(sub.job.urls?.self?.startsWith('/deployment/dep-1/'), JSON.stringify(sub.job.urls));
    const dir = tmpDir();
    const final = await client.watch(sub);
    const files = await client.downloadOutputs(final, dir);
    assertSolidPng(files[0].path, 64, 64, [0, 255, 255]);
    // every request stayed under the prefix: nothing was built against the bare origin
    for (const r of emu.requests) assert.ok(r.path.startsWith('/deployment/dep-1/'), r.path);
  });
});

describe('v2 jobs with a static token (self-hosted with auth)', () => {
  it('401 unauthorized without the key; the key is sent as a Bearer token', async () => {
    const emu = await startEmulator({ port: 0, tokens: ['tok-A'] });
    const anon = new V2Client({ baseUrl: emu.baseUrl });
    const authed = new V2Client({ baseUrl: emu.baseUrl, apiKey: 'tok-A' });
    try {
      await assert.rejects(
        anon.jobs.submit(invertWorkflow()),
        (e: unknown) => e instanceof UnauthorizedError && e.code === 'unauthorized',
      );
      const sub = await authed.jobs.submit(invertWorkflow({ prefix: 'tok' }));
      assert.equal(emu.requests.at(-1)!.headers.authorization, 'Bearer tok-A');
      assert.equal((await authed.watch(sub)).job.status, 'succeeded');
    } finally {
      await anon.close();
      await authed.close();
      await emu.close();
    }
  });
});
