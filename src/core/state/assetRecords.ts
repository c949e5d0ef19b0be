/**
 * Remembered assets: the assets this machine uploaded and the job outputs it learned of, per server, in the state
 * directory the CLI and the extension share (the Assets view shows uploaded assets and outputs known to this machine).
 * The v2 contract lists no assets (Job and Asset API v2, Endpoints: "Other asset operations (… listing) … not shown"),
 * so what this machine did is the only listing there is.
 *
 * Layout, beside the job records of stateStore.ts:
 * - `<dir>/assets/<first 32 hex of sha256(baseUrl + "\n" + assetId)>.json`: one plain, pretty JSON {@link AssetRecord}
 *   per asset of a server. The name is a digest because an asset id is the server's choice (the self-hosted
 *   companion's are opaque signed tokens): it never becomes a path.
 * - `<dir>/tmp/`: records being written; each write goes to a temporary file renamed over the record (atomic on
 *   POSIX), so a reader never sees half a record. StateStore.pruneLeftovers removes temporary files left there.
 * A record is written whole by the one process that uploaded, downloaded or deleted the asset: the last write wins,
 * and no record is ever read-modified-written across processes, so no lock is needed.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { parseJsonObject, writeJsonAtomically } from './stateStore';

/** How this machine knows the asset: it uploaded it, or it is an output of a job. */
type AssetOrigin = 'upload' | 'output';

/** One remembered asset. Times are ISO 8601 strings; sizes are bytes. */
export interface AssetRecord {
  /** Base URL of the server that holds it (as the client's transport writes it). */
  baseUrl: string;
  assetId: string;
  origin: AssetOrigin;
  /** The asset's name (`file_path`, or the output's `name`). */
  fileName?: string;
  /** `blake3:<hex>`; null when the server has not computed it. */
  hash?: string | null;
  sizeBytes?: number | null;
  contentType?: string | null;
  /** True when the upload was a dedup hit: the bytes were already there and none were sent. */
  dedup?: boolean;
  /** Absolute path of the local file it was uploaded from, or last downloaded to. */
  localPath?: string;
  /** The job that produced it (outputs). */
  jobId?: string | null;
  /** When the server created the record. */
  createdAt?: string | null;
  /** When the server drops it; the record is pruned after it. */
  expiresAt?: string | null;
  /** When this machine recorded it. */
  recordedAt: string;
  /** Which program recorded it. */
  client?: 'cli' | 'vscode' | 'core';
}

/** Options of {@link AssetRecords}. */
export interface AssetRecordsOptions {
  /** Wall clock (ms since the epoch) for `recordedAt` and pruning. Default `Date.now`. */
  now?: () => number;
}

/**
 * What a record reads of an uploaded asset (the fields of a v2 asset, Job and Asset API v2, Asset object): state reads
 * no API's wire type, so any answer with these fields will do.
 */
interface UploadedAsset {
  id: string;
  file_path?: string | null;
  hash?: string | null;
  size_bytes?: number | null;
  content_type?: string | null;
  job_id?: string | null;
  created_at?: string | null;
  expires_at?: string | null;
  /** Other fields of the answer: not read. */
  [field: string]: unknown;
}

/**
 * What a record reads of a job's output (the fields of core/jobs' `JobOutput`; sizes in bytes). The functions take any
 * type with these fields (a type parameter), so a whole output, other fields and all, is passed as it is.
 */
interface OutputFields {
  id: string;
  name?: string | null;
  hash?: string | null;
  sizeBytes?: number | null;
  contentType?: string | null;
}

/** The record of an upload (`V2Client.uploadFile`'s answer), for {@link AssetRecords.put}. */
export function uploadRecord(
  baseUrl: string,
  upload: { asset: UploadedAsset; dedup: boolean; hash: string },
  localPath: string,
  client: AssetRecord['client'],
  now: number = Date.now(),
): AssetRecord {
  const a = upload.asset;
  return {
    baseUrl,
    assetId: a.id,
    origin: 'upload',
    fileName: a.file_path ?? path.basename(localPath),
    hash: a.hash ?? upload.hash,
    sizeBytes: a.size_bytes,
    contentType: a.content_type,
    dedup: upload.dedup,
    localPath: path.resolve(localPath),
    jobId: a.job_id ?? null,
    createdAt: a.created_at,
    expiresAt: a.expires_at ?? null,
    recordedAt: new Date(now).toISOString(),
    client,
  };
}

/**
 * The record of a job's output, for {@link AssetRecords.put}, on an API whose outputs are assets (the job backend's
 * `capabilities.assets`); it lives as long as its job.
 */
export function outputRecord<O extends OutputFields>(
  baseUrl: string,
  jobId: string,
  output: O,
  jobExpiresAt: string | null | undefined,
  client: AssetRecord['client'],
  now: number = Date.now(),
): AssetRecord {
  return {
    baseUrl,
    assetId: output.id,
    origin: 'output',
    fileName: output.name ?? undefined,
    hash: output.hash ?? null,
    sizeBytes: output.sizeBytes ?? null,
    contentType: output.contentType ?? null,
    jobId,
    expiresAt: jobExpiresAt ?? null,
    recordedAt: new Date(now).toISOString(),
    client,
  };
}

/**
 * The record of a job's output saved to a file on this machine (`submit --wait --out`, `watch --out`: outputs known to
 * this machine show in the Assets view): {@link outputRecord} with the absolute path it was saved to.
 * @param saved the output and the path written (a job backend's `downloadOutputs` items); a relative path is
 *   resolved against the current folder.
 */
