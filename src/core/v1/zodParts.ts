/**
 * The parts of zod/mini the v1 shapes use: re-exported from ../v2/zodParts.ts, so the extension's bundle resolves this
 * module's lazy `require('./zodParts')` to the same small file (esbuild.mjs, dist/lib/zod-mini.js) and loads no more zod.
 */
export { catch, looseObject, minLength, nullish, number, optional, pipe, record, string, transform, unknown } from '../v2/zodParts';
