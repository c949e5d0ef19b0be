/**
 * The upload hash cache: an unchanged file is not hashed again; any change of size, mtime,
 * ctime or inode is a miss; a file that changes while it is hashed is not remembered; unreadable entries are misses.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { V2Client } from '../../src/core/v2/client';
import { HashCache } from '../../src/core/state';
import { hashBytes, hashFile } from '../../src/core/util';
import { useEmulator } from './harness';
import { tempDir } from './tmp';

describe('upload hash cache', () => {
  /** A cache in a fresh state dir, a file in it, and a counting hash function. */
  function setup(): {
    cache: HashCache;
    file: string;
    state: string;
    calls: () => number;
    compute: () => Promise<string>;
  } {
    const state = tempDir('cc-hash-cache-');
    const file = path.join(state, 'input.bin');
    fs.writeFileSync(file, 'first version');
    let n = 0;
    return { cache: new HashCache(state), file, state, calls: () => n, compute: () => (n++, hashFile(file)) };
  }

  it('rule: uploading an unchanged file again skips hashing (path, size, mtime, inode unchanged)', async () => {
    const { cache, file, compute, calls } = setup();
    const first = await cache.hashOf(file, compute);
    const second = await cache.hashOf(file, compute);
    assert.equal(calls(), 1);
    assert.deepEqual([first.cached, second.cached], [false, true]);
    assert.equal(second.hash, await hashBytes('first version'));
  });

  it('rule: a changed file is hashed again: new bytes of the same size with the old mtime restored (ctime moved), a new mtime, a new inode', async () => {
    const { cache, file, compute, calls } = setup();
    await cache.hashOf(file, compute);
    const { atime, mtime } = fs.statSync(file);
    fs.writeFileSync(file, 'other version');
    fs.utimesSync(file, atime, mtime);
    assert.equal((await cache.hashOf(file, compute)).hash, await hashBytes('other version'));
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    await cache.hashOf(file, compute);
    fs.renameSync(file, `${file}.old`);
    fs.copyFileSync(`${file}.old`, file);
    fs.utimesSync(file, fs.statSync(`${file}.old`).atime, fs.statSync(`${file}.old`).mtime);
    await cache.hashOf(file, compute);
    assert.equal(calls(), 4);
  });

  it('rule: an entry that is not readable is a miss; a file changing while hashed is not remembered', async () => {
    const { cache, file, state, compute, calls } = setup();
    await cache.hashOf(file, compute);
    for (const entry of fs.readdirSync(path.join(state, 'hashes')))
      fs.writeFileSync(path.join(state, 'hashes', entry), '{not json');
    assert.equal((await cache.hashOf(file, compute)).cached, false);
    fs.appendFileSync(file, ' changed'); // a miss, so the next call hashes
    const changing = async (): Promise<string> => {
      const h = await compute();
      fs.appendFileSync(file, '+');
      return h;
    };
    await cache.hashOf(file, changing);
    assert.equal(
      (await cache.hashOf(file, compute)).cached,
      false,
      'a hash taken while the file changed was remembered',
    );
    assert.equal(calls(), 4);
  });

  describe('in uploads', () => {
    const emu = useEmulator();
    it('rule: a second upload of the same unchanged file uses the cached hash (no second hash), and is a dedup hit', async () => {
      const { file, state } = setup();
      const cache = new HashCache(state);
      let computed = 0;
      const counting = {
        hashOf: (f: string, c: () => Promise<string>) => cache.hashOf(f, () => (computed++, c())),
        forget: (f: string) => cache.forget(f),
      } as unknown as HashCache;
      const client = new V2Client({ baseUrl: emu().baseUrl, hashCache: counting });
      try {
        const a = await client.uploadFile(file);
        const b = await client.uploadFile(file);
        assert.equal(computed, 1);
        assert.equal(b.dedup, true);
        assert.equal(a.hash, b.hash);
      } finally {
        await client.close();
      }
    });
  });
});
