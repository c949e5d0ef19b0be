/**
 * The emulator against the contract, over real HTTP with Node's own fetch (Job and Asset API v2:
 * Endpoints, States and transitions, Events, Authentication, Errors; public sources for what it leaves not shown,
 * and the workflow engine's weight-free nodes). No sleeps as synchronisation: tests wait on the
 * event stream or poll GET in bounded loops.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import extractChunks from 'png-chunks-extract';
import { PNG } from 'pngjs';
import { readImageWorkflow } from '../../src/core/convert/image';
import { hashBytes } from '../../src/core/util/hash';
import { startEmulator, type Emulator } from '../../src/emulator';
import { TERMINAL, UUID, call, until, useEmulator, type Answer, type Json } from './harness';
import { tempDir } from './tmp';
import { repositoryRoot } from './repositoryRoot';

/** The weight-free sample workflow: EmptyImage (red) → ImageInvert → SaveImage: one 64×64 cyan PNG. */
function sample(overrides: { width?: number; prefix?: string; batch?: number } = {}): Json {
  return {
    '1': {
      class_type: 'EmptyImage',
      inputs: { width: overrides.width ?? 64, height: 64, batch_size: overrides.batch ?? 1, color: 16711680 },
    },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: overrides.prefix ?? 'fixture' } },
  };
}

/** EmptyImage 1×1 → `length` ImageInverts in a row → PreviewImage: a job of `length + 2` nodes. */
function chain(length: number): Json {
  const workflow: Json = {
    '0': { class_type: 'EmptyImage', inputs: { width: 1, height: 1, batch_size: 1, color: 0 } },
  };
  for (let i = 1; i <= length; i++)
    workflow[String(i)] = { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] } };
  workflow.out = { class_type: 'PreviewImage', inputs: { images: [String(length), 0] } };
  return workflow;
}

function submit(emu: Emulator, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A link of the emulator as a URL: host-relative links resolve against the origin. */
function resolve(emu: Emulator, link: string): string {
  return new URL(link, emu.origin).toString();
}

interface SseEvent {
  event: string;
  data: Json;
}

interface Stream {
  events: SseEvent[];
  comments: string[];
  /** True when the server ended the stream. */
  ended: boolean;
}

/** Reads an event stream until the server ends it, or until `stop` holds (then the reader is canceled). */
async function readStream(res: Response, stop?: (s: Stream) => boolean): Promise<Stream> {
  const out: Stream = { events: [], comments: [], ended: false };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      out.ended = true;
      return out;
    }
    buffer += decoder.decode(value, { stream: true });
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at).split('\n');
      buffer = buffer.slice(at + 2);
      const event = block.find((l) => l.startsWith('event: '))?.slice(7);
      const data = block.find((l) => l.startsWith('data: '))?.slice(6);
      for (const l of block) if (l.startsWith(':')) out.comments.push(l);
      if (event !== undefined && data !== undefined) out.events.push({ event, data: JSON.parse(data) });
    }
    if (stop?.(out)) {
      await reader.cancel();
      return out;
    }
  }
}

function openEvents(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: AbortSignal.timeout(15_000) });
}

/** Asserts every pixel of a PNG is `rgb`. */
function assertSolid(png: PNG, width: number, height: number, rgb: [number, number, number]): void {
  assert.equal(png.width, width);
  assert.equal(png.height, height);
  for (let i = 0; i < png.data.length; i += 4) {
    if (png.data[i] !== rgb[0] || png.data[i + 1] !== rgb[1] || png.data[i + 2] !== rgb[2]) {
      assert.fail(`pixel ${i / 4} is ${[...png.data.subarray(i, i + 3)]}, expected ${rgb}`);
    }
  }
}

async function fetchPng(url: string, headers: Record<string, string> = {}): Promise<PNG> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.equal(res.headers.get('content-length'), String(bytes.length));
  return PNG.sync.read(bytes);
}

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

