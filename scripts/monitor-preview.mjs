// Looks at the job monitor webview without VS Code: serves dist/webview/ on 127.0.0.1 inside a page shaped like the
// host's (same CSP, embedded state), drives it with host messages in Debian's chromium (playwright-core), and takes
// screenshots into test-results/monitor-preview-*.png. Fails on a page error or a CSP violation.
// Usage: node esbuild.mjs && node scripts/monitor-preview.mjs [--light]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const light = process.argv.includes('--light');
const root = path.resolve('dist/webview');
const results = path.resolve('test-results');
fs.mkdirSync(results, { recursive: true });
const nonce = 'n0nce';

const STRINGS = {
  copyJobId: 'Copy job id',
  connection: 'Connection',
  created: 'Created',
  started: 'Started',
  finished: 'Finished',
  notYet: 'not yet',
  progress: 'Progress',
  nodes: 'Nodes {0} of {1}',
  node: 'Node {0} ({1})',
  step: 'Step {0} of {1}',
  queuePosition: 'Position {0} in the queue',
  preview: 'Live preview',
  previewFrom: 'From node {0}',
  noPreview: 'No preview yet',
  outputs: 'Outputs',
  noOutputs: 'No output yet',
  open: 'Open',
  save: 'Save…',
  downloadAll: 'Download all',
  error: 'Error',
  traceback: 'Traceback',
  goToNode: 'Go to node',
  logs: 'Logs',
  metrics: 'Metrics',
  cancel: 'Cancel',
  rerun: 'Re-run',
  openWorkflow: 'Open Workflow',
  revealOutputs: 'Reveal Outputs',
};
const job = (status, o = {}) => ({
  jobId: '3f2c9a7e-5b1d-4c8e-9f00-7a6b5c4d3e2f',
  workflowName: 'invert.json',
  status,
  connection: 'Local emulator',
  createdAt: '2026-11-23T10:00:00.000Z',
  startedAt: status === 'queued' ? null : '2026-11-23T10:00:01.000Z',
  finishedAt: null,
  queuePosition: status === 'queued' ? 1 : null,
  progress: null,
  error: null,
  logs: null,
  metrics: [{ name: 'gpu_seconds', value: null }],
  outputs: [],
  retrying: null,
  can: { cancel: true, rerun: true, openWorkflow: true, goToNode: false, revealOutputs: true },
  ...o,
});
const state = (j, preview = null) => ({ version: 1, job: j, preview, strings: STRINGS });

const theme = light
  ? '--vscode-foreground:#3b3b3b;--vscode-editor-background:#ffffff;--vscode-descriptionForeground:#717171;--vscode-button-background:#005fb8;--vscode-button-foreground:#fff;--vscode-button-secondaryBackground:#e5e5e5;--vscode-button-secondaryForeground:#3b3b3b;--vscode-badge-background:#cccccc;--vscode-badge-foreground:#3b3b3b;--vscode-progressBar-background:#005fb8;--vscode-focusBorder:#005fb8;--vscode-errorForeground:#f85149;--vscode-panel-border:#e5e5e5;--vscode-widget-border:#e5e5e5;--vscode-editorWidget-background:#f8f8f8;--vscode-textCodeBlock-background:#f0f0f0;--vscode-font-family:sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-list-hoverBackground:#f2f2f2;--vscode-charts-green:#388a34'
  : '--vscode-foreground:#cccccc;--vscode-editor-background:#1f1f1f;--vscode-descriptionForeground:#9d9d9d;--vscode-button-background:#0078d4;--vscode-button-foreground:#fff;--vscode-button-secondaryBackground:#313131;--vscode-button-secondaryForeground:#cccccc;--vscode-badge-background:#616161;--vscode-badge-foreground:#f8f8f8;--vscode-progressBar-background:#0078d4;--vscode-focusBorder:#0078d4;--vscode-errorForeground:#f85149;--vscode-panel-border:#2b2b2b;--vscode-widget-border:#313131;--vscode-editorWidget-background:#202020;--vscode-textCodeBlock-background:#2b2b2b;--vscode-font-family:sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-list-hoverBackground:#2a2d2e;--vscode-charts-green:#89d185';

const page = (s) => `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' data: blob:; style-src 'self'; font-src 'self'; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="/theme.css"><link rel="stylesheet" href="/codicon.css" id="vscode-codicon-stylesheet"><link rel="stylesheet" href="/monitor.css"></head>
<body><script type="application/json" id="monitor-state">${JSON.stringify(s).replace(/</g, '\\u003c')}</script><main id="monitor"></main>
<script nonce="${nonce}" src="/stub.js"></script><script nonce="${nonce}" src="/monitor.js"></script></body></html>`;
const stub = `window.__posted = []; window.__state = undefined;
window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(m), getState: () => window.__state, setState: (s) => { window.__state = s; } });
document.addEventListener('securitypolicyviolation', (e) => { (window.__csp = window.__csp || []).push(e.violatedDirective + ' ' + e.blockedURI); });`;

