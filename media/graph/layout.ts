/**
 * Where the nodes of a graph go: the sizes of a laid-out node, its sockets and the rows it shows, and the positions of a
 * graph (its saved ones for a UI-format graph; dagre, layered left to right, for an API-format graph without any).
 * Layout happens in the webview, never on the extension host.
 */
import dagre from '@dagrejs/dagre';
import type { GraphNode, WorkflowGraph } from '../../src/core/graph/types';
import { socketsOf, type NodeSockets } from '../../src/core/graph/sockets';

export type { NodeSockets, Socket } from '../../src/core/graph/sockets';

/** Sizes of a laid-out node, in graph units. */
export const NODE_WIDTH = 220;
export const TITLE_HEIGHT = 30;
export const LINE = 16;

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

/**
 * The rows a node shows under its title, in order: its class (when the title is another name), one row per socket
 * pair (an input on the left, an output on the right), then its widget values as `name: value`, and `+N` for more;
 * a note's text instead. `socketRow` is the index of the first socket row.
 */
export function nodeRows(
  n: GraphNode,
  sockets: NodeSockets,
  width: number,
): { lines: { text: string; full: string }[]; socketRow: number; socketRows: number } {
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
 * Positions for a graph without saved positions: dagre, layered in `direction` (rank separation 110 left to right,
 * room for the edges' type labels, 60 top to bottom; node separation 24; graph units; the tight-tree ranker).
 * Exported for the benchmark, which times it apart from drawing.
 */
export function layoutWithDagre(
  graph: WorkflowGraph,
  direction: LayoutDirection = 'LR',
): Map<string, { x: number; y: number; width: number; height: number }> {
  // One edge per pair of nodes (dagre places the nodes; the edges are drawn here), and the tight-tree ranker: about
  // a fifth faster than network-simplex at 500 nodes (bench/README.md, the workflow graph), the same left-to-right layers.
  const sockets = socketsOf(graph);
  const g = new dagre.graphlib.Graph();
  g.setGraph({
    rankdir: direction,
    ranksep: direction === 'LR' ? 110 : 60,
    nodesep: direction === 'LR' ? 24 : 60,
    edgesep: 8,
    marginx: 20,
    marginy: 20,
    ranker: 'tight-tree',
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes)
    g.setNode(n.id, { width: NODE_WIDTH, height: nodeHeight(n, sockets.get(n.id) ?? NO_SOCKETS) });
  for (const e of graph.edges) if (e.from !== e.to) g.setEdge(e.from, e.to, {});
  dagre.layout(g);
  const out = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const n of graph.nodes) {
    const p = g.node(n.id);
    out.set(n.id, { x: p.x - p.width / 2, y: p.y - p.height / 2, width: p.width, height: p.height });
  }
  return out;
}

/** The placed nodes of `graph`: its saved boxes when it has positions (at least a title high), else laid out with dagre. */
export function placeGraph(graph: WorkflowGraph, direction: LayoutDirection = 'LR'): Map<string, Placed> {
  const placed = new Map<string, Placed>();
  const sockets = socketsOf(graph);
  const socketsOfNode = (id: string): NodeSockets => sockets.get(id) ?? NO_SOCKETS;
  if (graph.positioned) {
    for (const n of graph.nodes) {
      const b = n.box ?? { x: 0, y: 0, width: NODE_WIDTH, height: TITLE_HEIGHT };
      const height = Math.max(TITLE_HEIGHT, b.height);
      placed.set(n.id, { node: n, x: b.x, y: b.y, width: b.width, height, sockets: socketsOfNode(n.id) });
    }
  } else {
    const at = layoutWithDagre(graph, direction);
    for (const n of graph.nodes) placed.set(n.id, { node: n, ...at.get(n.id)!, sockets: socketsOfNode(n.id) });
  }
  return placed;
}
