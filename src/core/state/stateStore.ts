/**
 * Remembered jobs: a small file store shared by the CLI and the extension, so a job submitted is never lost from
 * view (Job and Asset API v2, What the service does, design rule 2: job state is retrievable by id
 * until `expires_at`; POST /api/v2/jobs rule 5: after an unknown outcome the client looks instead of resubmitting).
 *
 * Layout (one record per submission, readable by other tools):
 * - `<dir>/jobs/<idempotency-key>.json`: one plain, pretty JSON record per submission, and nothing else;
 * - `<dir>/tmp/`: records being written (each write goes to a temporary file renamed over the record, atomic on
 *   POSIX, so a reader never sees half a record);
 * - `<dir>/locks/<key>.lock`: `proper-lockfile` locks (directories; storeLocks.ts).
 * Several processes (CLIs, the extension) write the same records: every read-modify-write, and every write that
 * may replace a record, happens under the record's lock (safe for concurrent writers). A lock whose
 * holder died is taken over once it is `lockStaleMs` old (the holder refreshes it while alive); leftovers (old
 * temporary files, locks nobody holds) are removed by {@link StateStore.prune}, and cheaply when the store is listed.
 * Directory: `$COMFY_CLOUD_STATE_DIR`, else `$XDG_STATE_HOME/comfy-cloud`, else `~/.local/state/comfy-cloud`.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseJsonObject, readTextFiles, readdirOrEmpty, reread, writeJsonAtomically } from './stateFiles';
import { StoreLocks, isOlderThan } from './storeLocks';
import {
  MAX_CHAIN,
  claimedJobIds,
  defaultStateDir,
  keepsTerminalStatus,
  submissionChain,
  type JobRecord,
  type LateJob,
} from './jobRecords';

// Records and the files of the state folder are in their own modules; their names stay importable from here.
export * from './jobRecords';
export { parseJsonObject, writeJsonAtomically } from './stateFiles';

/** How long a record without a known `expires_at` is kept (ms): the Idempotency-Key's own lifetime, 24 h. */
const RECORD_TTL_MS = 24 * 60 * 60 * 1000;

/** How old a temporary file must be before {@link StateStore.prune} removes it (ms): 1 h, far beyond any write. */
const TEMP_FILE_TTL_MS = 60 * 60 * 1000;

/** A lock not refreshed for this long is taken over (ms). Its holder refreshes it every half of this while alive. */
export const LOCK_STALE_MS = 10_000;

/**
 * True when a record is past its job's `expires_at` (the job and its outputs are gone from the server then:
 * Job and Asset API v2, Limits, rule 2), or, when that is unknown, older than {@link RECORD_TTL_MS} (the
 * Idempotency-Key's lifetime). A record with unreadable times is kept. `nowMs`: ms since the epoch. What {@link
 * StateStore.prune} drops, and what the Jobs view leaves out even before the prune ran (records past `expires_at` are
 * pruned).
 */
export function isExpiredRecord(record: Pick<JobRecord, 'expiresAt' | 'submittedAt'>, nowMs: number): boolean {
  const deadline = record.expiresAt ? Date.parse(record.expiresAt) : Date.parse(record.submittedAt) + RECORD_TTL_MS;
  return Number.isFinite(deadline) && deadline < nowMs;
}

/**
 * A usable Idempotency-Key as a file name: no separator, so a hostile `--idempotency-key` never names a path
 * outside `jobs/`. `@` is not allowed, so the store's own lock names (`@claims`) never meet a key's.
 */
const KEY = /^[A-Za-z0-9._-]{1,255}$/;

/** The store-wide lock under which a found job is attached to a record (one job, one record). */
const CLAIMS_LOCK = '@claims';

/** Options of {@link StateStore}. */
export interface StateStoreOptions {
  /** Wall clock (ms since the epoch) for the pruning decisions. Default `Date.now`. */
  now?: () => number;
  /** Age (ms) after which a temporary file is pruned. Default {@link TEMP_FILE_TTL_MS}. */
  tempFileTtlMs?: number;
  /** Age (ms) after which a lock is taken over. Default {@link LOCK_STALE_MS}; at least 2 000 (proper-lockfile's floor). */
  lockStaleMs?: number;
  /**
   * Attempts to take a held lock before giving up (each 5–200 ms apart, jittered). The default (250, about 25–50 s)
   * outlasts `lockStaleMs`, so a lock left by a killed process is taken over rather than given up on.
   */
  lockRetries?: number;
}