let initial = state(job('queued'));
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const types = { '.css': 'text/css', '.js': 'text/javascript', '.ttf': 'font/ttf' };
  if (url.pathname === '/favicon.ico') return res.writeHead(204).end();
  if (url.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page(initial));
  if (url.pathname === '/theme.css') return res.writeHead(200, { 'content-type': 'text/css' }).end(`html{${theme}}`);
  if (url.pathname === '/stub.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(stub);
  const file = path.join(root, path.basename(url.pathname));
  if (!fs.existsSync(file)) return res.writeHead(404).end();
  res
    .writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' })
    .end(fs.readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const errors = [];
try {
  const p = await browser.newPage({ viewport: { width: 900, height: 1100 } });
  p.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') errors.push(`console ${m.type()}: ${m.text()}`);
  });
  p.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) errors.push(`network: ${r.url()}`);
  });
  await p.goto(base);
  await p.waitForSelector('.header .name');
  const shot = async (name) => {
    await p.waitForTimeout(150);
    await p.screenshot({
      path: path.join(results, `monitor-preview-${name}${light ? '-light' : ''}.png`),
      fullPage: true,
    });
  };
  await shot('queued');
  // A frame drawn in the page (a gradient), as the host would send it: base64 PNG.
  const frame = await p.evaluate(() => {
    const c = document.createElement('canvas');
    c.width = 256;
    c.height = 256;
    const g = c.getContext('2d');
    const gr = g.createLinearGradient(0, 0, 256, 256);
    gr.addColorStop(0, '#e33');
    gr.addColorStop(1, '#33e');
    g.fillStyle = gr;
    g.fillRect(0, 0, 256, 256);
    return c.toDataURL('image/png').split(',')[1];
  });
  const post = (m) => p.evaluate((msg) => window.postMessage(msg, '*'), m);
  const progress = (value, o = {}) => ({
    value,
    nodesDone: 2,
    nodesTotal: 5,
    currentNode: '3',
    currentNodeClass: 'KSampler',
    step: 21,
    steps: 50,
    message: 'KSampler 21/50',
    ...o,
  });
  await post({ type: 'snapshot', state: state(job('running', { progress: progress(0.42) })) });
  await post({
    type: 'preview',
    preview: { seq: 1, nodeId: '3', nodeClass: 'KSampler', contentType: 'image/png', dataBase64: frame },
  });
  await p.waitForSelector('.preview-img:not([hidden])');
  await post({
    type: 'snapshot',
    state: state(job('running', { progress: progress(0.3, { message: 'lower value, bar stays' }) })),
  });
  const bar = await p.evaluate(() => document.querySelector('vscode-progress-bar').value);
  if (bar !== 42) errors.push(`progress went backwards: ${bar}`);
  await post({ type: 'bogus', html: '<img src=x onerror=alert(1)>' });
  await shot('running');
  const thumb = `data:image/png;base64,${frame}`;
  await post({
    type: 'snapshot',
    state: state(
      job('succeeded', {
        finishedAt: '2026-11-23T10:00:09.000Z',
        progress: progress(1),
        can: { cancel: false, rerun: true, openWorkflow: true, goToNode: false, revealOutputs: true },
        metrics: [
          { name: 'gpu_seconds', value: '7.2' },
          { name: 'cost_usd', value: null },
        ],
        outputs: [
          {
            id: 'o1',
            name: 'invert_00001_.png',
            contentType: 'image/png',
            sizeBytes: 183211,
            thumbnail: thumb,
            saved: true,
          },
          { id: 'o2', name: 'clip.mp4', contentType: 'video/mp4', sizeBytes: 5_300_000, thumbnail: null, saved: false },
        ],
        logs: ['got prompt', 'Prompt executed in 7.21 seconds'],
      }),
    ),
  });
  await shot('succeeded');
  await p.click('.card-open');
  await post({
    type: 'snapshot',
    state: state(
      job('failed', {
        jobId: 'b71e0c44-2d9a-4f3e-8c1b-0e9d8c7b6a55',
        finishedAt: '2026-11-23T10:00:05.000Z',
        progress: progress(0.6),
        can: { cancel: false, rerun: true, openWorkflow: true, goToNode: true, revealOutputs: false },
        error: {
          code: 'node_error',
          message: 'VAEDecode: tensor shape mismatch',
          nodeId: '8',
          classType: 'VAEDecode',
          traceback:
            'Traceback (most recent call last):\n  File "execution.py", line 151, in recursive_execute\n    output_data = get_output_data(obj, input_data_all)\nRuntimeError: shape mismatch',
        },
        logs: ['got prompt', '!!! Exception during processing !!!'],
      }),
    ),
  });
  await p.click('vscode-collapsible');
  await shot('failed');
  // Keyboard: Tab reaches every control (the focus order is printed).
  const order = [];
  for (let i = 0; i < 14; i++) {
    await p.keyboard.press('Tab');
    order.push(
      await p.evaluate(() => {
        const a = document.activeElement;
        return a
          ? `${a.tagName.toLowerCase()}${a.getAttribute('aria-label') ? `[${a.getAttribute('aria-label')}]` : a.textContent ? `(${a.textContent.trim().slice(0, 20)})` : ''}${a.hasAttribute('disabled') ? ' disabled' : ''}`
          : 'none';
      }),
    );
  }
  console.log('focus order:', order.join(' → '));
  const posted = await p.evaluate(() => window.__posted);
  const csp = await p.evaluate(() => window.__csp ?? []);
  const live = await p.evaluate(() => document.querySelector('[aria-live]').textContent);
  console.log('posted:', JSON.stringify(posted));
  console.log('aria-live:', live);
  for (const c of csp) errors.push(`CSP: ${c}`);
  if (!posted.some((m) => m.type === 'ready')) errors.push('no ready');
  if (!posted.some((m) => m.type === 'openOutput' && m.outputId === 'o1'))
    errors.push('card click did not post openOutput');
} finally {
  await browser.close();
  server.close();
}
for (const e of errors) console.log(e);
process.exit(errors.length ? 1 : 0);
