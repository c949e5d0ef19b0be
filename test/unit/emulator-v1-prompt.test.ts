/**
 * The emulator's deprecated v1 surface, submitting and reading a prompt over real HTTP: POST /api/prompt, status,
 * jobs and history (with the history fallback when /api/jobs is off), and GET /api/view (302 to a signed URL, Cloud API
 * v1 (deprecated), Endpoints, rule 2).
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { KEY, call, facts, get, postPrompt, statusesUntilTerminal, upload } from './emulator-v1.fixtures';
import { UUID, assertSolid, solidPng, useEmulator } from './harness';

describe('emulator v1: POST /api/prompt', () => {
  const logLines: string[] = [];
  const emu = useEmulator({ tokens: [KEY], log: (line) => logLines.push(line) });

  it('a valid prompt answers {prompt_id, number, node_errors: {}} and runs to success', async () => {
    const first = await postPrompt(emu(), { prompt: facts(0x112233) });
    assert.equal(first.status, 200, first.text);
    assert.match(first.body.prompt_id, UUID);
    assert.equal(typeof first.body.number, 'number');
    assert.deepEqual(first.body.node_errors, {});
    const second = await postPrompt(emu(), { prompt: facts(0x112234) });
    assert.ok(second.body.number > first.body.number, 'numbers grow');
    assert.equal((await statusesUntilTerminal(emu(), first.body.prompt_id)).at(-1), 'success');
  });

  it('extra_data.api_key_svc_org is recorded with the submission (the public api_key_comfy_org too) and never written to the log', async () => {
    const secret = `partner-${randomUUID()}`;
    const answer = await postPrompt(emu(), {
      prompt: facts(0x445566),
      extra_data: { api_key_svc_org: secret, extra_pnginfo: {} },
    });
    assert.equal(answer.status, 200, answer.text);
    const recorded = emu().v1!.prompts.find((p) => p.promptId === answer.body.prompt_id)!;
    assert.equal(recorded.partnerKey, secret);
    assert.deepEqual([...recorded.extraDataKeys].sort(), ['api_key_svc_org', 'extra_pnginfo']);
    const publicSpelling = await postPrompt(emu(), {
      prompt: facts(0x445567),
      extra_data: { api_key_comfy_org: secret },
    });
    assert.equal(emu().v1!.prompts.find((p) => p.promptId === publicSpelling.body.prompt_id)!.partnerKey, secret);
    const none = await postPrompt(emu(), { prompt: facts(0x445568) });
    assert.equal(emu().v1!.prompts.find((p) => p.promptId === none.body.prompt_id)!.partnerKey, null);
    await statusesUntilTerminal(emu(), answer.body.prompt_id);
    assert.ok(logLines.length > 0);
    assert.ok(!logLines.some((l) => l.includes(secret)));
    // Nor in the history the job leaves.
    const history = await get(emu(), `/api/history_v2/${answer.body.prompt_id}`);
    assert.ok(!history.text.includes(secret));
  });

  it("an invalid prompt answers 400 with error {type, message, details, extra_info} and node_errors in the engine's shape", async () => {
    const belowMin = facts();
    belowMin['1'].inputs.width = 0;
    const a = await postPrompt(emu(), { prompt: belowMin });
    assert.equal(a.status, 400);
    assert.equal(a.body.error.type, 'prompt_outputs_failed_validation');
    assert.equal(typeof a.body.error.message, 'string');
    const node = a.body.node_errors['1'];
    assert.equal(node.class_type, 'EmptyImage');
    assert.deepEqual(node.dependent_outputs, ['3']);
    assert.equal(node.errors[0].type, 'value_smaller_than_min');
    assert.equal(node.errors[0].extra_info.input_name, 'width');
    assert.equal(a.body.prompt_id, undefined);

    const missing = facts();
    delete missing['2'].inputs.image;
    const b = await postPrompt(emu(), { prompt: missing });
    assert.equal(b.body.node_errors['2'].errors[0].type, 'required_input_missing');

    const mismatch = facts();
    mismatch['3'].inputs.images = ['1', 5];
    assert.equal(
      (await postPrompt(emu(), { prompt: mismatch })).body.node_errors['3'].errors[0].type,
      'bad_linked_input',
    );

    const combo = {
      ...facts(),
      '4': {
        class_type: 'ImageScale',
        inputs: { image: ['2', 0], upscale_method: 'sharpest', width: 8, height: 8, crop: 'disabled' },
      },
      '5': { class_type: 'PreviewImage', inputs: { images: ['4', 0] } },
    };
    const c = await postPrompt(emu(), { prompt: combo });
    assert.equal(c.body.node_errors['4'].errors[0].type, 'value_not_in_list');
    assert.deepEqual(c.body.node_errors['4'].dependent_outputs, ['5']);

    const noOutput = await postPrompt(emu(), { prompt: { '1': facts()['1'] } });
    assert.equal(noOutput.status, 400);
    assert.equal(noOutput.body.error.type, 'prompt_no_outputs');

    const unknownClass = await postPrompt(emu(), {
      prompt: { ...facts(), '9': { class_type: 'NoSuchNode', inputs: {} } },
    });
    assert.equal(unknownClass.body.error.type, 'invalid_prompt');
    assert.match(unknownClass.body.error.message, /NoSuchNode/);

    const noPrompt = await postPrompt(emu(), { extra_data: {} });
    assert.equal(noPrompt.status, 400);
    assert.equal(noPrompt.body.error.type, 'no_prompt');

    const ui = await postPrompt(emu(), { prompt: { nodes: [], links: [], last_node_id: 0 } });
    assert.equal(ui.status, 400);
    assert.equal(ui.body.error.type, 'invalid_prompt');

    const unknownUpload = {
      '1': { class_type: 'LoadImage', inputs: { image: 'never-uploaded.png' } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
    };
    const d = await postPrompt(emu(), { prompt: unknownUpload });
    assert.equal(d.status, 400);
    assert.equal(d.body.node_errors['1'].errors[0].type, 'value_not_in_list');
    assert.match(d.body.node_errors['1'].errors[0].details, /never-uploaded\.png/);
  });

  it('LoadImage reads an uploaded image by its name: the saved output is the inverted upload', async () => {
    const up = await upload(
      emu(),
      'image',
      { type: 'input' },
      { bytes: solidPng(5, 4, [10, 200, 30]), name: 'in.png' },
    );
    const prompt = {
      '1': { class_type: 'LoadImage', inputs: { image: up.body.name } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } },
    };
    const answer = await postPrompt(emu(), { prompt });
    assert.equal(answer.status, 200, answer.text);
    assert.equal((await statusesUntilTerminal(emu(), answer.body.prompt_id)).at(-1), 'success');
    const job = await get(emu(), `/api/jobs/${answer.body.prompt_id}`);
    const ref = job.body.outputs['3'].images[0];
    const redirect = await get(emu(), `/api/view?filename=${ref.filename}&subfolder=&type=output`);
    assert.equal(redirect.status, 302);
    assertSolid(
      Buffer.from(await (await fetch(redirect.headers.get('location')!)).arrayBuffer()),
      5,
      4,
      [245, 55, 225],
    );
  });
});

describe('emulator v1: status, jobs and history (GET /api/job/{id}/status, /api/jobs/{id}, /api/history_v2/{id})', () => {
  const emu = useEmulator({ tokens: [KEY] });

  it("the status endpoint speaks the document's vocabulary by default (success) and the public one when switched (completed)", async () => {
    const answer = await postPrompt(emu(), { prompt: facts(0x000101) });
    const seen = await statusesUntilTerminal(emu(), answer.body.prompt_id);
    assert.equal(seen.at(-1), 'success');
    const body = (await get(emu(), `/api/job/${answer.body.prompt_id}/status`)).body;
    assert.equal(body.id, answer.body.prompt_id);
    for (const field of ['created_at', 'updated_at']) assert.ok(!Number.isNaN(Date.parse(body[field])), field);
    emu().v1!.setStatusVocabulary('public');
    try {
      assert.equal((await get(emu(), `/api/job/${answer.body.prompt_id}/status`)).body.status, 'completed');
    } finally {
      emu().v1!.setStatusVocabulary('document');
    }
  });

  it('forceStatus makes the status endpoint answer any value: the rare terminal ones (non_retryable_error, lost) and unknown in-flight ones', async () => {
    const answer = await postPrompt(emu(), { prompt: facts(0x000102) });
    const id = answer.body.prompt_id as string;
    for (const value of ['non_retryable_error', 'lost', 'warming_up', 'submitted']) {
      emu().v1!.forceStatus(id, value);
      assert.equal((await get(emu(), `/api/job/${id}/status`)).body.status, value);
    }
    emu().v1!.forceStatus(id, undefined);
    assert.equal((await statusesUntilTerminal(emu(), id)).at(-1), 'success');
  });

  it('an unknown prompt_id answers 404 on status, jobs and history', async () => {
    const id = randomUUID();
    for (const p of [`/api/job/${id}/status`, `/api/jobs/${id}`, `/api/history_v2/${id}`]) {
      const answer = await get(emu(), p);
      assert.equal(answer.status, 404, p);
      assert.equal(answer.body.code, 'not_found');
    }
  });

  it('GET /api/jobs/{id} (status completed, outputs, outputs_count) and /api/history_v2/{id} ({id: {prompt, outputs, status}}) give the outputs per node as {images: [{filename, subfolder, type}]}', async () => {
    const answer = await postPrompt(emu(), { prompt: facts(0x000103) });
    const id = answer.body.prompt_id as string;
    await statusesUntilTerminal(emu(), id);
    const job = (await get(emu(), `/api/jobs/${id}`)).body;
    assert.equal(job.id, id);
    assert.equal(job.status, 'completed');
    assert.equal(job.outputs_count, 1);
    const [ref] = job.outputs['3'].images;
    assert.match(ref.filename, /^[0-9a-f]{64}\.png$/);
    assert.equal(ref.subfolder, '');
    assert.equal(ref.type, 'output');
    const history = (await get(emu(), `/api/history_v2/${id}`)).body;
    assert.deepEqual(Object.keys(history), [id]);
    assert.deepEqual(history[id].outputs, job.outputs);
    assert.equal(history[id].status.status_str, 'success');
    assert.equal(history[id].status.completed, true);
    assert.deepEqual(history[id].prompt.outputs_to_execute, ['3']);
  });

  it("two jobs with the same prefix get different output names (content-addressed), so one job's output never names another's", async () => {
    const a = (await postPrompt(emu(), { prompt: facts(0x0a0a0a) })).body.prompt_id as string;
    const b = (await postPrompt(emu(), { prompt: facts(0x0b0b0b) })).body.prompt_id as string;
    await statusesUntilTerminal(emu(), a);
    await statusesUntilTerminal(emu(), b);
    const nameA = (await get(emu(), `/api/jobs/${a}`)).body.outputs['3'].images[0].filename;
    const nameB = (await get(emu(), `/api/jobs/${b}`)).body.outputs['3'].images[0].filename;
    assert.notEqual(nameA, nameB);
  });
});

describe('emulator v1: the history fallback (jobsEndpoint: false)', () => {
  const emu = useEmulator({ tokens: [KEY], v1: { jobsEndpoint: false } });

  it('GET /api/jobs/{id} answers 404 for every id while /api/history_v2/{id} answers the outputs', async () => {
    const id = (await postPrompt(emu(), { prompt: facts(0x000201) })).body.prompt_id as string;
    await statusesUntilTerminal(emu(), id);
    const jobs = await get(emu(), `/api/jobs/${id}`);
    assert.equal(jobs.status, 404);
    assert.equal(jobs.body.code, 'not_found');
    const history = await get(emu(), `/api/history_v2/${id}`);
    assert.equal(history.status, 200);
    assert.equal(history.body[id].outputs['3'].images.length, 1);
  });
});

describe('emulator v1: GET /api/view (302 to a signed URL, rule 2)', () => {
  const emu = useEmulator({ tokens: [KEY] });

  it('answers 302 to a signed URL on another origin; followed with no credential header it gives the PNG; with X-API-Key or Authorization it is refused 403', async () => {
    const id = (await postPrompt(emu(), { prompt: facts(0xff0000, 8) })).body.prompt_id as string;
    await statusesUntilTerminal(emu(), id);
    const ref = (await get(emu(), `/api/jobs/${id}`)).body.outputs['3'].images[0];
    const redirect = await get(emu(), `/api/view?filename=${encodeURIComponent(ref.filename)}&subfolder=&type=output`);
    assert.equal(redirect.status, 302);
    const location = new URL(redirect.headers.get('location')!);
    assert.equal(location.origin, emu().signedOrigin);
    assert.notEqual(location.origin, emu().origin);
    const bytes = Buffer.from(await (await fetch(location)).arrayBuffer());
    assertSolid(bytes, 8, 8, [0, 255, 255]);
    for (const headers of [{ 'x-api-key': KEY }, { authorization: `Bearer ${KEY}` }] as Record<string, string>[]) {
      const refused = await call(location.href, { headers });
      assert.equal(refused.status, 403, JSON.stringify(headers));
    }
  });

  it('without filename it answers 400; a name of no file of yours 404', async () => {
    assert.equal((await get(emu(), '/api/view?type=output')).status, 400);
    const unknown = await get(emu(), `/api/view?filename=${'0'.repeat(64)}.png&type=output`);
    assert.equal(unknown.status, 404);
  });
});
