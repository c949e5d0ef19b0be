/**
 * Remembered jobs: a small file store shared by the CLI and the extension, so a job submitted is never lost from
 * view (issue "Never lose or duplicate a job"; jobs-assets-api-v2.md design rule 2: job state is retrievable by id
 * until `expires_at`; POST /api/v2/jobs rule 5: after an unknown outcome the client looks instead of resubmitting).
 *
 * Layout: `<dir>/jobs/<idempotency-key>.json`, one file per submission. Each write goes to a temporary file that
 * is renamed over the record (atomic on POSIX), so a reader never sees half a record and two processes never
 * corrupt each other; they only ever touch the records of their own submissions.
 * Directory: `$COMFY_CLOUD_STATE_DIR`, else `$XDG_STATE_HOME/comfy-cloud`, else `~/.local/state/comfy-cloud`.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Where a submission stands, as far as this client knows. */
export type SubmissionState =
  /** The key is written; the request is about to be sent or under way. */
  | 'pending'
  /** The server answered 201: `jobId` is known. */
  | 'created'
  /** The request may have created a job (timeout, reset, 5xx): never resubmitted; look for it. */
  | 'outcome_unknown';

/** One remembered submission. Times are ISO 8601 strings. */
export interface JobRecord {
  idempotencyKey: string;
  /** Base URL of the server it was sent to. */
  baseUrl: string;
  state: SubmissionState;
  jobId?: string;
  /** Absolute path of the workflow file, when it came from one. */
  workflowFile?: string;
  /** BLAKE3 of the canonical workflow JSON, to recognise the job among a listing. */
  workflowHash?: string;
  submittedAt: string;
  /** The job's retention deadline, once known; the record is dropped after it. */
  expiresAt?: string;
  /** Last status seen. */
  lastStatus?: string;
  /** Which program submitted it. */
  client?: 'cli' | 'vscode' | 'core';
}

/** How long a record without a known `expires_at` is kept (ms): the Idempotency-Key's own lifetime, 24 h. */
export const RECORD_TTL_MS = 24 * 60 * 60 * 1000;

/** The state directory for an environment. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.COMFY_CLOUD_STATE_DIR) return env.COMFY_CLOUD_STATE_DIR;
  const base = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'comfy-cloud');
}

const KEY = /^[A-Za-z0-9._-]{1,255}$/;

/** The file store of {@link JobRecord}s. */
export class StateStore {
  private readonly jobsDir: string;

  constructor(readonly dir: string = defaultStateDir()) {
    this.jobsDir = path.join(dir, 'jobs');
  }

  /** Writes (replaces) a record atomically. @throws Error for a key that is not a safe file name. */
  async put(record: JobRecord): Promise<void> {
    const file = this.fileOf(record.idempotencyKey);
    await fs.mkdir(this.jobsDir, { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(temp, JSON.stringify(record, null, 2), { mode: 0o600 });
    await fs.rename(temp, file);
  }

  /** Merges `patch` into the record of `key` (read, merge, atomic write). Returns the new record, or undefined when none. */
  async update(key: string, patch: Partial<JobRecord>): Promise<JobRecord | undefined> {
    const current = await this.get(key);
    if (!current) return undefined;
    const next = { ...current, ...patch, idempotencyKey: key };
    await this.put(next);
    return next;
  }

  async get(key: string): Promise<JobRecord | undefined> {
    try {
      return JSON.parse(await fs.readFile(this.fileOf(key), 'utf8')) as JobRecord;
    } catch {
      return undefined;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.rm(this.fileOf(key), { force: true });
  }

  /** Every readable record, newest submission first (a record being written by another process is skipped). */
  async list(): Promise<JobRecord[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.jobsDir);
    } catch {
      return [];
    }
    const records: JobRecord[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const record = await this.get(name.slice(0, -'.json'.length));
      if (record) records.push(record);
    }
    return records.sort((a, b) => b.submittedAt.localeCompare(a.submittedAt));
  }

  /** Drops records past their job's `expires_at`, or older than 24 h when that is unknown. Returns how many. */
  async prune(nowMs: number = Date.now()): Promise<number> {
    let removed = 0;
    for (const r of await this.list()) {
      const deadline = r.expiresAt ? Date.parse(r.expiresAt) : Date.parse(r.submittedAt) + RECORD_TTL_MS;
      if (Number.isFinite(deadline) && deadline < nowMs) {
        await this.remove(r.idempotencyKey);
        removed++;
      }
    }
    return removed;
  }

  private fileOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`not a usable Idempotency-Key for a file name: ${JSON.stringify(key)}`);
    return path.join(this.jobsDir, `${key}.json`);
  }
}
