/**
 * Where the nodes of a graph go: the sizes of a laid-out node, the lines of text it shows, and the positions of a
 * graph (its saved ones for a UI-format graph; dagre, layered left to right, for an API-format graph without any).
 * Layout happens in the webview, never on the extension host.
 */
import dagre from '@dagrejs/dagre';
import type { GraphNode, WorkflowGraph } from '../../src/core/graph/types';

/** Sizes of a laid-out node, in graph units. */
export const NODE_WIDTH = 220;
export const TITLE_HEIGHT = 30;
export const LINE = 16;

/** A node placed in graph units: its top-left corner and size. */
export interface Placed {
  node: GraphNode;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The lines of text a node shows under its title (class, literals, note), each cut to fit its width. */
export function nodeLines(n: GraphNode, width: number): string[] {
  const chars = Math.max(8, Math.floor((width - 16) / 6.6));
  const cut = (t: string) => (t.length > chars ? `${t.slice(0, chars - 1)}…` : t);
  const lines: string[] = [];
  if (n.kind === 'note') {
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
    return lines;
  }
  if (n.classType && n.classType !== n.title && n.kind === 'node') lines.push(cut(n.classType));
  for (const l of n.literals) lines.push(cut(l.name ? `${l.name}: ${l.text}` : l.text));
  if (n.moreInputs > 0) lines.push(`+${n.moreInputs}`);
  return lines;
}

/** The height a laid-out node takes for its lines. */
export function nodeHeight(n: GraphNode): number {
  return TITLE_HEIGHT + 8 + Math.max(1, nodeLines(n, NODE_WIDTH).length) * LINE;
}

/**
 * Positions for a graph without saved positions: dagre, layered left to right (rank separation 110, room for the
 * edges' type labels; node separation 24; graph units; the tight-tree ranker). Exported for the benchmark, which times it apart from drawing.
 */
export function layoutWithDagre(
  graph: WorkflowGraph,
): Map<string, { x: number; y: number; width: number; height: number }> {
  // One edge per pair of nodes (dagre places the nodes; the edges are drawn here), and the tight-tree ranker: about
  // a fifth faster than network-simplex at 500 nodes (bench/README.md, the workflow graph), the same left-to-right layers.
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', ranksep: 110, nodesep: 24, edgesep: 8, marginx: 20, marginy: 20, ranker: 'tight-tree' });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: nodeHeight(n) });
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
export function placeGraph(graph: WorkflowGraph): Map<string, Placed> {
  const placed = new Map<string, Placed>();
  if (graph.positioned) {
    for (const n of graph.nodes) {
      const b = n.box ?? { x: 0, y: 0, width: NODE_WIDTH, height: TITLE_HEIGHT };
      placed.set(n.id, { node: n, x: b.x, y: b.y, width: b.width, height: Math.max(TITLE_HEIGHT, b.height) });
    }
  } else {
    const at = layoutWithDagre(graph);
    for (const n of graph.nodes) placed.set(n.id, { node: n, ...at.get(n.id)! });
  }
  return placed;
}
