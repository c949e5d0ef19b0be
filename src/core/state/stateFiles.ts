/**
 * The files of the state folder: how every record file is written (atomically, by rename) and read (tolerantly),
 * listed, and how the lock holders of one process take turns.
 */
import * as fs from 'node:fs/promises';

/**
 * The lock holders of this process waiting in turn, by absolute lock path. Process-wide on purpose (like
 * proper-lockfile's own table of held locks): writers of one process queue here instead of polling the lock
 * directory, so only other processes ever wait on retries.
 */
const turns = new Map<string, Promise<void>>();

/** Runs `fn` after every earlier `fn` of the same `name` in this process has settled. */
export async function inTurn<T>(name: string, fn: () => Promise<T>): Promise<T> {
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
export async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch {
    return [];
  }
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
export async function writeJsonAtomically(
  file: string,
  value: unknown,
  temp: string,
  beforeRename?: () => void,
): Promise<void> {
  try {
    await fs.writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    beforeRename?.();
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}