describe('emulator: synchronous validation (422 invalid_workflow with details.node_errors, workflow_format_ui, missing_asset)', () => {
  const emu = useEmulator();

  async function refusal(workflow: unknown): Promise<Json> {
    const res = await submit(emu(), { workflow });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    return res.body.error;
  }

  function problem(error: Json, nodeId: string, field: string): string {
    const list = error.details?.node_errors?.[nodeId];
    assert.ok(Array.isArray(list), `node_errors names node ${nodeId}: ${JSON.stringify(error.details)}`);
    const hit = list.find((p: Json) => p.field === field);
    assert.ok(hit, `node ${nodeId} has a problem with ${field}: ${JSON.stringify(list)}`);
    assert.deepEqual(Object.keys(hit).sort(), ['field', 'reason'], "the document's item shape");
    return hit.reason;
  }

  it('an unknown class_type names the node and field class_type, in short', async () => {
    const error = await refusal({
      '1': { class_type: 'NoSuchNode', inputs: {} },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
    });
    assert.equal(error.code, 'invalid_workflow');
    assert.equal(problem(error, '1', 'class_type'), 'NoSuchNode is not a node this emulator runs');
    assert.deepEqual(error.details.unknown_classes, ['NoSuchNode']);
  });

  it("unknown classes: one sentence saying what the emulator runs, each class once, and what to do; each node's reason short", async () => {
    const workflow = JSON.parse(
      fs.readFileSync(path.join(repositoryRoot(), 'test', 'fixtures', 'workspace', 'stable-diffusion.json'), 'utf8'),
    ) as Json;
    const error = await refusal(workflow);
    assert.equal(error.code, 'invalid_workflow');
    const classes = ['KSampler', 'CheckpointLoaderSimple', 'EmptyLatentImage', 'CLIPTextEncode', 'VAEDecode'];
    assert.equal(
      error.message,
      `the local emulator runs only its demo nodes (EmptyImage, ImageInvert, ImageScale, LoadImage, SaveImage, PreviewImage), not ${classes.join(', ')}; use a cloud connection for this workflow`,
    );
    for (const c of classes)
      assert.equal(error.message.split(new RegExp(`\\b${c}\\b`)).length - 1, 1, `${c} is named once`);
    assert.deepEqual(error.details.unknown_classes, classes, 'each class once, in node id order');
    for (const [id, c] of [
      ['3', 'KSampler'],
      ['4', 'CheckpointLoaderSimple'],
      ['5', 'EmptyLatentImage'],
      ['6', 'CLIPTextEncode'],
      ['7', 'CLIPTextEncode'],
      ['8', 'VAEDecode'],
    ]) {
      assert.equal(problem(error, id, 'class_type'), `${c} is not a node this emulator runs`);
      assert.equal(error.details.node_errors[id].length, 1, `node ${id}: one problem, not its inputs`);
    }
    assert.equal(
      error.details.node_errors['9'],
      undefined,
      'SaveImage runs here; its link to an unknown node is not a second problem',
    );
    assert.equal(error.details.graph_errors, undefined, 'no "no output node" beside it');
  });

  it('unknown classes beside other problems: the sentence counts the others', async () => {
    const workflow = sample({ width: 0 });
    workflow['9'] = { class_type: 'KSampler', inputs: {} };
    const error = await refusal(workflow);
    assert.match(
      error.message,
      /^the local emulator runs only its demo nodes \(.*\), not KSampler; use a cloud connection for this workflow \(and 1 other problem\)$/,
    );
    assert.equal(problem(error, '1', 'width'), 'value 0 is below the minimum 1');
  });

  it('width 0 is below the minimum: node 1, field width', async () => {
    const error = await refusal(sample({ width: 0 }));
    assert.equal(error.code, 'invalid_workflow');
    assert.equal(problem(error, '1', 'width'), 'value 0 is below the minimum 1');
    assert.match(error.message, /node 1 input width/);
  });

  it('a value above the maximum, a wrong type and a value outside a choice are each named', async () => {
    const workflow = sample();
    workflow['1'].inputs.height = 20000;
    workflow['1'].inputs.color = '#ff0000';
    workflow['4'] = {
      class_type: 'ImageScale',
      inputs: { image: ['2', 0], upscale_method: 'magic', width: 8, height: 8, crop: 'disabled' },
    };
    const error = await refusal(workflow);
    assert.match(problem(error, '1', 'height'), /above the maximum 16384/);
    assert.match(problem(error, '1', 'color'), /expects an integer/);
    assert.match(problem(error, '4', 'upscale_method'), /not one of/);
  });

  it('a missing required input names the node and the input', async () => {
    const workflow = sample();
    delete workflow['2'].inputs.image;
    const error = await refusal(workflow);
    assert.equal(error.code, 'invalid_workflow');
    assert.match(problem(error, '2', 'image'), /required/);
  });

  it('links: to a missing node, to a bad output index, from a wrong output type', async () => {
    const workflow = sample();
    workflow['2'].inputs.image = ['9', 0];
    workflow['3'].inputs.images = ['1', 3];
    workflow['1'].inputs.width = ['1', 0];
    const error = await refusal(workflow);
    assert.match(problem(error, '2', 'image'), /node "9", which is not in the workflow/);
    assert.match(problem(error, '3', 'images'), /output 3/);
    assert.match(problem(error, '1', 'width'), /expects INT, but output 0 of node "1" \(EmptyImage\) is IMAGE/);
  });

  it('a cycle is refused, naming a node and field on it', async () => {
    const workflow = {
      '1': { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } },
    };
    const error = await refusal(workflow);
    assert.equal(error.code, 'invalid_workflow');
    assert.match(JSON.stringify(error.details.node_errors), /cycle/);
  });

  it('no output node (EmptyImage alone) is a graph-level invalid_workflow', async () => {
    const error = await refusal({ '1': sample()['1'] });
    assert.equal(error.code, 'invalid_workflow');
    assert.match(error.message, /no output node/);
    assert.deepEqual(error.details.node_errors, {});
    assert.match(error.details.graph_errors[0].reason, /SaveImage or PreviewImage/);
  });

  it('a workflow that is not a graph of nodes is invalid_workflow', async () => {
    assert.equal((await refusal([1, 2])).code, 'invalid_workflow');
    assert.equal((await refusal({})).code, 'invalid_workflow');
    const error = await refusal({ '1': { inputs: {} } });
    assert.match(problem(error, '1', 'class_type'), /class_type/);
  });

  it('a UI-format workflow (schema 0.4 and schema 1) is 422 workflow_format_ui', async () => {
    const legacy = {
      last_node_id: 3,
      last_link_id: 2,
      nodes: [{ id: 1, type: 'EmptyImage' }],
      links: [],
      version: 0.4,
    };
    const schema1 = { version: 1, state: { lastNodeId: 2 }, nodes: [{ id: 1, type: 'EmptyImage' }] };
    for (const workflow of [legacy, schema1]) assert.equal((await refusal(workflow)).code, 'workflow_format_ui');
  });

  it("a core/ASSET reference to an unknown asset is 422 missing_asset; to one of the caller's outputs it passes", async () => {
    const ref = (id: string) => ({ __type: 'core/ASSET', info: { id, file_path: 'photo.png' } });
    const workflow = sample();
    workflow['3'].inputs.reference = ref('00000000-0000-4000-8000-000000000000');
    const error = await refusal(workflow);
    assert.equal(error.code, 'missing_asset');
    assert.match(problem(error, '3', 'reference'), /does not exist or is not yours/);
    const malformed = sample();
    malformed['3'].inputs.reference = { __type: 'core/ASSET', info: {} };
    assert.equal((await refusal(malformed)).code, 'missing_asset');

    const first = await submit(emu(), { workflow: sample() });
    const done = await until(emu(), first.body.id, (j) => TERMINAL.includes(j.status));
    const owned = sample();
    owned['3'].inputs.reference = ref(done.outputs[0].id);
    assert.equal((await submit(emu(), { workflow: owned })).status, 201);
  });
});

