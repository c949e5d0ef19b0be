/**
 * The upload hash cache: keyed by path, size, mtime and inode (in the state dir), so uploading an unchanged file
 * again skips hashing. One small JSON entry per file under
 * `<state dir>/hashes/<sha256 of the absolute path>.json`: `{path, size, mtimeMs, ctimeMs, ino, dev, hash}`.
 *
 * A hit needs every one of size, mtime, ctime, inode and device to be unchanged (ctime too: a tool that restores an
 * mtime after writing still moves ctime). It is a cache, never a source of truth: an entry that cannot be read is a
 * miss, a write that fails is ignored, and the server checks the bytes anyway (`expected_hash`, 409 `hash_mismatch`,
 * after which the caller re-hashes without the cache). Entries are written to a temporary file and renamed, so
 * concurrent processes never read half an entry.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/** What identifies one version of a file's bytes, from `stat`. */
interface FileVersion {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  dev: number;
}

/** A cache of `blake3:<hex>` hashes of local files, in the state dir. */
export class HashCache {
  private readonly dir: string;

  /** @param stateDir the state dir (`defaultStateDir()`), shared by the CLI and the extension. */
  constructor(stateDir: string) {
    this.dir = path.join(stateDir, 'hashes');
  }

  /**
   * The hash of `file`: from the cache when the file is unchanged since it was hashed, else from `compute` (then
   * remembered). @returns `{hash, cached}`. @throws whatever `stat` or `compute` throws.
   */
  async hashOf(file: string, compute: () => Promise<string>): Promise<{ hash: string; cached: boolean }> {
    const absolute = path.resolve(file);
    const before = versionOf(await fs.stat(absolute));
    const cached = await this.read(absolute);
    if (cached && sameVersion(cached, before)) return { hash: cached.hash, cached: true };
    const hash = await compute();
    // Remembered only when the file did not change while it was hashed.
    const after = versionOf(await fs.stat(absolute));
    if (sameVersion(before, after)) await this.write({ path: absolute, ...after, hash }).catch(() => undefined);
    return { hash, cached: false };
  }

  /** Forgets `file` (after the server said its bytes do not match the cached hash). */
  async forget(file: string): Promise<void> {
    await fs.rm(this.entryOf(path.resolve(file)), { force: true });
  }

  private entryOf(absolute: string): string {
    return path.join(this.dir, `${createHash('sha256').update(absolute).digest('hex')}.json`);
  }

  private async read(absolute: string): Promise<(FileVersion & { hash: string }) | undefined> {
    try {
      const entry = JSON.parse(await fs.readFile(this.entryOf(absolute), 'utf8')) as Partial<
        FileVersion & { path: string; hash: string }
      >;
      const fields = [entry.size, entry.mtimeMs, entry.ctimeMs, entry.ino, entry.dev];
      if (entry.path !== absolute || typeof entry.hash !== 'string' || !fields.every((v) => typeof v === 'number'))
        return undefined;
      return entry as FileVersion & { hash: string };
    } catch {
      return undefined;
    }
  }

  private async write(entry: FileVersion & { path: string; hash: string }): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = this.entryOf(entry.path);
    const temp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(temp, JSON.stringify(entry), { mode: 0o600 });
    await fs.rename(temp, target).catch(async (err: unknown) => {
      await fs.rm(temp, { force: true });
      throw err;
    });
  }
}

function versionOf(stat: { size: number; mtimeMs: number; ctimeMs: number; ino: number; dev: number }): FileVersion {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, dev: stat.dev };
}

function sameVersion(a: FileVersion, b: FileVersion): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino && a.dev === b.dev;
}
