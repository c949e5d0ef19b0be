/**
 * The emulator's asset records over real HTTP (Job and Asset API v2: Asset, HEAD /api/v2/assets/by-hash/{hash},
 * Authentication): HEAD by-hash, from-hash, GET, DELETE (409 asset_in_use while a job uses it), ownership per API key,
 * and LoadImage reading a core/ASSET reference.
 */
import * as assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { V2Client } from '../../src/core/v2/client';
import { assetReference, hashBytes } from '../../src/core/util';
import { startEmulator } from '../../src/emulator';
import {
  byHash,
  call,
  fileParts,
  filesIn,
  fromHash,
  loadInvertSave,
  postMultipart,
  tmpDir,
  uploadForm,
} from './emulator-assets.fixtures';
import { BLAKE3, TERMINAL, assertSolid, solidPng, submit, until, useEmulator } from './harness';

describe('emulator assets: HEAD by-hash, from-hash, GET, DELETE', () => {
  const dataDir = tmpDir();
  const emu = useEmulator({ dataDir, nodeDelayMs: 0 });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('HEAD /api/v2/assets/by-hash/{hash}: 200 for a blob the caller uploaded, 404 for an unknown or malformed hash; no body', async () => {
    const bytes = randomBytes(3000);
    const up = await postMultipart(emu(), fileParts(bytes, 'b.bin'));
    const yes = await byHash(emu(), up.body.hash);
    assert.equal(yes.status, 200);
    assert.equal(yes.text, '');
    const no = await byHash(emu(), await hashBytes(Buffer.from('never uploaded')));
    assert.equal(no.status, 404);
    assert.equal(no.text, '', 'HEAD has no body');
    assert.equal((await byHash(emu(), 'blake3:zz')).status, 404);
  });

  it("from-hash: 201 mints an asset under another file_path; 200 answers the caller's asset already there; 404 blob_not_found for an unknown blob", async () => {
    const bytes = randomBytes(3000);
    const up = await postMultipart(emu(), fileParts(bytes, 'orig.bin', [], 'application/x-orig'));
    const minted = await fromHash(emu(), { hash: up.body.hash, file_path: 'copy.bin', tags: ['t'], expires_in: 60 });
    assert.equal(minted.status, 201, minted.text);
    assert.notEqual(minted.body.id, up.body.id);
    assert.equal(minted.body.file_path, 'copy.bin');
    assert.equal(minted.body.content_type, 'application/x-orig', "the blob's content type");
    assert.equal(minted.body.size_bytes, bytes.length);
    assert.equal(minted.body.created_new, false);
    assert.deepEqual(minted.body.tags, ['t']);
    assert.equal(Date.parse(minted.body.expires_at) - Date.parse(minted.body.created_at), 60_000);
    const there = await fromHash(emu(), { hash: up.body.hash, file_path: 'orig.bin' });
    assert.equal(there.status, 200);
    assert.equal(there.body.id, up.body.id);
    const any = await fromHash(emu(), { hash: up.body.hash });
    assert.equal(any.status, 200, 'without file_path: any asset of the caller over the blob');
    const unknown = await fromHash(emu(), { hash: await hashBytes(Buffer.from('nothing')) });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'blob_not_found');
    assert.equal((await fromHash(emu(), { hash: 'md5:1' })).body.error.code, 'invalid_upload');
    assert.equal((await fromHash(emu(), ['x'])).body.error.code, 'invalid_upload');
  });

  it('job outputs are blobs of their owner: their hash is HEAD-able and mintable; identical outputs share one blob', async () => {
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 2, color: 0x123456 } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'twins' } },
    };
    const job = (await submit(emu(), workflow)).body;
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.outputs.length, 2);
    const [a, b] = done.outputs;
    assert.match(a.hash, BLAKE3);
    assert.equal(a.hash, b.hash, 'the same image twice');
    assert.notEqual(a.id, b.id);
    assert.equal(filesIn(dataDir, 'blobs').filter((f) => f === a.hash.slice(7)).length, 1);
    assert.equal((await byHash(emu(), a.hash)).status, 200);
    const minted = await fromHash(emu(), { hash: a.hash, file_path: 'mine.png' });
    assert.equal(minted.status, 201);
    assert.equal(minted.body.content_type, 'image/png');
  });

  it('DELETE: 204, then GET and DELETE are 404; the blob goes with its last record', async () => {
    const bytes = randomBytes(2000);
    const a = (await postMultipart(emu(), fileParts(bytes, 'a.bin'))).body;
    const b = (await postMultipart(emu(), fileParts(bytes, 'b.bin'))).body;
    const hex = a.hash.slice(7);
    const del = await call(`${emu().baseUrl}/api/v2/assets/${a.id}`, { method: 'DELETE' });
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${a.id}`)).status, 404);
    const again = await call(`${emu().baseUrl}/api/v2/assets/${a.id}`, { method: 'DELETE' });
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'not_found');
    assert.ok(filesIn(dataDir, 'blobs').includes(hex), 'b still refers to the blob');
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${b.id}/content`)).status, 200);
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${b.id}`, { method: 'DELETE' })).status, 204);
    assert.ok(!filesIn(dataDir, 'blobs').includes(hex), 'the last record took the blob with it');
    assert.equal((await byHash(emu(), a.hash)).status, 404, 'nothing to mint from any more');
  });

  it('an asset with expires_in answers 404 after it', async () => {
    let clock = Date.now();
    const timed = await startEmulator({ port: 0, now: () => clock });
    try {
      const up = await postMultipart(
        timed,
        fileParts(randomBytes(100), 'e.bin', [{ name: 'expires_in', value: '10' }]),
      );
      assert.equal(up.status, 201);
      clock += 9_999;
      assert.equal((await call(`${timed.baseUrl}/api/v2/assets/${up.body.id}`)).status, 200);
      clock += 1;
      assert.equal((await call(`${timed.baseUrl}/api/v2/assets/${up.body.id}`)).status, 404);
      assert.equal((await byHash(timed, up.body.hash)).status, 404);
    } finally {
      await timed.close();
    }
  });
});

describe('emulator assets: DELETE of an asset a job uses (409 asset_in_use)', () => {
  const emu = useEmulator({ nodeDelayMs: 60_000 });

  it('queued or running job referring to it: 409 asset_in_use naming the job; once the job ended: 204', async () => {
    const up = (await postMultipart(emu(), fileParts(solidPng(2, 2, [255, 0, 0]), 'red.png', [], 'image/png'))).body;
    const running = (await submit(emu(), loadInvertSave(up.id))).body;
    const queued = (await submit(emu(), loadInvertSave(up.id))).body;
    await until(emu(), running.id, (j) => j.status === 'running');
    const refused = await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { method: 'DELETE' });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'asset_in_use');
    assert.ok([running.id, queued.id].includes(refused.body.error.details.job_id));
    await call(running.urls.cancel, { method: 'POST' });
    await until(emu(), running.id, (j) => TERMINAL.includes(j.status));
    assert.equal(
      (await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { method: 'DELETE' })).body.error.code,
      'asset_in_use',
      'the queued one still uses it',
    );
    await call(queued.urls.cancel, { method: 'POST' });
    await until(emu(), queued.id, (j) => TERMINAL.includes(j.status));
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { method: 'DELETE' })).status, 204);
  });
});

describe('emulator assets: ownership per API key (each --token is its own owner)', () => {
  const dataDir = tmpDir();
  const emu = useEmulator({ dataDir, tokens: ['tok-A', 'tok-B'] });
  const A = { authorization: 'Bearer tok-A' };
  const B = { authorization: 'Bearer tok-B' };
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('another owner: the record, its content and its DELETE are 404; HEAD by-hash and from-hash are 404 for a blob it never uploaded', async () => {
    const bytes = randomBytes(4000);
    const up = (await postMultipart(emu(), fileParts(bytes, 'a.bin'), A)).body;
    for (const url of [`${emu().baseUrl}/api/v2/assets/${up.id}`, `${emu().baseUrl}/api/v2/assets/${up.id}/content`]) {
      assert.equal((await call(url, { headers: B })).status, 404, url);
    }
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { method: 'DELETE', headers: B })).status, 404);
    assert.equal((await byHash(emu(), up.hash, B)).status, 404, "nothing reveals another owner's blob");
    const mint = await fromHash(emu(), { hash: up.hash }, B);
    assert.equal(mint.status, 404);
    assert.equal(mint.body.error.code, 'blob_not_found');
    assert.equal((await byHash(emu(), up.hash, A)).status, 200);
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { headers: A })).status, 200);
    assert.equal((await postMultipart(emu(), fileParts(bytes), {})).status, 401, 'uploads need a token too');
  });

  it('the same bytes uploaded by another owner: 201 created_new true for it (nothing revealed), yet one blob on disk; then it may mint', async () => {
    const bytes = randomBytes(4000);
    const a = (await postMultipart(emu(), fileParts(bytes, 'a.bin'), A)).body;
    const b = await postMultipart(emu(), fileParts(bytes, 'b.bin'), B);
    assert.equal(b.status, 201);
    assert.equal(b.body.created_new, true);
    assert.equal(filesIn(dataDir, 'blobs').filter((f) => f === a.hash.slice(7)).length, 1);
    assert.equal((await byHash(emu(), a.hash, B)).status, 200);
    assert.equal((await fromHash(emu(), { hash: a.hash, file_path: 'c.bin' }, B)).status, 201);
  });

  it("LoadImage of another owner's asset, or of an unknown one: 422 missing_asset naming node 1, field image", async () => {
    const up = (await postMultipart(emu(), fileParts(solidPng(2, 2, [255, 0, 0]), 'red.png', [], 'image/png'), A)).body;
    for (const id of [up.id, randomUUID()]) {
      const res = await submit(emu(), loadInvertSave(id), B);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.error.code, 'missing_asset');
      assert.match(res.body.error.details.node_errors['1'][0].reason, /does not exist or is not yours/);
      assert.equal(res.body.error.details.node_errors['1'][0].field, 'image');
    }
    assert.equal((await submit(emu(), loadInvertSave(up.id), A)).status, 201);
  });
});

describe('emulator assets: LoadImage reads a core/ASSET reference', () => {
  const emu = useEmulator();

  it('upload a red 8×8 PNG; LoadImage → ImageInvert → SaveImage gives an 8×8 cyan PNG', async () => {
    const up = (
      await uploadForm(emu(), solidPng(8, 8, [255, 0, 0]), { content_type: 'image/png', file_path: 'red.png' })
    ).body;
    const created = await submit(emu(), loadInvertSave(up.id));
    assert.equal(created.status, 201, created.text);
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.outputs.length, 1);
    const bytes = Buffer.from(await (await fetch(done.outputs[0].url)).arrayBuffer());
    assertSolid(bytes, 8, 8, [0, 255, 255]);
    assert.equal(done.outputs[0].hash, await hashBytes(bytes));
  });

  it('through the client: assetReference of an uploaded file as the LoadImage input', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'green.png');
    fs.writeFileSync(file, solidPng(3, 5, [0, 255, 0]));
    const client = new V2Client({ baseUrl: emu().baseUrl });
    try {
      const { asset } = await client.uploadFile(file);
      const workflow = loadInvertSave('placeholder');
      workflow['1'].inputs.image = assetReference(asset);
      const result = await client.run(workflow, { outputDir: dir });
      assert.equal(result.final.job.status, 'succeeded');
      assertSolid(fs.readFileSync(result.files[0].path), 3, 5, [255, 0, 255]);
    } finally {
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an asset that is not a PNG: the job fails with node_execution_error on LoadImage', async () => {
    const up = (
      await uploadForm(emu(), Buffer.from('not an image'), { content_type: 'text/plain', file_path: 'a.txt' })
    ).body;
    const created = await submit(emu(), loadInvertSave(up.id));
    assert.equal(created.status, 201);
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, 'node_execution_error');
    assert.equal(done.error.node_id, '1');
    assert.equal(done.error.class_type, 'LoadImage');
    assert.match(done.error.message, /PNG/);
  });

  it("a link into LoadImage's image, or a malformed reference, is refused before the job is accepted", async () => {
    const linked = loadInvertSave(randomUUID());
    linked['1'].inputs.image = ['2', 0];
    assert.equal((await submit(emu(), linked)).status, 422);
    const malformed = loadInvertSave(randomUUID());
    malformed['1'].inputs.image = { __type: 'core/ASSET', info: {} };
    assert.equal((await submit(emu(), malformed)).body.error.code, 'missing_asset');
  });
});
