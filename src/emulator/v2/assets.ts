/**
 * The asset store: UUID-identified records over content-addressed blobs, each record owned by one caller
 * (Job and Asset API v2, Asset, and What the service does, design rule 3; the record's fields from public sources).
 * Records come from uploads (POST /api/v2/assets), from minting (POST /api/v2/assets/from-hash) and from job outputs;
 * every one has its blake3 hash, computed while its bytes were received.
 *
 * Scoping: an owner sees only its own records (another owner's answer 404 like unknown ones), and may mint
 * only from blobs it uploaded or produced itself (blobs.ts), so nothing reveals another owner's content.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BlobStore, type SavedBlob, type StagedBlob } from '../blobs';
import type { Links } from './links';
import type { UrlSigner } from '../signing';
import { iso, outputTypeOf, type WireAsset, type WireOutput } from './wire';

/** One asset record. Times are ms since the epoch (the emulator's clock). */
export interface AssetRecord {
  readonly id: string;
  readonly owner: string;
  /** `blake3:<hex>` of the bytes. */
  readonly hash: string;
  /** The blob on disk (shared by every record with this hash). */
  readonly file: string;
  readonly sizeBytes: number;
  readonly contentType: string;
  /** The name it was made or uploaded with (`file_path`; an output's `name`); null when minted without one. */
  readonly name: string | null;
  readonly tags: readonly string[];
  readonly createdAt: number;
  /** After this instant the record is gone (404); null: kept until deleted. */
  readonly expiresAt: number | null;
  /** The job that produced it, and its node; null for uploads. */
  readonly jobId: string | null;
  readonly nodeId: string | null;
}

/** An asset record as persisted: the record without its blob's path (the blob is found again by hash). */
export type SavedAsset = Omit<AssetRecord, 'file'>;

/** What a new record carries besides its blob. */
interface AssetMetadata {
  readonly contentType: string;
  readonly name: string | null;
  readonly tags?: readonly string[];
  /** Absolute expiry (ms since the epoch), or null for none; `expiresInS` wins when given. */
  readonly expiresAt: number | null;
  /** Expiry relative to the record's `created_at` (s): `expires_in` of an upload or from-hash. */
  readonly expiresInS?: number;
  readonly jobId?: string | null;
  readonly nodeId?: string | null;
}

/** What the store needs around it. */
interface AssetStoreOptions {
  /** The data directory: blobs live in `blobs/`, bytes being received in `tmp/`. */
  readonly dir: string;
  readonly now: () => number;
  readonly links: Links;
  /** When set, content `url`s are signed URLs on the second origin (the managed cloud's behaviour). */
  readonly signer?: UrlSigner;
  /** Called after every change of the records (a record added or removed): the data folder saves them. */
  readonly onChange?: () => void;
}

/** Asset records by id, over the blobs of a {@link BlobStore}. */
export class AssetStore {
  private readonly records = new Map<string, AssetRecord>();
  /** The content type a blob was first stored with, for records minted from it. */
  private readonly blobTypes = new Map<string, string>();
  private readonly blobs: BlobStore;

  constructor(private readonly options: AssetStoreOptions) {
    this.blobs = new BlobStore(options.dir);
  }

  /** Prepares the blob directories (see {@link BlobStore.init}; `keep`: a persistent data folder). */
  init(keep = false): Promise<void> {
    return this.blobs.init(keep);
  }

