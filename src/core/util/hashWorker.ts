/**
 * Worker thread that computes BLAKE3-256 (hash-wasm), so the calling thread — the extension host or the CLI — never
 * blocks on hashing, and hash-wasm is loaded only here (kept out of the extension's activation).
 * Two modes, by `workerData`:
 * - `{file}`: hashes a whole file by streaming it; posts `{hex}` or `{error}`.
 * - `{service: true}`: a long-lived hasher of small buffers: `{id, bytes: ArrayBuffer}` → `{id, hex}`.
 * - `{stream: true, prefix?: {file, bytes}}`: hashes the first `bytes` of `file` (a resumed download's part), then each
 *   message `{chunk: ArrayBuffer}` as it comes, acknowledging each with `{ack: byteLength}`; `{end: true}` posts
 *   `{hex}`. An error posts `{error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createReadStream } from 'node:fs';
import { createBLAKE3, type IHasher } from 'hash-wasm';

/** Feeds `file` (its first `bytes` when given) to `hasher` in 1 MiB reads: few wasm calls, flat memory. */
async function feedFile(hasher: IHasher, file: string, bytes?: number): Promise<void> {
  if (bytes === 0) return;
  const stream = createReadStream(file, { highWaterMark: 1 << 20, ...(bytes !== undefined ? { end: bytes - 1 } : {}) });
  for await (const chunk of stream) hasher.update(chunk as Buffer);
}

async function hashFile(file: string): Promise<string> {
  const hasher = await createBLAKE3(256);
  hasher.init();
  await feedFile(hasher, file);
  return hasher.digest('hex');
}

/** The streaming mode: messages are handled strictly in order, after the prefix. */
async function hashStream(prefix: { file: string; bytes: number } | undefined): Promise<void> {
  const port = parentPort!;
  const hasher = await createBLAKE3(256);
  hasher.init();
  let queue = Promise.resolve();
  const fail = (err: unknown): void => port.postMessage({ error: err instanceof Error ? err.message : String(err) });
  if (prefix)
    queue = feedFile(hasher, prefix.file, prefix.bytes).catch((err: unknown) => {
      fail(err);
      throw err;
    });
  port.on('message', (m: { chunk?: ArrayBuffer; end?: boolean }) => {
    queue = queue.then(() => {
      if (m.chunk) {
        hasher.update(new Uint8Array(m.chunk));
        port.postMessage({ ack: m.chunk.byteLength });
      } else if (m.end) {
        port.postMessage({ hex: hasher.digest('hex') });
      }
    });
    queue.catch(() => undefined);
  });
}

/** The service mode: one hash per message, answered with its id. */
async function serve(): Promise<void> {
  const port = parentPort!;
  const hasher = await createBLAKE3(256);
  port.on('message', (m: { id: number; bytes: ArrayBuffer }) => {
    hasher.init();
    hasher.update(new Uint8Array(m.bytes));
    port.postMessage({ id: m.id, hex: hasher.digest('hex') });
  });
}

const data = workerData as {
  file?: string;
  stream?: boolean;
  service?: boolean;
  prefix?: { file: string; bytes: number };
};
if (data.service) {
  serve().catch((err: unknown) => parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) }));
} else if (data.stream) {
  hashStream(data.prefix).catch((err: unknown) =>
    parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) }),
  );
} else {
  hashFile(data.file!).then(
    (hex) => parentPort?.postMessage({ hex }),
    (err: unknown) => parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) }),
  );
}
