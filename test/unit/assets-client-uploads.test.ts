/**
 * The assets client's uploads and deletes (Job and Asset API v2: Asset, design rule 3): uploadFile deduplicates by
 * blake3 (HEAD by-hash, then from-hash, falling back to an upload on blob_not_found; 409 hash_mismatch), against a
 * recording server; and delete against the emulator (404 unknown, 409 asset_in_use).
 */
import * as assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiError, NotFoundError, isTerminalStatus } from '../../src/core';
import { AssetInUseError } from '../../src/core/v2/errors';
import { V2Client } from '../../src/core/v2/client';
import { assetReference, hashBytes, hashFile } from '../../src/core/util';
import { type JobSnapshot } from '../../src/core/v2/jobs';
import { startEmulator, type Emulator } from '../../src/emulator';
import { Call, assetRecord, multipartParts, routes, sendJson, startApi, tmpDir } from './assets-client.fixtures';
import { errorEnvelope } from './builders';
import { UUID, solidPng } from './harness';
import { type TestServer } from './httpServer';

describe('assets client: uploadFile (dedup by blake3, blob_not_found fallback, 409 hash_mismatch)', () => {
  let dir: string;
  let api: { server: TestServer; calls: Call[] } | undefined;
  let client: V2Client | undefined;
  beforeEach(() => {
    dir = tmpDir();
  });
  afterEach(async () => {
    await client?.close();
    await api?.server.close();
    client = undefined;
    api = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('from-hash answering 404 blob_not_found after HEAD by-hash 200: falls back to a full multipart upload with expected_hash and an Idempotency-Key; not a dedup hit', async () => {
    const file = path.join(dir, 'data.bin');
    const content = randomBytes(30_000);
    fs.writeFileSync(file, content);
    const hash = await hashFile(file);
    api = await startApi((call, res) => {
      if (call.method === 'HEAD' && call.path.startsWith('/api/v2/assets/by-hash/')) {
        res.writeHead(200).end();
      } else if (call.method === 'POST' && call.path === '/api/v2/assets/from-hash') {
        sendJson(res, 404, errorEnvelope('blob_not_found', 'the blob went away'));
      } else if (call.method === 'POST' && call.path === '/api/v2/assets') {
        sendJson(res, 201, assetRecord(api!.server.origin, hash, content.length, 'data.bin', true));
      } else {
        sendJson(res, 404, errorEnvelope('not_found'));
      }
    });
    client = new V2Client({ baseUrl: api.server.origin });
    const result = await client.uploadFile(file);

    const { calls } = api;
    assert.deepEqual(routes(calls), [
      'HEAD /api/v2/assets/by-hash/{hash}',
      'POST /api/v2/assets/from-hash',
      'POST /api/v2/assets',
    ]);
    assert.equal(decodeURIComponent(calls[0].path.slice('/api/v2/assets/by-hash/'.length)), hash);
    assert.equal(JSON.parse(calls[1].body.toString('utf8')).hash, hash);
    const upload = calls[2];
    assert.match(String(upload.headers['idempotency-key']), UUID);
    const parts = await multipartParts(upload);
    assert.deepEqual(
      parts.map((p) => p.name),
      ['content_type', 'file_path', 'expected_hash', 'file'],
      'metadata parts, expected_hash among them, before the file part',
    );
    assert.equal(parts.find((p) => p.name === 'expected_hash')!.value.toString('utf8'), hash);
    assert.deepEqual(parts.find((p) => p.name === 'file')!.value, content, 'the whole file was sent');
    assert.equal(result.dedup, false);
    assert.equal(result.status, 201);
    assert.equal(result.hash, hash);
    assert.equal(result.asset.hash, hash);
  });

  it('409 hash_mismatch on the first upload (the file changed meanwhile): re-hashes and uploads again with the new hash and a fresh Idempotency-Key', async () => {
    const file = path.join(dir, 'changing.bin');
    const before = randomBytes(20_000);
    const after = randomBytes(25_000);
    fs.writeFileSync(file, before);
    const oldHash = await hashFile(file);
    const newHash = await hashBytes(after);
    let uploads = 0;
    api = await startApi((call, res) => {
      if (call.method === 'HEAD') {
        res.writeHead(404).end();
      } else if (call.method === 'POST' && call.path === '/api/v2/assets' && ++uploads === 1) {
        fs.writeFileSync(file, after); // the file changed while it was being uploaded
        sendJson(
          res,
          409,
          errorEnvelope('hash_mismatch', 'the bytes do not hash to expected_hash', { actual_hash: newHash }),
        );
      } else if (call.method === 'POST' && call.path === '/api/v2/assets') {
        sendJson(res, 201, assetRecord(api!.server.origin, newHash, after.length, 'changing.bin', true));
      } else {
        sendJson(res, 404, errorEnvelope('not_found'));
      }
    });
    client = new V2Client({ baseUrl: api.server.origin });
    const result = await client.uploadFile(file);

    const { calls } = api;
    assert.deepEqual(routes(calls), [
      'HEAD /api/v2/assets/by-hash/{hash}',
      'POST /api/v2/assets',
      'HEAD /api/v2/assets/by-hash/{hash}',
      'POST /api/v2/assets',
    ]);
    assert.equal(
      decodeURIComponent(calls[2].path.slice('/api/v2/assets/by-hash/'.length)),
      newHash,
      'the second HEAD asks for the new hash',
    );
    const [first, second] = await Promise.all([calls[1], calls[3]].map((c) => multipartParts(c)));
    assert.equal(first.find((p) => p.name === 'expected_hash')!.value.toString('utf8'), oldHash);
    assert.equal(second.find((p) => p.name === 'expected_hash')!.value.toString('utf8'), newHash, 're-hashed');
    assert.deepEqual(second.find((p) => p.name === 'file')!.value, after);
    const keys = [calls[1], calls[3]].map((c) => String(c.headers['idempotency-key']));
    for (const key of keys) assert.match(key, UUID);
    assert.notEqual(
      keys[0],
      keys[1],
      'a new request (another body) under a new key; the refused one released its key anyway',
    );
    assert.equal(result.hash, newHash);
    assert.equal(result.status, 201);
    assert.equal(result.dedup, false);
  });

  it('a server that always answers 409 hash_mismatch: HashMismatchError after two uploads, no more', async () => {
    const file = path.join(dir, 'x.bin');
    fs.writeFileSync(file, randomBytes(5_000));
    api = await startApi((call, res) => {
      if (call.method === 'HEAD') res.writeHead(404).end();
      else sendJson(res, 409, errorEnvelope('hash_mismatch', 'the bytes do not hash to expected_hash'));
    });
    client = new V2Client({ baseUrl: api.server.origin });
    await assert.rejects(
      client.uploadFile(file),
      (e: unknown) => ApiError.hasCode(e, 'hash_mismatch') && e.status === 409,
    );
    const uploads = api.calls.filter((c) => c.method === 'POST' && c.path === '/api/v2/assets');
    assert.equal(uploads.length, 2, 'one upload and one retry');
    assert.equal(api.calls.length, 4, 'HEAD, POST, HEAD, POST and nothing after');
  });
});

/** Re-reads a job until `predicate` holds (bounded; each step is a request, never a sleep). */
async function until(client: V2Client, job: JobSnapshot, predicate: (status: string) => boolean): Promise<JobSnapshot> {
  for (let i = 0; i < 5000; i++) {
    const now = await client.jobs.get(job);
    if (predicate(now.job.status)) return now;
  }
  throw new Error(`job ${job.job.id}: the condition never held`);
}

describe('assets client: delete against the emulator (404 unknown, 409 asset_in_use)', () => {
  let emu: Emulator;
  let client: V2Client;
  let dir: string;
  before(async () => {
    // Each node waits a minute (cancel interrupts it) and one job runs at a time: the first job stays running,
    // the second queued, for as long as the test needs.
    emu = await startEmulator({ port: 0, nodeDelayMs: 60_000, concurrency: 1 });
    client = new V2Client({ baseUrl: emu.baseUrl });
    dir = tmpDir();
  });
  after(async () => {
    await client.close();
    await emu.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('deleting an asset a running or queued job uses is AssetInUseError (409 asset_in_use); once both jobs ended it is deleted, and deleting it again is NotFoundError', async () => {
    const file = path.join(dir, 'red.png');
    fs.writeFileSync(file, solidPng(2, 2, [255, 0, 0]));
    const { asset } = await client.uploadFile(file);
    const workflow = {
      '1': { class_type: 'LoadImage', inputs: { image: assetReference(asset) } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'inverted' } },
    };
    const running = await client.jobs.submit(workflow);
    const queued = await client.jobs.submit(workflow);
    await until(client, running, (s) => s === 'running');
    assert.equal((await client.jobs.get(queued)).job.status, 'queued');
    const inUse = (e: unknown): boolean =>
      ApiError.hasCode(e, 'asset_in_use') &&
      e instanceof AssetInUseError &&
      e.status === 409 &&
      [running.job.id, queued.job.id].includes(String(e.details?.job_id));
    await assert.rejects(client.assets.delete(asset.id), inUse);

    await client.cancelJob(running);
    await until(client, running, isTerminalStatus);
    await assert.rejects(client.assets.delete(asset.id), inUse, 'the second job still uses it');
    await client.cancelJob(queued);
    await until(client, queued, isTerminalStatus);

    await client.assets.delete(asset.id);
    await assert.rejects(client.assets.get(asset.id), (e: unknown) => e instanceof NotFoundError && e.status === 404);
    await assert.rejects(
      client.assets.delete(asset.id),
      (e: unknown) => e instanceof NotFoundError && e.status === 404,
      'already deleted',
    );
  });

  it('deleting an unknown asset id is NotFoundError (404), never AssetInUseError', async () => {
    await assert.rejects(
      client.assets.delete(randomUUID()),
      (e: unknown) =>
        ApiError.is(e) && e instanceof NotFoundError && e.status === 404 && !ApiError.hasCode(e, 'asset_in_use'),
    );
  });
});