export function savedOutputRecord(
  baseUrl: string,
  job: { id: string; expiresAt?: string | null },
  saved: { output: OutputFields; path: string },
  client: AssetRecord['client'],
  now: number = Date.now(),
): AssetRecord {
  return {
    ...outputRecord(baseUrl, job.id, saved.output, job.expiresAt, client, now),
    localPath: path.resolve(saved.path),
  };
}

/**
 * The record after its asset was downloaded to `savedPath`, or undefined when the record keeps its path: an output
 * remembers where it was last saved; an upload keeps the file it came from (unless it has none). The rule the
 * extension's Download and the CLI's `download` share.
 */
export function downloadedRecord(record: AssetRecord, savedPath: string): AssetRecord | undefined {
  if (record.origin !== 'output' && record.localPath) return undefined;
  return { ...record, localPath: path.resolve(savedPath) };
}

/** The file store of {@link AssetRecord}s (see the module comment). */
export class AssetRecords {
  private readonly assetsDir: string;
  private readonly tmpDir: string;
  private readonly now: () => number;

  /** @param dir the state directory (`defaultStateDir()`, or `StateStore.dir`), shared by the CLI and the extension. */
  constructor(
    readonly dir: string,
    options: AssetRecordsOptions = {},
  ) {
    this.assetsDir = path.join(dir, 'assets');
    this.tmpDir = path.join(dir, 'tmp');
    this.now = options.now ?? Date.now;
  }

  /** The folder the records are in (`<dir>/assets`), e.g. to watch it. */
  get folder(): string {
    return this.assetsDir;
  }

  /**
   * Writes (replaces) the record of `record.baseUrl` + `record.assetId`, atomically.
   * @throws Error for an empty asset id or base URL; file system errors.
   */
  async put(record: AssetRecord): Promise<void> {
    const file = this.fileOf(record.baseUrl, record.assetId);
    await fs.mkdir(this.assetsDir, { recursive: true, mode: 0o700 });
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.tmpDir, `asset.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    await writeJsonAtomically(file, record, temp);
  }

  /** The record of an asset of a server; undefined when there is none or it is unreadable. */
  async get(baseUrl: string, assetId: string): Promise<AssetRecord | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(baseUrl, assetId), 'utf8');
    } catch {
      return undefined;
    }
    const record = parseAssetRecord(text);
    // A file is only ever the record of its own (base URL, id): a record that claims another is not read.
    return record && record.baseUrl === baseUrl && record.assetId === assetId ? record : undefined;
  }

  /** Merges `patch` into a record (e.g. the path it was downloaded to). Returns the new record, or undefined when none. */
  async update(
    baseUrl: string,
    assetId: string,
    patch: Partial<Omit<AssetRecord, 'baseUrl' | 'assetId'>>,
  ): Promise<AssetRecord | undefined> {
    const current = await this.get(baseUrl, assetId);
    if (!current) return undefined;
    const next = { ...current, ...patch, baseUrl, assetId };
    await this.put(next);
    return next;
  }

  /** Removes the record of an asset (after it was deleted on the server); nothing when absent. */
  async remove(baseUrl: string, assetId: string): Promise<void> {
    await fs.rm(this.fileOf(baseUrl, assetId), { force: true });
  }

  /**
   * Every readable, unexpired record (of `baseUrl` only, when given), newest first (`recordedAt`). A record past its
   * `expiresAt` is left out and removed (the server no longer has the asset: Job and Asset API v2, Limits, rule 2).
   */
  async list(baseUrl?: string): Promise<AssetRecord[]> {
    const now = this.now();
    const records: AssetRecord[] = [];
    let names: string[];
    try {
      names = await fs.readdir(this.assetsDir);
    } catch {
      return [];
    }
    for (const name of names) {
      if (!/^[0-9a-f]{32}\.json$/.test(name)) continue;
      const file = path.join(this.assetsDir, name);
      const record = parseAssetRecord(await fs.readFile(file, 'utf8').catch(() => ''));
      if (!record || path.basename(this.fileOf(record.baseUrl, record.assetId)) !== name) continue;
      const expires = Date.parse(record.expiresAt ?? '');
      if (Number.isFinite(expires) && expires < now) {
        await fs.rm(file, { force: true }).catch(() => undefined);
        continue;
      }
      if (baseUrl === undefined || record.baseUrl === baseUrl) records.push(record);
    }
    return records.sort((a, b) => b.recordedAt.localeCompare(a.recordedAt));
  }

  private fileOf(baseUrl: string, assetId: string): string {
    if (!baseUrl || !assetId) throw new Error('an asset record needs a base URL and an asset id');
    const digest = createHash('sha256').update(`${baseUrl}\n${assetId}`, 'utf8').digest('hex').slice(0, 32);
    return path.join(this.assetsDir, `${digest}.json`);
  }
}

/**
 * A record read tolerantly: unknown fields kept; undefined when it is not a JSON object with string `baseUrl`,
 * `assetId`, `recordedAt` and an `origin` (an unknown origin is read as `upload`).
 */
export function parseAssetRecord(text: string): AssetRecord | undefined {
  const r = parseJsonObject(text);
  if (!r) return undefined;
  if (
    typeof r.baseUrl !== 'string' ||
    typeof r.assetId !== 'string' ||
    typeof r.recordedAt !== 'string' ||
    !r.baseUrl ||
    !r.assetId
  )
    return undefined;
  const origin: AssetOrigin = r.origin === 'output' ? 'output' : 'upload';
  return { ...(r as unknown as AssetRecord), origin };
}
