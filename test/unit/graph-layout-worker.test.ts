/**
 * The workflow graph's layout off the page's thread (media/graph/layoutProtocol.ts, layoutClient.ts, layout.ts), in
 * plain Node: the worker's message handler called directly, the client over a stand-in worker whose answers the test
 * delivers in the order it chooses (so messages of two quick edits can cross), the layout on the page's thread
 * without a worker, and the pages' CSP that lets the worker start from a Blob URL.
 */
import * as assert from 'node:assert/strict';
import dagre from '@dagrejs/dagre';
import { graphFromApi } from '../../src/core/graph/model';
import { graphHtml } from '../../src/core/graph/page';
import type { GraphNode } from '../../src/core/graph/types';
import { monitorHtml } from '../../src/core/views/monitor/monitorPage';
import { webviewPageHtml } from '../../src/core/util/webviewPage';
import {
  layoutPositions,
  nodeRows,
  pendingLayout,
  placeAt,
  placeGraph,
  type LayoutInput,
} from '../../media/graph/layout';
import { LayoutClient, layoutClient, type LayoutWorkerLike } from '../../media/graph/layoutClient';
import { handleLayoutMessage, parseLayoutResponse, type LayoutRequest } from '../../media/graph/layoutProtocol';
import { txt2imgExpected } from './convert-rules.fixtures';
import { recordedDefinitions } from './convertBuilders';

/** A text-to-image graph in API format (7 nodes, 9 links), with node definitions: laid out by dagre. */
const graph = () => graphFromApi(txt2imgExpected(), recordedDefinitions()).root;

/** A chain a → b → c of 100 × 50 nodes. */
const chain: LayoutInput = {
  direction: 'LR',
  nodes: ['a', 'b', 'c'].map((id) => ({ id, width: 100, height: 50 })),
  edges: [
    ['a', 'b'],
    ['b', 'c'],
  ],
};

/** A stand-in worker: keeps what is posted; the test answers with {@link answer}, in any order. */
class FakeWorker implements LayoutWorkerLike {
  posted: LayoutRequest[] = [];
  terminated = false;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  postMessage(message: LayoutRequest): void {
    // Structured clone, as a real worker receives it.
    this.posted.push(structuredClone(message));
  }
  terminate(): void {
    this.terminated = true;
  }
  /** Delivers the worker's answer to `request` (what layoutWorker.ts posts back), or `data` as it is. */
  answer(request: LayoutRequest | unknown): void {
    const data =
      typeof request === 'object' && request !== null && 'input' in request ? handleLayoutMessage(request) : request;
    this.onmessage?.({ data: structuredClone(data) });
  }
}

/** A promise's outcome once the microtasks ran: its value, or 'pending'. */
async function settled<T>(p: Promise<T>): Promise<T | 'pending'> {
  let out: T | 'pending' = 'pending';
  void p.then((v) => (out = v));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return out;
}

