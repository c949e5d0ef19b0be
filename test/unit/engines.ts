/**
 * The two HTTP engines the transport tests run over (the transport is injected, so the core does not care
 * which): the Node default (undici's `request()`), and a real `fetch` (Node's global one, which is undici's fetch, as
 * in the extension host).
 */
import { FetchEngine, globalFetch, type HttpEngine } from '../../src/core';

export interface EngineCase {
  /** `undici` (the default in Node) or `fetch`. */
  name: 'undici' | 'fetch';
  /** The transport options that select the engine: none for the default. */
  options(): { engine?: HttpEngine };
}

export const ENGINES: EngineCase[] = [
  { name: 'undici', options: () => ({}) },
  { name: 'fetch', options: () => ({ engine: new FetchEngine(globalFetch) }) },
];
