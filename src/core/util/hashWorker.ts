/**
 * Worker thread that computes BLAKE3-256 (blake3.ts: the native add-on, else hash-wasm), so the calling thread — the
 * extension host or the CLI — never blocks on hashing, and the hashing libraries are loaded only here (kept out of the
 * extension's activation). `workerData.engine` forces an engine (tests); by default the native one where it loads.
 * Two modes, by `workerData`:
 * - `{file}`: hashes a whole file by streaming it; posts `{hex}` or `{error}`.
 * - `{service: true}`: a long-lived hasher of small buffers: `{id, bytes: ArrayBuffer}` → `{id, hex}`.
 * - `{stream: true, prefix?: {file, bytes}}`: hashes the first `bytes` of `file` (a resumed download's part), then each
 *   message `{chunk: ArrayBuffer}` as it comes, acknowledging each with `{ack: byteLength}`; `{end: true}` posts
 *   `{hex}`. An error posts `{error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as fs from 'node:fs';
import { createBlake3, type Blake3, type Blake3Engine } from './blake3';

const data = workerData as {
  engine?: Blake3Engine;
  file?: string;
  stream?: boolean;
  service?: boolean;
  prefix?: { file: string; bytes: number };
};

/**
 * Feeds `file` (its first `bytes` when given) to `hasher` in 1 MiB reads into one buffer: few calls into the hasher,
 * flat memory, no garbage. Synchronous reads: this thread does nothing else meanwhile (a stream's messages wait).
 */
function feedFile(hasher: Blake3, file: string, bytes = Infinity): void {
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let done = 0; done < bytes;) {
      const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, bytes - done), done);
      if (n === 0) break;
      hasher.update(buffer.subarray(0, n));
      done += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

async function hashFile(file: string): Promise<string> {
  const hasher = await createBlake3(data.engine);
  feedFile(hasher, file);
  return hasher.hex();
}

/** The streaming mode: messages are handled strictly in order, after the prefix. */
async function hashStream(prefix: { file: string; bytes: number } | undefined): Promise<void> {
  const port = parentPort!;
  const hasher = await createBlake3(data.engine);
  let queue = Promise.resolve();
  const fail = (err: unknown): void => port.postMessage({ error: err instanceof Error ? err.message : String(err) });
  if (prefix)
    queue = Promise.resolve()
      .then(() => feedFile(hasher, prefix.file, prefix.bytes))
      .catch((err: unknown) => {
        fail(err);
        throw err;
      });
  port.on('message', (m: { chunk?: ArrayBuffer; end?: boolean }) => {
    queue = queue.then(() => {
      if (m.chunk) {
        hasher.update(new Uint8Array(m.chunk));
        port.postMessage({ ack: m.chunk.byteLength });
      } else if (m.end) {
        port.postMessage({ hex: hasher.hex() });
      }
    });
    queue.catch(() => undefined);
  });
}

/** The service mode: one hash per message, answered with its id. */
async function serve(): Promise<void> {
  const port = parentPort!;
  const hasher = await createBlake3(data.engine);
  port.on('message', (m: { id: number; bytes: ArrayBuffer }) => {
    hasher.reset();
    hasher.update(new Uint8Array(m.bytes));
    port.postMessage({ id: m.id, hex: hasher.hex() });
  });
}

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
