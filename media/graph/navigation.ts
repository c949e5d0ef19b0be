/**
 * Moving around the graph: which graph is shown (the workflow's or a subgraph's inner graph), which graph holds a
 * node (a node of an inner graph has the id `<instance path>:<id>`), and the nearest node in a direction (arrow keys
 * on a node move the roving tab stop there).
 */
import type { GraphModel, WorkflowGraph } from '../../src/core/graph/types';
import type { Placed } from './layout';

/** The graph shown: the workflow's (`shown` null) or the inner graph of subgraph instance `shown`. */
export function graphShown(model: GraphModel | null, shown: string | null): WorkflowGraph | undefined {
  if (!model) return undefined;
  return shown === null ? model.root : model.subgraphs[shown];
}

/** The key of the graph holding `nodeId` (null: the workflow's), or undefined when no graph has it. */
export function graphHolding(model: GraphModel | null, nodeId: string): string | null | undefined {
  if (!model) return undefined;
  if (model.root.nodes.some((n) => n.id === nodeId)) return null;
  const parent = nodeId.includes(':') ? nodeId.slice(0, nodeId.lastIndexOf(':')) : undefined;
  return parent !== undefined && model.subgraphs[parent] ? parent : undefined;
}

/** The nearest node from `from` in direction (dx, dy): distance along it plus twice the distance across. */
export function neighbour(
  nodes: ReadonlyMap<string, { placed: Placed }>,
  from: Placed,
  dx: number,
  dy: number,
): string | undefined {
  const cx = from.x + from.width / 2;
  const cy = from.y + from.height / 2;
  let best: string | undefined;
  let score = Infinity;
  for (const [id, v] of nodes) {
    const p = v.placed;
    const ox = p.x + p.width / 2 - cx;
    const oy = p.y + p.height / 2 - cy;
    const along = ox * dx + oy * dy;
    if (along <= 0 || id === from.node.id) continue;
    const across = Math.abs(ox * dy - oy * dx);
    const s = along + 2 * across;
    if (s < score) {
      score = s;
      best = id;
    }
  }
  return best;
}

/**
 * Where a graph opens (core graph/viewport.ts `openingView`'s boxes): its output nodes (the nodes no link leaves,
 * notes aside) and its first node, as `placed`.
 */
export function openingTargets(
  graph: WorkflowGraph | undefined,
  placed: Map<string, Placed>,
): { outputs: Placed[]; first: Placed | undefined } {
  const sources = new Set(graph?.edges.map((e) => e.from));
  const outputs = [...placed.values()].filter((p) => !sources.has(p.node.id) && p.node.kind !== 'note');
  // The first node: the one nearest the graph's top-left corner (where a left-to-right flow starts; a UI file's node
  // order is the order they were added).
  let first: Placed | undefined;
  for (const p of placed.values()) if (p.node.kind !== 'note' && (!first || p.x + p.y < first.x + first.y)) first = p;
  return { outputs, first };
}