describe('emulator: Idempotency-Key is reject-on-duplicate (POST /api/v2/jobs rules 3–6)', () => {
  let clock = Date.now();
  const emu = useEmulator({ now: () => clock, retentionMs: 48 * 60 * 60 * 1000 });

  async function jobCount(): Promise<number> {
    return (await call(`${emu().baseUrl}/api/v2/jobs?limit=1000`)).body.jobs.length;
  }

  it('the same key twice: the second is 422 idempotency_key_reuse and nothing is executed again', async () => {
    const key = crypto.randomUUID();
    const first = await submit(emu(), { workflow: sample() }, { 'idempotency-key': key });
    assert.equal(first.status, 201);
    const count = await jobCount();
    for (const body of [{ workflow: sample() }, { workflow: sample({ prefix: 'other body' }) }]) {
      const again = await submit(emu(), body, { 'idempotency-key': key });
      assert.equal(again.status, 422);
      assert.equal(again.body.error.code, 'idempotency_key_reuse');
    }
    assert.equal(await jobCount(), count, 'no job created');
    assert.ok(!('idempotency-replayed' in Object.fromEntries(first.headers)), 'no Idempotency-Replayed header');
  });

  it('a key is released when the submission fails validation: the same key with a valid body then gives 201', async () => {
    const key = crypto.randomUUID();
    assert.equal(
      (await submit(emu(), { workflow: sample({ width: 0 }) }, { 'idempotency-key': key })).body.error.code,
      'invalid_workflow',
    );
    assert.equal(
      (await submit(emu(), { workflow: { nodes: [] } }, { 'idempotency-key': key })).body.error.code,
      'workflow_format_ui',
    );
    assert.equal(
      (await submit(emu(), { workflow: sample(), webhook_url: 'x' }, { 'idempotency-key': key })).body.error.code,
      'invalid_workflow',
    );
    assert.equal((await submit(emu(), { workflow: sample() }, { 'idempotency-key': key })).status, 201);
    assert.equal(
      (await submit(emu(), { workflow: sample() }, { 'idempotency-key': key })).body.error.code,
      'idempotency_key_reuse',
    );
  });

  it('concurrent duplicates: exactly one is accepted', async () => {
    const key = crypto.randomUUID();
    const answers = await Promise.all(
      [1, 2, 3].map(() => submit(emu(), { workflow: sample() }, { 'idempotency-key': key })),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422, 422]);
  });

  it('a key expires after 24 hours', async () => {
    const key = crypto.randomUUID();
    assert.equal((await submit(emu(), { workflow: sample() }, { 'idempotency-key': key })).status, 201);
    clock += 24 * 60 * 60 * 1000 - 1;
    assert.equal((await submit(emu(), { workflow: sample() }, { 'idempotency-key': key })).status, 422);
    clock += 1;
    assert.equal((await submit(emu(), { workflow: sample() }, { 'idempotency-key': key })).status, 201);
  });
});

