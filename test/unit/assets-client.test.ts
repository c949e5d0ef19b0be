/**
 * The client core's asset rules, against real HTTP servers on loopback (test/unit/httpServer.ts, no HTTP mocking)
 * and the in-process emulator. Downloads (core/download.ts) prove Job and Asset API v2,
 * GET /api/v2/assets/{id}/content (Range, supported for resumable downloads; public sources: 200 whole,
 * 206 partial, 416 not satisfiable): a server that ignores Range or answers 416 restarts the download cleanly, a
 * body that breaks off leaves only the hidden `.part` and is resumed with `Range: bytes=N-`, a `.part` of other
 * content is never appended to, and bytes that do not hash to the expected blake3 (design rule 3, "Errors"
 * `hash_mismatch`) are discarded. Uploads (V2Client.uploadFile) prove the Job and Asset API v2's upload with dedup
 * ("HEAD /api/v2/assets/by-hash/{hash}" → from-hash; a 404 `blob_not_found` from from-hash falls back to the
 * multipart upload with `expected_hash` and an Idempotency-Key) and 409 `hash_mismatch` (re-hash, one more
 * attempt with a fresh key, then HashMismatchError). Deletes prove DELETE (not shown in the document; public sources:
 * 404 when unknown or already deleted, 409 `asset_in_use` while a queued or running job uses the asset). No sleeps as
 * synchronisation: every wait is on a request or a promise.
 */
import * as assert from 'node:assert/strict';
import busboy from 'busboy';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { ApiError, ComfyError, ConnectionError, NotFoundError, isTerminalStatus } from '../../src/core';
import { AssetInUseError } from '../../src/core/v2/errors';
import { V2Client } from '../../src/core/v2/client';
import { Transport } from '../../src/core/http';
import { assetReference, hashBytes, hashFile } from '../../src/core/util';
import type { JobSnapshot } from '../../src/core/v2/jobs';
import { downloadToFile, partialPaths } from '../../src/core/http/download';
import { startEmulator, type Emulator } from '../../src/emulator';
import { errorEnvelope } from './builders';
import { startServer, type TestServer } from './httpServer';
import { UUID, solidPng } from './harness';
import { tempDir } from './tmp';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function tmpDir(): string {
  return tempDir('cc-assets-client-');
}

/** The start of a `Range: bytes=<start>-` header; undefined without one. */
function rangeStart(req: http.IncomingMessage): number | undefined {
  const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  return match ? Number(match[1]) : undefined;
}

/** 200 with the whole content (whatever Range said). */
function sendWhole(res: http.ServerResponse, bytes: Buffer): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': bytes.length,
    'accept-ranges': 'bytes',
  });
  res.end(bytes);
}

/** 206 with the content from `start` to the end. */
function sendFrom(res: http.ServerResponse, bytes: Buffer, start: number): void {
  res.writeHead(206, {
    'content-type': 'application/octet-stream',
    'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
    'content-length': bytes.length - start,
  });
  res.end(bytes.subarray(start));
}

/** 200 announcing the whole content (Content-Length), then the socket is destroyed once `n` bytes are sent. */
function sendCut(res: http.ServerResponse, bytes: Buffer, n: number): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
  res.write(bytes.subarray(0, n), () => res.socket?.destroy());
}

/** Leaves a partial download of `key` beside `target`, as an interrupted download does (`.part` + `.part.json`). */
function leavePart(target: string, bytes: Buffer, key: string): void {
  const { part, note } = partialPaths(target, key);
  fs.writeFileSync(part, bytes);
  fs.writeFileSync(note, JSON.stringify({ key }));
}

