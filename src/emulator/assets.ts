/**
 * The asset store: UUID-identified records over blobs in the data directory, owned by one caller each
 * (jobs-assets-api-v2.md, "Asset" and design rule 3; FACTS.md "v2 assets"). Today its records are job
 * outputs; upload with dedup (POST /api/v2/assets, from-hash, HEAD by-hash, DELETE) is a later issue and
 * adds records through {@link AssetStore.add} the same way.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Links } from './links';
import { iso, outputTypeOf, type WireAsset, type WireOutput } from './wire';

/** One asset record. Times are ms since the epoch (the emulator's clock). */
export interface AssetRecord {
  readonly id: string;
  readonly owner: string;
  /** The blob on disk. */
  readonly file: string;
  readonly sizeBytes: number;
  readonly contentType: string;
  /** The name it was made or uploaded with (`file_path`; an output's `name`). */
  readonly name: string;
  /** `blake3:<hex>`, or null (not computed: the document allows a lazy hash). */
  readonly hash: string | null;
  readonly createdAt: number;
  /** After this instant the record is gone (404) and its blob deleted. */
  readonly expiresAt: number;
  /** The job that produced it, and its node; null for uploads. */
  readonly jobId: string | null;
  readonly nodeId: string | null;
}

/** What the store needs around it. */
export interface AssetStoreOptions {
  /** Where blobs live. */
  readonly dir: string;
  readonly now: () => number;
  readonly links: Links;
}

/** Asset records by id, with their blobs in {@link AssetStoreOptions.dir}. */
export class AssetStore {
  private readonly records = new Map<string, AssetRecord>();

  constructor(private readonly options: AssetStoreOptions) {}

  /** Where the blob of asset `id` is written (`ext` with its dot, e.g. `.png`). */
  blobPath(id: string, ext: string): string {
    return path.join(this.options.dir, `${id}${ext}`);
  }

  /** Records an asset whose blob is already at `record.file`. */
  add(record: AssetRecord): AssetRecord {
    this.records.set(record.id, record);
    return record;
  }

  /** Asset `id` of `owner`, or undefined when unknown, another owner's, or expired (then it is dropped). */
  get(owner: string, id: string): AssetRecord | undefined {
    const record = this.records.get(id);
    if (record === undefined || record.owner !== owner) return undefined;
    if (this.options.now() >= record.expiresAt) {
      this.remove(record);
      return undefined;
    }
    return record;
  }

  /** Drops every asset produced by job `jobId` (the job left retention: its outputs go with it). */
  dropJob(jobId: string): void {
    for (const record of [...this.records.values()]) if (record.jobId === jobId) this.remove(record);
  }

  /** Drops every expired asset. */
  sweep(): void {
    const now = this.options.now();
    for (const record of [...this.records.values()]) if (now >= record.expiresAt) this.remove(record);
  }

  /** The asset record as GET /api/v2/assets/{id} answers it. */
  toWire(record: AssetRecord): WireAsset {
    return {
      id: record.id,
      hash: record.hash,
      size_bytes: record.sizeBytes,
      content_type: record.contentType,
      created_at: iso(record.createdAt),
      url: this.options.links.assetContent(record.id),
      // The content link is served by the emulator itself: it stays valid as long as the asset.
      url_expires_at: iso(record.expiresAt),
      file_path: record.name,
      expires_at: iso(record.expiresAt),
      job_id: record.jobId,
    };
  }

  /** The asset as an item of a job's `outputs`. */
  toOutput(record: AssetRecord): WireOutput {
    return {
      id: record.id,
      node_id: record.nodeId ?? '',
      name: record.name,
      type: outputTypeOf(record.contentType),
      content_type: record.contentType,
      size_bytes: record.sizeBytes,
      hash: record.hash,
      url: this.options.links.assetContent(record.id),
      url_expires_at: iso(record.expiresAt),
      job_id: record.jobId ?? '',
    };
  }

  private remove(record: AssetRecord): void {
    this.records.delete(record.id);
    // Best effort: a blob being streamed stays readable until its stream closes (POSIX unlink semantics).
    fs.promises.rm(record.file, { force: true }).catch(() => undefined);
  }
}