describe('emulator: queue and cancel (concurrency 1, a long per-node delay)', () => {
  let emu: Emulator;
  beforeEach(async () => {
    emu = await startEmulator({ port: 0, nodeDelayMs: 60_000, concurrency: 1 });
  });
  afterEach(async () => {
    await emu.close();
  });

  it('FIFO: the second job waits queued with queue_position 0, the third with 1', async () => {
    const first = (await submit(emu, { workflow: sample() })).body;
    const running = await until(emu, first.id, (j) => j.status === 'running');
    assert.ok(running.started_at);
    assert.equal(running.queue_position, null);
    assert.equal(running.progress.current_node, '1', 'progress names the node being executed');
    assert.equal(running.progress.nodes_done, 0);
    assert.equal(running.metrics.execution_ms, null, 'null while not available');
    const second = (await submit(emu, { workflow: sample() })).body;
    const third = (await submit(emu, { workflow: sample() })).body;
    assert.equal(second.queue_position, 0);
    assert.equal(third.queue_position, 1);
    const g = await call(second.urls.self);
    assert.equal(g.body.status, 'queued');
    assert.equal(g.body.started_at, null);
  });

  it('cancel of a queued job: canceled at once (dequeued); the jobs behind it move up', async () => {
    const first = (await submit(emu, { workflow: sample() })).body;
    await until(emu, first.id, (j) => j.status === 'running');
    const second = (await submit(emu, { workflow: sample() })).body;
    const third = (await submit(emu, { workflow: sample() })).body;
    const answer = await call(second.urls.cancel, { method: 'POST' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.status, 'canceled');
    assert.ok(answer.body.completed_at);
    assert.equal(answer.body.started_at, null, 'it never started');
    assert.ok(!('logs' in answer.body));
    assert.equal((await call(second.urls.self)).body.status, 'canceled');
    assert.equal((await call(third.urls.self)).body.queue_position, 0);
  });

  it('cancel of a running job: canceling, then canceled; the stream shows both and ends', async () => {
    const job = (await submit(emu, { workflow: sample() })).body;
    await until(emu, job.id, (j) => j.status === 'running');
    const stream = await openEvents(job.urls.events);
    const answer = await call(job.urls.cancel, { method: 'POST' });
    assert.equal(answer.status, 200);
    assert.ok(['canceling', 'canceled'].includes(answer.body.status), answer.body.status);
    const seen = await readStream(stream);
    assert.ok(seen.ended, 'the stream ends after the terminal status');
    const statuses = seen.events.filter((e) => e.event === 'status').map((e) => e.data.status);
    assert.deepEqual(statuses, ['running', 'canceling', 'canceled']);
    const final = await until(emu, job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(final.status, 'canceled');
    assert.deepEqual(final.outputs, []);
  });

  it('cancel is idempotent: a canceled job is returned unchanged, and so is a canceling one', async () => {
    const job = (await submit(emu, { workflow: sample() })).body;
    await until(emu, job.id, (j) => j.status === 'running');
    await call(job.urls.cancel, { method: 'POST' });
    const final = await until(emu, job.id, (j) => TERMINAL.includes(j.status));
    const again = await call(job.urls.cancel, { method: 'POST' });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, final);
    assert.equal(
      (await call(`${emu.baseUrl}/api/v2/jobs/nope/cancel`, { method: 'POST' })).body.error.code,
      'not_found',
    );
  });

  it('the next queued job starts when the running one is canceled', async () => {
    const first = (await submit(emu, { workflow: sample() })).body;
    await until(emu, first.id, (j) => j.status === 'running');
    const second = (await submit(emu, { workflow: sample() })).body;
    await call(first.urls.cancel, { method: 'POST' });
    const started = await until(emu, second.id, (j) => j.status === 'running');
    assert.ok(started.metrics.queue_ms !== null);
  });

  it('close() ends open event streams and interrupts running jobs', async () => {
    const job = (await submit(emu, { workflow: sample() })).body;
    await until(emu, job.id, (j) => j.status === 'running');
    const stream = await openEvents(job.urls.events);
    // Read to the end: a stream that breaks off (its connection destroyed, not ended) is a failure.
    const reading = readStream(stream).catch((err: unknown) =>
      assert.fail(`the stream broke off instead of being ended: ${String(err)}`),
    );
    // close() waits for the runs to settle: with a minute per node it returns only if the run was interrupted.
    await emu.close();
    const seen = await reading;
    assert.ok(seen.ended, 'the stream did not end');
    // The job runs for a minute per node: nothing but close() could have ended its stream.
    const statuses = seen.events.filter((e) => e.event === 'status').map((e) => e.data.status);
    assert.deepEqual(
      statuses,
      ['running'],
      'the stream ended for another reason than close(): it carried a terminal status',
    );
  });
});

describe('emulator: the event stream (GET /api/v2/jobs/{id}/events)', () => {
  const emu = useEmulator();

  it('a run streams status at each transition, progress snapshots with nodes_done/nodes_total, a PNG preview, the output, and ends after the terminal status', async () => {
    // The stream must be open before the job starts: it waits queued behind a long chain of 2 ms nodes,
    // which is canceled once the stream is open.
    const slow = await startEmulator({ port: 0, nodeDelayMs: 2 });
    try {
      const blocker = (await submit(slow, { workflow: chain(5000) })).body;
      await until(slow, blocker.id, (j) => j.status === 'running');
      const job = (await submit(slow, { workflow: sample({ prefix: 'sse' }) })).body;
      const res = await openEvents(job.urls.events);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(res.headers.get('x-svc-request-id') ?? '', UUID);
      await call(blocker.urls.cancel, { method: 'POST' });
      const seen = await readStream(res);
      assert.ok(seen.ended);
      const names = seen.events.map((e) => e.event);
      assert.deepEqual(
        seen.events[0],
        { event: 'status', data: { status: 'queued', queue_position: 0 } },
        'the status snapshot first',
      );
      const statuses = seen.events.filter((e) => e.event === 'status').map((e) => e.data.status);
      assert.deepEqual(statuses, ['queued', 'running', 'succeeded']);
      const last = seen.events.at(-1)!;
      assert.equal(last.event, 'status', 'the stream ends after the terminal status');
      assert.equal(last.data.outputs.length, 1, 'the terminal status carries the outputs');
      assert.ok(!('logs' in last.data));
      const progress = seen.events.filter((e) => e.event === 'progress').map((e) => e.data);
      assert.deepEqual(
        progress.map((p) => [p.nodes_done, p.current_node]),
        [
          [0, '1'],
          [1, '1'],
          [1, '2'],
          [2, '2'],
          [2, '3'],
          [3, '3'],
        ],
      );
      assert.ok(progress.every((p) => p.nodes_total === 3 && p.value === p.nodes_done / p.nodes_total));
      assert.deepEqual(
        progress.map((p) => p.current_node_class),
        ['EmptyImage', 'EmptyImage', 'ImageInvert', 'ImageInvert', 'SaveImage', 'SaveImage'],
      );
      const previews = seen.events.filter((e) => e.event === 'preview').map((e) => e.data);
      assert.deepEqual(
        previews.map((p) => p.node_id),
        ['1', '2'],
        'a preview after each image-producing node',
      );
      assert.equal(previews[1].content_type, 'image/png');
      assertSolid(PNG.sync.read(Buffer.from(previews[1].data_base64, 'base64')), 64, 64, [0, 255, 255]);
      const outputs = seen.events.filter((e) => e.event === 'output').map((e) => e.data);
      assert.equal(outputs.length, 1);
      assert.equal(outputs[0].name, 'sse_00001_.png');
      assert.deepEqual(outputs[0], last.data.outputs[0]);
      assert.ok(names.indexOf('output') < names.lastIndexOf('status'));
      const final = await call(job.urls.self);
      assert.deepEqual(final.body.progress, progress.at(-1), 'GET has the same data the stream pushed');
    } finally {
      await slow.close();
    }
  });

  it('connecting to a finished job: the latest progress and preview, then the terminal status, then the end', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    const seen = await readStream(await openEvents(job.urls.events));
    assert.ok(seen.ended);
    assert.deepEqual(
      seen.events.map((e) => e.event),
      ['progress', 'preview', 'status'],
    );
    assert.equal(seen.events[2].data.status, 'succeeded');
  });

  it('an unknown job is a 404 JSON envelope, not a stream', async () => {
    const res = await call(`${emu().baseUrl}/api/v2/jobs/00000000-0000-4000-8000-000000000000/events`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(res.body.error.code, 'not_found');
  });
});

describe('emulator: stream snapshot on connect and keep-alive comments', () => {
  const emu = useEmulator({ nodeDelayMs: 60_000, keepAliveMs: 20 });

  it('a running job: status, then the latest progress, then keep-alive comment lines while nothing happens', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    await until(emu(), job.id, (j) => j.status === 'running');
    const seen = await readStream(await openEvents(job.urls.events), (s) => s.comments.length >= 2);
    assert.deepEqual(
      seen.events.map((e) => e.event),
      ['status', 'progress'],
    );
    assert.deepEqual(seen.events[0].data, { status: 'running', queue_position: null });
    assert.equal(seen.events[1].data.current_node, '1');
    assert.deepEqual(seen.comments.slice(0, 2), [': keep-alive', ': keep-alive']);
    await call(job.urls.cancel, { method: 'POST' });
  });

  it('a queued job: the status event carries its queue position', async () => {
    const first = (await submit(emu(), { workflow: sample() })).body;
    const second = (await submit(emu(), { workflow: sample() })).body;
    const seen = await readStream(await openEvents(second.urls.events), (s) => s.events.length >= 1);
    assert.equal(seen.events[0].event, 'status');
    assert.equal(seen.events[0].data.status, 'queued');
    assert.equal(typeof seen.events[0].data.queue_position, 'number');
    await call(second.urls.cancel, { method: 'POST' });
    await call(first.urls.cancel, { method: 'POST' });
  });
});

