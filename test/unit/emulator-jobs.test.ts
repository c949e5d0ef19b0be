/**
 * The emulator against the contract, over real HTTP with Node's own fetch: submit, execute and outputs (Job and Asset
 * API v2, POST /api/v2/jobs, GET /api/v2/jobs/{id}, asset content; States and transitions). No sleeps as
 * synchronisation: tests wait on the event stream or poll GET in bounded loops.
 */
import * as assert from 'node:assert/strict';
import extractChunks from 'png-chunks-extract';
import { readImageWorkflow } from '../../src/core/convert/image';
import { hashBytes } from '../../src/core/util/hash';
import { assertSolid, fetchPng, sample, submit } from './emulator.fixtures';
import { TERMINAL, UUID, call, until, useEmulator, type Json } from './harness';

describe('emulator: submit, execute, outputs (POST /api/v2/jobs, GET /api/v2/jobs/{id}, asset content)', () => {
  const emu = useEmulator();

  it('the sample runs: 201 queued job, polling GET reaches succeeded, one output that is a 64×64 PNG with every pixel #00FFFF', async () => {
    const created = await submit(emu(), { workflow: sample() });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const job = created.body;
    assert.match(job.id, UUID);
    assert.equal(job.status, 'queued', 'a 201 means recorded and queued');
    assert.equal(job.queue_position, 0);
    assert.equal(job.started_at, null);
    assert.ok(!('logs' in job), 'no logs on the POST answer');
    assert.deepEqual(job.metrics, { queue_ms: null, execution_ms: null });
    assert.deepEqual(Object.keys(job.urls).sort(), ['cancel', 'events', 'self']);
    assert.equal(job.urls.self, `${emu().origin}/api/v2/jobs/${job.id}`, 'absolute links without a mount prefix');

    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.ok(!('logs' in done), 'logs absent, never null, on this surface');
    assert.ok(done.started_at && done.completed_at);
    assert.equal(typeof done.metrics.queue_ms, 'number');
    assert.equal(typeof done.metrics.execution_ms, 'number');
    assert.deepEqual(
      { ...done.progress, message: undefined },
      {
        value: 1,
        nodes_done: 3,
        nodes_total: 3,
        current_node: '3',
        current_node_class: 'SaveImage',
        step: null,
        steps: null,
        message: undefined,
      },
    );
    assert.equal(done.outputs.length, 1);
    const out = done.outputs[0];
    assert.match(out.id, UUID);
    assert.equal(out.node_id, '3');
    assert.equal(out.name, 'fixture_00001_.png');
    assert.equal(out.type, 'image');
    assert.equal(out.content_type, 'image/png');
    assert.match(out.hash, /^blake3:[0-9a-f]{64}$/, 'outputs carry the blake3 hash of their bytes');
    assert.equal(out.job_id, job.id);
    assert.equal(out.url, `${emu().origin}/api/v2/assets/${out.id}/content`);
    assert.ok(out.url_expires_at);
    const bytes = Buffer.from(await (await fetch(out.url)).arrayBuffer());
    assert.equal(out.hash, await hashBytes(bytes));
    assert.equal(out.size_bytes, bytes.length);
    const png = await fetchPng(out.url);
    assertSolid(png, 64, 64, [0, 255, 255]);
  });

  it('outputs are assets: GET /api/v2/assets/{id} answers the record with a content url', async () => {
    const { body } = await submit(emu(), { workflow: sample({ prefix: 'asset' }) });
    const done = await until(emu(), body.id, (j) => TERMINAL.includes(j.status));
    const out = done.outputs[0];
    const asset = await call(`${emu().baseUrl}/api/v2/assets/${out.id}`);
    assert.equal(asset.status, 200);
    assert.equal(asset.body.id, out.id);
    assert.equal(asset.body.hash, out.hash, 'the record has the hash of its bytes');
    assert.equal(asset.body.size_bytes, out.size_bytes);
    assert.equal(asset.body.content_type, 'image/png');
    assert.equal(asset.body.file_path, 'asset_00001_.png');
    assert.equal(asset.body.job_id, body.id);
    assert.equal(asset.body.url, out.url);
    assert.ok(asset.body.created_at && asset.body.url_expires_at);
    assert.equal(
      (await call(`${emu().baseUrl}/api/v2/assets/00000000-0000-4000-8000-000000000000`)).body.error.code,
      'not_found',
    );
  });

  it('a batch gives one output per image, numbered per prefix; PreviewImage outputs too; ImageScale scales', async () => {
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 40, height: 20, batch_size: 2, color: 0x102030 } },
      '2': {
        class_type: 'ImageScale',
        inputs: { image: ['1', 0], upscale_method: 'bilinear', width: 10, height: 0, crop: 'disabled' },
      },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'sub/dir/scaled' } },
      '4': { class_type: 'PreviewImage', inputs: { images: ['1', 0] } },
    };
    const { body } = await submit(emu(), { workflow });
    const done = await until(emu(), body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const saved = done.outputs.filter((o: Json) => o.node_id === '3');
    assert.deepEqual(
      saved.map((o: Json) => o.name),
      ['scaled_00001_.png', 'scaled_00002_.png'],
      'a prefix keeps its last path segment',
    );
    assert.equal(done.outputs.filter((o: Json) => o.node_id === '4').length, 2);
    assertSolid(await fetchPng(saved[0].url), 10, 5, [0x10, 0x20, 0x30]);
  });

  it('rule: every output PNG carries the graph as run (a `prompt` tEXt chunk right after IHDR, ASCII JSON as ComfyUI writes it, no `workflow` chunk): readImageWorkflow gives the submitted workflow back', async () => {
    const workflow = {
      ...sample({ prefix: 'carried', batch: 2 }),
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] }, _meta: { title: 'Invertí ☕ 反転 😀' } },
      '4': { class_type: 'PreviewImage', inputs: { images: ['1', 0] } },
    };
    const { body } = await submit(emu(), { workflow });
    const done = await until(emu(), body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.outputs.length, 4, 'two saved, two previews');
    for (const out of done.outputs as Json[]) {
      const bytes = Buffer.from(await (await fetch(out.url)).arrayBuffer());
      assert.deepEqual(readImageWorkflow(bytes), { prompt: workflow }, out.name);
      const chunks = extractChunks(bytes);
      assert.deepEqual(
        chunks.slice(0, 2).map((c) => c.name),
        ['IHDR', 'tEXt'],
        out.name,
      );
      const text = Buffer.from(chunks[1]!.data);
      assert.ok(
        text.every((b) => b < 0x80),
        'the chunk is ASCII: non-ASCII characters are \\u escapes',
      );
      assert.match(text.toString('latin1'), /^prompt\0\{.*\\u53cd\\u8ee2 \\ud83d\\ude00/);
      assert.equal(out.hash, await hashBytes(bytes), 'the hash is of the bytes served, chunk included');
    }
    assertSolid(await fetchPng(done.outputs.find((o: Json) => o.node_id === '3').url), 64, 64, [0, 255, 255]);
  });

  it('a node that fails while executing: the job ends failed with error naming the node (node_execution_error)', async () => {
    // Valid by the node limits (16384 a side) but beyond the emulator's pixel cap: it fails at execution.
    const workflow = sample();
    workflow['1'].inputs.width = 16384;
    workflow['1'].inputs.height = 16384;
    const created = await submit(emu(), { workflow });
    assert.equal(created.status, 201);
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, 'node_execution_error');
    assert.equal(done.error.node_id, '1');
    assert.equal(done.error.class_type, 'EmptyImage');
    assert.equal(done.error.traceback, null);
    assert.match(done.error.message, /pixels/);
    assert.deepEqual(done.outputs, []);
  });

  it('GET /api/v2/jobs/{id}/workflow answers format api and the workflow exactly as submitted, never extra_data', async () => {
    const workflow = sample({ prefix: 'wf' });
    workflow['2']._meta = { title: 'Invert' };
    const { body } = await submit(emu(), { workflow, extra_data: { api_key_svc_org: 'secret-partner-key' } });
    const res = await call(`${body.urls.self}/workflow`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { format: 'api', workflow });
    assert.ok(!JSON.stringify(res.body).includes('secret-partner-key'));
    assert.equal((await call(`${emu().baseUrl}/api/v2/jobs/nope/workflow`)).status, 404);
  });

  it('extra_data is a closed object: api_key_svc_org and api_key_comfy_org are accepted, any other key is 422 invalid_workflow', async () => {
    assert.equal((await submit(emu(), { workflow: sample(), extra_data: { api_key_comfy_org: 'k' } })).status, 201);
    const other = await submit(emu(), { workflow: sample(), extra_data: { api_key_svc_org: 'k', debug: true } });
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'invalid_workflow');
    assert.match(other.body.error.message, /debug/);
    assert.equal((await submit(emu(), { workflow: sample(), extra_data: 'k' })).body.error.code, 'invalid_workflow');
  });

  it('webhook_url and inputs are reserved: present → 422 invalid_workflow', async () => {
    for (const reserved of ['webhook_url', 'inputs']) {
      const res = await submit(emu(), {
        workflow: sample(),
        [reserved]: reserved === 'inputs' ? {} : 'https://example.invalid/hook',
      });
      assert.equal(res.status, 422, reserved);
      assert.equal(res.body.error.code, 'invalid_workflow');
      assert.match(res.body.error.message, new RegExp(reserved));
    }
  });

  it('a body that is not a JSON object, or has no workflow, is 422 invalid_workflow', async () => {
    for (const body of ['{"workflow": ', '[1, 2]', '', '{"prompt": {}}']) {
      const res = await call(`${emu().baseUrl}/api/v2/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(res.status, 422, body);
      assert.equal(res.body.error.code, 'invalid_workflow', body);
    }
  });

  it("GET /api/v2/jobs lists the caller's jobs newest first, filtered by status, limited with truncated", async () => {
    const a = (await submit(emu(), { workflow: sample({ prefix: 'list-a' }) })).body;
    const b = (await submit(emu(), { workflow: sample({ prefix: 'list-b' }) })).body;
    await until(emu(), b.id, (j) => TERMINAL.includes(j.status));
    const page = await call(`${emu().baseUrl}/api/v2/jobs?limit=2`);
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.jobs.map((j: Json) => j.id),
      [b.id, a.id],
    );
    assert.equal(page.body.truncated, true);
    const failed = await call(`${emu().baseUrl}/api/v2/jobs?status=failed`);
    assert.ok(failed.body.jobs.length >= 1);
    assert.ok(failed.body.jobs.every((j: Json) => j.status === 'failed'));
    assert.equal(failed.body.truncated, false);
  });

  it('GET /api/v2/health answers {status: ok}', async () => {
    const res = await call(`${emu().baseUrl}/api/v2/health`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });
});
