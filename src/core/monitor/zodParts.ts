/**
 * The parts of zod/mini the monitor's protocol (protocol.ts) uses, and only those: the extension's build maps the
 * protocol's `zod/mini` import to a small file built from this module (esbuild.mjs, dist/lib/zod-monitor.js), loaded
 * with the monitor, instead of the whole of zod/mini (activation loads at most 150 KB). A unit test
 * (test/unit/monitor-state.test.ts) checks that every `z.<part>` protocol.ts uses is exported here.
 */
export { array, boolean, discriminatedUnion, literal, maxLength, minLength, nullable, number, object, regex, string } from 'zod/mini';
