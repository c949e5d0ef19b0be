/**
 * Where the nodes of a graph go: the sizes of a laid-out node, its sockets and the rows it shows, and the positions of a
 * graph (its saved ones for a UI-format graph; dagre, layered left to right, for an API-format graph without any).
 * Layout happens in the webview, never on the extension host: in the layout worker (./layoutWorker.ts) when the page
 * can start one, else on the page's thread (placeGraph). Both run {@link layoutPositions}, so both place alike.
 */
import dagre from '@dagrejs/dagre';
import type { GraphNode, WorkflowGraph } from '../../src/core/graph/types';
import { socketsOf, type NodeSockets } from '../../src/core/graph/sockets';

export type { NodeSockets, Socket } from '../../src/core/graph/sockets';

/** Sizes of a laid-out node, in graph units. */
export const NODE_WIDTH = 220;
export const TITLE_HEIGHT = 30;
export const LINE = 16;
/**
 * How far inside its node's side a socket's dot sits (graph units), as ComfyUI draws its slots; a link ends there,
 * under the node's box. A node then paints within its box: dots on the box's sides made the browser's compositing
 * of every pan and zoom frame about four times as long (9 ms against 2 ms at 500 nodes).
 */
export const SOCKET_INSET = 10;

const NO_SOCKETS: NodeSockets = { inputs: [], outputs: [] };

/** A node placed in graph units: its top-left corner and size, and its sockets. */
export interface Placed {
  node: GraphNode;
  x: number;
  y: number;
  width: number;
  height: number;
  sockets: NodeSockets;
}

/** The row of a node's first socket: after its class, when its title is another name. */
export function firstSocketRow(n: GraphNode): number {
  return n.kind === 'node' && n.classType && n.classType !== n.title ? 1 : 0;
}

/** Where the rows under a node's title start (graph units below its top). */
export const BODY_TOP = TITLE_HEIGHT + 6;

/** The rows of a node (see {@link nodeRows}). */
export interface NodeRows {
  lines: { text: string; full: string }[];
  socketRow: number;
  socketRows: number;
}

/**
 * The last rows made for each node, with what they were made from: the layout sizes a node by its rows and the
 * drawing draws them, so each node's rows are made once per graph (a model's nodes are never changed in place).
 */
const rowsMade = new WeakMap<GraphNode, { sockets: NodeSockets; width: number; rows: NodeRows }>();

/**
 * The rows a node shows under its title, in order: its class (when the title is another name), one row per socket
 * pair (an input on the left, an output on the right), then its widget values as `name: value`, and `+N` for more;
 * a note's text instead. `socketRow` is the index of the first socket row. Made once per node, sockets and width
 * (the same object is returned again: read it, never change it).
 */
export function nodeRows(n: GraphNode, sockets: NodeSockets, width: number): NodeRows {
  const made = rowsMade.get(n);
  if (made && made.sockets === sockets && made.width === width) return made.rows;
  const rows = makeRows(n, sockets, width);
  rowsMade.set(n, { sockets, width, rows });
  return rows;
}

function makeRows(n: GraphNode, sockets: NodeSockets, width: number): NodeRows {
  const chars = Math.max(8, Math.floor((width - 16) / 6.6));
  const cut = (t: string) => ({ text: t.length > chars ? `${t.slice(0, chars - 1)}…` : t, full: t });
  if (n.kind === 'note') {
    const lines: { text: string; full: string }[] = [];
    const words = (n.note ?? '').split(/\s+/);
    let line = '';
    for (const w of words) {
      if ((line + ' ' + w).trim().length > chars) {
        lines.push(cut(line));
        line = w;
        if (lines.length >= 6) break;
      } else line = (line + ' ' + w).trim();
    }
    if (lines.length < 6 && line) lines.push(cut(line));
    return { lines, socketRow: 0, socketRows: 0 };
  }
  const head = firstSocketRow(n) === 1 ? [cut(n.classType)] : [];
  const widgets = n.literals.map((l) => cut(l.name ? `${l.name}: ${l.text}` : l.text));
  if (n.moreInputs > 0) widgets.push(cut(`+${n.moreInputs}`));
  const socketRows = Math.max(sockets.inputs.length, sockets.outputs.length);
  const blank = Array.from({ length: socketRows }, () => ({ text: '', full: '' }));
  return { lines: [...head, ...blank, ...widgets], socketRow: head.length, socketRows };
}

/** The height a laid-out node takes for its rows. */
export function nodeHeight(n: GraphNode, sockets: NodeSockets = NO_SOCKETS): number {
  return BODY_TOP + Math.max(1, nodeRows(n, sockets, NODE_WIDTH).lines.length) * LINE + 4;
}

/** The y (graph units, below the node's top) of the middle of row `row`. */
export function rowMiddle(row: number): number {
  return BODY_TOP + row * LINE + LINE / 2;
}

/**
 * Which way the layers of a laid-out graph go: left to right (`LR`), or top to bottom (`TB`) in a panel taller than
 * wide, where a chain stacked downwards stays readable; the sockets stay on the nodes' sides either way.
 */
export type LayoutDirection = 'LR' | 'TB';

/** The direction for a canvas (px): top to bottom when it is taller than wide, else left to right. */
export function directionFor(canvas: { width: number; height: number }): LayoutDirection {
  return canvas.height > canvas.width ? 'TB' : 'LR';
}

