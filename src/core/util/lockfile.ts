/**
 * proper-lockfile, required at the first lock rather than with the modules that use it (the state store, the partial
 * files of downloads). It is in the bundle either way; deferring its run is measured (`npm run bench -- activation`:
 * about 3.5 ms of CPU less at activation), and graceful-fs under it patches Node's `fs`, which the extension host
 * shares with every extension, only once a lock is taken.
 */
import type * as Lockfile from 'proper-lockfile';

export type { LockOptions } from 'proper-lockfile';

let loaded: typeof Lockfile | undefined;

/** The proper-lockfile module, required on first use. */
export function lockfile(): typeof Lockfile {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required at first use, see above
  loaded ??= require('proper-lockfile') as typeof Lockfile;
  return loaded;
}
