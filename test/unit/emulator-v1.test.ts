/**
 * The emulator's deprecated v1 surface against its contract, over real HTTP and a real WebSocket (`ws` as the
 * client): Cloud API v1 (deprecated) (Authentication, Endpoints and rules 1–3, States and transitions, Events,
 * Errors) and what public sources add (`completed`, feature flags, no heartbeat). Binary frames are compared byte for
 * byte with test/fixtures/v1/ (the fixtures the client's decoder is tested against). No sleeps as synchronisation:
 * every wait is on a frame, a close, or a bounded series of requests.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import WebSocket from 'ws';
import {
  parseFaultSpec,
  previewImageFrame,
  previewWithMetadataFrame,
  startEmulator,
  textFrame,
  type Emulator,
} from '../../src/emulator';
import { runCli } from '../../src/cli/cli';
import {
  abortingWhen,
  assertSolid,
  Buffered,
  call as fetchAnswer,
  solidPng,
  UUID,
  useEmulator,
  type Answer,
  type Json,
} from './harness';

const KEY = 'v1-key-a';
const OTHER_KEY = 'v1-key-b';
const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'v1');
/** The prompt id written in the metadata fixture in place of the live one (same length: 36 characters). */
const FIXTURE_PROMPT_ID = '00000000-0000-4000-8000-000000000000';
const TERMINAL_V1 = ['success', 'completed', 'error', 'non_retryable_error', 'lost', 'cancelled'];

/** Redirects are answered, not followed (the /api/view tests read the 302 itself). */
function call(url: string, init: RequestInit = {}): Promise<Answer> {
  return fetchAnswer(url, { ...init, redirect: 'manual' });
}

/** The weight-free sample workflow: EmptyImage → ImageInvert → SaveImage; `color` varies it. */
function facts(color = 16711680, size = 64): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: size, height: size, batch_size: 1, color } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'fixture' } },
  };
}

