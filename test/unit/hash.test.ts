import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AbortError } from '../../src/core';
import { BLAKE3_PATTERN, StreamHasher, hashBytes, hashFile } from '../../src/core/util';
import { Transport } from '../../src/core/http';
import { downloadToFile } from '../../src/core/http/download';
import { startServer } from './httpServer';
import { tempDir } from './tmp';

describe('BLAKE3 hashes (blake3:<hex>, 256-bit)', () => {
  it('hashes bytes to the published BLAKE3 test value', async () => {
    // BLAKE3 of the empty input (the reference implementation's test vector).
    assert.equal(
      await hashBytes(new Uint8Array()),
      'blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
    );
  });
  it('hashes a file in a worker thread, streamed, to the same value as in memory', async () => {
    const dir = tempDir('cc-hash-');
    const file = path.join(dir, 'f.bin');
    const bytes = Buffer.alloc(3 * (1 << 20) + 17, 7);
    fs.writeFileSync(file, bytes);
    const h = await hashFile(file);
    assert.match(h, BLAKE3_PATTERN);
    assert.equal(h, await hashBytes(bytes));
  });
  it('a missing file is a clear error; an abort stops the worker', async () => {
    await assert.rejects(hashFile('/no/such/file'), (e: unknown) => (e as { code?: string }).code === 'unreadable');
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(hashFile(__filename, { signal: ac.signal }), (e: unknown) => AbortError.is(e));
  });

  it('hashes a stream in a worker as it passes, a file prefix first, to the same value as in memory', async () => {
    const dir = tempDir('cc-hash-');
    const bytes = Buffer.alloc(5 * (1 << 20) + 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
    const file = path.join(dir, 'prefix.bin');
    fs.writeFileSync(
      file,
      Buffer.concat([bytes.subarray(0, 1_000_000), Buffer.from('bytes past the prefix are not hashed')]),
    );
    const hasher = new StreamHasher({ file, bytes: 1_000_000 });
    for (let at = 1_000_000; at < bytes.length; at += 65_536) await hasher.update(bytes.subarray(at, at + 65_536));
    assert.equal(await hasher.digest(), await hashBytes(bytes));
  });

  it('a stream fed in pieces that straddle its 1 MiB batches (1 byte, over 1 MiB, uneven) hashes as in memory', async () => {
    const bytes = Buffer.alloc(4 * (1 << 20) + 11);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 13)) & 0xff;
    const hasher = new StreamHasher();
    const pieces = [1, (1 << 20) + 5, 333_333, 1, 65_536, (1 << 20) - 1];
    for (let at = 0, k = 0; at < bytes.length; k++) {
      const n = pieces[k % pieces.length]!;
      await hasher.update(bytes.subarray(at, at + n));
      at += n;
    }
    assert.equal(await hasher.digest(), await hashBytes(bytes));
  });

  it('back-pressure: a fast producer never has much more than 16 MiB waiting in the worker', async () => {
    const hasher = new StreamHasher();
    const chunk = Buffer.alloc(1 << 20, 1);
    let most = 0;
    for (let i = 0; i < 96; i++) {
      await hasher.update(chunk);
      most = Math.max(most, hasher.inFlightBytes);
    }
    assert.ok(most <= 17 * (1 << 20), `${most} bytes waited in the worker`);
    assert.match(await hasher.digest(), BLAKE3_PATTERN);
  });

  it('a resumed, verified download hashes its part and the rest in one pass: right bytes pass, a corrupted part fails', async () => {
    const bytes = Buffer.alloc(300_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
    let cut = true;
    const server = await startServer((req, res) => {
      const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
      if (cut) {
        res.writeHead(200, { 'content-length': String(bytes.length) });
        res.write(bytes.subarray(0, 100_000), () => res.socket?.destroy());
        return;
      }
      res.writeHead(206, {
        'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        'content-length': String(bytes.length - start),
      });
      res.end(bytes.subarray(start));
    });
    const t = new Transport({ baseUrl: server.origin });
    const dir = tempDir('cc-hash-dl-');
    const expectedHash = await hashBytes(bytes);
    try {
      await assert.rejects(downloadToFile(t, t.url('/c'), path.join(dir, 'a.bin'), { resumeKey: 'a', expectedHash }));
      cut = false;
      const done = await downloadToFile(t, t.url('/c'), path.join(dir, 'a.bin'), { resumeKey: 'a', expectedHash });
      assert.ok(done.resumedFrom > 0, 'it did not resume');
      assert.deepEqual(fs.readFileSync(done.path), bytes);

      cut = true;
      await assert.rejects(downloadToFile(t, t.url('/c'), path.join(dir, 'b.bin'), { resumeKey: 'b', expectedHash }));
      const part = fs.readdirSync(dir).find((f) => f.endsWith('.part'))!;
      const partBytes = fs.readFileSync(path.join(dir, part));
      partBytes[10] ^= 0xff; // the part on disk is damaged: the verification must see it
      fs.writeFileSync(path.join(dir, part), partBytes);
      cut = false;
      await assert.rejects(
        downloadToFile(t, t.url('/c'), path.join(dir, 'b.bin'), { resumeKey: 'b', expectedHash }),
        (e: unknown) => (e as { code?: string }).code === 'hash_mismatch',
      );
      assert.ok(!fs.existsSync(path.join(dir, 'b.bin')));
    } finally {
      await t.close();
      await server.close();
    }
  });
});
