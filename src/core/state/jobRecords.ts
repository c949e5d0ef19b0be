/**
 * The record of one submission (what `<dir>/jobs/<idempotency-key>.json` holds) and the rules about records that need
 * no file: a terminal status is kept, who submitted it and whether that submitter is gone, the record written before
 * a send, the job ids the records hold, and the chain of keys one submission went out under. StateStore (stateStore.ts)
 * reads and writes them.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { hashBytes } from '../util/hash';
import { canonicalJson } from '../util/json';
import { saveImagePrefix } from '../util/workflow';

/** Where a submission stands, as far as this client knows. */
export type SubmissionState =
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
export function keepsTerminalStatus(current: Pick<JobRecord, 'lastStatus'>, next: JobRecord): JobRecord {
  const was = current.lastStatus;
  if (was === undefined || !TERMINAL_STATUSES.has(was) || next.lastStatus === was) return next;
  return { ...next, lastStatus: was };
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
  fields: Pick<JobRecord, 'idempotencyKey' | 'baseUrl' | 'state'> &
    Partial<Pick<JobRecord, 'jobId' | 'workflowFile' | 'client' | 'lastStatus' | 'batchId' | 'originKey'>>,
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
export const MAX_CHAIN = 64;

/**
 * The keys a submission went out under, from its first key `originKey`, following each retired record's
 * `successorKey` ({@link JobRecord}): the records in order, and the key it stands under now (the last successor,
 * which has no record yet when nothing was sent under it: it is unsent). `lookup` gives a key's record.
 */
export function submissionChain(
  originKey: string,
  lookup: (key: string) => JobRecord | undefined,
): { records: JobRecord[]; currentKey: string; current: JobRecord | undefined } {
  const records: JobRecord[] = [];
  let key = originKey;
  for (;;) {
    const record = lookup(key);
    if (!record) return { records, currentKey: key, current: undefined };
    records.push(record);
    if (
      record.state !== 'retired' ||
      !record.successorKey ||
      records.length >= MAX_CHAIN ||
      records.some((r) => r.idempotencyKey === record.successorKey)
    ) {
      return { records, currentKey: key, current: record };
    }
    key = record.successorKey;
  }
}
