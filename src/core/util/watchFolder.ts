/**
 * Watching a folder that may not exist yet (node:fs `watch`, which needs an existing path).
 */
import { promises as fs, watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';

/**
 * Watches the folder `dir`, which may not exist yet (a job's output folder is made only when its first output is
 * written: extension/outputs.ts): until it exists, the nearest folder above it that exists is watched, one level
 * lower each time the next one appears, and `onChange` is called once it exists; then every change inside it calls
 * `onChange`. Never throws: a folder that cannot be watched is simply not watched. `close()` stops it.
 */
export function watchFolderToBe(dir: string, onChange: () => void): { close(): void } {
  const wanted = path.resolve(dir);
  let watcher: FSWatcher | undefined;
  let closed = false;
  let generation = 0;
  const arm = async (): Promise<void> => {
    // Only the latest arming watches (events can come faster than the folders are looked at).
    const mine = ++generation;
    let target = wanted;
    while (!(await isFolder(target))) {
      const up = path.dirname(target);
      if (up === target) return;
      target = up;
    }
    if (closed || mine !== generation) return;
    watcher?.close();
    watcher = undefined;
    const own = target === wanted;
    try {
      // Above the folder only the next level toward it matters: when it appears, watch one level lower.
      watcher = watch(target, own ? onChange : () => void arm());
      watcher.on('error', () => watcher?.close());
    } catch {
      return;
    }
    if (own) {
      // It may have been written into while this was being armed.
      onChange();
    } else {
      // The next level may have appeared between the look and the watch: no event would say so.
      const next = path.join(target, path.relative(target, wanted).split(path.sep)[0]!);
      if (await isFolder(next)) void arm();
    }
  };
  void arm();
  return {
    close: () => {
      closed = true;
      watcher?.close();
    },
  };
}

/** True when `dir` is a folder. */
async function isFolder(dir: string): Promise<boolean> {
  return fs.stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
