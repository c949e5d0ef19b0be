/**
 * The emulator's assets against the contract, over real HTTP (Job and Asset API v2: Asset, design rule 3,
 * GET /api/v2/assets/{id}/content, HEAD /api/v2/assets/by-hash/{hash}, Authentication; the operations it leaves
 * not shown, from public sources): streamed multipart upload with metadata first, blake3 dedup, from-hash, HEAD
 * by-hash, get, delete, content with Range, signed-URL redirects to a second origin, LoadImage of a core/ASSET
 * reference; and the client core (upload with dedup, resumable download) against it. No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { V2Client } from '../../src/core/v2/client';
import { ConnectionError } from '../../src/core';
import { assetReference, hashBytes, hashFile } from '../../src/core/util';
import { partialPaths } from '../../src/core/http/download';
import { startEmulator, type Emulator } from '../../src/emulator';
import {
  BLAKE3,
  TERMINAL,
  UUID,
  assertSolid,
  call as fetchAnswer,
  solidPng,
  submit,
  until,
  useEmulator,
  type Answer,
  type Json,
} from './harness';
import { tempDir } from './tmp';

/** The shared `call`, but redirects are answered, not followed (the signed-URL tests read the 302 itself). */
function call(url: string, init: RequestInit = {}): Promise<Answer> {
  return fetchAnswer(url, { ...init, redirect: 'manual' });
}

/** One multipart part, for bodies with the parts in any order (also orders a conforming client would never send). */
interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body with exactly these parts in this order, encoded by the platform's FormData (undici). */
async function multipart(parts: Part[]): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  for (const p of parts) {
    if (typeof p.value === 'string' && p.filename === undefined) form.append(p.name, p.value);
    else form.append(p.name, new Blob([p.value], { type: p.type ?? '' }), p.filename);
  }
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

/** The metadata parts a conforming upload sends first. */
function metadata(filePath: string, contentType = 'application/octet-stream', extra: Part[] = []): Part[] {
  return [{ name: 'content_type', value: contentType }, { name: 'file_path', value: filePath }, ...extra];
}

function fileParts(
  bytes: Buffer,
  filePath = 'data.bin',
  extra: Part[] = [],
  contentType = 'application/octet-stream',
): Part[] {
  return [
    ...metadata(filePath, contentType, extra),
    { name: 'file', value: bytes, filename: filePath, type: contentType },
  ];
}

async function postMultipart(emu: Emulator, parts: Part[], headers: Record<string, string> = {}): Promise<Answer> {
  const { body, contentType } = await multipart(parts);
  return call(`${emu.baseUrl}/api/v2/assets`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body,
  });
}

/** Uploads with the platform's own FormData encoder (undici), metadata first, as a client does. */
function uploadForm(
  emu: Emulator,
  bytes: Buffer,
  fields: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  form.append(
    'file',
    new Blob([bytes], {
      type: typeof fields.content_type === 'string' ? fields.content_type : 'application/octet-stream',
    }),
    'file',
  );
  return call(`${emu.baseUrl}/api/v2/assets`, { method: 'POST', headers, body: form });
}

function fromHash(emu: Emulator, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/assets/from-hash`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function byHash(emu: Emulator, hash: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/assets/by-hash/${encodeURIComponent(hash)}`, { method: 'HEAD', headers });
}

/** LoadImage(asset) → ImageInvert → SaveImage. */
function loadInvertSave(assetId: string): Json {
  return {
    '1': {
      class_type: 'LoadImage',
      inputs: { image: { __type: 'core/ASSET', info: { id: assetId, file_path: 'red.png' } } },
    },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'loaded' } },
  };
}

function tmpDir(): string {
  return tempDir('cc-emu-assets-');
}

/** The files in `<dataDir>/<sub>`. */
function filesIn(dataDir: string, sub: 'blobs' | 'tmp'): string[] {
  return fs.readdirSync(path.join(dataDir, sub));
}

