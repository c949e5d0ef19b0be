/**
 * The emulator's ComfyUI server (`/comfyui`, ComfyUI server API (observed)) checked against a real server's recordings
 * in test/fixtures/comfyui/: the same status, the same body shape (keys and value types, recursively; ids, times and
 * numbers may differ), empty bodies where the server's were empty, and the WebSocket's frame sequences in order. Every
 * wait is on a frame, a hold or an answer (no sleeps); a prompt is held running with the emulator's node holds.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startEmulator, type Emulator } from '../../src/emulator';
import { Socket } from './emulator-v1.fixtures';
import { call, solidPng, UUID, useEmulator, type Answer, type Json } from './harness';

const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'comfyui');

/** A recording: the request, status, headers, and the body (JSON) or its text. */
interface Recording {
  request: { method: string; path: string; json: Json | null };
  status: number;
  headers: Record<string, string>;
  body?: unknown;
  body_len?: number;
  body_text?: string;
}

function recorded(name: string): Recording {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as Recording;
}

/** The recorded workflow: EmptyImage → ImageInvert → SaveImage (`invert`). */
const PROMPT = recorded('http_post_prompt_client_prompt_id').request.json!.prompt as Json;

/** `PROMPT` with another colour (a new prompt, not answered from the cache). */
function fresh(color = Math.floor(Math.random() * 0xffffff)): Json {
  return { ...PROMPT, '1': { ...PROMPT['1'], inputs: { ...PROMPT['1'].inputs, color } } };
}

/** Keys that name an id: a prompt id or a node id. */
const ID_KEY = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+)$/;

function kind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/**
 * Asserts `actual` has the shape of `expected`: the same kind of value, the same keys of objects (a map keyed by ids
 * is compared value by value when the keys are the same, else each value against the first recorded one), arrays
 * element by element (a recorded list of another length: each element against the first recorded one).
 */
function assertShape(actual: unknown, expected: unknown, where = 'body'): void {
  assert.equal(kind(actual), kind(expected), `${where}: ${JSON.stringify(actual)?.slice(0, 200)}`);
  if (Array.isArray(expected)) {
    const list = actual as unknown[];
    if (expected.length === 0 || list.length === 0) return;
    list.forEach((item, i) =>
      assertShape(item, expected.length === list.length ? expected[i] : expected[0], `${where}[${i}]`),
    );
    return;
  }
  if (kind(expected) !== 'object') return;
  const want = expected as Json;
  const got = actual as Json;
  const keys = Object.keys(want);
  if (keys.length > 0 && typeof want[keys[0]]?.class_type === 'string') {
    // A workflow: node ids → nodes; the recorded graph is another one, so each node is only a node.
    for (const node of Object.values(got)) assert.equal(typeof node.class_type, 'string', `${where}: a node`);
    return;
  }
  if (keys.length > 0 && keys.every((k) => ID_KEY.test(k))) {
    for (const [k, v] of Object.entries(got)) {
      assert.match(k, ID_KEY, `${where}: key ${k}`);
      assertShape(v, k in want ? want[k] : want[keys[0]], `${where}.${k}`);
    }
    return;
  }
  assert.deepEqual(Object.keys(got).sort(), [...keys].sort(), `${where}: keys`);
  for (const k of keys) assertShape(got[k], want[k], `${where}.${k}`);
}

/** Asserts an answer is the recording's: status, and the body's shape (or an empty body, or the same text). */
function assertLike(answer: Answer, recording: Recording): void {
  assert.equal(answer.status, recording.status, answer.text);
  if (recording.body !== undefined) {
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assertShape(JSON.parse(answer.text), recording.body);
  } else if (recording.body_len === 0) assert.equal(answer.text, '');
  else if (recording.body_text !== undefined && !recording.headers['Content-Type']?.startsWith('image/')) {
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(answer.text, recording.body_text);
  }
}

function request(emu: Emulator, method: string, pathAndQuery: string, json?: unknown): Promise<Answer> {
  return call(`${emu.comfyuiUrl}${pathAndQuery}`, {
    method,
    ...(json === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) }),
  });
}

