// Builds every entry point into dist/: the extension (vscode external), the CLI (with the emulator inside),
// and the extension-host test suite. `--watch` rebuilds on change; `--production` minifies.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

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

const suiteDir = 'test/vscode';
const suiteEntries = fs.existsSync(suiteDir)
  ? fs.readdirSync(suiteDir).filter((f) => f.endsWith('.ts')).map((f) => path.join(suiteDir, f))
  : [];

const builds = [
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  // The BLAKE3 worker, loaded by path from next to the bundle that hashes (core/hash.ts).
  { ...common, entryPoints: ['src/core/hashWorker.ts'], outfile: 'dist/hashWorker.js' },
];
if (suiteEntries.length > 0) {
  // The extension-host suite: mocha stays external (resolved from the project's node_modules at run time).
  builds.push({ ...common, entryPoints: suiteEntries, outdir: 'dist/test/vscode', external: ['vscode', 'mocha'] });
  builds.push({ ...common, entryPoints: ['src/core/hashWorker.ts'], outfile: 'dist/test/vscode/hashWorker.js' });
}
for (const b of builds) {
  if (!fs.existsSync(b.entryPoints[0])) continue;
  if (watch) {
    const ctx = await esbuild.context(b);
    await ctx.watch();
  } else {
    await esbuild.build(b);
  }
}
if (fs.existsSync('dist/cli.js')) fs.chmodSync('dist/cli.js', 0o755);
