/**
 * The emulator's records on disk, so that a restart with the same data folder keeps its jobs, outputs, assets and
 * Idempotency-Key claims (Job and Asset API v2, States and transitions: "a 201 means the job is durably recorded and
 * queued"; POST /api/v2/jobs, rules 3–6: a claimed key stays claimed for 24 hours, restart or not).
 *
 * Layout under the data folder: `state.json` (this module: one versioned document, {@link STATE_FORMAT} version
 * {@link STATE_VERSION}), `blobs/` and `tmp/` (blobs.ts). Rules:
 * - a write is atomic: the document goes to `state.json.tmp`, is flushed to disk, then renamed over `state.json`, so
 *   a reader (the next start) sees the previous document or the new one, never half of one;
 * - writes are coalesced: any number of changes in one turn of the event loop make one write, at the next turn;
 * - bounded: a document larger than {@link MAX_STATE_BYTES} is neither written (the previous one stays, a warning is
 *   said) nor read;
 * - a document that is not one of ours (unparsable, torn, wrong shape) is moved aside to `state.json.unreadable-<ms>`
 *   with a warning, and the emulator starts empty: a damaged file never stops it and is never silently lost;
 * - a document of a newer version is refused (the emulator does not start), so that an older emulator never
 *   overwrites what a newer one wrote;
 * - an item that cannot be read (a job without an id, an asset whose blob is gone) is skipped with a warning.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isPlainObject } from '../core/util/workflow';
import type { JobStatus, WireJobError, WireLogLine, WireProgress } from './v2/wire';
import type { SavedBlob } from './blobs';
import type { SavedAsset } from './v2/assets';

/** The `format` member of `state.json`: says the file is ours. */
export const STATE_FORMAT = 'comfy-cloud-emulator-state';
/** The version this emulator writes and reads. A newer one is refused; an older one would be migrated here. */
export const STATE_VERSION = 1;
/** The file's name under the data folder. */
export const STATE_FILE = 'state.json';
/** The largest `state.json` written or read, in bytes (64 MiB): jobs leave with retention, so this is far. */
export const MAX_STATE_BYTES = 64 * 1024 * 1024;

/** A job as persisted. Times are ms since the epoch; `outputs` are asset ids, in commit order. */
export interface SavedJob {
  readonly id: string;
  readonly owner: string;
  readonly status: JobStatus;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly completedAt: number | null;
  readonly expiresAt: number;
  readonly progress: WireProgress | null;
  readonly outputs: readonly string[];
  readonly error: WireJobError | null;
  readonly workflow: Record<string, unknown>;
  readonly logLines: readonly WireLogLine[];
}

/** One Idempotency-Key claim: owner, key, the time of the claim (ms). */
export type SavedClaim = readonly [owner: string, key: string, claimedAt: number];

/** Everything the emulator keeps across a restart. */
export interface SavedState {
  /** In creation order. */
  readonly jobs: readonly SavedJob[];
  readonly assets: readonly SavedAsset[];
  readonly blobs: readonly SavedBlob[];
  /** Claims of POST /api/v2/jobs and of POST /api/v2/assets. */
  readonly keys: { readonly jobs: readonly SavedClaim[]; readonly uploads: readonly SavedClaim[] };
}

/** An empty state (a new data folder). */
const EMPTY_STATE: SavedState = { jobs: [], assets: [], blobs: [], keys: { jobs: [], uploads: [] } };

/** What the data folder's `state.json` holds on disk. */
interface StateDocument extends SavedState {
  readonly format: typeof STATE_FORMAT;
  readonly version: number;
}

const JOB_STATUSES: readonly JobStatus[] = [
  'queued',
  'running',
  'canceling',
  'succeeded',
  'canceled',
  'failed',
  'expired',
];

const isString = (v: unknown): v is string => typeof v === 'string';
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const timeOrNull = (v: unknown): v is number | null => v === null || isTime(v);
const stringOrNull = (v: unknown): v is string | null => v === null || isString(v);

function readJob(raw: unknown): SavedJob | undefined {
  if (!isPlainObject(raw)) return undefined;
  const {
    id,
    owner,
    status,
    createdAt,
    startedAt,
    completedAt,
    expiresAt,
    progress,
    outputs,
    error,
    workflow,
    logLines,
  } = raw;
  if (
    !isString(id) ||
    !isString(owner) ||
    !JOB_STATUSES.includes(status as JobStatus) ||
    !isTime(createdAt) ||
    !isTime(expiresAt)
  )
    return undefined;
  if (!timeOrNull(startedAt) || !timeOrNull(completedAt) || !isPlainObject(workflow)) return undefined;
  if (!Array.isArray(outputs) || !outputs.every(isString)) return undefined;
  return {
    id,
    owner,
    status: status as JobStatus,
    createdAt,
    startedAt,
    completedAt,
    expiresAt,
    // Written by this module from the emulator's own wire shapes: kept as they are when they are objects.
    progress: isPlainObject(progress) ? (progress as unknown as WireProgress) : null,
    outputs,
    error: isPlainObject(error) ? (error as unknown as WireJobError) : null,
    workflow,
    logLines: Array.isArray(logLines) ? logLines.filter(isPlainObject).map((l) => l as unknown as WireLogLine) : [],
  };
}

function readAsset(raw: unknown): SavedAsset | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { id, owner, hash, sizeBytes, contentType, name, tags, createdAt, expiresAt, jobId, nodeId } = raw;
  if (
    !isString(id) ||
    !isString(owner) ||
    !isString(hash) ||
    !isTime(sizeBytes) ||
    !isString(contentType) ||
    !isTime(createdAt)
  )
    return undefined;
  if (!stringOrNull(name) || !timeOrNull(expiresAt) || !stringOrNull(jobId) || !stringOrNull(nodeId)) return undefined;
  return {
    id,
    owner,
    hash,
    sizeBytes,
    contentType,
    name,
    tags: Array.isArray(tags) ? tags.filter(isString) : [],
    createdAt,
    expiresAt,
    jobId,
    nodeId,
  };
}

