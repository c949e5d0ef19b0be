/**
 * Activation (at most 150 KB of JavaScript loaded when the extension activates): builds
 * the production extension bundle (`node esbuild.mjs --production`, as the .vsix ships it), then in fresh Node processes requires it and
 * calls `activate()` with a stand-in `vscode` module, and reports the JavaScript loaded (bytes of every module in the
 * require cache after activation) and the time of require + activate. Reference, side by side: a fresh process that
 * requires the libraries the extension no longer loads at activation (undici, all of zod, hash-wasm), i.e. what the
 * old single bundle paid.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { row } from './util';

/** The child: a `vscode` stand-in (every property a callable, constructible proxy; `get(key, default)` → default). */
const CHILD = String.raw`
const Module = require('module');
const path = require('path');
const fs = require('fs');
function stub(name) {
  const fn = function () { return stub(name + '()'); };
  return new Proxy(fn, {
    get(_t, prop) {
      // What a call returns is a thenable resolving to undefined (commands.executeCommand(...).then(...)); the
      // namespaces themselves are not thenables.
      if (prop === 'then') return name.endsWith('()') ? (resolve) => { if (resolve) resolve(undefined); return Promise.resolve(); } : undefined;
      if (prop === Symbol.toPrimitive) return () => '';
      if (prop === Symbol.iterator) return function* () {};
      if (prop === 'get') return (_key, fallback) => fallback;
      if (prop === 'fsPath' || prop === 'path') return os.tmpdir();
      return stub(name + '.' + String(prop));
    },
    set() { return true; },
    apply() { return stub(name + '()'); },
    construct() { return stub('new ' + name); },
  });
}
const os = require('os');
// A plain object of the namespaces the extension uses (esbuild's ESM interop copies own properties), each a stub.
const NAMES = ['CancellationTokenSource', 'Diagnostic', 'DiagnosticSeverity', 'Disposable', 'EventEmitter', 'FileSystemError', 'FileType', 'ProgressLocation', 'Range', 'Position', 'Uri', 'ThemeIcon', 'ThemeColor', 'TreeItem', 'TreeItemCollapsibleState', 'MarkdownString', 'StatusBarAlignment', 'ViewColumn', 'ConfigurationTarget', 'commands', 'env', 'languages', 'window', 'workspace', 'extensions', 'l10n', 'version'];
const vscode = Object.fromEntries(NAMES.map((n) => [n, stub('vscode.' + n)]));
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
const before = new Set(Object.keys(require.cache));
const [what, target] = process.argv.slice(1);
const t0 = process.hrtime.bigint();
if (what === 'extension') {
  const ext = require(target);
  const context = { subscriptions: [], secrets: stub('secrets'), globalStorageUri: { fsPath: os.tmpdir(), path: os.tmpdir(), scheme: 'file' }, extension: { packageJSON: { version: 'bench' } }, extensionUri: stub('extensionUri'), extensionPath: path.dirname(target), asAbsolutePath: (p) => path.join(path.dirname(target), '..', p) };
  ext.activate(context);
} else {
  for (const m of target.split(',')) require(m);
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
let bytes = 0;
for (const file of Object.keys(require.cache)) if (!before.has(file)) bytes += fs.statSync(file).size;
process.stdout.write(JSON.stringify({ ms, bytes }));
`;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs the child `runs` times (fresh processes: cold requires), median time and the bytes loaded. */
function measure(what: 'extension' | 'modules', target: string, cwd: string, runs: number): { ms: number; bytes: number } {
  const results: { ms: number; bytes: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ['-e', CHILD, what, target], { cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`activation child failed: ${r.stderr}`);
    results.push(JSON.parse(r.stdout) as { ms: number; bytes: number });
  }
  return { ms: median(results.map((x) => x.ms)), bytes: median(results.map((x) => x.bytes)) };
}

export async function benchActivation(runs = 15): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-activation-'));
  const bundle = path.join(out, 'extension.js');
  // The production build exactly as the .vsix ships it (esbuild.mjs, with its host-fetch engine swap).
  const build = spawnSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${out}`], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`the production build failed: ${build.stderr}`);
  const ours = measure('extension', bundle, root, runs);
  const reference = measure('modules', 'undici,zod,hash-wasm', root, runs);
  row('activation (production build)', {
    loadedKB: Math.round(ours.bytes / 1024),
    budgetKB: 150,
    ratio: ours.bytes / (150 * 1024),
    requireAndActivateMs: ours.ms,
    referenceMs: reference.ms,
    referenceKB: Math.round(reference.bytes / 1024),
    timeRatio: ours.ms / reference.ms,
  });
  fs.rmSync(out, { recursive: true, force: true });
}
