/**
 * Activation: builds the production bundle (`node esbuild.mjs --production`, as the .vsix ships it), then in fresh
 * Node processes requires `dist/extension.js` and calls `activate()` with a stand-in `vscode` module, and reports the
 * time of require + activate and the JavaScript loaded (bytes of every module in the require cache afterwards).
 * Reference, in the same run and in fresh processes too, alternating with ours: requiring the `zod` package alone.
 * Medians of `runs` each; the ratio is ours ÷ reference (goal: at most 0.75).
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
// A plain object of the names the extension uses (esbuild's ESM interop copies own properties), each a stub; the
// names are read from the extension's sources by the parent (vscodeNames), so a new API in use needs no edit here.
const NAMES = JSON.parse(process.env.BENCH_VSCODE_NAMES);
const vscode = Object.fromEntries(NAMES.map((n) => [n, stub('vscode.' + n)]));
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
const before = new Set(Object.keys(require.cache));
const [what, target] = process.argv.slice(1);
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
if (what === 'extension') {
  const ext = require(target);
  const context = { subscriptions: [], secrets: stub('secrets'), globalState: { get: () => undefined, update: () => Promise.resolve(), keys: () => [] }, globalStorageUri: { fsPath: os.tmpdir(), path: os.tmpdir(), scheme: 'file' }, extension: { packageJSON: { version: 'bench' } }, extensionUri: stub('extensionUri'), extensionPath: path.dirname(target), asAbsolutePath: (p) => path.join(path.dirname(target), '..', p) };
  ext.activate(context);
} else {
  for (const m of target.split(',')) require(m);
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
let bytes = 0;
for (const file of Object.keys(require.cache)) if (!before.has(file)) bytes += fs.statSync(file).size;
process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, bytes }));
`;

let names: string[] | undefined;
/** Every `vscode.<name>` the extension's sources (src/extension, recursively) use, read once. */
function vscodeNames(root: string): string[] {
  if (names) return names;
  const found = new Set<string>(['version']);
  const dir = path.join(root, 'src', 'extension');
  for (const file of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    for (const m of fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/\bvscode\.([A-Za-z_]\w*)/g))
      found.add(m[1]);
  }
  names = [...found].sort();
  return names;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** One child's figures: wall and CPU ms of require (+ activate), bytes of the modules it loaded. */
interface Sample {
  ms: number;
  /** The process's user + system CPU time over the same span: what other processes on a shared machine do not move. */
  cpuMs: number;
  bytes: number;
}

/** Runs the child once, in a fresh process (cold requires). */
function measureOnce(what: 'extension' | 'modules', target: string, cwd: string): Sample {
  const env = { ...process.env, BENCH_VSCODE_NAMES: JSON.stringify(vscodeNames(cwd)) };
  const r = spawnSync(process.execPath, ['-e', CHILD, what, target], { cwd, encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`activation child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Sample;
}

/** The goal: require + activate of the whole extension bundle takes at most this share of requiring zod alone. */
const GOAL_RATIO = 0.75;

/**
 * Prints the activation figures: the bundle's size (KB), the JavaScript loaded (KB), require + `activate()` in wall
 * and CPU ms beside `require('zod')`'s, medians of `runs` fresh processes each, and the ratios to the goal.
 * @throws Error when the production build or a child process fails.
 */
export async function benchActivation(runs = 21): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-activation-'));
  const bundle = path.join(out, 'extension.js');
  // The production build exactly as the .vsix ships it (esbuild.mjs, with its host-fetch engine swap).
  const build = spawnSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${out}`], {
    cwd: root,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`the production build failed: ${build.stderr}`);
  // Alternating, one of each at a time, so a change in the machine's load weighs on both sides alike.
  const ours: Sample[] = [];
  const reference: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    ours.push(measureOnce('extension', bundle, root));
    reference.push(measureOnce('modules', 'zod', root));
  }
  const ms = (samples: Sample[], key: 'ms' | 'cpuMs' = 'ms'): number => median(samples.map((x) => x[key]));
  const range = (samples: Sample[]): string =>
    `${Math.min(...samples.map((x) => x.ms)).toFixed(0)}-${Math.max(...samples.map((x) => x.ms)).toFixed(0)}`;
  const kb = (samples: Sample[]): number => Math.round(median(samples.map((x) => x.bytes)) / 1024);
  const ratio = ms(ours) / ms(reference);
  const cpuRatio = ms(ours, 'cpuMs') / ms(reference, 'cpuMs');
  row('activation (production bundle)', {
    bundleKB: Math.round(fs.statSync(bundle).size / 1024),
    loadedKB: kb(ours),
    requireAndActivateMs: ms(ours),
    rangeMs: range(ours),
    cpuMs: ms(ours, 'cpuMs'),
  });
  row('reference: require zod', {
    loadedKB: kb(reference),
    requireMs: ms(reference),
    rangeMs: range(reference),
    cpuMs: ms(reference, 'cpuMs'),
  });
  row('ratio (ours / zod, medians)', {
    wall: ratio,
    cpu: cpuRatio,
    goal: `<= ${GOAL_RATIO}: ${ratio <= GOAL_RATIO ? 'met' : 'not met'} (wall), ${cpuRatio <= GOAL_RATIO ? 'met' : 'not met'} (cpu)`,
  });
  fs.rmSync(out, { recursive: true, force: true });
}