/**
 * What dagre lays out, and all it needs (small enough to post to the layout worker): the nodes' ids and sizes (graph
 * units) in the graph's order, and one edge per pair of linked nodes, `[from, to]`, in the order first linked (no
 * edge from a node to itself).
 */
export interface LayoutInput {
  direction: LayoutDirection;
  nodes: { id: string; width: number; height: number }[];
  edges: [string, string][];
}

/**
 * Lays out `input` with dagre, layered in its direction (rank separation 110 left to right, room for the edges' type
 * labels, 60 top to bottom; node separation 24; the tight-tree ranker). Returns the top-left corner of each node of
 * `input.nodes`, in its order, as `[x0, y0, x1, y1, …]` (graph units). Pure: the worker and the page's thread run it.
 * @throws what dagre throws (an edge naming a node not in `input.nodes` adds that node, of size 0).
 */
export function layoutPositions(input: LayoutInput): number[] {
  // One edge per pair of nodes (dagre places the nodes; the edges are drawn by the renderer), and the tight-tree
  // ranker: about a fifth faster than network-simplex at 500 nodes (bench/README.md, the workflow graph), the same
  // left-to-right layers.
  const lr = input.direction === 'LR';
  const g = new dagre.graphlib.Graph();
  g.setGraph({
    rankdir: input.direction,
    ranksep: lr ? 110 : 60,
    nodesep: lr ? 24 : 60,
    edgesep: 8,
    marginx: 20,
    marginy: 20,
    ranker: 'tight-tree',
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of input.nodes) g.setNode(n.id, { width: n.width, height: n.height });
  for (const [from, to] of input.edges) g.setEdge(from, to, {});
  dagre.layout(g);
  const out: number[] = [];
  for (const n of input.nodes) {
    const p = g.node(n.id);
    out.push(p.x - p.width / 2, p.y - p.height / 2);
  }
  return out;
}

/** An API-format graph ready to lay out: its nodes placed at 0, 0 with their sizes and sockets, and dagre's input. */
export interface PendingLayout {
  placed: Map<string, Placed>;
  input: LayoutInput;
}

/** The nodes of `graph` sized (rows made once, see {@link nodeRows}) and the input to lay them out in `direction`. */
export function pendingLayout(graph: WorkflowGraph, direction: LayoutDirection): PendingLayout {
  const sockets = socketsOf(graph);
  const placed = new Map<string, Placed>();
  const nodes: LayoutInput['nodes'] = [];
  for (const n of graph.nodes) {
    const s = sockets.get(n.id) ?? NO_SOCKETS;
    const height = nodeHeight(n, s);
    placed.set(n.id, { node: n, x: 0, y: 0, width: NODE_WIDTH, height, sockets: s });
    nodes.push({ id: n.id, width: NODE_WIDTH, height });
  }
  const edges: [string, string][] = [];
  const seen = new Map<string, Set<string>>();
  for (const e of graph.edges) {
    const targets = seen.get(e.from) ?? seen.set(e.from, new Set()).get(e.from)!;
    if (e.from === e.to || targets.has(e.to)) continue;
    targets.add(e.to);
    edges.push([e.from, e.to]);
  }
  return { placed, input: { direction, nodes, edges } };
}

/**
 * Moves the nodes of `pending` to `positions` (as {@link layoutPositions} returns them for its input) and returns them.
 * @throws when `positions` does not hold two numbers per node.
 */
export function placeAt(pending: PendingLayout, positions: readonly number[]): Map<string, Placed> {
  const { nodes } = pending.input;
  if (positions.length !== nodes.length * 2)
    throw new Error(`layout: ${positions.length / 2} positions for ${nodes.length} nodes`);
  nodes.forEach((n, i) => {
    const p = pending.placed.get(n.id)!;
    p.x = positions[2 * i]!;
    p.y = positions[2 * i + 1]!;
  });
  return pending.placed;
}

/**
 * Positions for a graph without saved positions: dagre ({@link layoutPositions}) on the page's thread, in
 * `direction`. Exported for the benchmark, which times it apart from drawing.
 */
export function layoutWithDagre(
  graph: WorkflowGraph,
  direction: LayoutDirection = 'LR',
): Map<string, { x: number; y: number; width: number; height: number }> {
  const pending = pendingLayout(graph, direction);
  placeAt(pending, layoutPositions(pending.input));
  const out = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const [id, p] of pending.placed) out.set(id, { x: p.x, y: p.y, width: p.width, height: p.height });
  return out;
}

/**
 * The placed nodes of `graph`, on the page's thread: its saved boxes when it has positions (at least a title high),
 * else laid out with dagre.
 */
export function placeGraph(graph: WorkflowGraph, direction: LayoutDirection = 'LR'): Map<string, Placed> {
  if (!graph.positioned) {
    const pending = pendingLayout(graph, direction);
    return placeAt(pending, layoutPositions(pending.input));
  }
  const placed = new Map<string, Placed>();
  const sockets = socketsOf(graph);
  for (const n of graph.nodes) {
    const b = n.box ?? { x: 0, y: 0, width: NODE_WIDTH, height: TITLE_HEIGHT };
    const height = Math.max(TITLE_HEIGHT, b.height);
    placed.set(n.id, { node: n, x: b.x, y: b.y, width: b.width, height, sockets: sockets.get(n.id) ?? NO_SOCKETS });
  }
  return placed;
}
