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
// `zod-monitor`: the parts of zod/mini the job monitor's protocol uses (src/core/monitor/zodParts.ts), loaded with the monitor.
const LAZY = { 'proper-lockfile': 'proper-lockfile', 'jsonc-parser': 'jsonc-parser/lib/esm/main.js', 'zod-mini': 'src/core/v2/zodParts.ts', 'zod-monitor': 'src/core/monitor/zodParts.ts' };
/** `lib` is the path from the bundle being built to dist/lib/ ('./lib/' from dist/extension.js, './' inside lib/). */
const lazyLibraries = (lib) => ({
  name: 'lazy-libraries',
  setup(build) {
    build.onResolve({ filter: /^(proper-lockfile|jsonc-parser)$/ }, (args) => ({ path: `${lib}${args.path}.js`, external: true }));
    build.onResolve({ filter: /^\.\/zodParts$/ }, () => ({ path: `${lib}zod-mini.js`, external: true }));
    // The monitor's protocol imports zod/mini itself (the webview bundles it whole); the extension takes its parts.
    build.onResolve({ filter: /^zod\/mini$/ }, (args) => (args.importer.endsWith(path.join('monitor', 'protocol.ts')) ? { path: `${lib}zod-monitor.js`, external: true } : undefined));
  },
});

// Command modules the extension requires at their first call (src/extension/lazy.ts, extension.ts `load`): each is
// bundled into dist/lib/ext-<name>.js. They and the extension share ONE core, dist/lib/core.js (error classes are
// checked with instanceof, the job service and state store are objects both hold), so `../core` is external to both.
const LAZY_COMMANDS = ['workflowIntelliSense', 'modelsView', 'modelInputs', 'runModel', 'submit', 'rememberedJobs', 'connectionCommands', 'assetCommands', 'jobActions', 'jobDocuments', 'monitor/monitorManager'];
/** The chunk of a lazy command module: `monitor/monitorManager` → `ext-monitor-monitorManager` (all in dist/lib/). */
const chunkOf = (name) => `ext-${name.replace(/\//g, '-')}`;
const sharedCore = (lib) => ({
  name: 'shared-core',
  setup(build) {
    // `../core` from src/extension/, `../../core` from a folder under it (src/extension/monitor/).
    build.onResolve({ filter: /^(\.\.\/)+core$/ }, () => ({ path: `${lib}core.js`, external: true }));
    // The router client: its own chunk (LAZY_CORE.router), which takes the rest of the core from core.js.
    build.onResolve({ filter: /^(\.\.\/)+core\/router$/ }, () => ({ path: `${lib}core-router.js`, external: true }));
    build.onResolve({ filter: /^(\.\.\/)+core\/v1$/ }, () => ({ path: `${lib}core-v1.js`, external: true }));
    // The job documents (workflow, logs, error texts of a job) and input files: only lazy command modules use them.
    build.onResolve({ filter: /^(\.\.\/)+core\/(jobDocuments|inputFile)$/ }, (args) => ({ path: `${lib}core-${args.path.split('/').pop()}.js`, external: true }));
    // Workflow IntelliSense's core (issue 12): its own chunk too (LAZY_CORE.workflowSchema), never in core.js.
    build.onResolve({ filter: /^(\.\.\/)+core\/workflowSchema$/ }, () => ({ path: `${lib}core-workflowSchema.js`, external: true }));
    build.onResolve({ filter: new RegExp(`^\\./(${LAZY_COMMANDS.join('|')})$`) }, (args) =>
      // Only the extension's entry requires them lazily; a static import from another module would load them at once.
      args.kind === 'require-call' ? { path: `${lib}${chunkOf(args.path.slice(2))}.js`, external: true } : undefined,
    );
  },
});
// The core keeps its class names (an error's `name` in the log); the extension's own classes need none (names cost
// bytes at activation).
// Core modules the shared core requires at first use (downloads: src/core/v2/client.ts `download()`): bundled into
// dist/lib/core-<name>.js, whose own imports of the core come from dist/lib/core.js (one instance of every class);
// only `keep` (small helpers the core index does not export) is bundled in.
// `router`: the model router client (issue 11), required by the extension's router modules (`../core/router`); its own
// modules are bundled in, its zod parts come from dist/lib/zod-mini.js.
const ROUTER_MODULES = ['./ids', './errors', './schemas', './schemaCache', './keyStore', './input', './client', './inputSchema', './fieldPositions', './modelTree', './zodParts', './outputImages', './routerService'];
// `v1`: the deprecated v1 client with its WebSocket (issue 12; `ws` bundled in), required as `../core/v1`.
const V1_MODULES = ['./frames', './errors', './schemas', './mapping', './socket', './client', './watch', './jobBackend', './zodParts'];
// `workflowSchema`: workflow IntelliSense's core (issue 12: object_info, the schema generator, the validator), required
// by the extension's workflowIntelliSense chunk; its zod parts come from dist/lib/zod-mini.js.
const WORKFLOW_SCHEMA_MODULES = ['./objectInfo', './linkTypes', './generate', './validate', './words', './zodParts'];
const LAZY_CORE = {
  download: { entry: 'src/core/v2/download.ts', keep: ['../state/lockfile'] },
  router: { entry: 'src/core/router/index.ts', keep: ROUTER_MODULES },
  v1: { entry: 'src/core/v1/index.ts', keep: V1_MODULES },
  workflowSchema: { entry: 'src/core/workflowSchema/index.ts', keep: WORKFLOW_SCHEMA_MODULES },
  // `jobDocuments`: a job's workflow, logs and error as texts (src/core/jobDocuments.ts), for the lazy job commands.
  jobDocuments: { entry: 'src/core/jobDocuments.ts', keep: ['./inputFile'] },
  // `inputFile`: reading a workflow or input file with its checks (src/core/inputFile.ts), at the first submission.
  inputFile: { entry: 'src/core/inputFile.ts', keep: [] },
};
const lazyCore = {
  name: 'lazy-core',
  setup(build) {
    build.onResolve({ filter: new RegExp(`^\\./(${Object.keys(LAZY_CORE).join('|')})$`) }, (args) =>
      args.kind === 'require-call' ? { path: `./core-${args.path.slice(2)}.js`, external: true } : undefined,
    );
  },
};
const coreChunk = (keep) => ({
  name: 'core-chunk',
  setup(build) {
    // The downloads, required lazily from another chunk (the v1 client's outputs): the downloads chunk, not core.js.
    build.onResolve({ filter: /^(\.\.\/v2|\.)\/download$/ }, (args) =>
      args.kind === 'require-call' && !args.importer.includes(`${path.sep}node_modules${path.sep}`) ? { path: './core-download.js', external: true } : undefined,
    );
    // Only the core's own relative imports: a bundled library's (the OpenAPI converter's) stay inside the chunk.
    build.onResolve({ filter: /^\.\.?\// }, (args) =>
      args.kind === 'entry-point' || keep.includes(args.path) || args.importer.includes(`${path.sep}node_modules${path.sep}`) ? undefined : { path: './core.js', external: true },
    );
  },
});

const extensionBuild = (entry, outfile, lib) => ({
  ...common,
  keepNames: entry.startsWith('src/core/'),
  entryPoints: [entry],
  outfile: out(outfile),
  external: ['vscode'],
  plugins: [hostFetch, lazyLibraries(lib), sharedCore(lib), ...(entry === 'src/core/index.ts' ? [lazyCore] : [])],
});

const suiteDir = 'test/vscode';
const suiteEntries = fs.existsSync(suiteDir)
  ? fs.readdirSync(suiteDir).filter((f) => f.endsWith('.ts')).map((f) => path.join(suiteDir, f))
  : [];

const builds = [
  extensionBuild('src/extension/extension.ts', 'dist/extension.js', './lib/'),
  extensionBuild('src/core/index.ts', 'dist/lib/core.js', './'),
  ...Object.entries(LAZY_CORE).map(([name, { entry, keep }]) => ({
    ...common,
    entryPoints: [entry],
    outfile: out(`dist/lib/core-${name}.js`),
    plugins: [coreChunk(keep), lazyLibraries('./')],
  })),
  ...LAZY_COMMANDS.map((name) => extensionBuild(`src/extension/${name}.ts`, `dist/lib/${chunkOf(name)}.js`, './')),
  ...Object.entries(LAZY).map(([name, entry]) => ({ ...common, entryPoints: [entry], outfile: out(`dist/lib/${name}.js`) })),
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: out('dist/cli.js'), banner: { js: '#!/usr/bin/env node' } },
  // The BLAKE3 worker, loaded by path from next to the bundle that hashes (core/hash.ts).
  { ...common, entryPoints: ['src/core/hashWorker.ts'], outfile: out('dist/hashWorker.js') },
];
// The job monitor's webview script (issue 10): its own entry for the browser, one IIFE the page loads by nonce. The
// stylesheets and the codicon font it needs are copied beside it (a packaged extension has no node_modules).
builds.push({
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  format: 'iife',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  entryPoints: ['media/monitor/main.ts'],
  outfile: out('dist/webview/monitor.js'),
});
const WEBVIEW_FILES = ['node_modules/@vscode/codicons/dist/codicon.css', 'node_modules/@vscode/codicons/dist/codicon.ttf', 'media/monitor/monitor.css'];
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
fs.mkdirSync(out('dist/webview'), { recursive: true });
for (const file of WEBVIEW_FILES) fs.copyFileSync(file, path.join(out('dist/webview'), path.basename(file)));
if (fs.existsSync(out('dist/cli.js'))) fs.chmodSync(out('dist/cli.js'), 0o755);