describe('graph layout worker: the message handler (what the worker runs on each message)', () => {
  it('answers a layout request with the top-left corner of each node, in order, with the request number', () => {
    const answer = handleLayoutMessage({ type: 'layout', seq: 7, input: chain });
    assert.ok(answer && answer.type === 'layout');
    assert.equal(answer.seq, 7);
    assert.equal(answer.positions.length, 6);
    const [ax, ay, bx, , cx] = answer.positions as [number, number, number, number, number, number];
    // Layered left to right: each node right of the one it follows, 110 apart (rank separation), 20 from the margin.
    assert.equal(ax, 20);
    assert.equal(ay, 20);
    assert.equal(bx, ax + 100 + 110);
    assert.equal(cx, bx + 100 + 110);
    assert.deepEqual(answer.positions, layoutPositions(chain));
  });

  it('places nodes exactly as the page does without a worker (placeGraph)', () => {
    const g = graph();
    const pending = pendingLayout(g, 'LR');
    const answer = handleLayoutMessage(structuredClone({ type: 'layout', seq: 1, input: pending.input }));
    assert.ok(answer && answer.type === 'layout');
    const fromWorker = placeAt(pending, answer.positions);
    const onPage = placeGraph(g, 'LR');
    assert.equal(fromWorker.size, g.nodes.length);
    for (const [id, p] of onPage) {
      const w = fromWorker.get(id)!;
      assert.deepEqual([w.x, w.y, w.width, w.height], [p.x, p.y, p.width, p.height], id);
    }
    // Every link's target is right of its source (left to right), and no two nodes overlap.
    for (const e of g.edges) assert.ok(onPage.get(e.from)!.x + onPage.get(e.from)!.width <= onPage.get(e.to)!.x);
    const boxes = [...onPage.values()];
    for (const a of boxes)
      for (const b of boxes)
        if (a !== b)
          assert.ok(a.x >= b.x + b.width || b.x >= a.x + a.width || a.y >= b.y + b.height || b.y >= a.y + a.height);
  });

  it('the same positions as dagre given every link of the graph, duplicates and loops included (the layout before the worker)', () => {
    const g = graph();
    g.edges.push({ ...g.edges[0]! }, { from: '3', fromOutput: 0, to: '3', toInput: 'x', type: null });
    const d = new dagre.graphlib.Graph();
    d.setGraph({
      rankdir: 'LR',
      ranksep: 110,
      nodesep: 24,
      edgesep: 8,
      marginx: 20,
      marginy: 20,
      ranker: 'tight-tree',
    });
    d.setDefaultEdgeLabel(() => ({}));
    const pending = pendingLayout(g, 'LR');
    for (const n of g.nodes) d.setNode(n.id, { width: 220, height: pending.placed.get(n.id)!.height });
    for (const e of g.edges) if (e.from !== e.to) d.setEdge(e.from, e.to, {});
    dagre.layout(d);
    const answer = handleLayoutMessage({ type: 'layout', seq: 1, input: pending.input });
    assert.ok(answer && answer.type === 'layout');
    assert.deepEqual(
      answer.positions,
      g.nodes.flatMap((n) => [d.node(n.id).x - 110, d.node(n.id).y - d.node(n.id).height / 2]),
    );
  });

  it('top to bottom: the layers stack downwards', () => {
    const answer = handleLayoutMessage({ type: 'layout', seq: 1, input: { ...chain, direction: 'TB' } });
    assert.ok(answer && answer.type === 'layout');
    const [, ay, , by, , cy] = answer.positions as number[];
    assert.ok(ay! + 50 < by! && by! + 50 < cy!);
  });

  it('answers nothing to what is not a layout request', () => {
    for (const data of [
      null,
      'layout',
      { type: 'layout', seq: 1 },
      { type: 'other', seq: 1, input: chain },
      { type: 'layout', seq: '1', input: chain },
      { type: 'layout', seq: 1, input: { ...chain, direction: 'RL' } },
      { type: 'layout', seq: 1, input: { ...chain, nodes: [{ id: 'a', width: '100', height: 50 }] } },
      { type: 'layout', seq: 1, input: { ...chain, edges: [['a']] } },
    ])
      assert.equal(handleLayoutMessage(data), undefined, JSON.stringify(data));
  });

  it('the page reads only well-formed answers', () => {
    assert.deepEqual(parseLayoutResponse({ type: 'layout', seq: 2, positions: [1, 2] }), {
      type: 'layout',
      seq: 2,
      positions: [1, 2],
    });
    assert.deepEqual(parseLayoutResponse({ type: 'layoutFailed', seq: 2, message: 'x' }), {
      type: 'layoutFailed',
      seq: 2,
      message: 'x',
    });
    assert.equal(parseLayoutResponse({ type: 'layout', seq: 2, positions: [1, 'x'] }), undefined);
    assert.equal(parseLayoutResponse({ type: 'layout', positions: [] }), undefined);
    assert.equal(parseLayoutResponse(undefined), undefined);
  });

  it('placeAt refuses positions that are not two per node', () => {
    const pending = pendingLayout(graph(), 'LR');
    assert.throws(() => placeAt(pending, [1, 2, 3]), /positions for/);
  });
});

