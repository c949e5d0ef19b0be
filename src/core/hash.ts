/**
 * BLAKE3 content hashes, written `blake3:<hex>` with a 256-bit digest (jobs-assets-api-v2.md design rule 3;
 * FACTS.md "v2 assets"). Files are hashed in a worker thread, streamed; small buffers in the calling thread.
 */
import { Worker } from 'node:worker_threads';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { blake3 } from 'hash-wasm';
import { AbortError, InputError } from './http/errors';

/** `blake3:` followed by 64 lowercase hex digits. */
export const BLAKE3_PATTERN = /^blake3:[0-9a-f]{64}$/;

/** BLAKE3-256 of bytes in memory, as `blake3:<hex>`. */
export async function hashBytes(bytes: Uint8Array | string): Promise<string> {
  return `blake3:${await blake3(bytes, 256)}`;
}

/** Where the worker script is: next to this module once bundled (dist/) or compiled (out/src/core/). */
function workerScript(): string {
  const candidates = [path.join(__dirname, 'hashWorker.js'), path.join(__dirname, '..', '..', 'hashWorker.js')];
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error(`hashWorker.js not found next to ${__dirname}; run the build (node esbuild.mjs)`);
  return found;
}

/**
 * BLAKE3-256 of a file, computed by streaming it in a worker thread.
 * @returns `blake3:<hex>`
 * @throws InputError `unreadable` when the file cannot be read; AbortError when `signal` aborts (the worker is stopped).
 */
export function hashFile(file: string, options: { signal?: AbortSignal } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new AbortError('hashing aborted'));
    const worker = new Worker(workerScript(), { workerData: { file } });
    const onAbort = (): void => {
      void worker.terminate();
      reject(new AbortError('hashing aborted'));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (): void => options.signal?.removeEventListener('abort', onAbort);
    worker.once('message', (m: { hex?: string; error?: string }) => {
      done();
      void worker.terminate();
      if (m.hex) resolve(`blake3:${m.hex}`);
      else reject(new InputError('unreadable', `cannot hash ${file}: ${m.error}`));
    });
    worker.once('error', (err) => {
      done();
      reject(err);
    });
  });
}
