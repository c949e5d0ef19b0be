/**
 * The emulator's deprecated v1 WebSocket over a real socket (`ws` as the client): Cloud API v1 (deprecated), Events and
 * Endpoints, rule 3; binary frames are compared byte for byte with test/fixtures/v1/ (the fixtures the client's decoder
 * is tested against). Every wait is on a frame or a close.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { previewImageFrame, previewWithMetadataFrame, textFrame } from '../../src/emulator';
import {
  FIXTURES,
  FIXTURE_PROMPT_ID,
  KEY,
  OTHER_KEY,
  Socket,
  facts,
  get,
  postPrompt,
  runOn,
  socketUrl,
  statusesUntilTerminal,
  u32,
  upload,
} from './emulator-v1.fixtures';
import { useEmulator, type Json } from './harness';

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