describe('graph layout worker: the client (one request in the worker, an older layout never replaces a newer one)', () => {
  it('sends a request numbered, and resolves the answer to it', async () => {
    const worker = new FakeWorker();
    const client = new LayoutClient(() => worker);
    const view = {};
    const p = client.layout(chain, view);
    assert.equal(worker.posted.length, 1);
    assert.equal(worker.posted[0]!.seq, 1);
    assert.deepEqual(worker.posted[0]!.input, chain);
    assert.equal(await settled(p), 'pending');
    worker.answer(worker.posted[0]);
    assert.deepEqual(await p, layoutPositions(chain));
  });

  it('two quick edits: the older layout resolves undefined (never drawn), the one waiting is replaced unsent', async () => {
    const worker = new FakeWorker();
    const client = new LayoutClient(() => worker);
    const view = {};
    const first = client.layout(chain, view);
    const second = client.layout({ ...chain, direction: 'TB' }, view);
    const third = client.layout({ ...chain, nodes: chain.nodes.map((n) => ({ ...n, width: 80 })) }, view);
    // One request in the worker at a time: the second waited, and the third replaced it before it was sent.
    assert.equal(worker.posted.length, 1);
    assert.equal(await settled(second), undefined);
    worker.answer(worker.posted[0]);
    // The first's answer came after the third was asked for: dropped.
    assert.equal(await first, undefined);
    assert.deepEqual(
      worker.posted.map((m) => m.seq),
      [1, 3],
    );
    // The first's answer delivered again, crossing the third's: ignored, the third still awaited.
    worker.answer(worker.posted[0]);
    assert.equal(await settled(third), 'pending');
    worker.answer(worker.posted[1]);
    const positions = await third;
    assert.ok(positions);
    assert.deepEqual(positions, layoutPositions(worker.posted[1]!.input));
    assert.ok(client.isLatest(view, 3));
    assert.ok(!client.isLatest(view, 1));
  });

  it('an answer numbered for no request in the worker resolves nothing', async () => {
    const worker = new FakeWorker();
    const client = new LayoutClient(() => worker);
    const p = client.layout(chain, {});
    worker.answer({ type: 'layout', seq: 99, positions: [0, 0, 0, 0, 0, 0] });
    worker.answer({ type: 'nonsense', seq: 1 });
    assert.equal(await settled(p), 'pending');
    worker.answer(worker.posted[0]);
    assert.deepEqual(await p, layoutPositions(chain));
  });

  it("two views' layouts do not drop each other's", async () => {
    const worker = new FakeWorker();
    const client = new LayoutClient(() => worker);
    const a = client.layout(chain, {});
    const b = client.layout({ ...chain, direction: 'TB' }, {});
    worker.answer(worker.posted[0]);
    worker.answer(worker.posted[1]);
    assert.deepEqual(await a, layoutPositions(chain));
    assert.deepEqual(await b, layoutPositions({ ...chain, direction: 'TB' }));
  });

  it('dagre failing in the worker rejects the request', async () => {
    const worker = new FakeWorker();
    const client = new LayoutClient(() => worker);
    const p = client.layout(chain, {});
    worker.answer({ type: 'layoutFailed', seq: 1, message: 'cycle' });
    await assert.rejects(p, /cycle/);
  });

  it('without a worker (none, or it cannot start): the same layout on this thread, still answered later', async () => {
    for (const start of [
      () => null,
      () => {
        throw new Error('CSP: worker-src');
      },
    ]) {
      const client = new LayoutClient(start);
      const view = {};
      const older = client.layout({ ...chain, direction: 'TB' }, view);
      const newer = client.layout(chain, view);
      assert.equal(await older, undefined);
      assert.deepEqual(await newer, layoutPositions(chain));
    }
  });

  it('a worker that fails (an error event) hands its request to this thread, and is stopped', async () => {
    const worker = new FakeWorker();
    const client = new LayoutClient(() => worker);
    const p = client.layout(chain, {});
    worker.onerror?.({});
    assert.ok(worker.terminated);
    assert.deepEqual(await p, layoutPositions(chain));
    // Later requests too.
    assert.deepEqual(await client.layout(chain, {}), layoutPositions(chain));
    assert.equal(worker.posted.length, 1);
  });

  it('in plain Node (no Worker) the page lays out on its own thread: no shared client', () => {
    assert.equal(layoutClient(), null);
  });
});

describe('graph layout: rows made once per node (the layout sizes a node by them, the drawing draws them)', () => {
  it('the same rows are given back for the same node, sockets and width; made again when they differ', () => {
    const g = graph();
    const pending = pendingLayout(g, 'LR');
    const p = pending.placed.get('3')!;
    const rows = nodeRows(p.node, p.sockets, p.width);
    assert.equal(nodeRows(p.node, p.sockets, p.width), rows);
    assert.notEqual(nodeRows(p.node, { inputs: [], outputs: [] }, p.width), rows);
    assert.notEqual(nodeRows(p.node, p.sockets, 300), rows);
    const copy: GraphNode = { ...p.node };
    assert.notEqual(nodeRows(copy, p.sockets, p.width), rows);
    assert.deepEqual(nodeRows(copy, p.sockets, p.width), nodeRows(p.node, p.sockets, p.width));
  });
});

describe('graph layout worker: the CSP of the pages that start it (workers from blob: only, no request)', () => {
  const cspOf = (html: string) => /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!;
  const base = { lang: 'en', cspSource: 'vscode-webview://abc', nonce: 'n' };

  it('the graph page and the monitor page allow workers from blob: and nothing else, and no connect-src', () => {
    const graphPage = graphHtml({ ...base, graphCss: 'g.css', graphJs: 'g.js', title: 't' });
    // The monitor's state is only embedded as JSON here: any object does.
    const monitorPage = monitorHtml({
      ...base,
      codiconCss: 'c.css',
      graphCss: 'g.css',
      monitorCss: 'm.css',
      monitorJs: 'm.js',
      state: {} as Parameters<typeof monitorHtml>[0]['state'],
    });
    for (const csp of [cspOf(graphPage), cspOf(monitorPage)]) {
      assert.match(csp, /(^|; )worker-src blob:(;|$)/);
      assert.doesNotMatch(csp, /connect-src|child-src|unsafe-eval/);
    }
  });

  it('a page that names no worker source gets no worker-src (default-src none refuses workers)', () => {
    const csp = cspOf(webviewPageHtml({ ...base, stylesheets: [], body: '', script: 's.js' }));
    assert.doesNotMatch(csp, /worker-src/);
    assert.match(csp, /default-src 'none'/);
  });
});
