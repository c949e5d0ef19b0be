/**
 * A graph made again after an edit that changed values only (a node's form, a value typed in the JSON): the same
 * nodes, sizes, links and groups. The view then keeps its drawing and draws again only the nodes whose model changed,
 * in place: an edit at 500 nodes costs a few nodes' elements, not the whole drawing and its layout.
 */
import type { GraphNode, WorkflowGraph } from '../../src/core/graph/types';
import { drawNode, type NodePaint, type NodeView } from './nodes';

/** What decides a node's place and size: its id, kind, saved box, rows (literals, a title row) and note. */
function shapeOf(n: GraphNode): string {
  return JSON.stringify([
    n.id,
    n.kind,
    n.box,
    n.literals.length,
    n.moreInputs,
    n.classType !== n.title,
    n.kind === 'note' ? n.note : null,
  ]);
}

/**
 * True when `after` is `before` with values changed only: the same nodes in the same order with the same shapes, the
 * same links (with their types) and groups, so every node keeps its place and size.
 */
export function valuesOnlyChanged(before: WorkflowGraph, after: WorkflowGraph): boolean {
  return (
    before.positioned === after.positioned &&
    before.nodes.length === after.nodes.length &&
    before.nodes.every((n, i) => shapeOf(n) === shapeOf(after.nodes[i]!)) &&
    JSON.stringify(before.edges) === JSON.stringify(after.edges) &&
    JSON.stringify(before.groups) === JSON.stringify(after.groups)
  );
}

/**
 * Points the drawn nodes of `before` at the nodes of `after` ({@link valuesOnlyChanged} must hold), and draws again
 * each node whose model changed, in its place in the document. `nodes` (by id) is updated with the new views.
 */
export function redrawInPlace(
  nodes: Map<string, NodeView>,
  before: WorkflowGraph,
  after: WorkflowGraph,
  paint: NodePaint,
): void {
  after.nodes.forEach((n, i) => {
    const v = nodes.get(n.id);
    if (!v) return;
    const same = JSON.stringify(before.nodes[i]) === JSON.stringify(n);
    v.placed.node = n;
    if (same) return;
    const fresh = drawNode(v.placed, paint);
    v.g.replaceWith(fresh.g);
    nodes.set(n.id, fresh);
  });
}
