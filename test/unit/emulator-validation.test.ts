/**
 * The emulator's synchronous checks of a submit, over real HTTP (Job and Asset API v2, POST /api/v2/jobs; Errors):
 * 422 invalid_workflow with details.node_errors, workflow_format_ui, missing_asset, and Idempotency-Key as
 * reject-on-duplicate (rules 3–6).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sample, submit } from './emulator.fixtures';
import { TERMINAL, call, until, useEmulator, type Json } from './harness';
import { repositoryRoot } from './repositoryRoot';

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
