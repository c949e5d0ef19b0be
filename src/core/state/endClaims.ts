/**
 * A job's end is handled once per machine, not once per process: several VS Code windows (and the CLI) share one state
 * folder and each sees the same job end; the first to claim the end downloads its outputs and tells it, the others
 * read what it saved ({@link EndClaims}).
 *
 * Layout, beside the job records of stateStore.ts:
 * - `<dir>/ends/<first 32 hex of sha256(baseUrl + "\n" + jobId)>.json`: one plain JSON {@link EndClaimRecord} per job
 *   end claimed on this machine (the name is a digest: a job id is the server's choice and never becomes a path);
 * - every read-modify-write of a claim holds the store's lock `@end-<digest>` (StateStore.withStoreLock: the records'
 *   own locking, a dead holder's lock taken over once stale), so two processes never both claim one end.
 * A claim is `claimed` while its owner handles the end, then `told` (with the files it saved). A `claimed` claim whose
 * owner is gone ({@link isClaimGone}: its process no longer runs on this machine, or it is older than
 * {@link CLAIM_STALE_MS} whatever its host) is taken over, so a process killed mid-download never blocks the end
 * forever; one released after a failed download is claimed again by the next that sees the end.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { systemClock, type Clock } from '../http/clock';
import { exposed, lazy } from '../util/lazySchema';
import { isExpiredRecord, isProcessAlive, parseJsonObject, writeJsonAtomically, type StateStore } from './stateStore';

/** One job end's claim. Times are ISO 8601 strings. */
export interface EndClaimRecord {
  /** Base URL of the job's server. */
  baseUrl: string;
  jobId: string;
  /** `claimed`: its owner is handling the end (downloading); `told`: handled and told, never again on this machine. */
  state: 'claimed' | 'told';
  /** The owner's process id (`pid` means something only on `hostname`). */
  pid: number;
  /** `os.hostname()` of the owner. */
  hostname: string;
  claimedAt: string;
  toldAt?: string;
  /** The absolute paths of the outputs the owner saved, in the job's order (once told). */
  files?: string[];
  /** The job's retention deadline when known: the claim is pruned after it. */
  expiresAt?: string;
}

/** A `claimed` claim older than this (ms) is taken over whatever its host: 10 min, far past a job's downloads. */
export const CLAIM_STALE_MS = 10 * 60 * 1000;

/** How often (ms) a process waiting on another's claim reads it again. */
export const CLAIM_POLL_MS = 500;

/** How {@link isClaimGone} tells a dead owner; every field injectable for tests. */
export interface ClaimOwnerOptions {
  /** Now, ms since the epoch. */
  now: number;
  /** This machine's `os.hostname()`. */
  hostname: string;
  /** Whether a pid of this machine runs. */
  isAlive: (pid: number) => boolean;
  /** Age (ms) past which a `claimed` claim is gone whatever its host. */
  staleMs: number;
}

/**
 * Whether a `claimed` claim's owner is gone: its host is this machine and its process no longer runs, or it was
 * claimed more than `staleMs` ago (any host: a pid of another machine cannot be asked; unreadable times count as
 * old). A `told` claim is never gone: its end was told.
 */
export function isClaimGone(
  claim: Pick<EndClaimRecord, 'state' | 'pid' | 'hostname' | 'claimedAt'>,
  options: ClaimOwnerOptions,
): boolean {
  if (claim.state !== 'claimed') return false;
  if (claim.hostname === options.hostname && !options.isAlive(claim.pid)) return true;
  const claimed = Date.parse(claim.claimedAt);
  return !Number.isFinite(claimed) || options.now - claimed > options.staleMs;
}

/** This process's claim of a job's end: it handles the end, then says so once. */
export interface EndClaim {
  readonly record: EndClaimRecord;
  /**
   * The end was handled and is told by this process now: the claim becomes `told` with `files` (absolute paths of
   * the outputs saved, in the job's order). Other processes then read them instead of downloading.
   * @throws as the state store's lock (ComfyError `state_locked`, `state_lock_lost`) and the file system.
   */
  told(files: readonly string[]): Promise<void>;
  /** Gives the claim up (the end was not handled: a failed download): the next process that sees the end claims it. Never rejects. */
  release(): Promise<void>;
}

