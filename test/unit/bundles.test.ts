/**
 * What ships: the bundles in dist/ as the build made them (`npm test` and `npm run package` run
 * `node esbuild.mjs --production`), one per entry point. Each is checked for what a bundler breaks silently: a library
 * that must stay out (undici in the extension), a module loaded in a way the bundler cannot follow (jsonc-parser's
 * UMD build), a require() of a package the .vsix does not carry. The CLI's commands run from dist/cli.js in
 * the cli-dist-*.test.ts suites.
 */
import * as assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { repositoryRoot } from './repositoryRoot';

const root = repositoryRoot();
const dist = path.join(root, 'dist');

/** A bundle's text (asserted with includes(), so that a failure does not print megabytes of bundle). */
function bundle(name: string): string {
  const file = path.join(dist, name);
  assert.ok(fs.existsSync(file), `${file} is missing: build it first (node esbuild.mjs --production)`);
  return fs.readFileSync(file, 'utf8');
}

describe('the shipped bundles (dist/)', () => {
  it('one bundle per entry point: dist/ holds extension.js, cli.js, hashWorker.js (with the native BLAKE3 add-on beside it), the webviews (monitor, graph, contact sheet) and the extension-host suite, and no chunk beside them', () => {
    // Source maps (a development build's) aside.
    const listed = (dir: string): string[] =>
      fs
        .readdirSync(dir)
        .filter((f) => !f.endsWith('.map'))
        .sort();
    assert.deepEqual(listed(dist), ['cli.js', 'extension.js', 'hashWorker.js', 'native', 'test', 'webview']);
    assert.ok(
      listed(path.join(dist, 'native')).every((f) => /^blake\..+\.node$/.test(f)),
      'dist/native/ holds only the BLAKE3 add-on',
    );
    assert.deepEqual(listed(path.join(dist, 'webview')), [
      'codicon.css',
      'codicon.ttf',
      'contactSheet.css',
      'contactSheet.js',
      'graph.css',
      'graph.js',
      'monitor.css',
      'monitor.js',
    ]);
  });

  it("dist/extension.js has no undici and its default engine is the host's fetch; dist/cli.js, built from the same core, keeps undici", () => {
    const extension = bundle('extension.js');
    const cli = bundle('cli.js');
    // The markers are real: the CLI bundle has them (undici's proxy agent; the extension engine's refusal of a dispatcher).
    assert.ok(cli.includes('EnvHttpProxyAgent'), 'the CLI bundle has no undici: the marker proves nothing');
    assert.ok(!extension.includes('EnvHttpProxyAgent'), 'undici is in the extension bundle');
    const refusal = 'an undici dispatcher was given, but the extension sends with the host';
    assert.ok(
      fs.readFileSync(path.join(root, 'src/core/http/defaultEngine.extension.ts'), 'utf8').includes(refusal),
      'the marker of the host-fetch engine moved',
    );
    assert.ok(
      extension.includes(refusal),
      'the extension bundle does not have the host-fetch engine (the host-fetch plugin did not swap it in)',
    );
    assert.ok(!cli.includes(refusal), "the CLI bundle has the extension's engine");
  });

  it('no bundle carries jsonc-parser\'s UMD build: its require("./impl/format") cannot be followed by the bundler and fails at the first call', () => {
    // The marker is real: the UMD main requires its modules by these relative names.
    assert.ok(
      fs.readFileSync(require.resolve('jsonc-parser'), 'utf8').includes('./impl/format'),
      'the UMD build no longer has the marker',
    );
    const suite = fs
      .readdirSync(path.join(dist, 'test', 'vscode'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => path.join('test', 'vscode', f));
    for (const name of ['extension.js', 'cli.js', ...suite])
      assert.ok(!bundle(name).includes('./impl/format'), `${name} has jsonc-parser's UMD build`);
  });

  it("every require() the shipped bundles keep names vscode (the extension), a Node built-in, or ws's optional native add-ons (required inside a try): a .vsix has no node_modules", () => {
    // A `node:` name is always a built-in (some, such as node:sqlite, exist only in later Node versions, required lazily).
    const builtins = new Set(builtinModules);
    const optional = new Set(['bufferutil', 'utf-8-validate']);
    for (const name of ['extension.js', 'cli.js', 'hashWorker.js']) {
      const required = new Set([...bundle(name).matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!));
      assert.ok(required.size > 0, `no require() found in ${name}: the pattern is broken`);
      const unexpected = [...required].filter(
        (r) =>
          !r.startsWith('node:') &&
          !builtins.has(r) &&
          !optional.has(r) &&
          !(r === 'vscode' && name === 'extension.js'),
      );
      assert.deepEqual(unexpected, [], `${name} requires what it does not carry`);
    }
  });

  it('dist/hashWorker.js hashes with the native add-on from dist/native/ alone, with no node_modules (as in a .vsix), and the .vsix carries it', async () => {
    const shipped = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-vsix-'));
    try {
      fs.copyFileSync(path.join(dist, 'hashWorker.js'), path.join(shipped, 'hashWorker.js'));
      fs.cpSync(path.join(dist, 'native'), path.join(shipped, 'native'), { recursive: true });
      // Forced native: the worker answers an error if no binary beside it loads.
      const worker = new Worker(path.join(shipped, 'hashWorker.js'), {
        workerData: { service: true, engine: 'native' },
      });
      try {
        const answer = await new Promise<{ hex?: string; error?: string }>((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
          const empty = new ArrayBuffer(0);
          worker.postMessage({ id: 1, bytes: empty }, [empty]);
        });
        assert.equal(answer.error, undefined);
        assert.equal(answer.hex, 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
      } finally {
        await worker.terminate();
      }
    } finally {
      fs.rmSync(shipped, { recursive: true, force: true });
    }
    assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /^!dist\/native\/\*\.node$/m);
  });
});