  /**
   * Takes back what a previous run saved (persistence.ts), after {@link init}(true): the blobs whose files are there,
   * and the records over them. @returns how many records were dropped because their blob is gone.
   */
  restore(assets: readonly SavedAsset[], blobs: readonly SavedBlob[]): number {
    const kept = this.blobs.restore(blobs);
    for (const blob of blobs)
      if (kept.has(blob.hash) && blob.contentType !== null) this.blobTypes.set(blob.hash, blob.contentType);
    let dropped = 0;
    for (const saved of assets) {
      if (!kept.has(saved.hash) || this.blobs.sizeOf(saved.hash) !== saved.sizeBytes) {
        dropped++;
        continue;
      }
      this.blobs.retain(saved.hash);
      this.records.set(saved.id, { ...saved, tags: [...saved.tags], file: this.blobs.pathOf(saved.hash) });
    }
    // A blob no record names would never be released: it goes now.
    const named = new Set([...this.records.values()].map((r) => r.hash));
    for (const hash of kept) {
      if (named.has(hash)) continue;
      this.blobs.dropIfUnused(hash);
      this.blobTypes.delete(hash);
    }
    return dropped;
  }

  /** The records and blobs now, for the data folder (persistence.ts). */
  saved(): { assets: SavedAsset[]; blobs: SavedBlob[] } {
    const assets = [...this.records.values()].map(({ file: _file, ...record }) => ({
      ...record,
      tags: [...record.tags],
    }));
    return { assets, blobs: this.blobs.saved((hash) => this.blobTypes.get(hash)) };
  }

  /** Record `id` whoever owns it, live or not (a job's outputs being taken back); undefined when unknown. */
  recordOf(id: string): AssetRecord | undefined {
    return this.records.get(id);
  }

  /** Streams `source` into a staged blob (an upload's file part, a job output). @throws as {@link BlobStore.ingest}. */
  ingest(source: Readable, signal?: AbortSignal): Promise<StagedBlob> {
    return this.blobs.ingest(source, signal);
  }

  /** Removes a staged blob that will not be stored. */
  discard(staged: StagedBlob): Promise<void> {
    return this.blobs.discard(staged);
  }

  /**
   * Stores a staged blob (deduplicated by hash) and records a new asset of `owner` over it.
   * @returns the record, and whether the bytes are new to `owner` (`created_new`: false when `owner` could
   *   already mint from this blob — its dedup hit; another owner's copy does not count, so that an upload
   *   never reveals what others stored).
   */
  store(staged: StagedBlob, owner: string, meta: AssetMetadata): { record: AssetRecord; createdNew: boolean } {
    const commit = this.blobs.commit(staged, owner);
    if (commit.newBlob) this.blobTypes.set(staged.hash, meta.contentType);
    const record = this.add(owner, staged.hash, staged.sizeBytes, meta);
    return { record, createdNew: !commit.ownerHadIt };
  }

  /**
   * POST /api/v2/assets/from-hash: an asset of `owner` over blob `hash`. When `owner` already has a live record
   * over it (with the same `name`, when one is given) that record is answered (200); else a new one is minted
   * (201) with the content type the blob was first stored with.
   * @returns undefined when `owner` may not mint from the blob (unknown, or not uploaded or produced by `owner`).
   */
  mint(
    owner: string,
    hash: string,
    meta: Pick<AssetMetadata, 'name' | 'tags' | 'expiresAt' | 'expiresInS'>,
  ): { record: AssetRecord; minted: boolean } | undefined {
    const size = this.blobs.sizeOf(hash);
    if (size === undefined || !this.blobs.canMint(owner, hash)) return undefined;
    const existing = [...this.records.values()]
      .filter(
        (r) => r.owner === owner && r.hash === hash && (meta.name === null || r.name === meta.name) && this.live(r),
      )
      .at(-1);
    if (existing !== undefined) return { record: existing, minted: false };
    const contentType = this.blobTypes.get(hash) ?? 'application/octet-stream';
    return { record: this.add(owner, hash, size, { ...meta, contentType }), minted: true };
  }

  /** HEAD /api/v2/assets/by-hash/{hash}: true when `owner` may mint from blob `hash`. */
  canMint(owner: string, hash: string): boolean {
    return this.blobs.canMint(owner, hash);
  }

  /** Asset `id` of `owner`, or undefined when unknown, another owner's, or expired (then it is dropped). */
  get(owner: string, id: string): AssetRecord | undefined {
    const record = this.byId(id);
    return record?.owner === owner ? record : undefined;
  }

