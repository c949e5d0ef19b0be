/**
 * Remembered jobs: a small file store shared by the CLI and the extension, so a job submitted is never lost from
 * view (Job and Asset API v2, What the service does, design rule 2: job state is retrievable by id
 * until `expires_at`; POST /api/v2/jobs rule 5: after an unknown outcome the client looks instead of resubmitting).
 *
 * Layout (one record per submission, readable by other tools):
 * - `<dir>/jobs/<idempotency-key>.json`: one plain, pretty JSON record per submission, and nothing else;
 * - `<dir>/tmp/`: records being written (each write goes to a temporary file renamed over the record, atomic on
 *   POSIX, so a reader never sees half a record);
 * - `<dir>/locks/<key>.lock`: `proper-lockfile` locks (directories).
 * Several processes (CLIs, the extension) write the same records: every read-modify-write, and every write that
 * may replace a record, happens under the record's lock (safe for concurrent writers). A lock whose
 * holder died is taken over once it is `lockStaleMs` old (the holder refreshes it while alive); leftovers (old
 * temporary files, locks nobody holds) are removed by {@link StateStore.prune}, and cheaply when the store is listed.
 * Directory: `$COMFY_CLOUD_STATE_DIR`, else `$XDG_STATE_HOME/comfy-cloud`, else `~/.local/state/comfy-cloud`.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { lockfile, type LockOptions } from '../util/lockfile';
import { ComfyError } from '../http/errors';
import { hashBytes } from '../util/hash';
import { canonicalJson } from '../util/json';
import { saveImagePrefix } from '../util/workflow';

/** Where a submission stands, as far as this client knows. */
type SubmissionState =
  /** The key is written; the request is about to be sent or under way. */
  | 'pending'
  /** The server answered 201: `jobId` is known. */
  | 'created'
  /** The request may have created a job (timeout, reset, 5xx): never resubmitted under this key; look for it. */
  | 'outcome_unknown'
  /**
   * After an unknown outcome, two readings of the server's job listing a settle window apart showed no job for this
   * key: the key is never presented again (Job and Asset API v2, POST /api/v2/jobs, rule 5: it stays claimed), and
   * the submission went on under `successorKey`. It stands for no job: {@link StateStore.list} leaves it out unless
   * asked.
   */
  | 'retired';

/** A job that turned up for a retired key after its submission had its job: a duplicate, canceled when still queued. */
export interface LateJob {
  jobId: string;
  /** When it was found (ISO 8601). */
  foundAt: string;
  /** True when this client canceled it (it was still queued); false when it was already running or ended. */
  canceled: boolean;
  /** Its status when found (or after the cancel). */
  status?: string;
}

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
  /** The workflow's first SaveImage `filename_prefix`: the job's name in lists when it came from no file. */
  savePrefix?: string;
  submittedAt: string;
  /** The job's retention deadline, once known; the record is dropped after it. */
  expiresAt?: string;
  /** Last status seen. */
  lastStatus?: string;
  /** Which program submitted it. */
  client?: 'cli' | 'vscode' | 'core';
  /** The batch this submission is a variation of (state/batchRecords.ts), when it is one. */
  batchId?: string;
  /**
   * When the request whose outcome was not heard was sent (ISO 8601), written with `outcome_unknown`: the settle
   * window of its resolution counts from it, and the job it may have made was created about then. Default
   * `submittedAt`.
   */
  sentAt?: string;
  /**
   * The server answered 2xx (a job exists: Job and Asset API v2, States and transitions) but its body could not be
   * read, not even the job's id: `outcome_unknown`, looked for, and never retired.
   */
  acceptedUnread?: boolean;
  /** `retired`: when the absence of its job was proven (ISO 8601). */
  retiredAt?: string;
  /** `retired`: the key the submission went on under, minted and written here before anything was sent under it. */
  successorKey?: string;
  /**
   * `retired`: how the absence of its job was established: `listing`, two readings of the server's job listing; `user`,
   * not proven (the surface lists no jobs), sent again on the user's word: a duplicate job is possible.
   */
  retiredBy?: 'listing' | 'user';
  /** The key the submission first went out under, on the record of a key that succeeds a retired one. */
  originKey?: string;
  /** `retired`: jobs that turned up for this key after it was retired (duplicates of the submission's job). */
  lateJobs?: LateJob[];
  /**
   * Process id of the submitter (set with `hostname` by the submitter, see {@link recordOwner}): a `pending`
   * record whose process is gone was left by a submitter that died before hearing back (reconcile.ts).
   */
  pid?: number;
  /** `os.hostname()` of the submitter: `pid` means something only on that machine. */
  hostname?: string;
}