function postPrompt(emu: Emulator, body: unknown, key = KEY): Promise<Answer> {
  return call(`${emu.baseUrl}/api/prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
}

function get(emu: Emulator, pathAndQuery: string, key = KEY): Promise<Answer> {
  return call(`${emu.baseUrl}${pathAndQuery}`, { headers: { 'x-api-key': key } });
}

/** A multipart upload built by the platform's FormData (the boundary set by the encoder, as clients must do). */
function upload(
  emu: Emulator,
  kind: 'image' | 'mask',
  fields: Record<string, string>,
  file: { bytes: Buffer; name: string } | undefined,
  key = KEY,
): Promise<Answer> {
  const form = new FormData();
  if (file !== undefined) form.append('image', new Blob([file.bytes], { type: 'image/png' }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return call(`${emu.baseUrl}/api/upload/${kind}`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
}

/** Polls the status endpoint until a terminal value (bounded; each step is a request). @returns every value seen, in order. */
async function statusesUntilTerminal(emu: Emulator, id: string, key = KEY): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 5000; i++) {
    const { status, body } = await get(emu, `/api/job/${id}/status`, key);
    assert.equal(status, 200, JSON.stringify(body));
    if (seen.at(-1) !== body.status) seen.push(body.status);
    if (TERMINAL_V1.includes(body.status)) return seen;
  }
  throw new Error(`job ${id} never reached a terminal status`);
}

type Frame = { kind: 'json'; message: Json } | { kind: 'binary'; bytes: Buffer };

/** A `ws` client that keeps every frame and lets a test wait for one (on arrival, never on time). */
class Socket {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; clean: boolean }>;
  private waiters: { test: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (e: Error) => void }[] = [];
  private ended = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      const frame: Frame = isBinary
        ? { kind: 'binary', bytes: Buffer.from(data) }
        : { kind: 'json', message: JSON.parse(data.toString()) as Json };
      this.frames.push(frame);
      for (const w of [...this.waiters]) {
        if (w.test(frame)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code) => {
        this.ended = true;
        for (const w of this.waiters) w.reject(new Error(`the socket closed (${code}) before the frame came`));
        this.waiters = [];
        resolve({ code, clean: code !== 1006 });
      });
    });
  }

  /** Opens `url`; rejects with the HTTP status of a refused upgrade. */
  static open(url: string): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const socket = new Socket(ws);
      ws.once('open', () => resolve(socket));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      });
      ws.once('error', reject);
    });
  }

  /** The first frame (already received or to come) that passes `test`. */
  waitFor(test: (f: Frame) => boolean): Promise<Frame> {
    const found = this.frames.find(test);
    if (found !== undefined) return Promise.resolve(found);
    if (this.ended) return Promise.reject(new Error('the socket is closed'));
    return new Promise((resolve, reject) => this.waiters.push({ test, resolve, reject }));
  }

  /** The first JSON message of `type` for `promptId` (already received or to come). */
  async message(type: string, promptId?: string, extra: (m: Json) => boolean = () => true): Promise<Json> {
    const f = await this.waitFor(
      (x) =>
        x.kind === 'json' &&
        x.message.type === type &&
        (promptId === undefined || x.message.data?.prompt_id === promptId) &&
        extra(x.message),
    );
    return (f as { message: Json }).message;
  }

  /** The JSON messages received for `promptId`, in order. */
  messagesOf(promptId: string): Json[] {
    return this.frames.flatMap((f) => (f.kind === 'json' && f.message.data?.prompt_id === promptId ? [f.message] : []));
  }

  binaries(): Buffer[] {
    return this.frames.flatMap((f) => (f.kind === 'binary' ? [f.bytes] : []));
  }

  close(): Promise<unknown> {
    this.ws.close();
    return this.closed;
  }
}

function socketUrl(emu: Emulator, key = KEY, clientId: string = randomUUID()): string {
  return `${emu.v1!.wsUrl}?clientId=${clientId}&token=${encodeURIComponent(key)}`;
}

/** Submits `prompt` and waits for its execution_success on `socket`; returns the prompt id. */
async function runOn(emu: Emulator, socket: Socket, prompt: Json, key = KEY): Promise<string> {
  const answer = await postPrompt(emu, { prompt }, key);
  assert.equal(answer.status, 200, answer.text);
  const id = answer.body.prompt_id as string;
  await socket.message('execution_success', id);
  return id;
}

/** Reads a binary frame's 4-byte big-endian fields. */
function u32(bytes: Buffer, at: number): number {
  return bytes.readUInt32BE(at);
}

describe('emulator v1: authentication (Cloud API v1 (deprecated), Authentication)', () => {
  const emu = useEmulator({ tokens: [KEY, OTHER_KEY] });

  it('REST calls are authenticated by X-API-Key: a valid key is served, a missing or wrong one answers 401 {code, message}', async () => {
    assert.equal((await get(emu(), '/api/object_info')).status, 200);
    const missing = await call(`${emu().baseUrl}/api/object_info`);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.code, 'unauthorized');
    assert.equal(typeof missing.body.message, 'string');
    assert.equal((await get(emu(), '/api/object_info', 'wrong-key')).status, 401);
  });

  it('Authorization is never accepted on v1: a valid bearer token alone, or next to a valid X-API-Key, answers 401', async () => {
    const bearer = await call(`${emu().baseUrl}/api/object_info`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(bearer.status, 401);
    const both = await call(`${emu().baseUrl}/api/object_info`, {
      headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY },
    });
    assert.equal(both.status, 401);
    assert.match(both.body.message, /X-API-Key/);
  });

  it('the WebSocket takes the key as the token query parameter: a missing or wrong token is refused with 401 at the upgrade', async () => {
    await assert.rejects(Socket.open(`${emu().v1!.wsUrl}?clientId=${randomUUID()}`), { status: 401 });
    await assert.rejects(Socket.open(socketUrl(emu(), 'wrong-key')), { status: 401 });
    const socket = await Socket.open(socketUrl(emu()));
    await socket.close();
  });

  it('a v1 job is a job of the shared engine and of the same caller: v2 shows it to the same key as bearer; another key gets 404 on v1', async () => {
    const answer = await postPrompt(emu(), { prompt: facts(0x010203) });
    assert.equal(answer.status, 200, answer.text);
    const id = answer.body.prompt_id as string;
    const v2 = await call(`${emu().baseUrl}/api/v2/jobs/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(v2.status, 200);
    assert.equal(v2.body.id, id);
    for (const p of [`/api/job/${id}/status`, `/api/jobs/${id}`, `/api/history_v2/${id}`])
      assert.equal((await get(emu(), p, OTHER_KEY)).status, 404, p);
  });
});

