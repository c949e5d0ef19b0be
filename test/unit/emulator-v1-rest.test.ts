/**
 * The emulator's deprecated v1 surface, its plain REST endpoints, over real HTTP: Cloud API v1 (deprecated),
 * Authentication, node definitions (GET /api/object_info, with and without /{class}) and uploads (POST
 * /api/upload/image, /api/upload/mask).
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { KEY, OTHER_KEY, Socket, call, facts, get, postPrompt, socketUrl, upload } from './emulator-v1.fixtures';
import { solidPng, useEmulator } from './harness';

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