/** The terminal statuses (the state layer does not import the job model; these are its `isTerminalStatus`'s four). */
const TERMINAL_STATUSES = new Set(['succeeded', 'canceled', 'failed', 'expired']);

/**
 * `next` as a record may be written over `current`: when `current.lastStatus` is terminal (succeeded, canceled,
 * failed, expired: Job and Asset API v2, States and transitions, after which a job never changes), `next` keeps it (a
 * record never goes back to a status that is not terminal, nor to the client's `lost`); otherwise `next` as it is.
 */
function keepsTerminalStatus(current: Pick<JobRecord, 'lastStatus'>, next: JobRecord): JobRecord {
  const was = current.lastStatus;
  if (was === undefined || !TERMINAL_STATUSES.has(was) || next.lastStatus === was) return next;
  return { ...next, lastStatus: was };
}

/** How many record files are read at once when listing. */
const READ_CONCURRENCY = 32;

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

/** The state directory for an environment. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.COMFY_CLOUD_STATE_DIR) return env.COMFY_CLOUD_STATE_DIR;
  const base = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'comfy-cloud');
}

/** The `pid` and `hostname` a submitter writes into its records (so an orphaned `pending` record can be told). */
export function recordOwner(): Pick<JobRecord, 'pid' | 'hostname'> {
  return { pid: process.pid, hostname: os.hostname() };
}

/** A `pending` record older than this (ms) is orphaned whatever its host: 10 min, far past any submission's retries. */
export const ORPHAN_AFTER_MS = 10 * 60 * 1000;

/**
 * True when process `pid` exists on this machine: `process.kill(pid, 0)` succeeds, or fails with EPERM (it exists,
 * owned by someone else). ESRCH (and anything else) means it is gone.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How {@link isOrphaned} tells a dead submitter; every field injectable for tests. */
export interface OrphanOptions {
  /** Now, ms since the epoch. Default `Date.now()`. */
  now?: number;
  /** Whether a pid of this machine is alive. Default {@link isProcessAlive}. */
  isAlive?: (pid: number) => boolean;
  /** This machine's name. Default `os.hostname()`. */
  hostname?: string;
  /** Age (ms) past which a `pending` record is orphaned whatever its host. Default {@link ORPHAN_AFTER_MS}. */
  orphanAfterMs?: number;
}

/**
 * Whether `record` was left `pending` by a submitter that died between writing the key and hearing back (an
 * orphan): it is `pending` and either its `hostname` is this machine's and its `pid` is not alive, or it was
 * submitted more than `orphanAfterMs` ago (any host; a record without pid/hostname only by age).
 */
export function isOrphaned(record: JobRecord, options: OrphanOptions = {}): boolean {
  if (record.state !== 'pending') return false;
  const now = options.now ?? Date.now();
  const hostname = options.hostname ?? os.hostname();
  const isAlive = options.isAlive ?? isProcessAlive;
  if (record.hostname === hostname && typeof record.pid === 'number' && !isAlive(record.pid)) return true;
  const submitted = Date.parse(record.submittedAt);
  return Number.isFinite(submitted) && now - submitted > (options.orphanAfterMs ?? ORPHAN_AFTER_MS);
}

/**
 * A new submission's record, as every API writes it: the workflow's hash (of its canonical JSON, so the file it came
 * from still hashes to it: reconciling and the Jobs view compare against it) and its SaveImage prefix, when
 * (`nowMs`, ms since the epoch, as an ISO time) and by whom ({@link recordOwner}).
 */