describe('emulator assets: upload (POST /api/v2/assets, multipart, metadata before the file)', () => {
  const dataDir = tmpDir();
  const emu = useEmulator({ dataDir });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('a streamed upload answers 201 created_new with the record: blake3 hash, size, type, file_path, tags, expires_at; the content gives the bytes back', async () => {
    const bytes = randomBytes(200_000);
    const res = await uploadForm(emu(), bytes, {
      content_type: 'application/x-test',
      file_path: 'dir/data.bin',
      tags: ['a', 'b'],
      expires_in: '3600',
    });
    assert.equal(res.status, 201, res.text);
    const asset = res.body;
    assert.match(asset.id, UUID);
    assert.equal(asset.hash, await hashBytes(bytes), 'the server-computed blake3 of the bytes');
    assert.equal(asset.size_bytes, bytes.length);
    assert.equal(asset.content_type, 'application/x-test');
    assert.equal(asset.file_path, 'dir/data.bin');
    assert.deepEqual(asset.tags, ['a', 'b'], 'repeated tags parts');
    assert.equal(asset.created_new, true);
    assert.equal(Date.parse(asset.expires_at) - Date.parse(asset.created_at), 3_600_000);
    assert.equal(asset.job_id, null);
    assert.equal(asset.url, `${emu().origin}/api/v2/assets/${asset.id}/content`);
    assert.deepEqual(
      emu().requests.at(-1)!.parts,
      ['content_type', 'file_path', 'tags', 'tags', 'expires_in', 'file'],
      'the part names in wire order',
    );
    const content = await fetch(asset.url);
    assert.equal(content.headers.get('content-type'), 'application/x-test');
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), bytes);
    const got = await call(`${emu().baseUrl}/api/v2/assets/${asset.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.hash, asset.hash);
    assert.ok(!('created_new' in got.body), 'created_new only on the answers of upload and from-hash');
  });

  it('blake3 dedup: the same bytes again answer 200 created_new false with a new asset id, and one blob is kept on disk', async () => {
    const bytes = randomBytes(50_000);
    const first = await postMultipart(emu(), fileParts(bytes, 'one.bin'));
    const second = await postMultipart(emu(), fileParts(bytes, 'two.bin'));
    assert.equal(first.status, 201);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.created_new, false);
    assert.notEqual(second.body.id, first.body.id, 'a record per upload, over one blob');
    assert.equal(second.body.hash, first.body.hash);
    assert.equal(second.body.file_path, 'two.bin');
    const hex = first.body.hash.slice('blake3:'.length);
    assert.equal(filesIn(dataDir, 'blobs').filter((f) => f === hex).length, 1);
    assert.deepEqual(filesIn(dataDir, 'tmp'), [], 'no temporary file is left');
  });

  it('the client uploads with dedup: the second uploadFile is a hit (HEAD by-hash 200, from-hash 200) and the emulator saw exactly one multipart body, metadata parts before the file part', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'photo.png');
    fs.writeFileSync(file, solidPng(4, 4, [1, 2, 3]));
    const client = new V2Client({ baseUrl: emu().baseUrl });
    try {
      const before = emu().requests.length;
      const first = await client.uploadFile(file);
      const second = await client.uploadFile(file);
      const seen = emu().requests.slice(before);
      const uploads = seen.filter((r) => r.method === 'POST' && r.path === '/api/v2/assets');
      assert.equal(uploads.length, 1, 'one multipart body');
      assert.deepEqual(uploads[0].parts, ['content_type', 'file_path', 'expected_hash', 'file']);
      assert.equal(first.status, 201);
      assert.equal(first.dedup, false);
      assert.equal(first.asset.hash, first.hash);
      assert.equal(first.asset.content_type, 'image/png');
      assert.equal(second.dedup, true);
      assert.equal(second.status, 200);
      assert.equal(second.asset.id, first.asset.id, 'from-hash answers the asset already there');
      assert.deepEqual(
        seen.map((r) => `${r.method} ${r.path.split('/').slice(0, 5).join('/')}`),
        [
          'HEAD /api/v2/assets/by-hash',
          'POST /api/v2/assets',
          'HEAD /api/v2/assets/by-hash',
          'POST /api/v2/assets/from-hash',
        ],
      );
    } finally {
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file part before the metadata is 422 invalid_upload; so are a part after the file, two files, no file, a malformed body and a body that is not multipart; nothing is stored', async () => {
    const blobsBefore = filesIn(dataDir, 'blobs').length;
    const bytes = randomBytes(70_000);
    const file: Part = { name: 'file', value: bytes, filename: 'x.bin', type: 'application/octet-stream' };
    const cases: [string, Part[]][] = [
      ['file first', [file, ...metadata('x.bin')]],
      [
        'file before file_path',
        [{ name: 'content_type', value: 'image/png' }, file, { name: 'file_path', value: 'x.bin' }],
      ],
      ['a part after the file', [...metadata('x.bin'), file, { name: 'tags', value: 'late' }]],
      ['two files', [...metadata('x.bin'), file, file]],
      ['no file', metadata('x.bin')],
      [
        'repeated content_type',
        [...metadata('x.bin', 'image/png', [{ name: 'content_type', value: 'image/jpeg' }]), file],
      ],
      ['bad expected_hash', fileParts(bytes, 'x.bin', [{ name: 'expected_hash', value: 'sha256:00' }])],
      ['bad expires_in', fileParts(bytes, 'x.bin', [{ name: 'expires_in', value: 'soon' }])],
    ];
    for (const [what, parts] of cases) {
      const res = await postMultipart(emu(), parts);
      assert.equal(res.status, 422, `${what}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_upload', what);
    }
    const first = await postMultipart(emu(), [file, ...metadata('x.bin')]);
    assert.match(first.body.error.message, /before the metadata/);

    const { body } = await multipart(fileParts(bytes));
    const truncated = await call(`${emu().baseUrl}/api/v2/assets`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=other-boundary' },
      body,
    });
    assert.equal(truncated.body.error.code, 'invalid_upload', 'a boundary that never appears');
    const plain = await call(`${emu().baseUrl}/api/v2/assets`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    assert.equal(plain.body.error.code, 'invalid_upload');
    assert.match(plain.body.error.message, /multipart\/form-data/);
    assert.equal(filesIn(dataDir, 'blobs').length, blobsBefore, 'no blob stored');
    assert.deepEqual(filesIn(dataDir, 'tmp'), [], 'no temporary file left');
  });

  it('expected_hash that is not the hash of the bytes: 409 hash_mismatch and nothing stored; the right hash: 201', async () => {
    const bytes = randomBytes(10_000);
    const wrong = await hashBytes(Buffer.from('other bytes'));
    const refused = await postMultipart(emu(), fileParts(bytes, 'h.bin', [{ name: 'expected_hash', value: wrong }]));
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'hash_mismatch');
    assert.equal(refused.body.error.details.actual_hash, await hashBytes(bytes));
    assert.ok(!filesIn(dataDir, 'blobs').includes((await hashBytes(bytes)).slice(7)));
    const right = await postMultipart(
      emu(),
      fileParts(bytes, 'h.bin', [
        { name: 'expected_hash', value: (await hashBytes(bytes)).toUpperCase().replace('BLAKE3', 'blake3') },
      ]),
    );
    assert.equal(right.status, 201, right.text);
  });

  it('Idempotency-Key: a second upload with the key is 422 idempotency_key_reuse; a refused upload releases its key', async () => {
    const key = randomUUID();
    const bytes = randomBytes(1000);
    const refused = await postMultipart(emu(), [{ name: 'file', value: bytes, filename: 'k.bin' }], {
      'idempotency-key': key,
    });
    assert.equal(refused.body.error.code, 'invalid_upload');
    const first = await postMultipart(emu(), fileParts(bytes, 'k.bin'), { 'idempotency-key': key });
    assert.equal(first.status, 201, 'the refusal released the key');
    const again = await postMultipart(emu(), fileParts(bytes, 'k.bin'), { 'idempotency-key': key });
    assert.equal(again.status, 422);
    assert.equal(again.body.error.code, 'idempotency_key_reuse');
  });

  it('parts the platform FormData encodes (quoted names, a file name with a quote) are read', async () => {
    const res = await uploadForm(emu(), Buffer.from('x'), { content_type: 'text/plain', file_path: 'say "hi".txt' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.file_path, 'say "hi".txt');
  });
});

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