  /** Asset `id` whoever owns it (a signed URL authorizes by itself); undefined when unknown or expired. */
  byId(id: string): AssetRecord | undefined {
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    if (!this.live(record)) {
      this.remove(record);
      return undefined;
    }
    return record;
  }

  /** DELETE /api/v2/assets/{id}: removes the record; its blob goes with the last record over it. */
  delete(record: AssetRecord): void {
    if (this.records.get(record.id) === record) this.remove(record);
  }

  /** Drops every asset produced by job `jobId` (the job left retention: its outputs go with it). */
  dropJob(jobId: string): void {
    for (const record of [...this.records.values()]) if (record.jobId === jobId) this.remove(record);
  }

  /** Drops every expired asset. */
  sweep(): void {
    for (const record of [...this.records.values()]) if (!this.live(record)) this.remove(record);
  }

  /**
   * The content link of an asset and when it stops working: a fresh signed URL (see {@link AssetStoreOptions.signer}),
   * or the emulator's own content endpoint, which works as long as the asset.
   */
  contentLink(record: AssetRecord): { url: string; expiresAt: number | null } {
    if (this.options.signer !== undefined) return this.options.signer.sign(record.id, record.expiresAt);
    return { url: this.options.links.assetContent(record.id), expiresAt: record.expiresAt };
  }

  /** The asset record as GET /api/v2/assets/{id} answers it, with a fresh `url`. */
  toWire(record: AssetRecord): WireAsset {
    const link = this.contentLink(record);
    return {
      id: record.id,
      hash: record.hash,
      size_bytes: record.sizeBytes,
      content_type: record.contentType,
      created_at: iso(record.createdAt),
      url: link.url,
      url_expires_at: link.expiresAt === null ? null : iso(link.expiresAt),
      file_path: record.name,
      tags: [...record.tags],
      expires_at: record.expiresAt === null ? null : iso(record.expiresAt),
      job_id: record.jobId,
    };
  }

  /** The asset as an item of a job's `outputs`. */
  toOutput(record: AssetRecord): WireOutput {
    const link = this.contentLink(record);
    return {
      id: record.id,
      node_id: record.nodeId ?? '',
      name: record.name ?? '',
      type: outputTypeOf(record.contentType),
      content_type: record.contentType,
      size_bytes: record.sizeBytes,
      hash: record.hash,
      url: link.url,
      url_expires_at: link.expiresAt === null ? null : iso(link.expiresAt),
      job_id: record.jobId ?? '',
    };
  }

  private add(owner: string, hash: string, sizeBytes: number, meta: AssetMetadata): AssetRecord {
    const createdAt = this.options.now();
    const record: AssetRecord = {
      id: randomUUID(),
      owner,
      hash,
      file: this.blobs.pathOf(hash),
      sizeBytes,
      contentType: meta.contentType,
      name: meta.name,
      tags: [...(meta.tags ?? [])],
      createdAt,
      // One clock reading for both, so `expires_at - created_at` is exactly `expires_in`.
      expiresAt: meta.expiresInS === undefined ? meta.expiresAt : createdAt + meta.expiresInS * 1000,
      jobId: meta.jobId ?? null,
      nodeId: meta.nodeId ?? null,
    };
    this.blobs.retain(hash);
    this.records.set(record.id, record);
    this.options.onChange?.();
    return record;
  }

  private live(record: AssetRecord): boolean {
    return record.expiresAt === null || this.options.now() < record.expiresAt;
  }

  private remove(record: AssetRecord): void {
    this.records.delete(record.id);
    // A blob being streamed stays readable until its stream closes (POSIX unlink semantics).
    this.blobs.release(record.hash);
    if (this.blobs.sizeOf(record.hash) === undefined) this.blobTypes.delete(record.hash);
    this.options.onChange?.();
  }
}
