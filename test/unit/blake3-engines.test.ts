/**
 * The two BLAKE3 engines of the hash worker (src/core/util/blake3.ts): the native add-on and hash-wasm, each against
 * the published BLAKE3 test vectors (the reference implementation's test_vectors.json: input bytes 0, 1, …, 250, 0, …;
 * the first 32 bytes of each case's extended output), fed whole and in uneven pieces, and against each other on
 * input large enough for the add-on's SIMD paths.
 */
import * as assert from 'node:assert/strict';
import { createBlake3, type Blake3Engine } from '../../src/core/util/blake3';

/** input length → BLAKE3-256 (hex). Lengths around the 1 KiB chunk and its multiples, where tree bugs show. */
const VECTORS: [number, string][] = [
  [0, 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'],
  [1, '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213'],
  [1023, '10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11'],
  [1024, '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7'],
  [1025, 'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444'],
  [2049, '5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030'],
  [3073, '7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3'],
  [4097, '9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995'],
  [5121, '628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff'],
  [7169, 'a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817'],
];

function pattern(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = i % 251;
  return bytes;
}

async function digest(engine: Blake3Engine, bytes: Uint8Array, piece = bytes.length || 1): Promise<string> {
  const hasher = await createBlake3(engine);
  assert.equal(hasher.engine, engine);
  for (let at = 0; at < bytes.length; at += piece) hasher.update(bytes.subarray(at, at + piece));
  return hasher.hex();
}

describe('BLAKE3 engines (native add-on, hash-wasm)', () => {
  for (const engine of ['native', 'wasm'] as const) {
    it(`${engine}: the published test vectors, fed whole and in pieces of 1, 63 and 1000 bytes`, async () => {
      for (const [length, expected] of VECTORS) {
        const bytes = pattern(length);
        assert.equal(await digest(engine, bytes), expected, `${length} bytes whole`);
        for (const piece of [1, 63, 1000])
          assert.equal(await digest(engine, bytes, piece), expected, `${length} bytes in pieces of ${piece}`);
      }
    });
  }

  it('reset starts a new input; the digest of the empty input after one', async () => {
    for (const engine of ['native', 'wasm'] as const) {
      const hasher = await createBlake3(engine);
      hasher.update(pattern(5000));
      hasher.reset();
      assert.equal(hasher.hex(), VECTORS[0]![1], engine);
    }
  });

  it('both engines agree on 5 MiB + 17 bytes fed in uneven pieces (the SIMD paths of many chunks at once)', async () => {
    const bytes = new Uint8Array(5 * (1 << 20) + 17);
    let x = 1;
    for (let i = 0; i < bytes.length; i++) bytes[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    assert.equal(await digest('native', bytes, 65_537), await digest('wasm', bytes, 1 << 20));
  });

  it('the default engine is the native add-on where it loads (here: the platform the tests run on)', async () => {
    assert.equal((await createBlake3()).engine, 'native');
  });
});