/** Why {@link StateStore.claimJob} did not attach the job (`retired`: the record's key stands for no job). */
type ClaimRefusal = 'no_record' | 'claimed_by_other' | 'has_job' | 'retired';

/** The file store of {@link JobRecord}s. Safe for concurrent writers in several processes. */
export class StateStore {
  private readonly jobsDir: string;
  private readonly tmpDir: string;
  private readonly locks: StoreLocks;
  private readonly now: () => number;
  private readonly tempFileTtlMs: number;
  /** When `list()` last pruned leftovers (ms): they are pruned at most once a minute that way. */
  private leftoversPrunedAt = -Infinity;

  constructor(
    readonly dir: string = defaultStateDir(),
    options: StateStoreOptions = {},
  ) {
    this.jobsDir = path.join(dir, 'jobs');
    this.tmpDir = path.join(dir, 'tmp');
    this.now = options.now ?? Date.now;
    this.tempFileTtlMs = options.tempFileTtlMs ?? TEMP_FILE_TTL_MS;
    const lockStaleMs = Math.max(options.lockStaleMs ?? LOCK_STALE_MS, 2000);
    this.locks = new StoreLocks(path.join(dir, 'locks'), lockStaleMs, options.lockRetries ?? 250);
  }

  /**
   * Writes (replaces) a record atomically, under its lock.
   * @throws Error for a key that is not a safe file name; ComfyError `state_locked` when the lock stays held.
   */
  async put(record: JobRecord): Promise<void> {
    const key = record.idempotencyKey;
    this.fileOf(key);
    await this.withLock(key, (held) => this.write({ ...record, idempotencyKey: key }, held));
  }

  /**
   * Writes `record` only when its key has no record yet (one atomic check-and-write under the lock).
   * @returns the record already there (nothing written), or undefined when `record` was written.
   * @throws as {@link put}.
   */
  async putIfAbsent(record: JobRecord): Promise<JobRecord | undefined> {
    const key = record.idempotencyKey;
    this.fileOf(key);
    return this.withLock(key, async (held) => {
      const existing = await this.get(key);
      if (existing) return existing;
      await this.write({ ...record, idempotencyKey: key }, held);
      return undefined;
    });
  }

