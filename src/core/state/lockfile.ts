/**
 * proper-lockfile, loaded at the first lock rather than with the modules that use it (the state store, the partial
 * files of downloads): the extension does not load it, nor graceful-fs under it, when it activates (at most 150 KB
 * at activation). The extension's bundle keeps it in a file of its own (esbuild.mjs).
 */
import type * as Lockfile from 'proper-lockfile';

export type { LockOptions } from 'proper-lockfile';

let loaded: typeof Lockfile | undefined;

/** The proper-lockfile module, required on first use. */
export function lockfile(): typeof Lockfile {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load, see above
  loaded ??= require('proper-lockfile') as typeof Lockfile;
  return loaded;
}
