// Builds every entry point into dist/, one bundle each: the extension (vscode external), the CLI (with the emulator
// inside), the hash worker, the job monitor's, the workflow graph's and the contact sheet's webview scripts (the graph's
// layout worker inside the two that draw graphs), and the extension-host test suite. `--watch` rebuilds
// on change; `--production` minifies (what `npm run package` ships and `npm test` tests); `--outdir=DIR` builds into
// DIR instead of dist/.
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
  // A package's ESM build first: esbuild follows its imports. Some CommonJS builds load their modules in ways a
  // bundler cannot see (jsonc-parser's UMD main does `require('./impl/format')` inside a factory), which would
  // crash only in the bundle, at the first call.
  mainFields: ['module', 'main'],
  sourcemap: !production,
  minify: production,
  keepNames: true,
  logLevel: 'warning',
};
/** A webview's script: one IIFE for the browser that its page loads by nonce (the monitor's, the workflow graph's). */
const webview = {
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  format: 'iife',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
};

// The extension sends with the extension host's fetch (it carries the user's proxy, PAC and certificates), so its
// bundle has no undici: the core's default engine module is swapped for the one over that fetch, and a request for
// undici from anything in the bundle fails the build instead of adding it.
const hostFetch = {
  name: 'host-fetch',
  setup(build) {
    build.onResolve({ filter: /^\.\/defaultEngine$/ }, (args) => ({
      path: path.join(args.resolveDir, 'defaultEngine.extension.ts'),
    }));
    build.onResolve({ filter: /^undici(\/|$)/ }, (args) => ({
      errors: [
        {
          text: `${args.importer} imports undici, which must stay out of the extension bundle: the extension sends with the host's fetch`,
        },
      ],
    }));
  },
};

// The workflow graph's layout worker (media/graph/layoutWorker.ts): its own bundle, carried as text inside each
// webview script that draws graphs (the graph's and the monitor's), which starts it from a Blob URL. A webview's files
// are served from another origin than its page (`new Worker(asWebviewUri(…))` fails there), and its scripts make no
// request (test/unit/monitor-page.test.ts), so the worker is not a file of its own. The module
// media/graph/layoutWorkerSource.ts (undefined: lay out on the page's thread) is swapped for one holding the bundle;
// rebuilt, in --watch, when a file of the worker changes.
const layoutWorker = {
  name: 'graph-layout-worker',
  setup(build) {
    build.onResolve({ filter: /^\.\/layoutWorkerSource$/ }, (args) => ({
      path: path.join(args.resolveDir, 'layoutWorkerSource.ts'),
      namespace: 'graph-layout-worker',
    }));
    build.onLoad({ filter: /.*/, namespace: 'graph-layout-worker' }, async () => {
      const worker = await esbuild.build({
        ...webview,
        entryPoints: ['media/graph/layoutWorker.ts'],
        sourcemap: false,
        write: false,
        metafile: true,
      });
      return {
        contents: `export const LAYOUT_WORKER_SOURCE = ${JSON.stringify(worker.outputFiles[0].text)};`,
        loader: 'js',
        watchFiles: Object.keys(worker.metafile.inputs).map((f) => path.resolve(f)),
      };
    });
  },
};

const suiteDir = 'test/vscode';
const suiteEntries = fs.existsSync(suiteDir)
  ? fs
      .readdirSync(suiteDir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(suiteDir, f))
  : [];

const builds = [
  {
    ...common,
    entryPoints: ['src/extension/extension.ts'],
    outfile: out('dist/extension.js'),
    external: ['vscode'],
    plugins: [hostFetch],
  },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: out('dist/cli.js'), banner: { js: '#!/usr/bin/env node' } },
  // The BLAKE3 worker, loaded by path from next to the bundle that hashes (core/util/hash.ts).
  { ...common, entryPoints: ['src/core/util/hashWorker.ts'], outfile: out('dist/hashWorker.js') },
  // The job monitor's webview script: its own entry for the browser, one IIFE the page loads by nonce. The
  // stylesheets and the codicon font it needs are copied beside it (a packaged extension has no node_modules).
  {
    ...webview,
    entryPoints: ['media/monitor/main.ts'],
    outfile: out('dist/webview/monitor.js'),
    plugins: [layoutWorker],
  },
  // The workflow graph's webview script (media/graph/): the same kind of entry; dagre lays out API-format graphs in
  // the webview, never on the extension host (in the layout worker it carries, see layoutWorker above).
  {
    ...webview,
    entryPoints: ['media/graph/main.ts'],
    outfile: out('dist/webview/graph.js'),
    plugins: [layoutWorker],
  },
  // A batch's contact sheet (media/contactSheet/): the same kind of entry.
  { ...webview, entryPoints: ['media/contactSheet/main.ts'], outfile: out('dist/webview/contactSheet.js') },
];
const WEBVIEW_FILES = [
  'node_modules/@vscode/codicons/dist/codicon.css',
  'node_modules/@vscode/codicons/dist/codicon.ttf',
  'media/monitor/monitor.css',
  'media/graph/graph.css',
  'media/contactSheet/contactSheet.css',
];
if (suiteEntries.length > 0) {
  // The extension-host suite: mocha stays external (resolved from the project's node_modules at run time).
  builds.push({ ...common, entryPoints: suiteEntries, outdir: out('dist/test/vscode'), external: ['vscode', 'mocha'] });
  builds.push({
    ...common,
    entryPoints: ['src/core/util/hashWorker.ts'],
    outfile: out('dist/test/vscode/hashWorker.js'),
  });
}
// dist/ holds what this build makes and nothing older (a file left by an earlier layout would ship in no .vsix and
// confuse whoever reads dist/); another --outdir is the caller's to manage.
if (outdir === 'dist') fs.rmSync('dist', { recursive: true, force: true });
for (const b of builds) {
  if (watch) {
    const ctx = await esbuild.context(b);
    await ctx.watch();
  } else {
    await esbuild.build(b);
  }
}
fs.mkdirSync(out('dist/webview'), { recursive: true });
for (const file of WEBVIEW_FILES) fs.copyFileSync(file, path.join(out('dist/webview'), path.basename(file)));
// The graph page's node form has its own stylesheet in the sources (each file small), shipped in graph.css.
fs.appendFileSync(out('dist/webview/graph.css'), `\n${fs.readFileSync('media/graph/form.css', 'utf8')}`);
if (fs.existsSync(out('dist/cli.js'))) fs.chmodSync(out('dist/cli.js'), 0o755);
// The native BLAKE3 add-on (src/core/util/blake3.ts): npm installs the prebuilt binary of the platform it runs on
// (an optional dependency of @napi-rs/blake-hash per platform); it is copied beside the hash worker, since a .vsix has
// no node_modules. On a platform whose binary is not there, the worker hashes with hash-wasm.
const napiDir = 'node_modules/@napi-rs';
const nativeBinaries = fs.existsSync(napiDir)
  ? fs
      .readdirSync(napiDir)
      .filter((d) => d.startsWith('blake-hash-'))
      .flatMap((d) =>
        fs
          .readdirSync(path.join(napiDir, d))
          .filter((f) => /^blake\..+\.node$/.test(f))
          .map((f) => path.join(napiDir, d, f)),
      )
  : [];
if (nativeBinaries.length > 0) fs.mkdirSync(out('dist/native'), { recursive: true });
for (const file of nativeBinaries) fs.copyFileSync(file, path.join(out('dist/native'), path.basename(file)));
