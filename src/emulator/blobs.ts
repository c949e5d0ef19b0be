/**
 * Content-addressed blobs on disk (Job and Asset API v2, What the service does, design rule 3: assets are records over
 * blobs keyed by a server-computed blake3 hash; identical inputs are not stored twice).
 *
 * Layout under the data directory: `blobs/<hex>` (one file per distinct content, named by its BLAKE3-256
 * digest) and `tmp/` (bytes being received). Bytes are streamed in while hashed, then the finished temporary
 * file is renamed into place, or dropped when that content is already stored. No blob is ever held whole in
 * memory.
 *
 * Who may mint assets from a blob (HEAD by-hash, from-hash): the owners that uploaded those bytes or produced
 * them as a job output, while the blob exists. A blob exists while at least one asset record refers to it.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBLAKE3, type IHasher } from 'hash-wasm';

/** A blob as persisted: its size, the content type it was first stored with, who may mint from it. */
export interface SavedBlob {
  readonly hash: string;
  readonly sizeBytes: number;
  readonly contentType: string | null;
  readonly owners: readonly string[];
}

/**
 * `blake3:` and 64 lowercase hex digits (Job and Asset API v2, Asset: `blake3:<hex>`; public sources: a 256-bit
 * digest).
 */
export const BLAKE3_HASH = /^blake3:[0-9a-f]{64}$/;

/** Bytes received into a temporary file and hashed, not yet stored. Commit it or discard it. */
export interface StagedBlob {
  readonly temp: string;
  /** `blake3:<hex>`. */
  readonly hash: string;
  readonly sizeBytes: number;
}

/** Receives the bytes of one blob: written in order, hashed on the way, to a temporary file. */
class BlobWriter {
  private readonly stream: fs.WriteStream;
  private sizeBytes = 0;
  private failure: Error | undefined;

  /** @internal made by {@link BlobStore.createWriter}. */
  constructor(
    readonly temp: string,
    private readonly hasher: IHasher,
  ) {
    this.stream = fs.createWriteStream(temp, { flags: 'wx' });
    this.stream.on('error', (e) => (this.failure ??= e));
  }

  /** Appends `bytes`; resolves once the file can take more (backpressure). @throws the write error. */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (bytes.length === 0) return;
    this.hasher.update(bytes);
    this.sizeBytes += bytes.length;
    if (!this.stream.write(bytes)) await once(this.stream, 'drain');
  }

  /** Closes the file. @returns the staged blob. @throws the write error (the temporary file is removed). */
  async finish(): Promise<StagedBlob> {
    if (this.failure === undefined) {
      const closed = once(this.stream, 'close');
      this.stream.end();
      await closed.catch((e: Error) => (this.failure ??= e));
    }
    if (this.failure !== undefined) {
      await this.abort();
      throw this.failure;
    }
    return { temp: this.temp, hash: `blake3:${this.hasher.digest('hex')}`, sizeBytes: this.sizeBytes };
  }

  /** Gives up: closes and removes the temporary file. Safe to call more than once, or after {@link finish}. */
  async abort(): Promise<void> {
    if (!this.stream.closed) {
      const closed = once(this.stream, 'close').catch(() => undefined);
      this.stream.destroy();
      await closed;
    }
    await fs.promises.rm(this.temp, { force: true });
  }
}

interface BlobEntry {
  readonly sizeBytes: number;
  /** Owners that uploaded or produced these bytes: they may mint assets from the blob. */
  readonly owners: Set<string>;
  /** Asset records referring to the blob; at 0 the blob is deleted. */
  refs: number;
}

/** What committing a staged blob did. */
interface Commit {
  /** The bytes were not stored before (a second copy is never kept). */
  readonly newBlob: boolean;
  /** The committing owner could already mint from this blob before (its dedup hit). */
  readonly ownerHadIt: boolean;
}

/** The blobs of one emulator. */
export class BlobStore {
  private readonly blobs = new Map<string, BlobEntry>();
  private readonly blobDir: string;
  private readonly tmpDir: string;

  /** @param dir the data directory; {@link init} prepares it. */
  constructor(dir: string) {
    this.blobDir = path.join(dir, 'blobs');
    this.tmpDir = path.join(dir, 'tmp');
  }

  /**
   * Creates `blobs/` and `tmp/`. `tmp/` is emptied (bytes of an upload cut by the stop); `blobs/` too unless `keep`
   * (a persistent data folder, whose records are read back: {@link restore} then removes the blobs no record names).
   */
  async init(keep = false): Promise<void> {
    for (const dir of keep ? [this.tmpDir] : [this.blobDir, this.tmpDir])
      await fs.promises.rm(dir, { recursive: true, force: true });
    for (const dir of [this.blobDir, this.tmpDir]) await fs.promises.mkdir(dir, { recursive: true });
  }

