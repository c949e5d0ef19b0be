/**
 * The files of the state folder: how every record file is written (atomically, by rename) and read (tolerantly),
 * listed, and how the lock holders of one process take turns.
 */
import * as fs from 'node:fs/promises';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

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

/**
 * Opened without blocking: a FIFO (or another special file) named like a record is not waited on; for a regular file
 * the flag changes nothing. 0 where the platform has no such flag (Windows).
 */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** How long {@link readTextFiles} reads at a stretch before it lets other work of the event loop run (ms). */
const READ_SLICE_MS = 8;

/** The size of the buffer a record file is read into: larger files are read in several reads. */
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * Reads the small text files `files` (UTF-8), calling `each(index, text)` for each, in order; `text` is undefined
 * when the file cannot be read (gone, a directory, no permission). Each file is one open, one read into a reused
 * buffer and one close, done synchronously in slices of about {@link READ_SLICE_MS} with a turn of the event loop
 * between them: thousands of record files take about a third of the time `fs.promises.readFile` takes (a promise and
 * four thread-pool round trips each), and no slice holds the event loop long. A read shorter than the buffer is taken
 * for the whole file, as it is on a local file system; a caller that finds a text damaged can {@link reread} it.
 * Never throws.
 */
export async function readTextFiles(
  files: readonly string[],
  each: (index: number, text: string | undefined) => void,
): Promise<void> {
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  let i = 0;
  while (i < files.length) {
    const until = performance.now() + READ_SLICE_MS;
    do {
      each(i, readTextFileSync(files[i]!, buffer));
      i++;
    } while (i < files.length && performance.now() < until);
    if (i < files.length) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The text of `file` (UTF-8) read the ordinary way, without blocking on a special file; undefined when unreadable. */
export async function reread(file: string): Promise<string | undefined> {
  return fs.readFile(file, { encoding: 'utf8', flag: READ_FLAGS }).catch(() => undefined);
}

function readTextFileSync(file: string, buffer: Buffer): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    let read = readSync(fd, buffer, 0, buffer.length, 0);
    if (read < buffer.length) return buffer.toString('utf8', 0, read);
    // Larger than the buffer: the rest in further reads, up to the end.
    const chunks = [Buffer.from(buffer)];
    let position = read;
    while ((read = readSync(fd, buffer, 0, buffer.length, position)) > 0) {
      chunks.push(Buffer.from(buffer.subarray(0, read)));
      position += read;
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
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