/** Opens the ComfyUI socket with `clientId` and waits for its first `status`. */
async function openSocket(emu: Emulator, clientId?: string): Promise<Socket> {
  const socket = await Socket.open(
    clientId === undefined ? emu.comfyui!.wsUrl : `${emu.comfyui!.wsUrl}?clientId=${clientId}`,
  );
  await socket.message('status');
  return socket;
}

/** Posts `prompt` for `clientId`; returns the prompt id. */
async function post(emu: Emulator, prompt: Json, clientId?: string): Promise<string> {
  const answer = await request(emu, 'POST', '/prompt', {
    prompt,
    ...(clientId === undefined ? {} : { client_id: clientId }),
  });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.prompt_id as string;
}

/** Runs `prompt` on `socket` (its clientId) until `executing {node: null}`; returns the prompt id. */
async function run(emu: Emulator, socket: { socket: Socket; clientId: string }, prompt: Json): Promise<string> {
  const id = await post(emu, prompt, socket.clientId);
  await socket.socket.message('executing', id, (m) => m.data.node === null);
  return id;
}

/** The types of the text frames from `from` on (binary previews left out). */
function textTypes(socket: Socket, from = 0): string[] {
  return socket.frames.slice(from).flatMap((f) => (f.kind === 'json' ? [f.message.type as string] : []));
}

/** The types of a recorded socket's text frames after its first MARK (the request that started the run). */
function recordedTypes(name: string): string[] {
  const frames = (JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as { frames: Json[] })
    .frames;
  const mark = frames.findIndex((f) => f.kind === 'MARK');
  return frames.slice(mark + 1).flatMap((f) => (f.kind === 'text' ? [f.msg.type as string] : []));
}

