/**
 * Worker thread that computes BLAKE3-256 of a file by streaming it (hash-wasm), so the calling thread — the
 * extension host or the CLI — never blocks on a large file. Message in: `{file}`; out: `{hex}` or `{error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createReadStream } from 'node:fs';
import { createBLAKE3 } from 'hash-wasm';

async function hashFile(file: string): Promise<string> {
  const hasher = await createBLAKE3(256);
  hasher.init();
  // 1 MiB reads: few wasm calls, and memory stays flat whatever the file size.
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hasher.update(chunk as Buffer);
  return hasher.digest('hex');
}

const { file } = workerData as { file: string };
hashFile(file).then(
  (hex) => parentPort?.postMessage({ hex }),
  (err: unknown) => parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) }),
);
