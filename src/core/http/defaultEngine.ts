/**
 * The engine a {@link Transport} uses when none is injected, in Node: undici (it stays the transport of the CLI and
 * the tests). The extension's bundle replaces this module with `defaultEngine.extension.ts` (esbuild.mjs),
 * so undici is never bundled there; the extension passes its engine explicitly anyway.
 */
import type { Dispatcher } from 'undici';
import type { HttpEngine } from './engine';
import { UndiciEngine } from './undiciEngine';

/** A new engine of this build's default kind: undici, through `dispatcher` when given (else an EnvHttpProxyAgent of its own). */
export function defaultEngine(options: { dispatcher?: Dispatcher } = {}): HttpEngine {
  return new UndiciEngine(options);
}