describe('emulator ComfyUI server: REST answers as the recordings (ComfyUI server API (observed))', function () {
  this.timeout(30_000);
  const emu = useEmulator();
  afterEach(() => {
    emu().holdNodes(null);
  });

  it('POST /prompt answers {prompt_id, number, node_errors: {}}, bare and under /api; a client-given prompt_id is the id', async () => {
    assertLike(await request(emu(), 'POST', '/prompt', { prompt: fresh() }), recorded('http_post_prompt_ok'));
    const viaApi = await request(emu(), 'POST', '/api/prompt', { prompt: fresh() });
    assertLike(viaApi, recorded('http_post_prompt_ok'));
    const chosen = randomUUID();
    const given = recorded('http_post_prompt_client_prompt_id');
    const answer = await request(emu(), 'POST', '/prompt', {
      ...given.request.json,
      prompt: fresh(),
      prompt_id: chosen,
    });
    assertLike(answer, given);
    assert.equal(answer.body.prompt_id, chosen);
  });

  for (const name of [
    'http_post_prompt_err_unknown_class',
    'http_post_prompt_err_missing_input',
    'http_post_prompt_err_wrong_type',
    'http_post_prompt_err_out_of_range',
    'http_post_prompt_err_no_output',
    'http_post_prompt_err_no_prompt_key',
  ]) {
    it(`a refused prompt answers as ${name}: 400 {error: {type, message, details, extra_info}, node_errors} with the recorded type`, async () => {
      const recording = recorded(name);
      const answer = await request(emu(), 'POST', '/prompt', recording.request.json);
      assertLike(answer, recording);
      const body = recording.body as Json;
      assert.equal(answer.body.error.type, body.error.type);
      assert.deepEqual(Object.keys(answer.body.node_errors), Object.keys(body.node_errors));
      for (const [id, entry] of Object.entries(body.node_errors as Record<string, Json>))
        assert.deepEqual(
          answer.body.node_errors[id].errors.map((e: Json) => [e.type, e.extra_info.input_name]),
          entry.errors.map((e: Json) => [e.type, e.extra_info.input_name]),
        );
    });
  }

  it('a body that is not JSON: 500 with the plain-text page', async () => {
    const answer = await call(`${emu().comfyuiUrl}/prompt`, { method: 'POST', body: 'not json' });
    assertLike(answer, recorded('http_post_prompt_err_not_json'));
  });

  it('GET /history/{id} of a finished prompt is its entry; unknown ids answer {}; ?max_items=N the newest N', async () => {
    const socket = { socket: await openSocket(emu(), 'history-test'), clientId: 'history-test' };
    const ids = [await run(emu(), socket, fresh()), await run(emu(), socket, fresh())];
    await socket.socket.close();
    const entry = await request(emu(), 'GET', `/history/${ids[0]}`);
    assertLike(entry, recorded('http_get_history_id'));
    assert.deepEqual(Object.keys(entry.body), [ids[0]]);
    assert.equal(entry.body[ids[0]].prompt[1], ids[0]);
    assertLike(await request(emu(), 'GET', `/api/history/${randomUUID()}`), recorded('http_get_history_unknown_id'));
    const newest = await request(emu(), 'GET', '/history?max_items=1');
    assertLike(newest, recorded('http_get_history_max5'));
    assert.deepEqual(Object.keys(newest.body), [ids[1]]);
  });

  it('GET /queue lists the running and the pending prompt; POST /queue {delete} drops the pending one (empty 200, then {} in history); POST /interrupt with another id changes nothing, with its id interrupts it', async () => {
    assertLike(await request(emu(), 'GET', '/queue'), recorded('http_get_queue_idle'));
    emu().holdNodes({ nodeIds: ['2'] });
    const a = await post(emu(), fresh(), 'queue-test');
    await emu().whenHeld((n) => n.jobId === a);
    const b = await post(emu(), fresh(), 'queue-test');
    const queue = await request(emu(), 'GET', '/queue');
    assertLike(queue, recorded('http_get_queue_running_and_pending'));
    assert.deepEqual(
      [queue.body.queue_running.map((i: unknown[]) => i[1]), queue.body.queue_pending.map((i: unknown[]) => i[1])],
      [[a], [b]],
    );
    assertLike(await request(emu(), 'POST', '/queue', { delete: [b] }), recorded('http_post_queue_delete'));
    assertLike(await request(emu(), 'GET', `/history/${b}`), recorded('http_get_history_B_deleted'));
    assert.deepEqual((await request(emu(), 'GET', '/queue')).body.queue_pending, []);
    assertLike(
      await request(emu(), 'POST', '/interrupt', { prompt_id: randomUUID() }),
      recorded('http_post_interrupt'),
    );
    assert.deepEqual(
      emu()
        .holdState()
        .held.map((n) => n.jobId),
      [a],
      'another id interrupts nothing',
    );
    assertLike(await request(emu(), 'POST', '/interrupt', { prompt_id: a }), recorded('http_post_interrupt_targeted'));
    let entry: Answer;
    do entry = await request(emu(), 'GET', `/history/${a}`);
    while (Object.keys(entry.body).length === 0);
    assertLike(entry, recorded('http_get_history_A_interrupted'));
    const status = entry.body[a].status;
    assert.deepEqual([status.status_str, status.completed], ['error', false]);
    assert.ok(status.messages.some((m: unknown[]) => m[0] === 'execution_interrupted'));
  });

  it('POST /interrupt without a body interrupts whatever runs', async () => {
    emu().holdNodes({ nodeIds: ['2'] });
    const a = await post(emu(), fresh());
    await emu().whenHeld((n) => n.jobId === a);
    const answer = await call(`${emu().comfyuiUrl}/interrupt`, { method: 'POST' });
    assertLike(answer, recorded('http_post_interrupt'));
    let entry: Answer;
    do entry = await request(emu(), 'GET', `/history/${a}`);
    while (Object.keys(entry.body).length === 0);
    assert.equal(entry.body[a].status.status_str, 'error');
  });

  it('POST /history {delete} forgets an entry (200, empty body)', async () => {
    const socket = { socket: await openSocket(emu(), 'forget'), clientId: 'forget' };
    const id = await run(emu(), socket, fresh());
    await socket.socket.close();
    const answer = await request(emu(), 'POST', '/history', { delete: [id] });
    assert.deepEqual([answer.status, answer.text], [200, '']);
    assert.deepEqual((await request(emu(), 'GET', `/history/${id}`)).body, {});
  });

  it('GET /view serves an output with Content-Type, Content-Disposition and Content-Length; a missing file is 404 with an empty body', async () => {
    const socket = { socket: await openSocket(emu(), 'view'), clientId: 'view' };
    const id = await run(emu(), socket, fresh());
    await socket.socket.close();
    const [image] = (await request(emu(), 'GET', `/history/${id}`)).body[id].outputs['3'].images;
    const ok = await call(
      `${emu().comfyuiUrl}/view?filename=${encodeURIComponent(image.filename)}&type=output&subfolder=`,
    );
    assertLike(ok, recorded('http_get_view_ok'));
    assert.equal(ok.headers.get('content-type'), 'image/png');
    assert.equal(ok.headers.get('content-disposition'), `filename="${image.filename}"`);
    assert.equal(
      Number(ok.headers.get('content-length')),
      Buffer.byteLength(ok.text, 'latin1') > 0 ? Number(ok.headers.get('content-length')) : -1,
    );
    assertLike(
      await call(`${emu().comfyuiUrl}/view?filename=nope.png&type=output&subfolder=`),
      recorded('http_get_view_missing'),
    );
  });

  it('POST /upload/image answers {name, subfolder, type}; without the image field 400 with an empty body; a LoadImage prompt then reads it', async () => {
    const form = new FormData();
    form.append('image', new Blob([solidPng(4, 4, [10, 20, 30])], { type: 'image/png' }), 'up_test.png');
    const answer = await call(`${emu().comfyuiUrl}/upload/image`, { method: 'POST', body: form });
    assertLike(answer, recorded('http_post_upload_image'));
    const empty = new FormData();
    empty.append('type', 'input');
    assertLike(
      await call(`${emu().comfyuiUrl}/upload/image`, { method: 'POST', body: empty }),
      recorded('http_post_upload_image_no_field'),
    );
    const socket = { socket: await openSocket(emu(), 'load'), clientId: 'load' };
    const id = await run(emu(), socket, {
      '1': { class_type: 'LoadImage', inputs: { image: answer.body.name } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'loaded' } },
    });
    await socket.socket.close();
    const entry = (await request(emu(), 'GET', `/history/${id}`)).body[id];
    assert.equal(entry.status.status_str, 'success');
    assert.equal(entry.outputs['2'].images.length, 1);
  });

  it('unknown routes answer 404 "404: Not Found" in plain text; the informational routes answer as recorded', async () => {
    assertLike(await request(emu(), 'GET', `/api/job/${randomUUID()}/status`), recorded('http_get_api_job_status'));
    assertLike(await request(emu(), 'GET', '/system_stats'), recorded('http_get_system_stats'));
    assertLike(await request(emu(), 'GET', '/api/features'), recorded('http_get_features'));
    assertLike(await request(emu(), 'GET', '/embeddings'), recorded('http_get_embeddings'));
    assertLike(await request(emu(), 'GET', '/extensions'), recorded('http_get_extensions'));
    assertLike(await request(emu(), 'GET', '/prompt'), recorded('http_get_prompt'));
    assertLike(await request(emu(), 'GET', '/object_info/NoSuchNode'), recorded('http_get_object_info_unknown'));
    const info = await request(emu(), 'GET', '/object_info/EmptyImage');
    assert.equal(info.status, 200);
    assert.deepEqual(Object.keys(info.body), ['EmptyImage']);
    const want = (recorded('http_get_object_info_EmptyImage').body as Json).EmptyImage as Json;
    assert.deepEqual(Object.keys(info.body.EmptyImage.input.required), Object.keys(want.input.required));
    for (const key of [
      'input_order',
      'output',
      'output_is_list',
      'output_name',
      'name',
      'display_name',
      'category',
      'output_node',
    ])
      assertShape(info.body.EmptyImage[key], want[key], `EmptyImage.${key}`);
    const all = await request(emu(), 'GET', '/api/object_info');
    assert.ok(['EmptyImage', 'ImageInvert', 'SaveImage', 'LoadImage'].every((c) => c in all.body));
  });
});

