/**
 * The workflow graph webview in headless chromium (Debian's, through playwright-core): the renderer
 * (media/graph/render.ts) bundled for the browser, fed the message the host would post.
 * - New document to drawn graph, at 100 and 500 nodes (API format, so dagre lays it out in the page): from the
 *   message received (parsed with the protocol's parser) to the next frame after the graph was built (two
 *   `requestAnimationFrame`s), median of 9; beside `layoutWithDagre` alone on the same graph (dagre's graph built and
 *   `dagre.layout` run: the reference), as a ratio. Goal: at most 300 ms at 500 nodes.
 * - Frames while panning and zooming the 500-node graph: 240 frames of a scripted pan (3 px a frame) with a zoom step
 *   every 8th frame; `requestAnimationFrame` deltas as p50 / p95 / max, and dropped frames (a delta over 1.5 × the
 *   display's frame time, measured at rest before).
 * Not a test: nothing passes or fails on time.
 */
import * as esbuild from 'esbuild';
import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import { graphFromApi } from '../src/core/graph/model';
import { parseObjectInfo } from '../src/core/workflowSchema/objectInfo';
import { bigApiWorkflow, graphRepoRoot } from './graphWorkflows';
import { row, scaled } from './util';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** The page's side of the benchmark, bundled with the renderer (runs in chromium). */
const HARNESS = `
import { GraphView, layoutWithDagre } from './media/graph/render';
import { parseGraphHostMessage } from './src/core/graph/protocol';
const frame = () => new Promise((r) => requestAnimationFrame(() => r(performance.now())));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
window.benchDraw = async (message, runs) => {
  const draw = [], build = [], layout = [];
  for (let i = 0; i < runs; i++) {
    document.body.replaceChildren();
    const host = document.createElement('main');
    host.style.height = '100vh';
    document.body.append(host);
    const view = new GraphView(host);
    await frame();
    const wire = JSON.parse(JSON.stringify(message));
    const t0 = performance.now();
    const m = parseGraphHostMessage(wire);
    view.setGraph(m.model);
    const t1 = performance.now();
    await frame();
    await frame();
    draw.push(performance.now() - t0);
    build.push(t1 - t0);
    const t2 = performance.now();
    layoutWithDagre(m.model.root);
    layout.push(performance.now() - t2);
    window.lastView = view;
  }
  return { drawMs: median(draw), buildMs: median(build), dagreMs: median(layout), nodes: message.model.root.nodes.length, elements: document.querySelectorAll('*').length };
};
window.benchFrames = async (count) => {
  const view = window.lastView;
  const rest = [];
  let last = await frame();
  for (let i = 0; i < 30; i++) { const t = await frame(); rest.push(t - last); last = t; }
  const base = median(rest);
  const deltas = [];
  last = await frame();
  for (let i = 0; i < count; i++) {
    view.panBy(3, 1);
    if (i % 8 === 0) view.zoomAt(i % 16 === 0 ? 1.05 : 1 / 1.05, 300, 300);
    const t = await frame();
    deltas.push(t - last);
    last = t;
  }
  const sorted = [...deltas].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { restMs: base, p50: q(0.5), p95: q(0.95), max: sorted[sorted.length - 1], dropped: deltas.filter((d) => d > 1.5 * base).length, frames: count };
};
`;

/** Runs the graph benchmark (see the file's comment); prints one row per figure. */
export async function benchGraph(): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`graph: skipped, chromium not found at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
    return;
  }
  const root = graphRepoRoot();
  const built = await esbuild.build({
    stdin: { contents: HARNESS, resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'warning',
  });
  const script = built.outputFiles[0]!.text;
  const css = fs.readFileSync(path.join(root, 'media', 'graph', 'graph.css'), 'utf8');
  const themes = JSON.parse(fs.readFileSync(path.join(root, 'scripts', 'graph-preview-themes.json'), 'utf8')) as {
    themes: Record<string, Record<string, string>>;
  };
  const vars = Object.entries(themes.themes.dark!)
    .map(([k, v]) => `${k}: ${v};`)
    .join(' ');
  const server = http.createServer((req, res) => {
    if (req.url === '/bench.js') return res.end(script);
    res.setHeader('content-type', 'text/html');
    res.end(
      `<!DOCTYPE html><html><head><meta charset="utf-8"><style>:root { ${vars} } ${css}</style></head><body><script src="/bench.js"></script></body></html>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { chromium } = require('playwright-core') as typeof import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(base);
    const definitions = parseObjectInfo(
      JSON.parse(
        fs.readFileSync(path.join(root, 'test', 'fixtures', 'object_info', 'comfy-ts-object_info.json'), 'utf8'),
      ),
    );
    for (const n of [100, 500]) {
      const model = graphFromApi(bigApiWorkflow(n, root), definitions);
      const message = { type: 'graph', documentVersion: 1, model };
      const r = await page.evaluate(
        ([m, runs]) =>
          (globalThis as unknown as { benchDraw(m: unknown, runs: number): Promise<Record<string, number>> }).benchDraw(
            m,
            runs,
          ),
        [message, scaled(9, 1)] as const,
      );
      row(`graph: new document, ${n} nodes`, {
        nodes: r.nodes!,
        edges: model.root.edges.length,
        elements: r.elements!,
        drawnMs: r.drawMs!,
        builtMs: r.buildMs!,
        dagreLayoutMs: r.dagreMs!,
        ratio: r.drawMs! / r.dagreMs!,
        goal: n === 500 ? '<= 300 ms' : '-',
      });
    }
    const f = await page.evaluate(
      (count) =>
        (globalThis as unknown as { benchFrames(count: number): Promise<Record<string, number>> }).benchFrames(count),
      scaled(240, 16),
    );
    row('graph: pan and zoom, 500 nodes', {
      frames: f.frames!,
      restFrameMs: f.restMs!,
      p50Ms: f.p50!,
      p95Ms: f.p95!,
      maxMs: f.max!,
      dropped: f.dropped!,
    });
  } finally {
    await browser.close();
    server.close();
  }
}
