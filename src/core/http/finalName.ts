/**
 * Giving a finished partial file its final name, atomically and never through a symlink: `link(part, name)` fails with
 * EEXIST on any existing entry, so an existing file is never overwritten silently and two downloads never take the
 * same name (the next free candidate `stem-1.ext`, `stem-2.ext`… is tried); where link() is not available (FAT, some
 * network shares) an exclusively created empty file claims the name first. With `overwrite`, rename() replaces the
 * entry itself.
 */
import * as fs from 'node:fs/promises';
import { InputError } from './errors';
import { numberedName, pathInside } from '../util/fileNames';

/** The refusal to replace an existing file, in words the CLI can show as they are. */
export function fileExists(target: string, what: string): InputError {
  return new InputError(
    'file_exists',
    `${target} already exists; pass --force to replace it, or choose another path (${what}).`,
  );
}

/** Gives the finished part the name `target`; without `overwrite`, link() fails if the target appeared meanwhile. */
export async function place(part: string, target: string, overwrite: boolean): Promise<void> {
  if (overwrite) {
    await fs.rename(part, target); // replaces the entry itself, never writes through a symlink
    return;
  }
  try {
    await fs.link(part, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw fileExists(target, `it appeared while downloading and was left as it is; the download is kept in ${part}`);
    if (!linkUnsupported(code)) throw err;
    await exclusiveRename(part, target);
  }
}

/**
 * Claims the first free name among `name`, `stem-1.ext`, `stem-2.ext`… inside `dir` for the finished part:
 * link() fails with EEXIST on any existing entry, so two downloads never take the same name and nothing is ever
 * written through a symlink.
 * @returns the name taken.
 */
export async function claimInside(part: string, dir: string, name: string): Promise<string> {
  for (let n = 0; n < 10_000; n++) {
    const candidate = numberedName(name, n);
    const target = await pathInside(dir, candidate);
    try {
      await fs.link(part, target);
      return candidate;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (!linkUnsupported(code)) throw err;
      try {
        await exclusiveRename(part, target);
        return candidate;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw e;
      }
    }
  }
  throw new InputError(
    'no_free_name',
    `no free file name for ${name} in ${dir} (tried ${name} and 9999 numbered ones)`,
  );
}

/** Replaces `name` inside `dir` with the finished part (rename replaces the entry; it never writes through a symlink). */
export async function replaceInside(part: string, dir: string, name: string): Promise<string> {
  await fs.rename(part, await pathInside(dir, name));
  return name;
}

/** link() is not available on this file system (FAT, some network shares). */
function linkUnsupported(code: string | undefined): boolean {
  return code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS' || code === 'EXDEV';
}

/**
 * Where link() is not available: claim `target` with an empty file created exclusively (`wx`), then rename the part
 * over it. The claim is as atomic as link(); the name shows an empty file for the moment between the two.
 * @throws EEXIST when `target` is taken.
 */
async function exclusiveRename(part: string, target: string): Promise<void> {
  const handle = await fs.open(target, 'wx');
  await handle.close();
  try {
    await fs.rename(part, target);
  } catch (err) {
    await fs.rm(target, { force: true });
    throw err;
  }
}

/** Whether any entry (a file, a folder, a symlink) is at `file`. */
export async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}
