// Builds every entry point into dist/: the extension (vscode external), the CLI (with the emulator inside),
// and the extension-host test suite. `--watch` rebuilds on change; `--production` minifies; `--outdir=DIR` builds
// into DIR instead of dist/ (the activation benchmark measures a production build there).
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const outdir = process.argv.find((a) => a.startsWith('--outdir='))?.slice('--outdir='.length) ?? 'dist';
const out = (file) => path.join(outdir, path.relative('dist', file));

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  keepNames: true,
  logLevel: 'warning',
};

// The extension sends with the extension host's fetch (issue 8: it carries the user's proxy, PAC and certificates),
// so its bundle has no undici: the core's default engine module is swapped for the one over that fetch, and a
// request for undici from anything in the bundle fails the build instead of adding it.
const hostFetch = {
  name: 'host-fetch',
  setup(build) {
    build.onResolve({ filter: /^\.\/defaultEngine$/ }, (args) => ({ path: path.join(args.resolveDir, 'defaultEngine.extension.ts') }));
    build.onResolve({ filter: /^undici(\/|$)/ }, (args) => ({
      errors: [{ text: `${args.importer} imports undici, which must stay out of the extension bundle (issue 8): the extension sends with the host's fetch` }],
    }));
  },
};

// Libraries the extension loads only when first needed (a lock of the state store, the positions of workflow
// problems, the response shapes): kept out of dist/extension.js, each bundled into dist/lib/<name>.js, which the extension's lazy
// require() finds beside it. Activation then loads at most 150 KB (issue 8).
const LAZY = { 'proper-lockfile': 'proper-lockfile', 'jsonc-parser': 'jsonc-parser/lib/esm/main.js', 'zod-mini': 'src/core/v2/zodParts.ts' };
const lazyLibraries = {
  name: 'lazy-libraries',
  setup(build) {
    build.onResolve({ filter: /^(proper-lockfile|jsonc-parser)$/ }, (args) => ({ path: `./lib/${args.path}.js`, external: true }));
    build.onResolve({ filter: /^\.\/zodParts$/ }, () => ({ path: './lib/zod-mini.js', external: true }));
  },
};

const suiteDir = 'test/vscode';
const suiteEntries = fs.existsSync(suiteDir)
  ? fs.readdirSync(suiteDir).filter((f) => f.endsWith('.ts')).map((f) => path.join(suiteDir, f))
  : [];

const builds = [
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: out('dist/extension.js'), external: ['vscode'], plugins: [hostFetch, lazyLibraries] },
  ...Object.entries(LAZY).map(([name, entry]) => ({ ...common, entryPoints: [entry], outfile: out(`dist/lib/${name}.js`) })),
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: out('dist/cli.js'), banner: { js: '#!/usr/bin/env node' } },
  // The BLAKE3 worker, loaded by path from next to the bundle that hashes (core/hash.ts).
  { ...common, entryPoints: ['src/core/hashWorker.ts'], outfile: out('dist/hashWorker.js') },
];
if (suiteEntries.length > 0) {
  // The extension-host suite: mocha stays external (resolved from the project's node_modules at run time).
  builds.push({ ...common, entryPoints: suiteEntries, outdir: out('dist/test/vscode'), external: ['vscode', 'mocha'] });
  builds.push({ ...common, entryPoints: ['src/core/hashWorker.ts'], outfile: out('dist/test/vscode/hashWorker.js') });
}
for (const b of builds) {
  if (b.entryPoints[0].startsWith('src/') && !fs.existsSync(b.entryPoints[0])) continue; // a checkout without that part
  if (watch) {
    const ctx = await esbuild.context(b);
    await ctx.watch();
  } else {
    await esbuild.build(b);
  }
}
if (fs.existsSync(out('dist/cli.js'))) fs.chmodSync(out('dist/cli.js'), 0o755);