describe('emulator ComfyUI server: the WebSocket (ComfyUI server API (observed), Following a job)', function () {
  this.timeout(30_000);
  const emu = useEmulator();
  afterEach(() => {
    emu().holdNodes(null);
  });

  it('a run sends the frames of ws_run1.json in order, each of the prompt on its client_id socket', async () => {
    const clientId = randomUUID();
    const socket = await openSocket(emu(), clientId);
    const other = await openSocket(emu(), randomUUID());
    const from = socket.frames.length;
    const id = await run(emu(), { socket, clientId }, fresh());
    assert.deepEqual(textTypes(socket, from), recordedTypes('ws_run1'));
    for (const m of socket.messagesOf(id)) assert.equal(m.data.prompt_id, id);
    assert.deepEqual(
      other.messagesOf(id).map((m) => m.type),
      [],
      'another client_id gets none of its messages',
    );
    await Promise.all([socket.close(), other.close()]);
  });

  it("an identical second run is answered from the cache: the frames of ws_run2_cached.json, the first run's files replayed, success with outputs", async () => {
    const clientId = randomUUID();
    const socket = await openSocket(emu(), clientId);
    const prompt = fresh();
    const first = await run(emu(), { socket, clientId }, prompt);
    const from = socket.frames.length;
    const second = await run(emu(), { socket, clientId }, prompt);
    assert.deepEqual(textTypes(socket, from), recordedTypes('ws_run2_cached'));
    assert.equal(socket.frames.slice(from).filter((f) => f.kind === 'binary').length, 0, 'no previews');
    const cached = await socket.message('execution_cached', second);
    assert.deepEqual(cached.data.nodes, ['1', '2', '3']);
    const history = (await request(emu(), 'GET', '/history')).body;
    assert.deepEqual(history[second].outputs, history[first].outputs);
    assert.equal(history[second].status.status_str, 'success');
    await socket.close();
  });

  it('an interrupted prompt ends as ws_cancel_targeted.json: executing, execution_interrupted {node_id, node_type, executed}, status, executing null', async () => {
    const clientId = randomUUID();
    const socket = await openSocket(emu(), clientId);
    emu().holdNodes({ nodeIds: ['2'] });
    const id = await post(emu(), fresh(), clientId);
    await emu().whenHeld((n) => n.jobId === id);
    await request(emu(), 'POST', '/interrupt', { prompt_id: id });
    await socket.message('executing', id, (m) => m.data.node === null);
    const want = recordedTypes('ws_cancel_targeted');
    assert.deepEqual(textTypes(socket).slice(-4), want.slice(-4));
    const interrupted = await socket.message('execution_interrupted', id);
    const frames = (
      JSON.parse(fs.readFileSync(path.join(FIXTURES, 'ws_cancel_targeted.json'), 'utf8')) as { frames: Json[] }
    ).frames;
    const recordedInterrupted = frames.find((f) => f.msg?.type === 'execution_interrupted')!.msg;
    assertShape(interrupted.data, recordedInterrupted.data);
    assert.deepEqual(
      [interrupted.data.node_id, interrupted.data.node_type, interrupted.data.executed],
      ['2', 'ImageInvert', ['1']],
    );
    await socket.close();
  });

  it('a node failing at run time sends execution_error with its fields', async () => {
    const clientId = randomUUID();
    const socket = await openSocket(emu(), clientId);
    const prompt = {
      ...PROMPT,
      '1': { ...PROMPT['1'], inputs: { width: 16384, height: 16384, batch_size: 4096, color: 1 } },
    };
    const id = await run(emu(), { socket, clientId }, prompt);
    const error = await socket.message('execution_error', id);
    assert.deepEqual(Object.keys(error.data).sort(), [
      'current_inputs',
      'current_outputs',
      'exception_message',
      'exception_type',
      'executed',
      'node_id',
      'node_type',
      'prompt_id',
      'timestamp',
      'traceback',
    ]);
    assert.deepEqual([error.data.node_id, error.data.node_type], ['1', 'EmptyImage']);
    await socket.close();
  });

  it("feature_flags: status with the sid on connect, the server's feature_flags in answer; without clientId the sid is generated", async () => {
    const [status, flags, anonymous] = JSON.parse(
      fs.readFileSync(path.join(FIXTURES, 'ws_feature_flags_handshake.json'), 'utf8'),
    ) as Json[];
    const socket = await Socket.open(`${emu().comfyui!.wsUrl}?clientId=ff-test`);
    const greeting = await socket.message('status');
    assertShape(greeting, status);
    assert.equal(greeting.data.sid, 'ff-test');
    socket.ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
    assertShape(await socket.message('feature_flags'), flags);
    assert.deepEqual(textTypes(socket), ['status', 'feature_flags']);
    const plain = await Socket.open(emu().comfyui!.wsUrl);
    const generated = await plain.message('status');
    assertShape(generated, anonymous.no_clientId_first_msg);
    assert.match(generated.data.sid, /^[0-9a-f]{32}$/);
    await Promise.all([socket.close(), plain.close()]);
  });

  it('previews: type 1 frames, type 4 only to a socket that announced supports_preview_metadata', async () => {
    const plain = await openSocket(emu(), 'plain');
    const meta = await openSocket(emu(), 'meta');
    meta.ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
    await meta.message('feature_flags');
    await run(emu(), { socket: plain, clientId: 'plain' }, fresh());
    await run(emu(), { socket: meta, clientId: 'meta' }, fresh());
    assert.ok(plain.binaries().length > 0);
    assert.deepEqual([...new Set(plain.binaries().map((b) => b.readUInt32BE(0)))], [1]);
    assert.deepEqual([...new Set(meta.binaries().map((b) => b.readUInt32BE(0)))], [4]);
    await Promise.all([plain.close(), meta.close()]);
  });

  it('a prompt without client_id sends its progress_state to every socket and its executing/execution_* to none', async () => {
    const socket = await openSocket(emu(), 'watcher');
    emu().holdNodes({ nodeIds: ['3'] });
    const id = await post(emu(), fresh());
    await emu().whenHeld((n) => n.jobId === id);
    await socket.message('progress_state', id, (m) => '3' in m.data.nodes);
    emu().holdNodes(null);
    let entry: Answer;
    do entry = await request(emu(), 'GET', `/history/${id}`);
    while (Object.keys(entry.body).length === 0);
    assert.deepEqual([...new Set(socket.messagesOf(id).map((m) => m.type))], ['progress_state']);
    await socket.close();
  });
});

