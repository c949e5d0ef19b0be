// A static guard on the webviews, the job monitor's and the workflow graph's (nothing in a webview reaches the network;
// no remote origin in its CSP): the production bundles built by esbuild.mjs have no network API and no remote URL, set
// HTML only where Lit builds its own templates (the graph sets none), and the files the pages link are copied beside
// them. One production build serves both.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './tmp';

const root = path.resolve(__dirname, '../../..');

let built: string | undefined;
/** The production build into a temporary folder, made once for every guard of this file. */
function productionBuild(): string {
  if (built === undefined) {
    const dir = tempDir('webview-bundle-');
    execFileSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${dir}`], { cwd: root, stdio: 'pipe' });
    built = dir;
  }
  return built;
}

/** The network APIs a webview script must not call. */
const NETWORK_APIS = [/\bfetch\s*\(/, /XMLHttpRequest/, /WebSocket/, /EventSource/, /sendBeacon/, /importScripts/];

describe('monitor webview bundle: static guard (nothing in the webview reaches the network)', function () {
  let outdir: string;
  let bundle: string;

  before(function () {
    this.timeout(120_000);
    outdir = productionBuild();
    bundle = fs.readFileSync(path.join(outdir, 'webview', 'monitor.js'), 'utf8');
  });

  it('the build puts the script, its stylesheet and the codicon font and stylesheet in dist/webview/', () => {
    for (const f of ['monitor.js', 'monitor.css', 'codicon.css', 'codicon.ttf'])
      assert.ok(fs.statSync(path.join(outdir, 'webview', f)).size > 0, f);
    assert.ok(bundle.length > 10_000, 'the bundle is suspiciously small');
    assert.ok(bundle.includes('acquireVsCodeApi'), 'not the monitor script');
  });

  it('the webview script calls no network API (fetch, XMLHttpRequest, WebSocket, EventSource, sendBeacon)', () => {
    const found = NETWORK_APIS.filter((api) => api.test(bundle));
    assert.deepEqual(found.map(String), []);
  });

  it('the webview script holds no http(s) URL but XML namespaces and one documentation link in a library warning', () => {
    const urls = [...bundle.matchAll(/https?:\/\/[^\s"'`)\\]*/g)].map((m) => m[0]);
    const allowed = (u: string) =>
      u.startsWith('http://www.w3.org/') ||
      // @vscode-elements' icon warns "See https://vscode-elements.github.io/components/icon/ for more details." (text only).
      u === 'https://vscode-elements.github.io/components/icon/';
    assert.deepEqual(
      urls.filter((u) => !allowed(u)),
      [],
    );
  });

  it('HTML is set only where Lit builds its own <template> (never from data); the monitor sets text only', () => {
    const at = [...bundle.matchAll(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/g)];
    for (const m of at) {
      const before = bundle.slice(Math.max(0, m.index - 200), m.index);
      assert.match(
        before,
        /createElement\("template"\)/,
        `HTML set outside Lit's template factory: …${bundle.slice(m.index - 80, m.index + 40)}…`,
      );
    }
    for (const f of fs.readdirSync(path.join(root, 'media', 'monitor')).filter((n) => n.endsWith('.ts'))) {
      const src = fs.readFileSync(path.join(root, 'media', 'monitor', f), 'utf8');
      assert.doesNotMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/, f);
    }
  });

  it('the stylesheet loads nothing from elsewhere (no url() but none at all, no @import)', () => {
    const css = fs.readFileSync(path.join(outdir, 'webview', 'monitor.css'), 'utf8');
    assert.doesNotMatch(css, /url\(|@import/);
    // Colours only from the theme (the theme's colors via CSS variables): no literal colour.
    const noComments = css.replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(noComments, /#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(/);
  });
});

describe('workflow graph webview bundle: static guard (nothing in the webview reaches the network)', function () {
  let outdir: string;
  let bundle: string;

  before(function () {
    this.timeout(120_000);
    outdir = productionBuild();
    bundle = fs.readFileSync(path.join(outdir, 'webview', 'graph.js'), 'utf8');
  });

  it('the build puts the graph script and its stylesheet in dist/webview/, with dagre inside the script', () => {
    for (const f of ['graph.js', 'graph.css']) assert.ok(fs.statSync(path.join(outdir, 'webview', f)).size > 0, f);
    assert.ok(bundle.includes('acquireVsCodeApi'), 'not the graph script');
    // dagre's layout runs in the webview, so it is inside the script (tens of KB minified).
    assert.ok(bundle.length > 40_000, 'the bundle is suspiciously small: dagre missing?');
  });

  it('the graph script calls no network API (fetch, XMLHttpRequest, WebSocket, EventSource, sendBeacon)', () => {
    assert.deepEqual(NETWORK_APIS.filter((api) => api.test(bundle)).map(String), []);
  });

  it("the graph script holds no http(s) URL but XML namespaces and the node form library's documentation link", () => {
    const urls = [...bundle.matchAll(/https?:\/\/[^\s"'`)\\]*/g)].map((m) => m[0]);
    assert.deepEqual(
      urls.filter(
        (u) => !u.startsWith('http://www.w3.org/') && u !== 'https://vscode-elements.github.io/components/icon/',
      ),
      [],
    );
  });

  it("the graph sets HTML only where Lit builds its own <template> (the node form's elements); its sources set text and SVG attributes only", () => {
    for (const m of bundle.matchAll(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/g))
      assert.match(
        bundle.slice(Math.max(0, m.index - 200), m.index),
        /createElement\("template"\)/,
        `HTML set outside Lit's template factory: …${bundle.slice(m.index - 80, m.index + 40)}…`,
      );
    for (const f of fs
      .readdirSync(path.join(root, 'media', 'graph'))
      .filter((n) => n.endsWith('.ts'))
      .map((n) => `media/graph/${n}`)) {
      assert.doesNotMatch(
        fs.readFileSync(path.join(root, f), 'utf8'),
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
        f,
      );
    }
  });

  it('the graph stylesheet loads nothing from elsewhere and has no literal colour (theme variables only)', () => {
    const css = fs.readFileSync(path.join(outdir, 'webview', 'graph.css'), 'utf8');
    assert.doesNotMatch(css, /url\(|@import/);
    const noComments = css.replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(noComments, /#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(/);
    // The graph's own variables (`--graph-type-IMAGE`) are names for theme variables, declared here as one each; the
    // one set by the script, a group's saved colour, is a checked hex colour (media/graph/scene.ts, groupColour).
    for (const m of noComments.matchAll(/var\((--[a-z0-9-]+)/gi))
      assert.ok(m[1]!.startsWith('--vscode-') || m[1]!.startsWith('--graph-'), m[1]);
    const own = [...noComments.matchAll(/(--graph-[A-Za-z0-9_-]+)\s*:\s*([^;]+);/g)];
    assert.ok(own.length > 0);
    for (const [, name, value] of own) assert.match(value!.trim(), /^var\(--vscode-[a-zA-Z0-9-]+\)$/, name);
  });
});
