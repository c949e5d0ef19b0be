/**
 * The parts of zod/mini the v2 shapes use, and only those: schemas.ts requires this module on first use, and the
 * extension's bundle builds it into a small file of its own (esbuild.mjs, dist/lib/zod-mini.js) that holds just
 * these functions, tree-shaken, instead of the whole of zod/mini.
 */
export { _default, array, boolean, catch, looseObject, minLength, nullish, number, optional, pipe, record, string, transform, unknown } from 'zod/mini';
