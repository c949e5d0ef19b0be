/**
 * BLAKE3 content hashes, written `blake3:<hex>` with a 256-bit digest (Job and Asset API v2, What the service does,
 * design rule 3, and Asset). All hashing happens in a worker thread (hashWorker.ts), which alone loads the hashing
 * libraries (blake3.ts: a native add-on, else hash-wasm): the calling thread never blocks, and the extension does not
 * load them when it activates.
 * Files are streamed by the worker; a download is hashed while it streams ({@link StreamHasher}), so it is never read
 * a second time.
 */
import { Worker } from 'node:worker_threads';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AbortError, InputError } from '../http/errors';

/** `blake3:` followed by 64 lowercase hex digits. */
export const BLAKE3_PATTERN = /^blake3:[0-9a-f]{64}$/;

/** The long-lived worker of {@link hashBytes}, started at the first call; it never keeps the process alive. */
let service:
  | { worker: Worker; next: number; waiting: Map<number, { resolve(hex: string): void; reject(err: Error): void }> }
  | undefined;

/** BLAKE3-256 of bytes in memory (a canonical workflow, a test's bytes), as `blake3:<hex>`. */
export function hashBytes(bytes: Uint8Array | string): Promise<string> {
  if (!service) {
    const worker = new Worker(workerScript(), { workerData: { service: true } });
    const started = {
      worker,
      next: 0,
      waiting: new Map<number, { resolve(hex: string): void; reject(err: Error): void }>(),
    };
    const failAll = (err: Error): void => {
      for (const w of started.waiting.values()) w.reject(err);
      started.waiting.clear();
      if (service === started) service = undefined;
    };
    worker.on('message', (m: { id?: number; hex?: string; error?: string }) => {
      if (m.error !== undefined) return failAll(new Error(`cannot hash: ${m.error}`));
      const waiter = started.waiting.get(m.id!);
      started.waiting.delete(m.id!);
      waiter?.resolve(`blake3:${m.hex}`);
      if (started.waiting.size === 0) worker.unref();
    });
    worker.on('error', failAll);
    worker.on('exit', () => failAll(new Error('the hash worker stopped')));
    worker.unref();
    service = started;
  }
  const s = service;
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const copy = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
  const id = s.next++;
  return new Promise<string>((resolve, reject) => {
    s.waiting.set(id, { resolve, reject });
    // Kept alive while an answer is awaited, so a process waiting for nothing else does not exit under it.
    s.worker.ref();
    s.worker.postMessage({ id, bytes: copy }, [copy]);
  });
}

/** Bytes sent to the worker and not yet hashed, above which {@link StreamHasher.update} waits (back-pressure). */
const MAX_IN_FLIGHT_BYTES = 16 * 1024 * 1024;

/** Bytes gathered before they are sent to the worker in one message (a network chunk is often 16–64 KiB). */
const BATCH_BYTES = 1 << 20;

/**
 * An incremental BLAKE3-256 computed in a worker thread: feed it chunks as they stream by, then ask for the digest.
 * Bounded memory: `update` resolves at once while less than 16 MiB wait in the worker, otherwise once the worker has
 * caught up, so a fast network never queues a file in memory. Each chunk is copied (the caller keeps its buffer) into
 * a 1 MiB batch, sent when full: one message per MiB instead of one per network chunk, whose posting and
 * acknowledging cost more than hashing it natively.
 * `prefix` hashes the first `bytes` of a file first (the part a resumed download already has).
 */
export class StreamHasher {
  private readonly worker: Worker;
  private inFlight = 0;
  private failure: Error | undefined;
  private drained: (() => void) | undefined;
  private result: { resolve(hex: string): void; reject(err: Error): void } | undefined;
  private done = false;
  private batch: Buffer | undefined;
  private batchBytes = 0;

  constructor(prefix?: { file: string; bytes: number }) {
    this.worker = new Worker(workerScript(), {
      workerData: { stream: true, ...(prefix && prefix.bytes > 0 ? { prefix } : {}) },
    });
    this.worker.on('message', (m: { ack?: number; hex?: string; error?: string }) => {
      if (m.ack !== undefined) {
        this.inFlight -= m.ack;
        if (this.inFlight < MAX_IN_FLIGHT_BYTES / 2) this.wake();
      } else if (m.hex !== undefined) {
        this.result?.resolve(`blake3:${m.hex}`);
      } else if (m.error !== undefined) {
        this.fail(new InputError('unreadable', `cannot hash: ${m.error}`));
      }
    });
    this.worker.on('error', (err) => this.fail(err));
  }

  /** Bytes sent to the worker and not yet acknowledged: never much above 16 MiB (back-pressure). */
  get inFlightBytes(): number {
    return this.inFlight;
  }

  /** Hashes `chunk` (copied); resolves when more may be sent. @throws the worker's failure. */
  async update(chunk: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    for (let at = 0; at < chunk.byteLength;) {
      // Unpooled: its ArrayBuffer is the batch's alone, so it can be transferred to the worker.
      this.batch ??= Buffer.allocUnsafeSlow(BATCH_BYTES);
      const n = Math.min(chunk.byteLength - at, BATCH_BYTES - this.batchBytes);
      this.batch.set(chunk.subarray(at, at + n), this.batchBytes);
      this.batchBytes += n;
      at += n;
      if (this.batchBytes === BATCH_BYTES) this.flush();
    }
    if (this.inFlight >= MAX_IN_FLIGHT_BYTES) {
      await new Promise<void>((resolve) => (this.drained = resolve));
      if (this.failure) throw this.failure;
    }
  }

  /** The digest of everything fed, `blake3:<hex>`; the worker then ends. */
  digest(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<string>((resolve, reject) => {
      this.result = {
        resolve: (hex) => {
          this.abort();
          resolve(hex);
        },
        reject,
      };
      this.flush();
      this.worker.postMessage({ end: true });
    }).finally(() => this.abort());
  }

  /** Sends the gathered batch (if any) to the worker, its buffer transferred. */
  private flush(): void {
    if (!this.batch || this.batchBytes === 0) return;
    // A full batch is sent as it is; the last, partial one as a copy of its filled part.
    const whole = this.batch.buffer as ArrayBuffer;
    const bytes = this.batchBytes === whole.byteLength ? whole : whole.slice(0, this.batchBytes);
    this.inFlight += this.batchBytes;
    this.batch = undefined;
    this.batchBytes = 0;
    this.worker.postMessage({ chunk: bytes }, [bytes]);
  }

  /** Stops the worker (idempotent): after a failure, an abort, or the digest. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    void this.worker.terminate();
  }

  private wake(): void {
    const wake = this.drained;
    this.drained = undefined;
    wake?.();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.result?.reject(this.failure);
    this.wake();
    this.abort();
  }
}

/**
 * Where the worker script is: next to the bundle this module is in (dist/cli.js, dist/extension.js) or to this module
 * compiled (out/src/core/), else one or two folders up.
 */
function workerScript(): string {
  const candidates = [
    path.join(__dirname, 'hashWorker.js'),
    path.join(__dirname, '..', 'hashWorker.js'),
    path.join(__dirname, '..', '..', 'hashWorker.js'),
  ];
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