describe('emulator assets: content with Range, and resumable downloads (cutAfterBytes)', () => {
  const emu = useEmulator();
  let bytes: Buffer;
  let asset: Json;
  before(async () => {
    bytes = randomBytes(1_000_000);
    asset = (await postMultipart(emu(), fileParts(bytes, 'big.bin'))).body;
  });
  afterEach(() => emu().setFaults({ rules: [] }));

  it('200 whole, 206 for bytes=a-b / a- / -n with exactly those bytes, 416 past the end', async () => {
    const url = `${emu().baseUrl}/api/v2/assets/${asset.id}/content`;
    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes);
    for (const [range, start, end] of [
      ['bytes=10-19', 10, 19],
      ['bytes=999990-', 999_990, 999_999],
      ['bytes=-5', 999_995, 999_999],
    ] as const) {
      const part = await fetch(url, { headers: { range } });
      assert.equal(part.status, 206, range);
      assert.equal(part.headers.get('content-range'), `bytes ${start}-${end}/${bytes.length}`);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(start, end + 1));
    }
    const past = await call(url, { headers: { range: `bytes=${bytes.length}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${bytes.length}`);
  });

  it('client.downloadAsset cut three times resumes each time from what it kept, and ends byte-identical (blake3 equal)', async () => {
    emu().setFaults({ rules: [{ on: 'content', kind: 'cutAfterBytes', bytes: 250_000, times: 3 }] });
    const dir = tmpDir();
    const target = path.join(dir, 'big.bin');
    const client = new V2Client({ baseUrl: emu().baseUrl });
    try {
      const before = emu().requests.length;
      // The client keeps what reached its file before the break (not always all that arrived, and its file may
      // still grow just after the rejection): each attempt asks for the rest from what it kept.
      for (let attempt = 1; attempt <= 3; attempt++) {
        await assert.rejects(
          client.downloadAsset(asset.id, target),
          (e: unknown) => ConnectionError.is(e),
          `attempt ${attempt} is cut`,
        );
      }
      const done = await client.downloadAsset(asset.id, target);
      assert.equal(await hashFile(target), asset.hash);
      assert.deepEqual(fs.readFileSync(target), bytes);
      const ranges = emu()
        .requests.slice(before)
        .filter((r) => r.path.endsWith('/content'))
        .map((r) => r.headers.range);
      assert.equal(ranges.length, 4);
      assert.equal(ranges[0], undefined, 'the first attempt starts from 0');
      const offsets = ranges.map((r) => (r === undefined ? 0 : Number(/^bytes=(\d+)-$/.exec(String(r))![1])));
      for (let i = 1; i < offsets.length; i++) {
        assert.ok(
          offsets[i] >= offsets[i - 1] && offsets[i] <= offsets[i - 1] + 250_000,
          `resume ${i} from ${offsets[i]} (after ${offsets[i - 1]})`,
        );
      }
      assert.ok(offsets[3] > 0, 'the last attempt resumed');
      assert.equal(done.resumedFrom, offsets[3]);
      assert.equal(done.transferredBytes, bytes.length - offsets[3]);
      assert.equal(emu().faultLog.filter((f) => f.kind === 'cutAfterBytes').length, 3);
      assert.deepEqual(emu().faultState().counters, [{ seen: 4, fired: 3 }], 'exhausted after 3');
    } finally {
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a cut body breaks off after exactly N bytes; a cut of 0 sends the headers only', async () => {
    const url = `${emu().baseUrl}/api/v2/assets/${asset.id}/content`;
    for (const n of [12_345, 0]) {
      emu().setFaults({ rules: [{ on: 'content', kind: 'cutAfterBytes', bytes: n, times: 1 }] });
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-length'), String(bytes.length), 'the headers announce the whole');
      let received = 0;
      await assert.rejects(async () => {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) received += chunk.length;
      });
      assert.equal(received, n);
    }
  });
});

