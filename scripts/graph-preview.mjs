#!/usr/bin/env node
// Screenshots of the workflow graph webview in headless chromium (Debian's, through playwright-core), with VS Code's
// theme colours (scripts/graph-preview-themes.json: Dark Modern, Light Modern, Dark High Contrast). Serves the built
// page (dist/webview/graph.js and graph.css: run `node esbuild.mjs` first) on 127.0.0.1 with a stand-in
// `acquireVsCodeApi`, posts the graph the host would post, and writes one PNG per theme.
//
//   node scripts/graph-preview.mjs <workflow.json | api:N> [--out DIR] [--themes dark,light,high-contrast]
//        [--states] [--select NODE_ID] [--problem NODE_ID] [--check] [--subgraph ID] [--width 1400 --height 900] [--name NAME]
//
// `api:N` is an API-format workflow of N nodes built from the conversion corpus (bench/graphWorkflows.ts). --states
// shows a run in progress (a third of the nodes done, one running at step 7 of 20, one failed); --problem puts a
// refusal's problem on a node; --check places workflow IntelliSense's diagnostics (API format). The workflow may be API or UI format; node definitions are the recorded engine's
// (test/fixtures/object_info). Prints the files written.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { launch, ROOT } from '../test/e2e/launch.mjs';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const input = args[0];
if (!input || input.startsWith('--')) {
  console.error(
    'usage: node scripts/graph-preview.mjs <workflow.json | api:N> [--out DIR] [--themes dark,light,high-contrast] [--states] [--select ID] [--problem ID] [--subgraph ID]',
  );
  process.exit(2);
}
const outDir = opt('out', path.join(ROOT, '.artifacts', 'graph-preview'));
const themes = opt('themes', 'dark,light,high-contrast').split(',');
const width = Number(opt('width', '1400'));
const height = Number(opt('height', '900'));
const name = opt(
  'name',
  input.startsWith('api:') ? `api-${input.slice(4)}` : path.basename(path.dirname(path.resolve(input))) || 'workflow',
);

// The model is built as the host builds it: the core's own code, bundled for Node on the fly.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-preview-'));
const coreFile = path.join(tmp, 'core.cjs');
await esbuild.build({
  stdin: {
    contents: `export { workflowGraph, graphNodeIds } from './src/core/graph/model';
      export { nodeRunStates } from './src/core/graph/runStates';
      export { problemsOnNodes } from './src/core/graph/problems';
      export { parseObjectInfo } from './src/core/workflowSchema/objectInfo';
      export { checkWorkflow } from './src/core/workflowSchema/validate';
      export { untranslated } from './src/core/util/l10n';
      export { bigApiWorkflow } from './bench/graphWorkflows';`,
    resolveDir: ROOT,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  outfile: coreFile,
  logLevel: 'warning',
});
const core = require(coreFile);
const definitions = core.parseObjectInfo(
  JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/object_info/comfy-ts-object_info.json'), 'utf8')),
);
const workflow = input.startsWith('api:')
  ? core.bigApiWorkflow(Number(input.slice(4)), ROOT)
  : JSON.parse(fs.readFileSync(input, 'utf8'));
const built = core.workflowGraph(workflow, definitions);
if (!('model' in built)) throw new Error(built.problem);
const model = built.model;
const ids = model.root.nodes.map((n) => n.id);

const messages = [{ type: 'graph', documentVersion: 1, model }];
if (args.includes('--states')) {
  const third = Math.floor(ids.length / 3);
  const running = ids[third] ?? ids[0];
  const job = {
    id: 'preview',
    api: 'v2',
    status: 'running',
    createdAt: null,
    startedAt: null,
    completedAt: null,
    expiresAt: null,
    queuePosition: null,
    progress: {
      value: null,
      nodesDone: third,
      nodesTotal: ids.length,
      currentNode: running,
      currentNodeClass: null,
      step: 7,
      steps: 20,
      message: null,
    },
    outputs: ids.slice(0, third).map((id, i) => ({
      id: `o${i}`,
      nodeId: id,
      name: `ComfyUI_${String(i).padStart(5, '0')}_.png`,
      type: 'image',
      contentType: 'image/png',
      sizeBytes: 1,
      hash: null,
      url: null,
    })),
    error: null,
    metrics: {},
  };
  const states = core.nodeRunStates(job, core.graphNodeIds(model));
  const failed = ids[third + 1];
  if (failed)
    states[failed] = {
      status: 'failed',
      progress: null,
      error: 'CUDA out of memory (tried to allocate 2.00 GiB)',
      preview: null,
      outputs: [],
    };
  messages.push({ type: 'states', states });
}
const problemNode = opt('problem', undefined);
if (problemNode || args.includes('--check')) {
  // Workflow IntelliSense's diagnostics (API format), and a refusal's node error on --problem's node.
  const diagnostics =
    model.format === 'api' && args.includes('--check')
      ? core.checkWorkflow(workflow, definitions, core.untranslated).diagnostics
      : [];
  const refused = problemNode ? [{ nodeId: problemNode, field: 'steps', reason: 'value 0 is smaller than min 1' }] : [];
  messages.push({ type: 'problems', problems: core.problemsOnNodes(diagnostics, refused) });
}
const selectNode = opt('select', undefined);
if (selectNode) messages.push({ type: 'select', nodeId: selectNode });

const script = fs.readFileSync(path.join(ROOT, 'dist/webview/graph.js'), 'utf8');
const css = fs.readFileSync(path.join(ROOT, 'dist/webview/graph.css'), 'utf8');
const themeSets = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/graph-preview-themes.json'), 'utf8')).themes;
const subgraph = opt('subgraph', null);
// The stand-in for the webview host: getState gives the saved view (an inner graph to open), postMessage is recorded.
const standIn = `window.__posted = []; window.acquireVsCodeApi = () => ({
  postMessage: (m) => window.__posted.push(m),
  getState: () => (${JSON.stringify(subgraph)} ? { version: 1, zoom: 1, panX: 0, panY: 0, subgraph: ${JSON.stringify(subgraph)} } : undefined),
  setState: () => {},
});`;

const server = http.createServer((req, res) => {
  const theme = themeSets[new URL(req.url, 'http://x').searchParams.get('theme') ?? 'dark'] ?? themeSets.dark;
  const vars = Object.entries(theme)
    .map(([k, v]) => `${k}: ${v};`)
    .join(' ');
  if (req.url.startsWith('/graph.js')) return res.end(script);
  if (req.url.startsWith('/graph.css')) return res.end(css);
  res.setHeader('content-type', 'text/html');
  res.end(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>:root { ${vars} }</style><link rel="stylesheet" href="/graph.css"></head>
<body><main id="graph"></main><script>${standIn}</script><script src="/graph.js"></script></body></html>`);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
fs.mkdirSync(outDir, { recursive: true });
const browser = await launch();
try {
  const page = browser.page;
  await page.setViewportSize({ width, height });
  for (const theme of themes) {
    await page.goto(`${base}/?theme=${theme}`);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'));
    for (const m of messages) await page.evaluate((msg) => window.postMessage(msg, '*'), m);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const file = path.join(outDir, `${name}-${theme}.png`);
    await page.screenshot({ path: file });
    console.log(file);
  }
} finally {
  await browser.close();
  server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