describe('emulator ComfyUI server: a restart forgets queue and history, and /view still serves the files', function () {
  this.timeout(30_000);
  let dir: string;
  let emu: Emulator | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emu-comfyui-'));
  });
  afterEach(async () => {
    await emu?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('after close and start again on the data folder: /queue and /history empty, /history/{id} {}, the output served', async () => {
    emu = await startEmulator({ port: 0, dataDir: dir });
    const socket = await openSocket(emu, 'before');
    const id = await run(emu, { socket, clientId: 'before' }, fresh());
    await socket.close();
    const [image] = (await request(emu, 'GET', `/history/${id}`)).body[id].outputs['3'].images;
    await emu.close();
    emu = await startEmulator({ port: 0, dataDir: dir });
    assertLike(await request(emu, 'GET', '/queue'), recorded('after_restart_queue'));
    assertLike(await request(emu, 'GET', '/history'), recorded('after_restart_history'));
    assert.deepEqual((await request(emu, 'GET', '/history')).body, {});
    assert.deepEqual((await request(emu, 'GET', `/history/${id}`)).body, {});
    const view = await call(
      `${emu.comfyuiUrl}/view?filename=${encodeURIComponent(image.filename)}&type=output&subfolder=`,
    );
    assertLike(view, recorded('after_restart_view'));
    assert.match(id, UUID);
  });
});
