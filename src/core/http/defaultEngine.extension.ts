/**
 * The extension bundle's stand-in for `defaultEngine.ts` (swapped in by esbuild.mjs): the extension host's `fetch`,
 * which honours the user's proxy settings, PAC and certificates (in the extension, requests go through VS Code's
 * networking), and keeps undici out of the bundle ("undici is not in the extension bundle").
 */
import type { HttpEngine } from './engine';
import { FetchEngine, globalFetch } from './fetchEngine';

/**
 * A new engine over the host's global fetch. An undici dispatcher cannot apply to it, so passing one is an error
 * rather than silently ignored. @throws TypeError when `options.dispatcher` is given.
 */
export function defaultEngine(options: { dispatcher?: unknown } = {}): HttpEngine {
  if (options.dispatcher !== undefined)
    throw new TypeError(
      "an undici dispatcher was given, but the extension sends with the host's fetch (give an engine instead)",
    );
  return new FetchEngine(globalFetch);
}