/** What {@link EndClaims.claim} answers. */
export type ClaimAnswer =
  /** This process handles the end. */
  | { mine: EndClaim }
  /** Another process handled and told it; its record names the files it saved. */
  | { told: EndClaimRecord };

/** Options of {@link EndClaims}. */
export interface EndClaimsOptions {
  /** Clock of the claims' times and of the waits for another's claim. Default the system clock. */
  clock?: Clock;
  /** Whether a pid of this machine runs. Default {@link isProcessAlive}. */
  isAlive?: (pid: number) => boolean;
  /** This machine's name. Default `os.hostname()`. */
  hostname?: string;
  /** This process's id. Default `process.pid`. */
  pid?: number;
  /** See {@link CLAIM_STALE_MS}. */
  staleMs?: number;
  /** See {@link CLAIM_POLL_MS}. */
  pollMs?: number;
}

/** The claims of job ends in a state folder (see the module comment). Safe for concurrent processes. */
export class EndClaims {
  private readonly endsDir: string;
  private readonly tmpDir: string;
  private readonly clock: Clock;
  private readonly isAlive: (pid: number) => boolean;
  private readonly hostname: string;
  private readonly pid: number;
  private readonly staleMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly store: Pick<StateStore, 'dir' | 'withStoreLock'>,
    options: EndClaimsOptions = {},
  ) {
    this.endsDir = path.join(store.dir, 'ends');
    this.tmpDir = path.join(store.dir, 'tmp');
    this.clock = options.clock ?? systemClock;
    this.isAlive = options.isAlive ?? isProcessAlive;
    this.hostname = options.hostname ?? os.hostname();
    this.pid = options.pid ?? process.pid;
    this.staleMs = options.staleMs ?? CLAIM_STALE_MS;
    this.pollMs = options.pollMs ?? CLAIM_POLL_MS;
  }

  /**
   * Claims the end of job `jobId` of server `baseUrl` for this process, waiting while another process that still
   * runs handles it (its claim is read again every `pollMs`): answers `mine` (no claim, a claim released, or one whose
   * owner is gone: {@link isClaimGone}) or `told` (another process told it). `expiresAt`: the job's retention deadline,
   * kept with the claim for pruning.
   * @throws AbortError when `signal` aborts the wait; as the state store's lock and the file system.
   */
  async claim(
    baseUrl: string,
    jobId: string,
    options: { signal?: AbortSignal; expiresAt?: string | null } = {},
  ): Promise<ClaimAnswer> {
    for (;;) {
      const answer = await this.tryClaim(baseUrl, jobId, options.expiresAt ?? undefined);
      if (!('heldBy' in answer)) return answer;
      await this.clock.sleep(this.pollMs, options.signal);
    }
  }

  /** The claim of a job's end, when there is one (read without the lock: a claim is written whole). */
  async get(baseUrl: string, jobId: string): Promise<EndClaimRecord | undefined> {
    return this.read(this.fileOf(baseUrl, jobId), baseUrl, jobId);
  }

  /**
   * Drops the claims of jobs past their `expiresAt` (or, when unknown, told or claimed more than a day ago: the
   * job records' rule, stateStore.ts `isExpiredRecord`): the store's records of those jobs are gone by then.
   * @returns how many were dropped.
   */
  async prune(nowMs: number = this.clock.now()): Promise<number> {
    let names: string[];
    try {
      names = await fs.readdir(this.endsDir);
    } catch {
      return 0;
    }
    let dropped = 0;
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const file = path.join(this.endsDir, name);
      const claim = parseClaim(await fs.readFile(file, 'utf8').catch(() => ''));
      if (!claim || !isExpiredRecord({ expiresAt: claim.expiresAt, submittedAt: claim.claimedAt }, nowMs)) continue;
      await this.store
        .withStoreLock(lockName(name.slice(0, -'.json'.length)), () => fs.rm(file, { force: true }))
        .then(
          () => dropped++,
          () => undefined, // locked by a process claiming it now: left for the next prune
        );
    }
    return dropped;
  }

  /** One look under the lock: `mine`, `told`, or `heldBy` a live owner. */
  private async tryClaim(
    baseUrl: string,
    jobId: string,
    expiresAt: string | undefined,
  ): Promise<ClaimAnswer | { heldBy: EndClaimRecord }> {
    const digest = digestOf(baseUrl, jobId);
    const file = path.join(this.endsDir, `${digest}.json`);
    return this.store.withStoreLock(lockName(digest), async (held) => {
      const current = await this.read(file, baseUrl, jobId);
      if (current?.state === 'told') return { told: current };
      if (
        current &&
        !isClaimGone(current, {
          now: this.clock.now(),
          hostname: this.hostname,
          isAlive: this.isAlive,
          staleMs: this.staleMs,
        })
      ) {
        return { heldBy: current };
      }
      const record: EndClaimRecord = {
        baseUrl,
        jobId,
        state: 'claimed',
        pid: this.pid,
        hostname: this.hostname,
        claimedAt: new Date(this.clock.now()).toISOString(),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      };
      await this.write(file, record, held);
      return { mine: this.handle(file, digest, record) };
    });
  }

  private handle(file: string, digest: string, record: EndClaimRecord): EndClaim {
    /** Runs `fn` on the claim when it is still this one's (not taken over meanwhile as gone). */
    const ifMine = (fn: (held: () => void) => Promise<void>): Promise<void> =>
      this.store.withStoreLock(lockName(digest), async (held) => {
        const current = await this.read(file, record.baseUrl, record.jobId);
        if (
          current?.state === 'claimed' &&
          current.pid === record.pid &&
          current.hostname === record.hostname &&
          current.claimedAt === record.claimedAt
        )
          await fn(held);
      });
    return {
      record,
      told: (files) =>
        ifMine((held) =>
          this.write(
            file,
            { ...record, state: 'told', toldAt: new Date(this.clock.now()).toISOString(), files: [...files] },
            held,
          ),
        ),
      release: () => ifMine(() => fs.rm(file, { force: true })).catch(() => undefined),
    };
  }

  private async read(file: string, baseUrl: string, jobId: string): Promise<EndClaimRecord | undefined> {
    const claim = parseClaim(await fs.readFile(file, 'utf8').catch(() => ''));
    // A file is only ever the claim of its own job: one that names another is not read.
    return claim && claim.baseUrl === baseUrl && claim.jobId === jobId ? claim : undefined;
  }

  private async write(file: string, record: EndClaimRecord, held: () => void): Promise<void> {
    await fs.mkdir(this.endsDir, { recursive: true, mode: 0o700 });
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.tmpDir, `end.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    await writeJsonAtomically(file, record, temp, held);
  }

  private fileOf(baseUrl: string, jobId: string): string {
    return path.join(this.endsDir, `${digestOf(baseUrl, jobId)}.json`);
  }
}

/** The name of a job end's claim: 32 hex digits of sha256(baseUrl + "\n" + jobId). */
function digestOf(baseUrl: string, jobId: string): string {
  return createHash('sha256').update(`${baseUrl}\n${jobId}`, 'utf8').digest('hex').slice(0, 32);
}

/** The store lock of a claim (`@`: never a record's key). */
function lockName(digest: string): string {
  return `@end-${digest}`;
}

/** The shape of a claim file, read tolerantly (unknown fields kept); built at first use. */
const EndClaimSchema = exposed(
  lazy(() =>
    z.looseObject({
      baseUrl: z.string(),
      jobId: z.string(),
      state: z.enum(['claimed', 'told']),
      pid: z.number(),
      hostname: z.string(),
      claimedAt: z.string(),
      toldAt: z.optional(z.string()),
      files: z.optional(z.array(z.string())),
      expiresAt: z.optional(z.string()),
    }),
  ),
);

/** A claim file's text as a claim; undefined when it is not JSON or lacks a field every claim has. */
function parseClaim(text: string): EndClaimRecord | undefined {
  const parsed = EndClaimSchema.safeParse(parseJsonObject(text));
  return parsed.success ? parsed.data : undefined;
}