export async function submissionRecord(
  workflow: unknown,
  fields: Pick<JobRecord, 'idempotencyKey' | 'baseUrl' | 'state'> & Partial<Pick<JobRecord, 'jobId' | 'workflowFile' | 'client' | 'lastStatus' | 'batchId' | 'originKey'>>,
  nowMs: number,
): Promise<JobRecord> {
  return {
    ...fields,
    workflowHash: await hashBytes(canonicalJson(workflow)),
    savePrefix: saveImagePrefix(workflow),
    submittedAt: new Date(nowMs).toISOString(),
    client: fields.client ?? 'core',
    ...recordOwner(),
  };
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

/** The job ids the records hold: their jobs, and the late duplicates of retired keys (one job, one record). */
export function claimedJobIds(records: Iterable<JobRecord>): Set<string> {
  const ids = new Set<string>();
  for (const r of records) {
    if (r.jobId) ids.add(r.jobId);
    for (const late of r.lateJobs ?? []) ids.add(late.jobId);
  }
  return ids;
}

/** Most keys one submission goes through (a chain of retired keys is never longer: a loop in damaged records ends). */
const MAX_CHAIN = 64;

/**
 * The keys a submission went out under, from its first key `originKey`, following each retired record's
 * `successorKey` ({@link JobRecord}): the records in order, and the key it stands under now (the last successor,
 * which has no record yet when nothing was sent under it: it is unsent). `lookup` gives a key's record.
 */
export function submissionChain(originKey: string, lookup: (key: string) => JobRecord | undefined): { records: JobRecord[]; currentKey: string; current: JobRecord | undefined } {
  const records: JobRecord[] = [];
  let key = originKey;
  for (;;) {
    const record = lookup(key);
    if (!record) return { records, currentKey: key, current: undefined };
    records.push(record);
    if (record.state !== 'retired' || !record.successorKey || records.length >= MAX_CHAIN || records.some((r) => r.idempotencyKey === record.successorKey)) {
      return { records, currentKey: key, current: record };
    }
    key = record.successorKey;
  }
}

/** The file store of {@link JobRecord}s. Safe for concurrent writers in several processes. */
export class StateStore {
  private readonly jobsDir: string;
  private readonly tmpDir: string;
  private readonly locksDir: string;
  private readonly now: () => number;
  private readonly tempFileTtlMs: number;
  private readonly lockStaleMs: number;
  private readonly lockRetries: number;
  /** When `list()` last pruned leftovers (ms): they are pruned at most once a minute that way. */
  private leftoversPrunedAt = -Infinity;

  constructor(
    readonly dir: string = defaultStateDir(),
    options: StateStoreOptions = {},
  ) {
    this.jobsDir = path.join(dir, 'jobs');
    this.tmpDir = path.join(dir, 'tmp');
    this.locksDir = path.join(dir, 'locks');
    this.now = options.now ?? Date.now;
    this.tempFileTtlMs = options.tempFileTtlMs ?? TEMP_FILE_TTL_MS;
    this.lockStaleMs = Math.max(options.lockStaleMs ?? LOCK_STALE_MS, 2000);
    this.lockRetries = options.lockRetries ?? 250;
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
        const record = await this.mutate(r.idempotencyKey, (current) => (current.jobId === jobId ? { ...current, ...patch } : undefined));
        if (record) updated.push(record);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
    return updated;
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
  async claimJob(key: string, jobId: string, patch: Partial<JobRecord> = {}): Promise<{ record: JobRecord } | { refused: ClaimRefusal }> {
    this.fileOf(key);
    return this.withLock(CLAIMS_LOCK, async () => {
      if (claimedJobIds((await this.readAll()).filter((r) => r.idempotencyKey !== key)).has(jobId)) return { refused: 'claimed_by_other' as const };
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
  async retire(key: string, fields: { successorKey: string; retiredAt: string; byUser?: boolean }): Promise<JobRecord | undefined> {
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
  async chain(originKey: string): Promise<{ records: JobRecord[]; currentKey: string; current: JobRecord | undefined }> {
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
    let locks = 0;
    const old = async (file: string, ttlMs: number): Promise<boolean> => {
      const stat = await fs.lstat(file).catch(() => undefined);
      return stat !== undefined && stat.mtimeMs < nowMs - ttlMs;
    };
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
    for (const name of await readdirOrEmpty(this.locksDir)) {
      if (!name.endsWith('.lock')) continue;
      const lockName = name.slice(0, -'.lock'.length);
      if (!(await old(path.join(this.locksDir, name), this.lockStaleMs))) continue;
      // Taking the lock removes a stale entry atomically (proper-lockfile), where a plain rmdir could remove a lock
      // another process took over meanwhile; releasing it removes the entry.
      try {
        const release = await lockfile().lock(path.join(this.locksDir, lockName), this.lockOptions(lockName, 0, () => undefined));
        await release();
        locks++;
      } catch {
        // Held (refreshed meanwhile) or already gone: nothing to prune.
      }
    }
    return { temps, locks };
  }

  /** Every readable record in `jobs/`, newest submission first. */
  private async readAll(): Promise<JobRecord[]> {
    const keys = (await readdirOrEmpty(this.jobsDir)).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length)).filter((k) => KEY.test(k));
    const records: JobRecord[] = [];
    // Many files are read at once (a long history is thousands of records: one by one, seconds), a bounded number so
    // no file-descriptor limit is reached.
    let next = 0;
    const reader = async (): Promise<void> => {
      while (next < keys.length) {
        const record = await this.get(keys[next++]!);
        if (record) records.push(record);
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, keys.length) }, reader));
    return records.sort((a, b) => b.submittedAt.localeCompare(a.submittedAt));
  }

  /** Writes `record` to `tmp/` and renames it over its file in `jobs/` (same file system: atomic). */
  private async write(record: JobRecord, held: () => void): Promise<void> {
    const file = this.fileOf(record.idempotencyKey);
    await fs.mkdir(this.jobsDir, { recursive: true, mode: 0o700 });
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.tmpDir, `${record.idempotencyKey.slice(0, 100)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    // A lock lost (process frozen past the stale bound) is never written through: `held` throws before the rename.
    await writeJsonAtomically(file, record, temp, held);
  }

  /**
   * Runs `fn` holding the lock `name` (`locks/<name>.lock`). `fn` gets a check that throws when the lock was lost
   * (taken over as stale) meanwhile.
   * @throws ComfyError `state_locked` when the lock stays held through every retry; `state_lock_lost` from the check.
   */
  private async withLock<T>(name: string, fn: (held: () => void) => Promise<T>): Promise<T> {
    await fs.mkdir(this.locksDir, { recursive: true, mode: 0o700 });
    return inTurn(path.resolve(this.locksDir, name), () => this.withFileLock(name, fn));
  }

  private async withFileLock<T>(name: string, fn: (held: () => void) => Promise<T>): Promise<T> {
    let lost: Error | undefined;
    let release: () => Promise<void>;
    try {
      release = await lockfile().lock(path.join(this.locksDir, name), this.lockOptions(name, this.lockRetries, (err) => (lost = err)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      throw new ComfyError('state_locked', `the state store's record ${name} stays locked by another process (${path.join(this.locksDir, `${name}.lock`)}); try again`, {}, { cause: err });
    }
    try {
      return await fn(() => {
        if (lost) throw new ComfyError('state_lock_lost', `the lock of the state store's record ${name} was lost: ${lost.message}`, {}, { cause: lost });
      });
    } finally {
      await release().catch(() => undefined); // already released when lost
    }
  }

  private lockOptions(name: string, retries: number, onCompromised: (err: Error) => void): LockOptions {
    return {
      lockfilePath: path.join(this.locksDir, `${name}.lock`),
      realpath: false,
      stale: this.lockStaleMs,
      retries: { retries, minTimeout: 5, maxTimeout: 100, factor: 1.5, randomize: true },
      onCompromised,
    };
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
    if (!/^@[A-Za-z0-9._-]{1,200}$/.test(name)) throw new Error(`not a store lock name (@ and letters, digits, ".", "_", "-"): ${JSON.stringify(name)}`);
    return this.withLock(name, fn);
  }
}

/**
 * The lock holders of this process waiting in turn, by absolute lock path. Process-wide on purpose (like
 * proper-lockfile's own table of held locks): writers of one process queue here instead of polling the lock
 * directory, so only other processes ever wait on retries.
 */
const turns = new Map<string, Promise<void>>();

/** Runs `fn` after every earlier `fn` of the same `name` in this process has settled. */
async function inTurn<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const previous = turns.get(name) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = previous.then(() => mine);
  turns.set(name, tail);
  await previous;
  try {
    return await fn();
  } finally {
    done();
    if (turns.get(name) === tail) turns.delete(name);
  }
}

/** The names in `dir`; none when it does not exist. */
async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch {
    return [];
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
  return { ...(r as unknown as JobRecord), idempotencyKey: key };
}

/**
 * The JSON object `text` holds, or undefined when it is not JSON or not an object (null, an array, a scalar): what
 * every record file of the state folder is read with, so a damaged or foreign file is skipped, never thrown on.
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * Writes `value` as indented JSON to `temp` (mode 0600), runs `beforeRename` (it may throw to give up), then renames
 * `temp` over `file`: on one file system a reader sees the old record or the new one, never a part. `temp` is
 * removed when anything fails. How every record file of the state folder is written (job records, asset records,
 * the router's Idempotency-Keys).
 * @throws file system errors, or what `beforeRename` throws.
 */
export async function writeJsonAtomically(file: string, value: unknown, temp: string, beforeRename?: () => void): Promise<void> {
  try {
    await fs.writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    beforeRename?.();
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}