describe('emulator v1: node definitions (GET /api/object_info)', () => {
  const emu = useEmulator({ tokens: [KEY], v1: { perClassObjectInfo: false } });

  it("object_info describes every engine node class in the engine's shape: input.required/optional as [TYPE, options] or [[choices]], input_order, output, output_is_list, output_name, name, display_name, description, category, output_node", async () => {
    const { status, body } = await get(emu(), '/api/object_info');
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), [
      'EmptyImage',
      'ImageInvert',
      'ImageScale',
      'LoadImage',
      'PreviewImage',
      'SaveImage',
    ]);
    const empty = body.EmptyImage;
    assert.deepEqual(empty.input.required.width, ['INT', { default: 512, min: 1, max: 16384, step: 1 }]);
    assert.deepEqual(empty.input_order.required, ['width', 'height', 'batch_size', 'color']);
    assert.deepEqual(empty.output, ['IMAGE']);
    assert.deepEqual(empty.output_is_list, [false]);
    assert.deepEqual(empty.output_name, ['IMAGE']);
    assert.equal(empty.output_node, false);
    assert.equal(empty.name, 'EmptyImage');
    for (const field of ['display_name', 'description', 'category']) assert.equal(typeof empty[field], 'string', field);
    const scale = body.ImageScale;
    assert.deepEqual(scale.input.required.upscale_method[0], [
      'nearest-exact',
      'bilinear',
      'area',
      'bicubic',
      'lanczos',
    ]);
    assert.deepEqual(scale.input.required.image, ['IMAGE']);
    const save = body.SaveImage;
    assert.equal(save.output_node, true);
    assert.deepEqual(save.output, []);
    assert.deepEqual(save.input.optional.filename_prefix[0], 'STRING');
    assert.deepEqual(save.input_order.optional, ['filename_prefix']);
    assert.deepEqual(body.LoadImage.output, ['IMAGE', 'MASK']);
    assert.equal(body.LoadImage.input.required.image[1].image_upload, true);
  });

  it("LoadImage's choices are the caller's uploaded input names", async () => {
    const up = await upload(
      emu(),
      'image',
      { type: 'input' },
      { bytes: solidPng(2, 2, [1, 2, 3]), name: 'choice.png' },
    );
    assert.equal(up.status, 200, up.text);
    const { body } = await get(emu(), '/api/object_info');
    assert.ok((body.LoadImage.input.required.image[0] as string[]).includes(up.body.name));
  });

  it('GET /api/object_info/{class} is not served by default (404: the document shows only the whole map)', async () => {
    const answer = await get(emu(), '/api/object_info/EmptyImage');
    assert.equal(answer.status, 404);
    assert.equal(answer.body.code, 'not_found');
  });
});

describe('emulator v1: GET /api/object_info/{class} when served (perClassObjectInfo)', () => {
  const emu = useEmulator({ tokens: [KEY], v1: { perClassObjectInfo: true } });

  it('answers {class: definition} for a known class and {} for an unknown one, as the engine does', async () => {
    const known = await get(emu(), '/api/object_info/ImageInvert');
    assert.equal(known.status, 200);
    assert.deepEqual(Object.keys(known.body), ['ImageInvert']);
    assert.deepEqual(known.body.ImageInvert.input.required.image, ['IMAGE']);
    const unknown = await get(emu(), '/api/object_info/NoSuchNode');
    assert.equal(unknown.status, 200);
    assert.deepEqual(unknown.body, {});
  });
});