  /**
   * Takes back the blobs a previous run saved (persistence.ts), after {@link init}(true): each one whose file is
   * there with its size; then removes every file of `blobs/` that is not one of them (no record can name it).
   * @returns the hashes taken back (a record over another one is dropped by the caller).
   */
  restore(saved: readonly SavedBlob[]): Set<string> {
    const kept = new Set<string>();
    for (const blob of saved) {
      if (!BLAKE3_HASH.test(blob.hash)) continue;
      let size: number;
      try {
        size = fs.statSync(this.pathOf(blob.hash)).size;
      } catch {
        continue;
      }
      if (size !== blob.sizeBytes) continue;
      this.blobs.set(blob.hash, { sizeBytes: size, owners: new Set(blob.owners), refs: 0 });
      kept.add(blob.hash);
    }
    for (const name of fs.readdirSync(this.blobDir)) {
      if (!kept.has(`blake3:${name}`)) fs.rmSync(path.join(this.blobDir, name), { recursive: true, force: true });
    }
    return kept;
  }

  /** The blobs stored now, with who may mint from each (persistence.ts). */
  saved(contentTypeOf: (hash: string) => string | undefined): SavedBlob[] {
    return [...this.blobs].map(([hash, entry]) => ({
      hash,
      sizeBytes: entry.sizeBytes,
      contentType: contentTypeOf(hash) ?? null,
      owners: [...entry.owners],
    }));
  }

  /** A writer into a new temporary file. */
  async createWriter(): Promise<BlobWriter> {
    const hasher = await createBLAKE3(256);
    hasher.init();
    return new BlobWriter(path.join(this.tmpDir, randomUUID()), hasher);
  }

  /**
   * Streams `source` into a staged blob (a Readable: it holds its bytes until read, as this awaits first).
   * @throws the read or write error, or an AbortError when `signal` aborts (nothing is left on disk).
   */
  async ingest(source: Readable, signal?: AbortSignal): Promise<StagedBlob> {
    const writer = await this.createWriter();
    try {
      const sink = new Writable({
        write: (chunk: Buffer, _encoding, callback) => {
          writer.write(chunk).then(() => callback(), callback);
        },
      });
      await pipeline(source, sink, { signal });
      return await writer.finish();
    } catch (e) {
      await writer.abort();
      throw e;
    }
  }

  /**
   * Stores a staged blob for `owner`: renames it into place, or drops it when the content is already stored;
   * either way `owner` may mint from the blob afterwards. Synchronous, so that the caller refers to the blob
   * ({@link retain}) before anything else can release it.
   */
  commit(staged: StagedBlob, owner: string): Commit {
    const entry = this.blobs.get(staged.hash);
    if (entry !== undefined) {
      fs.rmSync(staged.temp, { force: true });
      const ownerHadIt = entry.owners.has(owner);
      entry.owners.add(owner);
      return { newBlob: false, ownerHadIt };
    }
    fs.renameSync(staged.temp, this.pathOf(staged.hash));
    this.blobs.set(staged.hash, { sizeBytes: staged.sizeBytes, owners: new Set([owner]), refs: 0 });
    return { newBlob: true, ownerHadIt: false };
  }

  /** Removes a staged blob that will not be committed. */
  async discard(staged: StagedBlob): Promise<void> {
    await fs.promises.rm(staged.temp, { force: true });
  }

  /** True when `owner` may mint from blob `hash` (it exists, and `owner` uploaded or produced it). */
  canMint(owner: string, hash: string): boolean {
    return this.blobs.get(hash)?.owners.has(owner) ?? false;
  }

  /** Size of a stored blob, in bytes; undefined when there is none. */
  sizeOf(hash: string): number | undefined {
    return this.blobs.get(hash)?.sizeBytes;
  }

  /** Where blob `hash` (`blake3:<hex>`) lives. */
  pathOf(hash: string): string {
    return path.join(this.blobDir, hash.slice('blake3:'.length));
  }

  /** One more record refers to blob `hash`. @throws Error when it is not stored (a bug of the emulator). */
  retain(hash: string): void {
    const entry = this.blobs.get(hash);
    if (entry === undefined) throw new Error(`blob ${hash} is not stored`);
    entry.refs++;
  }

  /** One record less refers to blob `hash`; the last one deletes it (a stream already reading it keeps its bytes). */
  release(hash: string): void {
    const entry = this.blobs.get(hash);
    if (entry === undefined || --entry.refs > 0) return;
    this.blobs.delete(hash);
    // Synchronous, so a commit of the same content right after cannot be removed by it.
    fs.rmSync(this.pathOf(hash), { force: true });
  }

  /** Deletes blob `hash` when no record refers to it (a blob taken back that no record names). */
  dropIfUnused(hash: string): void {
    const entry = this.blobs.get(hash);
    if (entry === undefined || entry.refs > 0) return;
    entry.refs = 1;
    this.release(hash);
  }

  /** Number of distinct blobs stored. */
  get count(): number {
    return this.blobs.size;
  }
}
