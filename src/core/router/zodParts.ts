/**
 * The parts of zod/mini the router's shapes use: a subset of ../v2/zodParts.ts, re-exported from it, so the
 * extension's bundle resolves this module's lazy `require('./zodParts')` to the same small file (esbuild.mjs,
 * dist/lib/zod-mini.js) and loads no more zod.
 */
export { array, boolean, catch, looseObject, minLength, nullish, number, optional, pipe, string, transform, unknown } from '../v2/zodParts';
