// A static guard on the monitor webview (nothing in the webview reaches the network; no remote origin in its CSP):
// the production bundle built by esbuild.mjs has no network API and no remote URL, sets HTML only where Lit builds
// its own templates, and the files the page links are copied beside it.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './tmp';

const root = path.resolve(__dirname, '../../..');

describe('monitor webview bundle: static guard (nothing in the webview reaches the network)', function () {
  let outdir: string;
  let bundle: string;

  before(function () {
    this.timeout(120_000);
    outdir = tempDir('monitor-bundle-');
    execFileSync(process.execPath, ['esbuild.mjs', '--production', `--outdir=${outdir}`], { cwd: root, stdio: 'pipe' });
    bundle = fs.readFileSync(path.join(outdir, 'webview', 'monitor.js'), 'utf8');
  });

  it('the build puts the script, its stylesheet and the codicon font and stylesheet in dist/webview/', () => {
    for (const f of ['monitor.js', 'monitor.css', 'codicon.css', 'codicon.ttf']) assert.ok(fs.statSync(path.join(outdir, 'webview', f)).size > 0, f);
    assert.ok(bundle.length > 10_000, 'the bundle is suspiciously small');
    assert.ok(bundle.includes('acquireVsCodeApi'), 'not the monitor script');
  });

  it('the webview script calls no network API (fetch, XMLHttpRequest, WebSocket, EventSource, sendBeacon)', () => {
    const found = [/\bfetch\s*\(/, /XMLHttpRequest/, /WebSocket/, /EventSource/, /sendBeacon/, /importScripts/].filter((api) => api.test(bundle));
    assert.deepEqual(found.map(String), []);
  });

  it('the webview script holds no http(s) URL but XML namespaces and one documentation link in a library warning', () => {
    const urls = [...bundle.matchAll(/https?:\/\/[^\s"'`)\\]*/g)].map((m) => m[0]);
    const allowed = (u: string) =>
      u.startsWith('http://www.w3.org/') ||
      // @vscode-elements' icon warns "See https://vscode-elements.github.io/components/icon/ for more details." (text only).
      u === 'https://vscode-elements.github.io/components/icon/';
    assert.deepEqual(urls.filter((u) => !allowed(u)), []);
  });

  it('HTML is set only where Lit builds its own <template> (never from data); the monitor sets text only', () => {
    const at = [...bundle.matchAll(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/g)];
    for (const m of at) {
      const before = bundle.slice(Math.max(0, m.index - 200), m.index);
      assert.match(before, /createElement\("template"\)/, `HTML set outside Lit's template factory: …${bundle.slice(m.index - 80, m.index + 40)}…`);
    }
    const src = fs.readFileSync(path.join(root, 'media/monitor/main.ts'), 'utf8');
    assert.doesNotMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
  });

  it('the stylesheet loads nothing from elsewhere (no url() but none at all, no @import)', () => {
    const css = fs.readFileSync(path.join(outdir, 'webview', 'monitor.css'), 'utf8');
    assert.doesNotMatch(css, /url\(|@import/);
    // Colours only from the theme (the theme's colors via CSS variables): no literal colour.
    const noComments = css.replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(noComments, /#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(/);
  });
});