function readBlob(raw: unknown): SavedBlob | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { hash, sizeBytes, contentType, owners } = raw;
  if (!isString(hash) || !isTime(sizeBytes) || !stringOrNull(contentType) || !Array.isArray(owners)) return undefined;
  return { hash, sizeBytes, contentType, owners: owners.filter(isString) };
}

function readClaims(raw: unknown): SavedClaim[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (c): c is SavedClaim => Array.isArray(c) && c.length === 3 && isString(c[0]) && isString(c[1]) && isTime(c[2]),
  );
}

/** Items of `raw` that `read` accepts; each refused one is said once with `what`. */
function readAll<T>(
  raw: unknown,
  read: (item: unknown) => T | undefined,
  what: string,
  warn: (line: string) => void,
): T[] {
  if (!Array.isArray(raw)) return [];
  const out: T[] = [];
  let skipped = 0;
  for (const item of raw) {
    const value = read(item);
    if (value === undefined) skipped++;
    else out.push(value);
  }
  if (skipped > 0) warn(`skipped ${skipped} unreadable ${what} record${skipped > 1 ? 's' : ''} in ${STATE_FILE}`);
  return out;
}

/**
 * `state.json` of one data folder: read once at start, written after changes (coalesced, atomic).
 */
export class StateFile {
  private readonly file: string;
  private readonly temp: string;
  private pending: NodeJS.Immediate | undefined;
  private closed = false;

  /**
   * @param dir the data folder.
   * @param snapshot what to write: the emulator's records now.
   * @param warn receives one line per problem (a file moved aside, a record skipped, a write refused).
   */
  constructor(
    private readonly dir: string,
    private readonly snapshot: () => SavedState,
    private readonly warn: (line: string) => void,
  ) {
    this.file = path.join(dir, STATE_FILE);
    this.temp = path.join(dir, `${STATE_FILE}.tmp`);
  }

  /**
   * Reads `state.json`: its records, or {@link EMPTY_STATE} when there is none, or when it is not readable (then it
   * is moved aside and a warning says where). A leftover `state.json.tmp` (a write cut by a crash) is removed.
   * @throws TypeError when the file was written by a newer emulator (a newer `version`).
   */
  load(): SavedState {
    fs.rmSync(this.temp, { force: true });
    let text: string;
    try {
      const size = fs.statSync(this.file).size;
      if (size > MAX_STATE_BYTES) return this.setAside(`it is ${size} bytes, more than the ${MAX_STATE_BYTES} allowed`);
      text = fs.readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_STATE;
      throw e;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      return this.setAside(`it is not JSON (${(e as Error).message})`);
    }
    if (!isPlainObject(doc) || doc.format !== STATE_FORMAT || !Number.isInteger(doc.version))
      return this.setAside(`it is not an emulator state document (${STATE_FORMAT})`);
    if ((doc.version as number) > STATE_VERSION) {
      throw new TypeError(
        `the data folder ${this.dir} was written by a newer emulator (${STATE_FILE} version ${String(doc.version)}; this one reads version ${STATE_VERSION}): use that emulator, or another data folder`,
      );
    }
    const keys = isPlainObject(doc.keys) ? doc.keys : {};
    return {
      jobs: readAll(doc.jobs, readJob, 'job', this.warn),
      assets: readAll(doc.assets, readAsset, 'asset', this.warn),
      blobs: readAll(doc.blobs, readBlob, 'blob', this.warn),
      keys: { jobs: readClaims(keys.jobs), uploads: readClaims(keys.uploads) },
    };
  }

  /** Schedules one write at the next turn of the event loop (changes made meanwhile go into the same write). */
  changed(): void {
    if (this.closed || this.pending !== undefined) return;
    this.pending = setImmediate(() => {
      this.pending = undefined;
      this.write();
    });
  }

  /** Writes now what is pending, and stops writing (the emulator closes). */
  close(): void {
    if (this.closed) return;
    if (this.pending !== undefined) clearImmediate(this.pending);
    this.pending = undefined;
    this.write();
    this.closed = true;
  }

  /** Writes the snapshot atomically (temp file, flush, rename); a failure is said, never thrown (the next change retries). */
  private write(): void {
    const doc: StateDocument = { format: STATE_FORMAT, version: STATE_VERSION, ...this.snapshot() };
    const bytes = Buffer.from(JSON.stringify(doc), 'utf8');
    if (bytes.length > MAX_STATE_BYTES) {
      this.warn(
        `not saved: the emulator's records are ${bytes.length} bytes, more than the ${MAX_STATE_BYTES} allowed in ${STATE_FILE}; the previous ${STATE_FILE} stays`,
      );
      return;
    }
    try {
      const fd = fs.openSync(this.temp, 'w');
      try {
        fs.writeSync(fd, bytes);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(this.temp, this.file);
    } catch (e) {
      fs.rmSync(this.temp, { force: true });
      this.warn(`cannot save ${STATE_FILE}: ${(e as Error).message}`);
    }
  }

  /** Moves an unreadable `state.json` aside and says so; the emulator starts empty. */
  private setAside(why: string): SavedState {
    const aside = `${this.file}.unreadable-${Date.now()}`;
    fs.renameSync(this.file, aside);
    this.warn(`${STATE_FILE} was not read: ${why}; moved to ${aside}, starting with no jobs`);
    return EMPTY_STATE;
  }
}
