/**
 * The emulator's asset upload against the contract, over real HTTP (Job and Asset API v2: Asset, design rule 3; the
 * operations it leaves not shown, from public sources): streamed multipart POST /api/v2/assets with metadata before
 * the file, blake3 dedup, and nothing left behind by a refused upload. No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { V2Client } from '../../src/core/v2/client';
import { hashBytes } from '../../src/core/util';
import {
  Part,
  call,
  fileParts,
  filesIn,
  metadata,
  multipart,
  postMultipart,
  tmpDir,
  uploadForm,
} from './emulator-assets.fixtures';
import { UUID, solidPng, useEmulator } from './harness';

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
