import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
const root = path.resolve('dist/webview');
const nonce = 'n0nce';
const theme = '--vscode-foreground:#cccccc;--vscode-editor-background:#1f1f1f;--vscode-descriptionForeground:#9d9d9d;--vscode-badge-background:#616161;--vscode-badge-foreground:#f8f8f8;--vscode-progressBar-background:#0078d4;--vscode-focusBorder:#0078d4;--vscode-errorForeground:#f85149;--vscode-panel-border:#2b2b2b;--vscode-editorWidget-background:#202020;--vscode-font-family:sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-charts-green:#89d185;--vscode-textLink-foreground:#4daafc';
const page = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self'; style-src 'self'; font-src 'self'; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="/theme.css"><link rel="stylesheet" href="/codicon.css" id="vscode-codicon-stylesheet"><link rel="stylesheet" href="/contactSheet.css"></head>
<body><main id="sheet" aria-live="polite"></main>
<script nonce="${nonce}" src="/stub.js"></script><script nonce="${nonce}" src="/contactSheet.js"></script></body></html>`;
const stub = `window.__posted = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(m) });
document.addEventListener('securitypolicyviolation', (e) => { (window.__csp = window.__csp || []).push(e.violatedDirective + ' ' + e.blockedURI); });`;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const types = { '.css': 'text/css', '.js': 'text/javascript', '.ttf': 'font/ttf', '.png': 'image/png' };
  if (url.pathname === '/favicon.ico') return res.writeHead(204).end();
  if (url.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  if (url.pathname === '/theme.css') return res.writeHead(200, { 'content-type': 'text/css' }).end(`html{${theme}}`);
  if (url.pathname === '/stub.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(stub);
  if (url.pathname.startsWith('/img/')) return res.writeHead(200, { 'content-type': 'image/png' }).end(fs.readFileSync('media/overview.png'));
  const file = path.join(root, path.basename(url.pathname));
  if (!fs.existsSync(file)) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' }).end(fs.readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;
const STRINGS = { title: 'Batch b-1234', empty: 'No variation has finished yet.', states: { not_sent: 'Not sent', unknown: 'Outcome unknown', queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', canceled: 'Canceled' }, openJob: 'Open the monitor of job {0}', openImage: '{0}: open the image', moreFiles: '+{0} files', grid: '{0} (rows) by {1} (columns)' };
const states = ['succeeded', 'running', 'failed', 'queued', 'succeeded', 'canceled', 'not_sent', 'unknown', 'succeeded'];
const cells = states.map((state, index) => ({ index, label: `3.seed=${Math.floor(index / 3) + 1}, 6.text=prompt ${index % 3}`, folder: `${index}-x`, state, detail: state, jobId: state === 'not_sent' ? null : `job-${index}-abcdef`, imageUri: state === 'succeeded' ? `${base}img/${index}.png` : null, imageName: state === 'succeeded' ? `ComfyUI_${index}.png` : null, otherFiles: index === 0 ? 2 : 0, error: state === 'failed' ? 'KSampler: CUDA out of memory while sampling' : null }));
const grid = { batchId: 'b-1234', layout: { kind: 'grid', rows: { input: '3.seed', values: ['1', '2', '3'] }, columns: { input: '6.text', values: ['prompt 0', 'prompt 1', 'prompt 2'] } }, cells, constants: ['5.steps=20'], counts: '5/9 done, 1 failed, 1 canceled, 2 running', anyEnded: true, finished: false, strings: STRINGS };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const errors = [];
try {
  const p = await browser.newPage({ viewport: { width: 900, height: 700 } });
  p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(`console ${m.type()}: ${m.text()}`); });
  await p.goto(base);
  await p.waitForFunction(() => window.__posted.length > 0);
  const post = (m) => p.evaluate((msg) => window.postMessage(msg, '*'), m);
  await post({ type: 'sheet', sheet: { ...grid, anyEnded: false, cells: cells.map((c) => ({ ...c, state: 'queued', imageUri: null, imageName: null, error: null, otherFiles: 0 })) } });
  await p.waitForSelector('[data-cell-index="8"]');
  await p.screenshot({ path: '/tmp/bsheet-empty.png' });
  await post({ type: 'sheet', sheet: grid });
  await p.waitForSelector('[data-cell-index="0"][data-state="succeeded"]');
  await p.waitForTimeout(300);
  await p.screenshot({ path: '/tmp/bsheet-grid.png' });
  await p.focus('[data-cell-index="4"]');
  await p.keyboard.press('Enter');
  await p.click('[data-cell-index="1"] .job-link');
  await post({ type: 'sheet', sheet: { ...grid, layout: { kind: 'flow' } } });
  await p.waitForSelector('.sheet-flow');
  await p.screenshot({ path: '/tmp/bsheet-flow.png' });
  await post({ type: 'sheet', sheet: { bogus: true } });
  console.log('posted', JSON.stringify(await p.evaluate(() => window.__posted)));
  console.log('csp', JSON.stringify(await p.evaluate(() => window.__csp ?? [])));
  console.log('aria', await p.getAttribute('[data-cell-index="2"]', 'aria-label'), '|', await p.getAttribute('[data-cell-index="0"]', 'aria-label'));
} finally { await browser.close(); server.close(); }
console.log('errors', errors);
