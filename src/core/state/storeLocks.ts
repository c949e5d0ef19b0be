/**
 * The locks of the state folder (`<dir>/locks/<name>.lock`): `proper-lockfile` locks (directories) that one holder
 * across processes holds at a time, refreshed by the holder while alive and taken over once `staleMs` old (its holder
 * died), queued in turn inside one process, and pruned when nobody holds them. The record store (stateStore.ts) takes
 * one per record key and the store-wide ones (`@claims`, ...).
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { lockfile, type LockOptions } from '../util/lockfile';
import { ComfyError } from '../http/errors';
import { inTurn, readdirOrEmpty } from './stateFiles';

/** True when `file` exists and was last modified more than `ageMs` before `nowMs` (ms since the epoch). */
export async function isOlderThan(file: string, ageMs: number, nowMs: number): Promise<boolean> {
  const stat = await fs.lstat(file).catch(() => undefined);
  return stat !== undefined && stat.mtimeMs < nowMs - ageMs;
}

/** The lock folder of a state store: taking, holding and pruning its named locks. */
export class StoreLocks {
  /**
   * @param locksDir the folder of the lock entries (created at the first lock).
   * @param staleMs age (ms) after which a lock not refreshed is taken over.
   * @param retries attempts to take a held lock before giving up (each 5–200 ms apart, jittered).
   */
  constructor(
    private readonly locksDir: string,
    private readonly staleMs: number,
    private readonly retries: number,
  ) {}

  /**
   * Runs `fn` holding the lock `name` (`locks/<name>.lock`). `fn` gets a check that throws when the lock was lost
   * (taken over as stale) meanwhile.
   * @throws ComfyError `state_locked` when the lock stays held through every retry; `state_lock_lost` from the check.
   */
  async withLock<T>(name: string, fn: (held: () => void) => Promise<T>): Promise<T> {
    await fs.mkdir(this.locksDir, { recursive: true, mode: 0o700 });
    return inTurn(path.resolve(this.locksDir, name), () => this.withFileLock(name, fn));
  }

  /**
   * Removes the lock entries nobody holds (older than `staleMs`: taken over, then released). A held lock is refreshed
   * by its holder, so it is never old; one refreshed meanwhile is left alone.
   * @returns how many lock entries were removed.
   */
  async pruneUnheld(nowMs: number): Promise<number> {
    let locks = 0;
    for (const name of await readdirOrEmpty(this.locksDir)) {
      if (!name.endsWith('.lock')) continue;
      const lockName = name.slice(0, -'.lock'.length);
      if (!(await isOlderThan(path.join(this.locksDir, name), this.staleMs, nowMs))) continue;
      // Taking the lock removes a stale entry atomically (proper-lockfile), where a plain rmdir could remove a lock
      // another process took over meanwhile; releasing it removes the entry.
      try {
        const release = await lockfile().lock(
          path.join(this.locksDir, lockName),
          this.lockOptions(lockName, 0, () => undefined),
        );
        await release();
        locks++;
      } catch {
        // Held (refreshed meanwhile) or already gone: nothing to prune.
      }
    }
    return locks;
  }

  private async withFileLock<T>(name: string, fn: (held: () => void) => Promise<T>): Promise<T> {
    let lost: Error | undefined;
    let release: () => Promise<void>;
    try {
      release = await lockfile().lock(
        path.join(this.locksDir, name),
        this.lockOptions(name, this.retries, (err) => (lost = err)),
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      throw new ComfyError(
        'state_locked',
        `the state store's record ${name} stays locked by another process (${path.join(this.locksDir, `${name}.lock`)}); try again`,
        {},
        { cause: err },
      );
    }
    try {
      return await fn(() => {
        if (lost)
          throw new ComfyError(
            'state_lock_lost',
            `the lock of the state store's record ${name} was lost: ${lost.message}`,
            {},
            { cause: lost },
          );
      });
    } finally {
      await release().catch(() => undefined); // already released when lost
    }
  }

  private lockOptions(name: string, retries: number, onCompromised: (err: Error) => void): LockOptions {
    return {
      lockfilePath: path.join(this.locksDir, `${name}.lock`),
      realpath: false,
      stale: this.staleMs,
      retries: { retries, minTimeout: 5, maxTimeout: 100, factor: 1.5, randomize: true },
      onCompromised,
    };
  }
}