  /**
   * Read-modify-write of the record of `key` under its lock: `fn` gets the current record and returns the next one
   * (its `idempotencyKey` is forced to `key`), or undefined to leave it as it is. `fn` is synchronous so the lock is
   * held for milliseconds, never across a request. A record never goes back from a terminal `lastStatus`
   * (succeeded, failed, canceled, expired: Job and Asset API v2, States and transitions) to another one: what `fn`
   * returns keeps the terminal status, whatever a late or stale writer says ({@link keepsTerminalStatus}).
   * @returns the record as stored after the call; undefined when there is none (`fn` is not called).
   * @throws as {@link put}, and whatever `fn` throws (nothing written).
   */
  async mutate(key: string, fn: (current: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined> {
    this.fileOf(key);
    return this.withLock(key, async (held) => {
      const current = await this.get(key);
      if (!current) return undefined;
      const next = fn(current);
      if (next === undefined) return current;
      const written = { ...keepsTerminalStatus(current, next), idempotencyKey: key };
      await this.write(written, held);
      return written;
    });
  }

  /**
   * Merges `patch` into every record of job `jobId` of the server at `baseUrl` (a job may be remembered by several
   * records: a submission, and one a reconcile adopted), each under its lock ({@link mutate}, so a terminal status
   * stays). Returns the records as stored after the call.
   * @throws ComfyError `state_locked` when a record stays locked by another process (the others are updated).
   */
  async updateJob(baseUrl: string, jobId: string, patch: Partial<JobRecord>): Promise<JobRecord[]> {
    const updated: JobRecord[] = [];
    let failure: unknown;
    for (const r of await this.readAll()) {
      if (r.baseUrl !== baseUrl || r.jobId !== jobId) continue;
      try {
        const record = await this.mutate(r.idempotencyKey, (current) =>
          current.jobId === jobId ? { ...current, ...patch } : undefined,
        );
        if (record) updated.push(record);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
    return updated;
  }

  /**
   * The one writer of what a server said of a remembered job: its `lastStatus` (a terminal one is never replaced:
   * jobRecords.ts `keepsTerminalStatus`, so a late or lagging answer cannot move a record back) and its expiry when the
   * answer gives one (kept otherwise). `target` is a record's key, or a job (`baseUrl` and `jobId`: every record of
   * it). Returns the records as stored. Records are made with their first status elsewhere (a submission, a claim).
   * @throws as {@link update} and {@link updateJob}.
   */
  async recordStatus(
    target: string | { baseUrl: string; jobId: string },
    said: { status: string; expiresAt?: string | null },
  ): Promise<JobRecord[]> {
    const patch: Partial<JobRecord> = { lastStatus: said.status };
    if (said.expiresAt) patch.expiresAt = said.expiresAt;
    if (typeof target !== 'string') return this.updateJob(target.baseUrl, target.jobId, patch);
    const record = await this.update(target, patch);
    return record ? [record] : [];
  }

  /** Merges `patch` into the record of `key` ({@link mutate}). Returns the new record, or undefined when none. */
  async update(key: string, patch: Partial<JobRecord>): Promise<JobRecord | undefined> {
    return this.mutate(key, (current) => ({ ...current, ...patch }));
  }

  /**
   * Attaches job `jobId` (with `patch`) to the record of `key`, under the store-wide claims lock, unless another
   * record already holds that job id or the record already has a job (reconcile.ts: one job, one record).
   * @returns the updated record, or why nothing was written.
   */
  async claimJob(
    key: string,
    jobId: string,
    patch: Partial<JobRecord> = {},
  ): Promise<{ record: JobRecord } | { refused: ClaimRefusal }> {
    this.fileOf(key);
    return this.withLock(CLAIMS_LOCK, async () => {
      if (claimedJobIds((await this.readAll()).filter((r) => r.idempotencyKey !== key)).has(jobId))
        return { refused: 'claimed_by_other' as const };
      let refused: ClaimRefusal | undefined;
      const record = await this.mutate(key, (current) => {
        if (current.jobId !== undefined) {
          refused = current.jobId === jobId ? undefined : 'has_job';
          return undefined;
        }
        if (current.state === 'retired') {
          refused = 'retired';
          return undefined;
        }
        return { ...current, ...patch, jobId };
      });
      if (!record) return { refused: 'no_record' as const };
      return refused ? { refused } : { record };
    });
  }

  /**
   * Retires the key of `key`'s record after the absence of its job was proven (or, `byUser`, on the user's word where
   * it cannot be): `retired`, with `retiredAt`, `retiredBy`, its `sentAt` kept (default its `submittedAt`) and
   * `successorKey`, in one atomic write under its lock, so the
   * successor is named before anything is sent under it. A record that has a job, stands for one (`acceptedUnread`),
   * or is retired already (by another process: its successor stands), is left as it is.
   * @returns the record as stored after the call (check its `state`), or undefined when there is none.
   * @throws as {@link put}; Error for a successor that is not a usable key.
   */
  async retire(
    key: string,
    fields: { successorKey: string; retiredAt: string; byUser?: boolean },
  ): Promise<JobRecord | undefined> {
    this.fileOf(fields.successorKey);
    return this.mutate(key, (current) => {
      if (current.jobId !== undefined || current.state === 'retired' || current.acceptedUnread) return undefined;
      return {
        ...current,
        state: 'retired',
        sentAt: current.sentAt ?? current.submittedAt,
        retiredAt: fields.retiredAt,
        retiredBy: fields.byUser ? 'user' : 'listing',
        successorKey: fields.successorKey,
      };
    });
  }

  /**
   * Notes `late` on the retired record of `key`: a job that turned up for that key while its submission had a job of
   * its own. Under the store-wide claims lock, like {@link claimJob}: a job another record holds (as its job or as a
   * late one) is not noted again.
   * @returns the record as stored, or undefined when nothing was noted (no such retired record, or the job is held).
   */
  async noteLateJob(key: string, late: LateJob): Promise<JobRecord | undefined> {
    this.fileOf(key);
    return this.withLock(CLAIMS_LOCK, async () => {
      if (claimedJobIds(await this.readAll()).has(late.jobId)) return undefined;
      let noted = false;
      const record = await this.mutate(key, (current) => {
        if (current.state !== 'retired') return undefined;
        noted = true;
        return { ...current, lateJobs: [...(current.lateJobs ?? []), late] };
      });
      return noted ? record : undefined;
    });
  }

  /** {@link submissionChain} of `originKey` in this store (records read one by one). */
  async chain(
    originKey: string,
  ): Promise<{ records: JobRecord[]; currentKey: string; current: JobRecord | undefined }> {
    const read = new Map<string, JobRecord | undefined>();
    let key = originKey;
    // Read ahead along the chain, then let the pure walk decide (the same rule as for a listing).
    for (let i = 0; i < MAX_CHAIN && !read.has(key); i++) {
      const record = await this.get(key);
      read.set(key, record);
      if (!record || record.state !== 'retired' || !record.successorKey) break;
      key = record.successorKey;
    }
    return submissionChain(originKey, (k) => read.get(k));
  }

  /** The record of `key`; undefined when there is none, it is unreadable, or `key` is not a usable key. */
  async get(key: string): Promise<JobRecord | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(key), 'utf8');
    } catch {
      return undefined;
    }
    return parseRecord(key, text);
  }

  /** Removes the record of `key` (under its lock); nothing when absent. @throws as {@link put}. */
  async remove(key: string): Promise<void> {
    const file = this.fileOf(key);
    await this.withLock(key, () => fs.rm(file, { force: true }));
  }

  /**
   * Removes the record whose Idempotency-Key, else whose job id, is `keyOrJobId` (for
   * `comfy-cloud forget <job-id|Idempotency-Key>`), under its lock.
   * @returns the removed record, or undefined when none matched.
   * @throws ComfyError `state_locked` when the lock stays held.
   */
  async forget(keyOrJobId: string): Promise<JobRecord | undefined> {
    const removeIf = (key: string, matches: (r: JobRecord) => boolean): Promise<JobRecord | undefined> =>
      this.withLock(key, async () => {
        const current = await this.get(key);
        if (!current || !matches(current)) return undefined;
        await fs.rm(this.fileOf(key), { force: true });
        return current;
      });
    if (KEY.test(keyOrJobId)) {
      const byKey = await removeIf(keyOrJobId, () => true);
      if (byKey) return byKey;
    }
    for (const r of await this.readAll()) {
      if (r.jobId !== keyOrJobId) continue;
      const byJob = await removeIf(r.idempotencyKey, (current) => current.jobId === keyOrJobId);
      if (byJob) return byJob;
    }
    return undefined;
  }

  /**
   * Every readable record, newest submission first (a record being written by another process is read whole,
   * before or after), but the `retired` ones unless `options.retired` (a retired key stands for no job: no list of
   * jobs shows it; the submission it belonged to is shown by its successor). Prunes leftovers on the way, at most
   * once a minute per store (errors ignored).
   */
  async list(options: { retired?: boolean } = {}): Promise<JobRecord[]> {
    const now = this.now();
    if (now - this.leftoversPrunedAt >= 60_000) {
      this.leftoversPrunedAt = now;
      await this.pruneLeftovers(now).catch(() => undefined);
    }
    const records = await this.readAll();
    return options.retired ? records : records.filter((r) => r.state !== 'retired');
  }

  /**
   * Drops records past their job's `expires_at`, or older than 24 h when that is unknown (each re-checked under its
   * lock), and the leftovers ({@link pruneLeftovers}). Returns how many records were dropped.
   */
  async prune(nowMs: number = this.now()): Promise<number> {
    await this.pruneLeftovers(nowMs).catch(() => undefined);
    const expired = (r: JobRecord): boolean => isExpiredRecord(r, nowMs);
    let removed = 0;
    for (const r of await this.readAll()) {
      if (!expired(r)) continue;
      const dropped = await this.withLock(r.idempotencyKey, async () => {
        const current = await this.get(r.idempotencyKey);
        if (!current || !expired(current)) return false;
        await fs.rm(this.fileOf(r.idempotencyKey), { force: true });
        return true;
      }).catch(() => false);
      if (dropped) removed++;
    }
    return removed;
  }

  /**
   * Removes what writers left behind (stale ones are pruned): temporary files older than
   * `tempFileTtlMs` (in `tmp/`, and `*.tmp` in `jobs/` from the earlier layout), and lock entries nobody holds
   * (older than `lockStaleMs`: taken over, then released). A held lock is refreshed by its holder, so it is never
   * old; one refreshed meanwhile is left alone.
   * @returns how many temporary files and lock entries were removed.
   */
  async pruneLeftovers(nowMs: number = this.now()): Promise<{ temps: number; locks: number }> {
    let temps = 0;
    const old = (file: string, ttlMs: number): Promise<boolean> => isOlderThan(file, ttlMs, nowMs);
    for (const name of await readdirOrEmpty(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      if (await old(file, this.tempFileTtlMs)) {
        await fs.rm(file, { force: true, recursive: true });
        temps++;
      }
    }
    for (const name of await readdirOrEmpty(this.jobsDir)) {
      const file = path.join(this.jobsDir, name);
      if (name.endsWith('.tmp') && (await old(file, this.tempFileTtlMs))) {
        await fs.rm(file, { force: true });
        temps++;
      }
    }
    return { temps, locks: await this.locks.pruneUnheld(nowMs) };
  }

  /** Every readable record in `jobs/`, newest submission first. */
  private async readAll(): Promise<JobRecord[]> {
    const keys = (await readdirOrEmpty(this.jobsDir))
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((k) => KEY.test(k));
    const files = keys.map((k) => path.join(this.jobsDir, `${k}.json`));
    const records: JobRecord[] = [];
    const damaged: number[] = [];
    // A long history is thousands of files: read in slices (stateFiles.ts readTextFiles), each one a few syscalls.
    await readTextFiles(files, (i, text) => {
      if (text === undefined) return;
      const record = parseRecord(keys[i]!, text);
      if (record) records.push(record);
      else damaged.push(i);
    });
    // A damaged text is read once more the ordinary way before it is skipped: never a record lost to a short read.
    for (const i of damaged) {
      const text = await reread(files[i]!);
      const record = text === undefined ? undefined : parseRecord(keys[i]!, text);
      if (record) records.push(record);
    }
    return records.sort((a, b) => b.submittedAt.localeCompare(a.submittedAt));
  }

  /** Writes `record` to `tmp/` and renames it over its file in `jobs/` (same file system: atomic). */
  private async write(record: JobRecord, held: () => void): Promise<void> {
    const file = this.fileOf(record.idempotencyKey);
    await fs.mkdir(this.jobsDir, { recursive: true, mode: 0o700 });
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const temp = path.join(
      this.tmpDir,
      `${record.idempotencyKey.slice(0, 100)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    // A lock lost (process frozen past the stale bound) is never written through: `held` throws before the rename.
    await writeJsonAtomically(file, record, temp, held);
  }

  /** Runs `fn` holding the lock `name` ({@link StoreLocks.withLock}). */
  private withLock<T>(name: string, fn: (held: () => void) => Promise<T>): Promise<T> {
    return this.locks.withLock(name, fn);
  }

  private fileOf(key: string): string {
    if (!KEY.test(key)) throw new Error(`not a usable Idempotency-Key for a file name: ${JSON.stringify(key)}`);
    return path.join(this.jobsDir, `${key}.json`);
  }

  /**
   * Runs `fn` holding the store-wide lock `name` (`locks/<name>.lock`): the records' own locking (one holder across
   * processes, a dead holder's lock taken over once stale, leftovers pruned), for the store's neighbours whose
   * read-modify-writes need it (endClaims.ts). `fn` gets a check that throws when the lock was lost meanwhile.
   * @throws Error when `name` is not `@` and safe characters (so it never meets a record's key); ComfyError
   *   `state_locked` when the lock stays held; `state_lock_lost` from the check.
   */
  async withStoreLock<T>(name: string, fn: (held: () => void) => Promise<T>): Promise<T> {
    if (!/^@[A-Za-z0-9._-]{1,200}$/.test(name))
      throw new Error(`not a store lock name (@ and letters, digits, ".", "_", "-"): ${JSON.stringify(name)}`);
    return this.withLock(name, fn);
  }
}

/**
 * A record read tolerantly: unknown fields kept; undefined when it is not JSON or lacks a string `state` or
 * `submittedAt`. The key is the file's, whatever the text says, so a record never stands for another file.
 */
function parseRecord(key: string, text: string): JobRecord | undefined {
  const r = parseJsonObject(text);
  if (!r) return undefined;
  if (typeof r.state !== 'string' || typeof r.submittedAt !== 'string') return undefined;
  // The parsed object is this call's own: when it names its own file already, it is the record as it is (the copy
  // would be the same object, key for key; thousands of them when listing).
  if (r.idempotencyKey === key) return r as unknown as JobRecord;
  return { ...(r as unknown as JobRecord), idempotencyKey: key };
}
