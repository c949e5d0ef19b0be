import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AbortError, BLAKE3_PATTERN, hashBytes, hashFile } from '../../src/core';
import { tempDir } from './tmp';

describe('BLAKE3 hashes (blake3:<hex>, 256-bit)', () => {
  it('hashes bytes to the published BLAKE3 test value', async () => {
    // BLAKE3 of the empty input (the reference implementation's test vector).
    assert.equal(await hashBytes(new Uint8Array()), 'blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
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
});