describe('emulator v1: uploads (POST /api/upload/image, /api/upload/mask)', () => {
  const emu = useEmulator({ tokens: [KEY] });

  it('an image upload answers {name, subfolder, type}: the name is content-addressed (blake3 hex + extension), subfolder echoed and ignored, overwrite ignored', async () => {
    const bytes = solidPng(3, 3, [10, 20, 30]);
    const first = await upload(
      emu(),
      'image',
      { type: 'input', overwrite: 'false', subfolder: 'pets' },
      { bytes, name: 'cat.png' },
    );
    assert.equal(first.status, 200, first.text);
    assert.match(first.body.name, /^[0-9a-f]{64}\.png$/);
    assert.equal(first.body.subfolder, 'pets');
    assert.equal(first.body.type, 'input');
    const again = await upload(emu(), 'image', { overwrite: 'true' }, { bytes, name: 'other-name.png' });
    assert.equal(again.body.name, first.body.name);
    assert.equal(again.body.type, 'input', 'type defaults to input');
    const temp = await upload(emu(), 'image', { type: 'temp' }, { bytes: solidPng(3, 3, [1, 1, 1]), name: 't.png' });
    assert.equal(temp.body.type, 'temp');
  });

  it('an upload without an image file part, with a malformed type or overwrite, or not multipart, answers 400 {code, message}', async () => {
    const noFile = await upload(emu(), 'image', { type: 'input' }, undefined);
    assert.equal(noFile.status, 400);
    assert.equal(typeof noFile.body.message, 'string');
    assert.equal(
      (await upload(emu(), 'image', { type: 'elsewhere' }, { bytes: solidPng(1, 1, [0, 0, 0]), name: 'a.png' })).status,
      400,
    );
    assert.equal(
      (await upload(emu(), 'image', { overwrite: 'yes' }, { bytes: solidPng(1, 1, [0, 0, 0]), name: 'a.png' })).status,
      400,
    );
    const json = await call(`${emu().baseUrl}/api/upload/image`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(json.status, 400);
  });

  it("an image over 16384 px a side is refused with 400 (the cloud's upload limits)", async () => {
    // A PNG signature and IHDR of 20000×1: the header is what the limit is read from.
    const header = Buffer.alloc(33);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0);
    header.writeUInt32BE(13, 8);
    header.write('IHDR', 12, 'latin1');
    header.writeUInt32BE(20000, 16);
    header.writeUInt32BE(1, 20);
    const answer = await upload(emu(), 'image', {}, { bytes: header, name: 'wide.png' });
    assert.equal(answer.status, 400);
    assert.match(answer.body.message, /16384/);
  });

  it("a mask upload needs original_ref, a JSON file reference to a file of yours; it answers the mask's name with metadata.is_mask", async () => {
    const original = await upload(
      emu(),
      'image',
      { type: 'input' },
      { bytes: solidPng(4, 4, [200, 100, 0]), name: 'photo.png' },
    );
    const ref = JSON.stringify({ filename: original.body.name, subfolder: '', type: 'input' });
    const mask = await upload(
      emu(),
      'mask',
      { type: 'input', subfolder: 'clipspace', original_ref: ref },
      { bytes: solidPng(4, 4, [0, 0, 0]), name: 'mask.png' },
    );
    assert.equal(mask.status, 200, mask.text);
    assert.match(mask.body.name, /^[0-9a-f]{64}\.png$/);
    assert.equal(mask.body.subfolder, 'clipspace');
    assert.equal(mask.body.metadata.is_mask, true);
    assert.match(mask.body.metadata.original_hash, /^blake3:[0-9a-f]{64}$/);
    assert.equal(
      (await upload(emu(), 'mask', { type: 'input' }, { bytes: solidPng(4, 4, [0, 0, 0]), name: 'm.png' })).status,
      400,
      'no original_ref',
    );
    assert.equal(
      (await upload(emu(), 'mask', { original_ref: 'not json' }, { bytes: solidPng(4, 4, [0, 0, 0]), name: 'm.png' }))
        .status,
      400,
      'not JSON',
    );
    const unknown = JSON.stringify({ filename: 'nobody.png', subfolder: '', type: 'input' });
    assert.equal(
      (await upload(emu(), 'mask', { original_ref: unknown }, { bytes: solidPng(4, 4, [0, 0, 0]), name: 'm.png' }))
        .status,
      400,
      'a file not yours',
    );
  });
});

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