describe('emulator assets: signed URLs on a second origin (signedUrls: true)', () => {
  let clock = Date.now();
  const emu = useEmulator({ tokens: ['tok-A'], signedUrls: true, signedUrlTtlMs: 60_000, now: () => clock });
  const A = { authorization: 'Bearer tok-A' };
  let bytes: Buffer;
  let asset: Json;
  before(async () => {
    bytes = randomBytes(400_000);
    asset = (await postMultipart(emu(), fileParts(bytes, 's.bin'), A)).body;
  });
  afterEach(() => emu().setFaults({ rules: [] }));

  it("content answers 302 to a fresh signed URL on another origin; the record's url is one, expiring with url_expires_at", async () => {
    assert.ok(emu().signedOrigin && emu().signedOrigin !== emu().origin);
    const res = await call(`${emu().baseUrl}/api/v2/assets/${asset.id}/content`, { headers: A });
    assert.equal(res.status, 302);
    const location = new URL(res.headers.get('location')!);
    assert.equal(location.origin, emu().signedOrigin);
    assert.match(location.pathname, /^\/blob\/[\w-]+$/);
    assert.ok(location.searchParams.get('sig'));
    const record = (await call(`${emu().baseUrl}/api/v2/assets/${asset.id}`, { headers: A })).body;
    assert.equal(new URL(record.url).origin, emu().signedOrigin);
    assert.equal(Date.parse(record.url_expires_at), clock + 60_000);
  });

  it('the client follows the 302 without credentials: no credential reaches the second origin, and the bytes are identical', async () => {
    const dir = tmpDir();
    const target = path.join(dir, 's.bin');
    const client = new V2Client({ baseUrl: emu().baseUrl, apiKey: 'tok-A' });
    try {
      const before = emu().signedRequests.length;
      const done = await client.downloadAsset(asset.id, target);
      assert.equal(done.bytes, bytes.length);
      assert.deepEqual(fs.readFileSync(target), bytes);
      const signed = emu().signedRequests.slice(before);
      assert.equal(signed.length, 1);
      for (const r of signed)
        for (const h of ['authorization', 'x-api-key', 'cookie']) assert.equal(r.headers[h], undefined, h);
    } finally {
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the second origin refuses (403) any request carrying Authorization, X-API-Key or Cookie, a tampered signature and an expired URL; it serves Range', async () => {
    const url = (await call(`${emu().baseUrl}/api/v2/assets/${asset.id}`, { headers: A })).body.url as string;
    const credentials: Record<string, string>[] = [A, { 'x-api-key': 'tok-A' }, { cookie: 'session=1' }];
    for (const headers of credentials) {
      const res = await call(url, { headers });
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.body.error.code, 'forbidden');
    }
    const tampered = new URL(url);
    // One character changed for certain (a fixed suffix could equal the real one).
    const sig = tampered.searchParams.get('sig')!;
    tampered.searchParams.set('sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`);
    assert.equal((await call(tampered.href)).status, 403);
    const part = await fetch(url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(100, 200));
    clock += 60_000;
    const expired = await call(url);
    assert.equal(expired.status, 403);
    assert.match(expired.body.error.message, /expired/);
  });

  it('a download cut on the signed origin resumes through a fresh redirect to a byte-identical file', async () => {
    emu().setFaults({ rules: [{ on: 'content', kind: 'cutAfterBytes', bytes: 200_000, times: 1 }] });
    const dir = tmpDir();
    const target = path.join(dir, 's.bin');
    const client = new V2Client({ baseUrl: emu().baseUrl, apiKey: 'tok-A' });
    try {
      const before = emu().signedRequests.length;
      await assert.rejects(client.downloadAsset(asset.id, target), (e: unknown) => ConnectionError.is(e));
      assert.ok(fs.existsSync(partialPaths(target, asset.id).part), 'a partial file is kept');
      const done = await client.downloadAsset(asset.id, target);
      assert.equal(await hashFile(target), asset.hash);
      const signed = emu().signedRequests.slice(before);
      assert.equal(signed.length, 2);
      assert.equal(signed[0].headers.range, undefined);
      assert.equal(signed[1].headers.range ?? 'bytes=0-', `bytes=${done.resumedFrom}-`, 'the second asks for the rest');
      assert.ok(signed.every((r) => r.headers.authorization === undefined));
      assert.equal(
        emu().faultLog.at(-1)!.path.split('?')[0].startsWith('/blob/'),
        true,
        'the cut was on the signed origin',
      );
    } finally {
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a deleted asset's signed URL answers 404", async () => {
    const up = (await postMultipart(emu(), fileParts(randomBytes(10), 'gone.bin'), A)).body;
    const url = (await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { headers: A })).body.url as string;
    assert.equal((await call(`${emu().baseUrl}/api/v2/assets/${up.id}`, { method: 'DELETE', headers: A })).status, 204);
    assert.equal((await call(url)).status, 404);
  });
});

describe('emulator assets: uploads and downloads stream (a big file through an emulator in its own process)', function () {
  this.timeout(120_000);
  const SIZE = 256 * 1024 * 1024;

  it(`the emulator's peak memory grows by far less than a ${SIZE / 1024 / 1024} MiB file it receives and sends`, async () => {
    const emulatorModule = path.resolve(__dirname, '../../src/emulator');
    const script = `
      const { startEmulator } = require(${JSON.stringify(emulatorModule)});
      startEmulator({ port: 0 }).then((emu) => {
        const report = () => process.stdout.write(JSON.stringify({ baseUrl: emu.baseUrl, peak: process.resourceUsage().maxRSS * 1024 }) + '\\n');
        report();
        require('node:readline').createInterface({ input: process.stdin }).on('line', report).on('close', () => emu.close().then(() => process.exit(0)));
      });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async (): Promise<{ baseUrl: string; peak: number }> =>
      JSON.parse((await lines.next()).value as string);
    const dir = tmpDir();
    try {
      const start = await next();
      const file = path.join(dir, 'big.bin');
      const block = randomBytes(1024 * 1024);
      const out = fs.openSync(file, 'w');
      for (let i = 0; i < SIZE / block.length; i++) {
        block.writeUInt32LE(i, 0); // every MiB differs
        fs.writeSync(out, block);
      }
      fs.closeSync(out);
      const client = new V2Client({ baseUrl: start.baseUrl });
      try {
        const { asset } = await client.uploadFile(file);
        assert.equal(asset.size_bytes, SIZE);
        const copy = path.join(dir, 'copy.bin');
        await client.downloadAsset(asset.id, copy); // verified against the record's hash
        assert.equal(fs.statSync(copy).size, SIZE);
      } finally {
        await client.close();
      }
      child.stdin!.write('report\n');
      const after = await next();
      const growth = after.peak - start.peak;
      // Holding the file would grow it by the file size at least; streaming costs tens of MiB of buffers (~42 here).
      assert.ok(
        growth < SIZE / 2,
        `peak RSS grew by ${Math.round(growth / 1024 / 1024)} MiB for a ${SIZE / 1024 / 1024} MiB file`,
      );
    } finally {
      child.stdin!.end();
      await new Promise((resolve) => child.once('exit', resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