describe('assets client: resumable downloads (downloadToFile: .part, Range, 200/206/416, hash check)', () => {
  let server: TestServer;
  let route: Handler = (_req, res) => {
    res.statusCode = 500;
    res.end();
  };
  let transport: Transport;
  let dir: string;
  const bytes = randomBytes(100_000);

  before(async () => {
    server = await startServer((req, res) => route(req, res));
  });
  after(() => server.close());
  beforeEach(() => {
    server.seen.length = 0;
    transport = new Transport({ baseUrl: server.origin });
    dir = tmpDir();
  });
  afterEach(async () => {
    await transport.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a server that ignores Range (200 with the whole body) restarts the download: the file is the content, not the part with the whole appended', async () => {
    route = (_req, res) => sendWhole(res, bytes); // ignores Range
    const target = path.join(dir, 'a.bin');
    leavePart(target, bytes.subarray(0, 30_000), 'asset-1'); // a true prefix of the same content
    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-1' });
    assert.equal(server.seen.length, 1);
    assert.equal(server.seen[0].headers.range, 'bytes=30000-', 'the client did ask to resume');
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.bytes, bytes.length);
    assert.equal(done.resumedFrom, 0, 'the 200 body was taken as the whole content');
    assert.equal(done.transferredBytes, bytes.length);
    assert.deepEqual(fs.readdirSync(dir), ['a.bin'], 'no .part or .part.json left');
  });

  it('416 to the Range request: the part is discarded and the content requested again without Range', async () => {
    route = (req, res) => {
      if (req.headers.range !== undefined) {
        res.writeHead(416, { 'content-range': `bytes */${bytes.length}` });
        res.end();
        return;
      }
      sendWhole(res, bytes);
    };
    const target = path.join(dir, 'b.bin');
    // A part the server cannot continue: as long as the content and not a prefix of it (e.g. the content changed).
    leavePart(target, randomBytes(bytes.length), 'asset-2');
    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-2' });
    assert.deepEqual(
      server.seen.map((s) => s.headers.range),
      [`bytes=${bytes.length}-`, undefined],
      'first the Range request, then one without Range',
    );
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.resumedFrom, 0);
    assert.equal(done.transferredBytes, bytes.length);
    assert.deepEqual(fs.readdirSync(dir), ['b.bin']);
  });

  it('a body cut after N bytes: ConnectionError, no target file, the .part kept; the next call asks Range: bytes=N-, gets 206 and ends byte-identical', async () => {
    const N = 4096;
    route = (req, res) => {
      const start = rangeStart(req);
      if (start === undefined) sendCut(res, bytes, N);
      else sendFrom(res, bytes, start);
    };
    const target = path.join(dir, 'c.bin');
    const { part, note } = partialPaths(target, 'asset-3');
    await assert.rejects(
      downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-3' }),
      (e: unknown) => ConnectionError.is(e),
    );
    assert.ok(!fs.existsSync(target), 'no partial file under the target name');
    assert.ok(fs.existsSync(note), 'the note naming the content is kept');
    assert.deepEqual(
      fs.readFileSync(part),
      bytes.subarray(0, N),
      'the .part holds the N bytes that arrived, written before the call returned',
    );

    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-3' });
    assert.deepEqual(
      server.seen.map((s) => s.headers.range),
      [undefined, `bytes=${N}-`],
    );
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.bytes, bytes.length);
    assert.equal(done.resumedFrom, N);
    assert.equal(done.transferredBytes, bytes.length - N);
    assert.deepEqual(fs.readdirSync(dir), ['c.bin'], 'the .part and its note are gone');
  });

  it('expectedHash that the bytes do not hash to: error hash_mismatch, no target, the .part and .part.json removed', async () => {
    route = (_req, res) => sendWhole(res, bytes);
    const target = path.join(dir, 'd.bin');
    const wrong = await hashBytes(Buffer.from('other content'));
    await assert.rejects(
      downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-4', expectedHash: wrong }),
      (e: unknown) => ComfyError.is(e) && e.code === 'hash_mismatch',
    );
    const { part, note } = partialPaths(target, 'asset-4');
    assert.ok(!fs.existsSync(target));
    assert.ok(!fs.existsSync(part));
    assert.ok(!fs.existsSync(note));
    assert.deepEqual(fs.readdirSync(dir), []);
    // The right hash is accepted (the check compares, it does not just refuse).
    const done = await downloadToFile(transport, transport.url('/content'), target, {
      resumeKey: 'asset-4',
      expectedHash: await hashBytes(bytes),
    });
    assert.deepEqual(fs.readFileSync(done.path), bytes);
  });

  it('a .part left by other content (another resumeKey, or no note) is never appended to: the request carries no Range', async () => {
    route = (req, res) => {
      const start = rangeStart(req);
      if (start === undefined) sendWhole(res, bytes);
      else sendFrom(res, bytes, start); // would happily "resume" if asked
    };
    const target = path.join(dir, 'e.bin');
    const other = randomBytes(20_000);
    leavePart(target, other, 'other-asset');
    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-5' });
    assert.equal(server.seen.length, 1);
    assert.equal(server.seen[0].headers.range, undefined);
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.resumedFrom, 0);

    const second = path.join(dir, 'f.bin');
    fs.writeFileSync(partialPaths(second, 'asset-5').part, randomBytes(20_000)); // a part without its note
    await downloadToFile(transport, transport.url('/content'), second, { resumeKey: 'asset-5' });
    assert.equal(server.seen[1].headers.range, undefined);
    assert.deepEqual(fs.readFileSync(second), bytes);
    // The other content's part is its own (named for its key): left as it was, for its own resume.
    const { part, note } = partialPaths(target, 'other-asset');
    assert.deepEqual(fs.readFileSync(part), other);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['e.bin', 'f.bin', path.basename(part), path.basename(note)].sort());
  });
});

/** One request an upload server received, with its whole body. */
interface Call {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A server that reads each request's body, records it, then answers with `answer`. */
async function startApi(
  answer: (call: Call, res: http.ServerResponse) => void,
): Promise<{ server: TestServer; calls: Call[] }> {
  const calls: Call[] = [];
  const server = await startServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      calls.push(call);
      answer(call, res);
    });
  });
  return { server, calls };
}

function sendJson(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** The parts of a multipart/form-data body, in wire order, as `busboy` reads them. */
async function multipartParts(call: Call): Promise<{ name: string; value: Buffer }[]> {
  assert.match(String(call.headers['content-type']), /^multipart\/form-data; boundary=/, 'a multipart body');
  const parts: { name: string; value: Buffer }[] = [];
  const parser = busboy({ headers: call.headers });
  parser.on('field', (name, value) => parts.push({ name, value: Buffer.from(value) }));
  parser.on('file', (name, stream) => {
    const part = { name, value: Buffer.alloc(0) };
    parts.push(part);
    stream.on('data', (chunk: Buffer) => (part.value = Buffer.concat([part.value, chunk])));
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('close', resolve);
    parser.on('error', reject);
    parser.end(call.body);
  });
  return parts;
}

/**
 * An asset record with every field the Asset schema reads (Job and Asset API v2, Asset; fields from public sources).
 */
function assetRecord(origin: string, hash: string, size: number, filePath: string, createdNew: boolean): string {
  const id = randomUUID();
  return JSON.stringify({
    id,
    hash,
    size_bytes: size,
    content_type: 'application/octet-stream',
    created_at: new Date().toISOString(),
    url: `${origin}/api/v2/assets/${id}/content`,
    url_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    file_path: filePath,
    created_new: createdNew,
  });
}

/** `METHOD /path` of each call, the hash in a by-hash path shortened to `{hash}`. */
function routes(calls: Call[]): string[] {
  return calls.map((c) => `${c.method} ${c.path.replace(/by-hash\/.*/, 'by-hash/{hash}')}`);
}

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
