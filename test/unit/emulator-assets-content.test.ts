/**
 * The emulator's asset content over real HTTP (Job and Asset API v2, GET /api/v2/assets/{id}/content): Range and
 * resumable downloads by the client core (cutAfterBytes), signed-URL redirects to a second origin, and a big file
 * streamed both ways through an emulator in its own process. No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { ConnectionError } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { hashFile } from '../../src/core/util';
import { partialPaths } from '../../src/core/http/download';
import { call, fileParts, postMultipart, tmpDir } from './emulator-assets.fixtures';
import { useEmulator, type Json } from './harness';

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
