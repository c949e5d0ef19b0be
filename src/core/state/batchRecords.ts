/**
 * Remembered batches: one record per batch, `<dir>/batches/<batch-id>.json`, holding the workflow, every variation's
 * inputs and every variation's own Idempotency-Key, written whole and atomically before the first job of the batch is
 * sent, so a batch resumed after a crash sends each variation under the key it was given and no other (Job and Asset
 * API v2, POST /api/v2/jobs, rules 3–5: a key presented again never creates a second job; after an unknown outcome
 * the client looks instead of resubmitting).
 *
 * Rules:
 * - a batch record is created once: {@link BatchStore.create} never replaces an existing one (a hard link of the
 *   written temporary file, which fails when the name exists; atomic on POSIX), so two processes never both own an id;
 *   after that only {@link BatchStore.markCanceled} rewrites it (atomically), and never its variations or keys;
 * - a record is read tolerantly: a damaged or foreign file is skipped, never thrown on;
 * - the state layer reads no API's types: a variation's inputs are stored as given (structural values).
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { ComfyError } from '../http/errors';
import { parseJsonObject, writeJsonAtomically } from './stateStore';

/** One variation of a remembered batch. */
export interface BatchVariationRecord {
  /** 0-based index in the batch (its output folder is named after it). */
  index: number;
  /** The Idempotency-Key every submission of this variation presents, and the name of its job record. */
  idempotencyKey: string;
  /** The inputs it sets, as the batch model gives them (node id, input name, value). */
  inputs: Array<{ nodeId: string; field: string; value: unknown }>;
}

/** One remembered batch. Times are ISO 8601 strings. */
export interface BatchRecord {
  batchId: string;
  /** Base URL of the server its jobs go to. */
  baseUrl: string;
  /** The API-format workflow every variation starts from. */
  workflow: unknown;
  /** Absolute path of the workflow file, when it came from one. */
  workflowFile?: string;
  createdAt: string;
  /** Jobs in flight at once. */
  concurrency: number;
  /**
   * Which program recorded it (and runs it): a window of VS Code resumes, unasked, only the unfinished batches it
   * recorded itself (`vscode`), never the CLI's. Absent in records written before it was kept.
   */
  client?: 'cli' | 'vscode' | 'core';
  /** Set when the batch was canceled: nothing more of it is sent. */
  canceledAt?: string;
  variations: BatchVariationRecord[];
}

/** A batch id as a file name: no separator, so a hostile id never names a path outside `batches/`. */
const BATCH_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A new batch id: `b-` and a UUID. */
export function newBatchId(): string {
  return `b-${randomUUID()}`;
}

/** The file store of {@link BatchRecord}s, in the state directory beside the job records. */
export class BatchStore {
  private readonly batchesDir: string;
  private readonly tmpDir: string;
  /** What {@link canceledAt} last read of each batch, by the file's stamp. */
  private readonly canceled = new Map<string, { stamp: string; at: string | undefined }>();

  constructor(readonly dir: string) {
    this.batchesDir = path.join(dir, 'batches');
    this.tmpDir = path.join(dir, 'tmp');
  }

  /**
   * Writes a new batch record whole and atomically; never replaces one.
   * @throws ComfyError `batch_exists` when the id has a record already; Error for an id that is not a safe file
   *   name; file system errors (nothing is left half-written).
   */
  async create(record: BatchRecord): Promise<void> {
    const file = this.fileOf(record.batchId);
    await fs.mkdir(this.batchesDir, { recursive: true, mode: 0o700 });
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.tmpDir, `${record.batchId}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await fs.writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
      // link, not rename: it fails when the name exists, so a record is never replaced.
      await fs.link(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        throw new ComfyError('batch_exists', `a batch ${record.batchId} is already recorded`);
      throw err;
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  /**
   * Marks a batch canceled at `at` (ISO 8601) so no process sends more of it (a runner reads the record before each
   * submission); the record is replaced atomically (rename), its variations and keys as they were. A batch already
   * canceled keeps its first time.
   * @returns the record as now stored, or undefined when there is none.
   * @throws file system errors.
   */
  async markCanceled(batchId: string, at: string): Promise<BatchRecord | undefined> {
    const current = await this.get(batchId);
    if (!current) return undefined;
    if (current.canceledAt) return current;
    const next: BatchRecord = { ...current, canceledAt: at };
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    await writeJsonAtomically(
      this.fileOf(batchId),
      next,
      path.join(this.tmpDir, `${batchId}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`),
    );
    return next;
  }

  /**
   * When batch `batchId` was canceled (ISO 8601), undefined when it was not (or is not recorded). Its file is read
   * again only when it changed (its inode, time and size: {@link markCanceled} replaces it by a rename), so a runner can
   * ask before each submission without parsing the whole record each time; a cancel by another process is seen at once.
   */
  async canceledAt(batchId: string): Promise<string | undefined> {
    const stat = await fs.stat(this.fileOf(batchId)).catch(() => undefined);
    if (!stat) return undefined;
    const stamp = `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    const known = this.canceled.get(batchId);
    if (known?.stamp === stamp) return known.at;
    const at = (await this.get(batchId))?.canceledAt;
    this.canceled.set(batchId, { stamp, at });
    return at;
  }

  /** The record of `batchId`, or undefined when there is none or it is not readable. */
  async get(batchId: string): Promise<BatchRecord | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(batchId), 'utf8');
    } catch {
      return undefined;
    }
    return parseBatchRecord(batchId, text);
  }

  /** Every readable batch record, newest first. */
  async list(): Promise<BatchRecord[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.batchesDir);
    } catch {
      return [];
    }
    const ids = names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((id) => BATCH_ID.test(id));
    const records = (await Promise.all(ids.map((id) => this.get(id)))).filter((r): r is BatchRecord => r !== undefined);
    return records.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  private fileOf(batchId: string): string {
    if (!BATCH_ID.test(batchId)) throw new Error(`not a usable batch id for a file name: ${JSON.stringify(batchId)}`);
    return path.join(this.batchesDir, `${batchId}.json`);
  }
}

/** A batch record read tolerantly; the id is the file's. Undefined without `createdAt` or a `variations` list. */
function parseBatchRecord(batchId: string, text: string): BatchRecord | undefined {
  const r = parseJsonObject(text);
  if (!r || typeof r.createdAt !== 'string' || !Array.isArray(r.variations)) return undefined;
  return { ...(r as unknown as BatchRecord), batchId };
}