describe('emulator v1: the WebSocket (Cloud API v1 (deprecated), Events; Endpoints, rule 3)', () => {
  const emu = useEmulator({ tokens: [KEY, OTHER_KEY] });

  it("on connect the server sends status with queue_remaining (the document's flat field and the engine's status.exec_info)", async () => {
    const clientId = randomUUID();
    const socket = await Socket.open(socketUrl(emu(), KEY, clientId));
    const status = await socket.message('status');
    assert.equal(status.data.queue_remaining, 0);
    assert.equal(status.data.status.exec_info.queue_remaining, 0);
    assert.equal(status.data.sid, clientId);
    await socket.close();
  });

  it("a job's messages come in the engine's order, each with data.prompt_id: execution_start, execution_cached, executing/progress per node, executed with {images: [{filename, subfolder, type}]}, execution_success, executing null", async () => {
    const socket = await Socket.open(socketUrl(emu()));
    const id = await runOn(emu(), socket, facts(0x000301));
    const done = await socket.message('executing', id, (m) => m.data.node === null);
    assert.equal(done.data.prompt_id, id);
    const types = socket
      .messagesOf(id)
      .map((m) => m.type)
      .filter((t) => t !== 'status' && t !== 'progress_state');
    assert.deepEqual(types, [
      'execution_start',
      'execution_cached',
      'executing',
      'progress',
      'executing',
      'progress',
      'executing',
      'progress',
      'executed',
      'execution_success',
      'executing',
    ]);
    const messages = socket.messagesOf(id);
    assert.deepEqual(
      messages.filter((m) => m.type === 'executing').map((m) => m.data.node),
      ['1', '2', '3', null],
    );
    assert.deepEqual(messages.find((m) => m.type === 'execution_cached')!.data.nodes, []);
    const progress = messages.filter((m) => m.type === 'progress').map((m) => [m.data.value, m.data.max]);
    assert.deepEqual(progress, [
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const executed = messages.find((m) => m.type === 'executed')!;
    assert.equal(executed.data.node, '3');
    const job = (await get(emu(), `/api/jobs/${id}`)).body;
    assert.deepEqual(executed.data.output, job.outputs['3']);
    assert.deepEqual(Object.keys(executed.data.output.images[0]).sort(), ['filename', 'subfolder', 'type']);
    // The final state comes from the status endpoint, and it agrees.
    assert.equal((await get(emu(), `/api/job/${id}/status`)).body.status, 'success');
    await socket.close();
  });

  it("every connection of the same key receives every job's messages whatever its clientId; another key's connection receives none of them", async () => {
    const a = await Socket.open(socketUrl(emu(), KEY, randomUUID()));
    const b = await Socket.open(socketUrl(emu(), KEY, randomUUID()));
    const other = await Socket.open(socketUrl(emu(), OTHER_KEY));
    const first = await runOn(emu(), a, facts(0x000401));
    const second = await runOn(emu(), a, facts(0x000402));
    await b.message('execution_success', first);
    await b.message('execution_success', second);
    // The other key's own job, run after ours: its socket got its frames, and none of ours.
    const own = await runOn(emu(), other, facts(0x000403), OTHER_KEY);
    assert.ok(other.messagesOf(own).length > 0);
    assert.deepEqual(other.messagesOf(first), []);
    assert.deepEqual(other.messagesOf(second), []);
    assert.deepEqual(a.messagesOf(own), []);
    await Promise.all([a.close(), b.close(), other.close()]);
  });

  it("binary frames: a TEXT frame per node (type 3, node id length, node id, text) and PREVIEW_IMAGE (type 1, image_type 2 PNG) holding a real PNG of the node's image", async () => {
    const socket = await Socket.open(socketUrl(emu()));
    const id = await runOn(emu(), socket, facts(0x00ff00, 16));
    await socket.message('executing', id, (m) => m.data.node === null);
    const binaries = socket.binaries();
    const texts = binaries.filter((b) => u32(b, 0) === 3);
    assert.deepEqual(
      texts.map((b) => b.subarray(8, 8 + u32(b, 4)).toString('utf8')),
      ['1', '2', '3'],
    );
    assert.match(texts[0].subarray(8 + u32(texts[0], 4)).toString('utf8'), /EmptyImage/);
    const previews = binaries.filter((b) => u32(b, 0) === 1);
    assert.equal(previews.length, 2, 'EmptyImage and ImageInvert produce images');
    for (const p of previews) assert.equal(u32(p, 4), 2);
    const first = PNG.sync.read(previews[0].subarray(8));
    assert.deepEqual([first.width, first.height], [16, 16]);
    assert.deepEqual([...first.data.subarray(0, 3)], [0, 255, 0]);
    const second = PNG.sync.read(previews[1].subarray(8));
    assert.deepEqual([...second.data.subarray(0, 3)], [255, 0, 255]);
    assert.ok(!binaries.some((b) => u32(b, 0) === 4), 'no metadata frame without the feature flag');
    await socket.close();
  });

  it('PREVIEW_IMAGE_WITH_METADATA (type 4) only after the first message declared supports_preview_metadata; the server answers with its feature_flags', async () => {
    const socket = await Socket.open(socketUrl(emu()));
    socket.ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
    const flags = await socket.message('feature_flags');
    assert.equal(flags.data.supports_preview_metadata, true);
    const id = await runOn(emu(), socket, facts(0x0000ff, 4));
    await socket.message('executing', id, (m) => m.data.node === null);
    const binaries = socket.binaries();
    assert.ok(!binaries.some((b) => u32(b, 0) === 1), 'no plain preview once the feature is declared');
    const withMetadata = binaries.filter((b) => u32(b, 0) === 4);
    assert.equal(withMetadata.length, 2);
    const length = u32(withMetadata[0], 4);
    const metadata = JSON.parse(withMetadata[0].subarray(8, 8 + length).toString('utf8')) as Json;
    assert.deepEqual(metadata, {
      node_id: '1',
      display_node_id: '1',
      real_node_id: '1',
      prompt_id: id,
      parent_node_id: null,
    });
    const png = PNG.sync.read(withMetadata[0].subarray(8 + length));
    assert.deepEqual([png.width, png.height], [4, 4]);
    await socket.close();
  });

  it("a feature_flags message that is not the connection's first changes nothing (plain previews)", async () => {
    const socket = await Socket.open(socketUrl(emu()));
    socket.ws.send(JSON.stringify({ type: 'hello', data: {} }));
    socket.ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
    const id = await runOn(emu(), socket, facts(0x0000fe, 4));
    await socket.message('executing', id, (m) => m.data.node === null);
    assert.ok(socket.binaries().some((b) => u32(b, 0) === 1));
    assert.ok(!socket.binaries().some((b) => u32(b, 0) === 4));
    assert.ok(!socket.frames.some((f) => f.kind === 'json' && f.message.type === 'feature_flags'));
    await socket.close();
  });

  it('a node that fails while running gives execution_error {node_id, node_type, exception_type, exception_message, traceback}, then executing null; status error', async () => {
    const socket = await Socket.open(socketUrl(emu()));
    const notPng = await upload(
      emu(),
      'image',
      { type: 'input' },
      { bytes: Buffer.from('these bytes are not a PNG'), name: 'broken.png' },
    );
    const prompt = {
      '1': { class_type: 'LoadImage', inputs: { image: notPng.body.name } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
    };
    const answer = await postPrompt(emu(), { prompt });
    assert.equal(answer.status, 200, answer.text);
    const id = answer.body.prompt_id as string;
    const error = await socket.message('execution_error', id);
    assert.equal(error.data.node_id, '1');
    assert.equal(error.data.node_type, 'LoadImage');
    assert.equal(typeof error.data.exception_type, 'string');
    assert.equal(typeof error.data.exception_message, 'string');
    assert.ok(Array.isArray(error.data.traceback));
    await socket.message('executing', id, (m) => m.data.node === null);
    assert.equal((await statusesUntilTerminal(emu(), id)).at(-1), 'error');
    await socket.close();
  });
});

describe('emulator v1: cancel (POST /api/interrupt, POST /api/queue)', () => {
  // Each node waits a minute unless interrupted: the job is running for as long as the test needs.
  const emu = useEmulator({ tokens: [KEY], nodeDelayMs: 60_000 });

  it('interrupting a running job gives execution_interrupted and status cancelled; deleting a queued one from the queue cancels it', async () => {
    const socket = await Socket.open(socketUrl(emu()));
    const running = (await postPrompt(emu(), { prompt: facts(0x000501) })).body.prompt_id as string;
    const queued = (await postPrompt(emu(), { prompt: facts(0x000502) })).body.prompt_id as string;
    await socket.message('executing', running, (m) => m.data.node === '1');
    const deleted = await call(`${emu().baseUrl}/api/queue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ delete: [queued] }),
    });
    assert.deepEqual(deleted.body.deleted, [queued]);
    assert.equal((await get(emu(), `/api/job/${queued}/status`)).body.status, 'cancelled');
    const interrupt = await call(`${emu().baseUrl}/api/interrupt`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ prompt_id: running }),
    });
    assert.equal(interrupt.status, 200);
    const interrupted = await socket.message('execution_interrupted', running);
    assert.equal(interrupted.data.node_id, '1');
    assert.equal((await statusesUntilTerminal(emu(), running)).at(-1), 'cancelled');
    await socket.close();
  });
});

describe('emulator v1: faults on the v1 surface (faults.ts, route kinds v1:*)', () => {
  const emu = useEmulator({ tokens: [KEY], control: true });
  afterEach(() => emu().setFaults({ rules: [] }));

  it('fault specs name v1 route kinds (v1:ws, v1:jobs, …); dropAfter and silent apply to v1:ws, afterCreate to v1:prompt, and not elsewhere on v1', () => {
    assert.deepEqual(parseFaultSpec('v1:ws:dropAfter=3'), {
      on: 'v1:ws',
      kind: 'dropStream',
      afterFrames: 3,
      how: 'end',
    });
    assert.deepEqual(parseFaultSpec('v1:ws:status=503:times=2'), {
      on: 'v1:ws',
      kind: 'status',
      status: 503,
      code: 'upstream_error',
      times: 2,
    });
    assert.deepEqual(parseFaultSpec('v1:jobs:status=404'), {
      on: 'v1:jobs',
      kind: 'status',
      status: 404,
      code: 'not_found',
    });
    assert.equal(parseFaultSpec('v1:prompt:afterCreate=502').kind, 'afterCreate');
    assert.deepEqual(parseFaultSpec('v1:ws:silentAfter=2'), { on: 'v1:ws', kind: 'silentStream', afterFrames: 2 });
    assert.throws(() => parseFaultSpec('v1:view:dropAfter=1'), /dropStream applies to "on": "events" only, or "v1:ws"/);
    assert.throws(
      () => parseFaultSpec('v1:status:afterCreate=502'),
      /afterCreate applies to "on": "submit" only, or "v1:prompt"/,
    );
  });

  it('v1:ws:dropAfter=N closes the socket with 1001 after N frames; how=reset drops it without a close frame', async () => {
    emu().setFaults({ rules: ['v1:ws:dropAfter=1:times=1', 'v1:ws:dropAfter=1:how=reset:times=1'] });
    const ended = await Socket.open(socketUrl(emu()));
    assert.deepEqual(await ended.closed, { code: 1001, clean: true });
    assert.equal(ended.frames.length, 1, 'the one frame before the cut');
    const reset = await Socket.open(socketUrl(emu()));
    assert.deepEqual(await reset.closed, { code: 1006, clean: false });
    assert.equal(reset.frames.length, 1);
    const fine = await Socket.open(socketUrl(emu()));
    await fine.message('status');
    await fine.close();
  });

  it('v1:ws:status=503:times=2 refuses two upgrades with 503; the third connects (a client reconnects)', async () => {
    emu().setFaults({ rules: ['v1:ws:status=503:times=2'] });
    await assert.rejects(Socket.open(socketUrl(emu())), { status: 503 });
    await assert.rejects(Socket.open(socketUrl(emu())), { status: 503 });
    const socket = await Socket.open(socketUrl(emu()));
    await socket.message('status');
    await socket.close();
  });

  it('v1:jobs:status=404 answers GET /api/jobs/{id} 404 {code, message} while history still answers', async () => {
    const id = (await postPrompt(emu(), { prompt: facts(0x000601) })).body.prompt_id as string;
    await statusesUntilTerminal(emu(), id);
    emu().setFaults({ rules: ['v1:jobs:status=404'] });
    const jobs = await get(emu(), `/api/jobs/${id}`);
    assert.equal(jobs.status, 404);
    assert.deepEqual(Object.keys(jobs.body).sort(), ['code', 'message']);
    assert.equal((await get(emu(), `/api/history_v2/${id}`)).status, 200);
    assert.equal((await get(emu(), `/api/job/${id}/status`)).status, 200, 'v1:jobs targets /api/jobs/{id} only');
  });

  it('v1:prompt:afterCreate=502 creates the job but answers 502: the job runs all the same', async () => {
    emu().setFaults({ rules: ['v1:prompt:afterCreate=502:times=1'] });
    const before = emu().v1!.prompts.length;
    const answer = await postPrompt(emu(), { prompt: facts(0x000701) });
    assert.equal(answer.status, 502);
    const created = emu().v1!.prompts[before];
    assert.equal((await statusesUntilTerminal(emu(), created.promptId)).at(-1), 'success');
  });

  it('v1:any targets v1 routes and not v2 ones; any targets v2 routes and not v1 ones', async () => {
    emu().setFaults({ rules: ['v1:any:status=500'] });
    assert.equal((await get(emu(), '/api/object_info')).status, 500);
    assert.equal(
      (await call(`${emu().baseUrl}/api/v2/jobs`, { headers: { authorization: `Bearer ${KEY}` } })).status,
      200,
    );
    emu().setFaults({ rules: ['any:status=500'] });
    assert.equal((await get(emu(), '/api/object_info')).status, 200);
  });
});

describe('emulator v1: binary frames byte for byte (test/fixtures/v1/)', () => {
  const emu = useEmulator({ tokens: [KEY] });

  it('frame encoders write a 4-byte big-endian type, then big-endian lengths and image_type', () => {
    assert.deepEqual([...previewImageFrame(2, Buffer.from([0xaa]))], [0, 0, 0, 1, 0, 0, 0, 2, 0xaa]);
    assert.deepEqual([...textFrame('é', 'x')], [0, 0, 0, 3, 0, 0, 0, 2, 0xc3, 0xa9, 0x78]);
    const meta = previewWithMetadataFrame(
      { node_id: '1', display_node_id: '1', real_node_id: '1', prompt_id: 'p', parent_node_id: null },
      Buffer.from([0xbb]),
    );
    const json = '{"node_id":"1","display_node_id":"1","real_node_id":"1","prompt_id":"p","parent_node_id":null}';
    assert.deepEqual(
      meta,
      Buffer.concat([
        Buffer.from([0, 0, 0, 4]),
        Buffer.from([0, 0, 0, json.length]),
        Buffer.from(json),
        Buffer.from([0xbb]),
      ]),
    );
  });

  it("the emulator's frames for the weight-free sample workflow equal the fixtures byte for byte (the metadata fixture with a placeholder prompt id)", async () => {
    const plain = await Socket.open(socketUrl(emu()));
    const withMetadata = await Socket.open(socketUrl(emu()));
    withMetadata.ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
    await withMetadata.message('feature_flags');
    const id = await runOn(emu(), plain, facts());
    await withMetadata.message('executing', id, (m) => m.data.node === null);
    const frames = {
      'text-node1.bin': plain.binaries().find((b) => u32(b, 0) === 3)!,
      'preview-image-png-node1.bin': plain.binaries().find((b) => u32(b, 0) === 1)!,
      'preview-with-metadata-node2.bin': withMetadata.binaries().filter((b) => u32(b, 0) === 4)[1],
    };
    for (const [name, live] of Object.entries(frames)) {
      assert.ok(live !== undefined, name);
      // The prompt id is fresh each run: the fixture holds a placeholder of the same length.
      const comparable = Buffer.from(live.toString('latin1').replace(id, FIXTURE_PROMPT_ID), 'latin1');
      const file = path.join(FIXTURES, name);
      if (process.env.UPDATE_V1_FIXTURES === '1') fs.writeFileSync(file, comparable);
      assert.ok(fs.readFileSync(file).equals(comparable), `${name} differs from the fixture`);
    }
    await Promise.all([plain.close(), withMetadata.close()]);
  });
});

describe('emulator v1: under a mount prefix, and without keys', () => {
  const emu = useEmulator({ tokens: [KEY], mountPrefix: '/deployment/dep-1' });

  it("the v1 paths and the WebSocket are served under the mount prefix (the same as v2's), and nowhere else", async () => {
    assert.equal(emu().v1!.wsUrl, `${emu().origin.replace('http', 'ws')}/deployment/dep-1/ws`);
    const socket = await Socket.open(socketUrl(emu()));
    const id = await runOn(emu(), socket, facts(0x000801));
    assert.equal((await get(emu(), `/api/job/${id}/status`)).body.status, 'success');
    assert.ok(emu().requests.some((r) => r.path === `/deployment/dep-1/api/job/${id}/status`));
    await socket.close();
    assert.equal((await call(`${emu().origin}/api/object_info`, { headers: { 'x-api-key': KEY } })).status, 404);
    await assert.rejects(Socket.open(`${emu().origin.replace('http', 'ws')}/ws?clientId=x&token=${KEY}`), {
      status: 404,
    });
  });

  it('without keys (the self-hosted default) v1 needs no credential, REST or WebSocket', async () => {
    const open = await startEmulator({ port: 0 });
    try {
      assert.equal((await call(`${open.baseUrl}/api/object_info`)).status, 200);
      const socket = await Socket.open(`${open.v1!.wsUrl}?clientId=${randomUUID()}`);
      await socket.message('status');
      await socket.close();
    } finally {
      await open.close();
    }
  });
});

describe('emulator v1: off (v1: false)', () => {
  it('serves no v1 route and no WebSocket', async () => {
    const emu = await startEmulator({ port: 0, v1: false });
    try {
      assert.equal(emu.v1, undefined);
      assert.equal((await call(`${emu.baseUrl}/api/object_info`)).status, 404);
      await assert.rejects(Socket.open(`${emu.origin.replace('http', 'ws')}/ws?clientId=x&token=y`), { status: 404 });
    } finally {
      await emu.close();
    }
  });
});

describe('emulator v1: comfy-cloud emulator', () => {
  it('says where the v1 WebSocket is, on stderr; stdout keeps the base URL and the router URL', async () => {
    const ac = new AbortController();
    const stdout = new Buffered();
    const stderr = abortingWhen(/WebSocket at/, ac); // stopped once it said where the socket is
    const code = await runCli(['emulator', '--port', '0'], {
      stdout,
      stderr,
      env: {},
      signal: ac.signal,
      startEmulator: (o) => startEmulator({ host: o.host, port: o.port }),
    });
    assert.equal(code, 0, stderr.text);
    const lines = stdout.text.trim().split('\n');
    assert.equal(lines.length, 2, stdout.text);
    assert.match(
      stderr.text,
      new RegExp(
        `WebSocket at ${lines[0].replace(/^http/, 'ws').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/ws\\?clientId=`,
      ),
    );
  });
});