describe('emulator: asset content with Range (GET /api/v2/assets/{id}/content)', () => {
  const emu = useEmulator();
  let url = '';
  let whole: Buffer;
  before(async () => {
    const job = (await submit(emu(), { workflow: sample({ prefix: 'range' }) })).body;
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    url = done.outputs[0].url;
    whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    assert.equal(whole.length, done.outputs[0].size_bytes);
  });

  it('no Range: 200, Content-Type, Content-Length, Accept-Ranges', async () => {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(whole.length));
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), whole);
  });

  it('bytes=a-b and bytes=a- are 206 with Content-Range and exactly those bytes', async () => {
    const part = await fetch(url, { headers: { range: 'bytes=8-15' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 8-15/${whole.length}`);
    assert.equal(part.headers.get('content-length'), '8');
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(8, 16));
    const rest = await fetch(url, { headers: { range: 'bytes=100-' } });
    assert.equal(rest.status, 206);
    assert.equal(rest.headers.get('content-range'), `bytes 100-${whole.length - 1}/${whole.length}`);
    assert.deepEqual(Buffer.from(await rest.arrayBuffer()), whole.subarray(100));
    const suffix = await fetch(url, { headers: { range: 'bytes=-4' } });
    assert.equal(suffix.status, 206);
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), whole.subarray(whole.length - 4));
  });

  it('a range starting past the end is 416 with Content-Range bytes */size', async () => {
    const res = await call(url, { headers: { range: `bytes=${whole.length}-` } });
    assert.equal(res.status, 416);
    assert.equal(res.headers.get('content-range'), `bytes */${whole.length}`);
    assert.ok(res.body.error.code);
  });

  it('an unknown asset is 404 not_found', async () => {
    const res = await call(`${emu().baseUrl}/api/v2/assets/00000000-0000-4000-8000-000000000000/content`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
  });
});

describe('emulator under a mount prefix (serverless deployment)', () => {
  const emu = useEmulator({ mountPrefix: '/deployment/dep-1/' });

  it('baseUrl carries the prefix; paths outside it are 404 not_found', async () => {
    assert.equal(emu().baseUrl, `${emu().origin}/deployment/dep-1`);
    for (const p of [
      '/api/v2/health',
      '/api/v2/jobs',
      '/deployment/dep-2/api/v2/health',
      '/deployment/dep-10/api/v2/health',
    ]) {
      const res = await call(`${emu().origin}${p}`);
      assert.equal(res.status, 404, p);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await call(`${emu().baseUrl}/api/v2/health`)).status, 200);
  });

  it('urls and output urls are host-relative and start with the prefix; following them reaches the job and its PNG', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    for (const link of Object.values(job.urls) as string[])
      assert.ok(link.startsWith('/deployment/dep-1/api/v2/jobs/'), link);
    const self = await call(resolve(emu(), job.urls.self));
    assert.equal(self.body.id, job.id);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.ok(done.outputs[0].url.startsWith('/deployment/dep-1/api/v2/assets/'), done.outputs[0].url);
    assertSolid(await fetchPng(resolve(emu(), done.outputs[0].url)), 64, 64, [0, 255, 255]);
    const workflow = await call(resolve(emu(), `${job.urls.self}/workflow`));
    assert.equal(workflow.body.format, 'api');
  });
});

describe('emulator with static tokens (self-hosted with auth): each token is an owner', () => {
  const emu = useEmulator({ tokens: ['tok-A', 'tok-B'] });
  const A = { authorization: 'Bearer tok-A' };
  const B = { authorization: 'Bearer tok-B' };

  it('no token, or a wrong one: 401 unauthorized, on every route', async () => {
    const cases: Record<string, string>[] = [{}, { authorization: 'Bearer nope' }, { authorization: 'tok-A' }];
    for (const headers of cases) {
      const res = await submit(emu(), { workflow: sample() }, headers);
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    }
    assert.equal((await call(`${emu().baseUrl}/api/v2/jobs`)).status, 401);
    assert.equal((await call(`${emu().baseUrl}/api/v2/health`)).status, 401);
  });

  it("another owner's job and assets answer 404 not_found like unknown ones; listings are per owner", async () => {
    const job = (await submit(emu(), { workflow: sample() }, A)).body;
    assert.ok(job.id);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status), A);
    const asset = done.outputs[0];
    for (const url of [
      job.urls.self,
      `${job.urls.self}/workflow`,
      job.urls.events,
      asset.url,
      `${emu().baseUrl}/api/v2/assets/${asset.id}`,
    ]) {
      const res = await call(url, { headers: B });
      assert.equal(res.status, 404, url);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await call(job.urls.cancel, { method: 'POST', headers: B })).status, 404);
    assert.equal((await fetch(asset.url, { headers: A })).status, 200);
    const listB = await call(`${emu().baseUrl}/api/v2/jobs`, { headers: B });
    assert.ok(!listB.body.jobs.some((j: Json) => j.id === job.id));
    const listA = await call(`${emu().baseUrl}/api/v2/jobs`, { headers: A });
    assert.ok(listA.body.jobs.some((j: Json) => j.id === job.id));
  });

  it('Idempotency-Keys are per owner', async () => {
    const key = crypto.randomUUID();
    assert.equal((await submit(emu(), { workflow: sample() }, { ...A, 'idempotency-key': key })).status, 201);
    assert.equal((await submit(emu(), { workflow: sample() }, { ...B, 'idempotency-key': key })).status, 201);
  });

  it("a core/ASSET reference to another owner's asset is 422 missing_asset", async () => {
    const job = (await submit(emu(), { workflow: sample() }, A)).body;
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status), A);
    const workflow = sample();
    workflow['3'].inputs.reference = { __type: 'core/ASSET', info: { id: done.outputs[0].id } };
    assert.equal((await submit(emu(), { workflow }, B)).body.error.code, 'missing_asset');
    assert.equal((await submit(emu(), { workflow }, A)).status, 201);
  });
});

describe('emulator: retention (expires_at, injectable clock)', () => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const emu = useEmulator({ now: () => clock, retentionMs: 60_000 });

  it('expires_at = created_at + retention; after it the job, its workflow and its outputs answer 404 not_found', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    assert.equal(Date.parse(job.expires_at) - Date.parse(job.created_at), 60_000);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded');
    clock += 59_999;
    assert.equal((await call(job.urls.self)).status, 200);
    clock += 1;
    for (const url of [job.urls.self, `${job.urls.self}/workflow`, job.urls.events, done.outputs[0].url]) {
      const res = await call(url);
      assert.equal(res.status, 404, url);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.ok(!(await call(`${emu().baseUrl}/api/v2/jobs`)).body.jobs.some((j: Json) => j.id === job.id));
  });
});

describe('emulator: every response carries X-Svc-Request-Id; unknown routes are 404 envelopes', () => {
  const emu = useEmulator({ tokens: ['t'] });
  const auth = { authorization: 'Bearer t' };

  it('success, 401, 404, 422, unknown path and wrong method: a UUID request id on each, errors in the envelope', async () => {
    const answers = [
      await call(`${emu().baseUrl}/api/v2/health`, { headers: auth }),
      await call(`${emu().baseUrl}/api/v2/health`),
      await call(`${emu().baseUrl}/api/v2/jobs/x`, { headers: auth }),
      await submit(emu(), { workflow: {} }, auth),
      await call(`${emu().baseUrl}/api/v2/nothing-here`, { headers: auth }),
      await call(`${emu().baseUrl}/api/v2/jobs/x/cancel`, { headers: auth }),
      await call(`${emu().baseUrl}/api/v2/health`, { method: 'DELETE', headers: auth }),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 401, 404, 422, 404, 404, 404],
    );
    const ids = answers.map((a) => a.headers.get('x-svc-request-id'));
    for (const id of ids) assert.match(id ?? '', UUID);
    assert.equal(new Set(ids).size, ids.length, 'one id per request');
    for (const a of answers.slice(1)) {
      assert.equal(typeof a.body.error.code, 'string');
      assert.equal(typeof a.body.error.message, 'string');
    }
  });

  it('records every request in order, with its headers', async () => {
    const before = emu().requests.length;
    await call(`${emu().baseUrl}/api/v2/health?probe=1`, { headers: { ...auth, 'x-probe': 'yes' } });
    const seen = emu().requests.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].method, 'GET');
    assert.equal(seen[0].path, '/api/v2/health?probe=1');
    assert.equal(seen[0].headers['x-probe'], 'yes');
    assert.equal(seen[0].headers.authorization, 'Bearer t');
  });
});

describe('emulator options', () => {
  it('writes outputs to a given dataDir and keeps it on close; logs one line per request without credentials', async () => {
    const dataDir = tempDir('cc-emu-data-');
    const lines: string[] = [];
    const emu = await startEmulator({ port: 0, dataDir, tokens: ['secret-token'], log: (l) => lines.push(l) });
    try {
      const headers = { authorization: 'Bearer secret-token' };
      const job = (await submit(emu, { workflow: sample() }, headers)).body;
      const done = await until(emu, job.id, (j) => TERMINAL.includes(j.status), headers);
      assert.ok(
        fs.existsSync(path.join(dataDir, 'blobs', done.outputs[0].hash.slice('blake3:'.length))),
        'blobs are named by their hash',
      );
    } finally {
      await emu.close();
    }
    assert.ok(fs.existsSync(dataDir), 'a given dataDir is kept');
    assert.ok(
      lines.some((l) => /POST \/api\/v2\/jobs → 201/.test(l)),
      lines.join('\n'),
    );
    assert.ok(!lines.some((l) => l.includes('secret-token')));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses invalid options with a TypeError', async () => {
    await assert.rejects(startEmulator({ port: 0, concurrency: 0 }), TypeError);
    await assert.rejects(startEmulator({ port: 0, mountPrefix: 'deployment/x' }), TypeError);
  });

  it('concurrency 2 runs two jobs at once', async () => {
    const emu = await startEmulator({ port: 0, nodeDelayMs: 60_000, concurrency: 2 });
    try {
      const a = (await submit(emu, { workflow: sample() })).body;
      const b = (await submit(emu, { workflow: sample() })).body;
      await until(emu, a.id, (j) => j.status === 'running');
      await until(emu, b.id, (j) => j.status === 'running');
    } finally {
      await emu.close();
    }
  });
});
