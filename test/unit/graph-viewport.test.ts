/**
 * Where the workflow graph opens (src/core/graph/viewport.ts): never shrunk to unreadable. A graph that fits with its
 * node titles at the editor's font size is shown whole; a larger one opens at that size on its output nodes (else its
 * first node); "Fit All" shows everything, however small.
 */
import * as assert from 'node:assert/strict';
import { fitAllView, minimapShown, openingView, unionOf, type ViewBox } from '../../src/core/graph/viewport';

const LIMITS = { min: 0.05, max: 4 };
/** A half-width monitor panel (px). */
const PANEL = { width: 480, height: 340 };
/** A chain of `n` nodes laid out left to right (200 × 80, 60 apart), as dagre places an API-format chain. */
function chain(n: number): ViewBox[] {
  return Array.from({ length: n }, (_, i) => ({ x: i * 260, y: 0, width: 200, height: 80 }));
}
/** Where `box` lands on the canvas under a view. */
function onCanvas(view: { zoom: number; panX: number; panY: number }, box: ViewBox): ViewBox {
  return {
    x: box.x * view.zoom + view.panX,
    y: box.y * view.zoom + view.panY,
    width: box.width * view.zoom,
    height: box.height * view.zoom,
  };
}
const inside = (b: ViewBox, c: { width: number; height: number }): boolean =>
  b.x >= 0 && b.y >= 0 && b.x + b.width <= c.width && b.y + b.height <= c.height;

describe('graph viewport: opening readable, Fit All whole', () => {
  it('a 12-node chain in a half-width panel opens at the readable zoom (titles at the editor font size) on its output node, not as a thin strip', () => {
    const nodes = chain(12);
    const bounds = unionOf(nodes)!;
    const readable = 14 / 13;
    const view = openingView(PANEL, bounds, [nodes[11]!], nodes[0], readable, LIMITS);
    assert.equal(view.zoom, readable);
    assert.equal(view.whole, false);
    assert.ok(inside(onCanvas(view, nodes[11]!), PANEL), 'the output node is in view');
    // Fit All: the whole chain, however small (the strip the readable opening avoids).
    const all = fitAllView(PANEL, bounds, LIMITS);
    assert.ok(all.zoom < 0.2, `Fit All zoom ${all.zoom}`);
    for (const n of nodes) assert.ok(inside(onCanvas(all, n), PANEL));
  });

  it('a graph that fits at a readable zoom is shown whole and centred, at up to 100% (or the readable zoom when larger)', () => {
    const nodes = chain(2);
    const bounds = unionOf(nodes)!;
    const view = openingView({ width: 1200, height: 600 }, bounds, [nodes[1]!], nodes[0], 1, LIMITS);
    assert.equal(view.whole, true);
    assert.equal(view.zoom, 1);
    const drawn = onCanvas(view, bounds);
    assert.equal(drawn.x + drawn.width / 2, 600);
    assert.equal(drawn.y + drawn.height / 2, 300);
    // An editor font larger than the titles: the small graph is drawn at that zoom, still whole.
    const big = openingView({ width: 1200, height: 600 }, bounds, [nodes[1]!], nodes[0], 16 / 13, LIMITS);
    assert.equal(big.zoom, 16 / 13);
    assert.equal(big.whole, true);
  });

  it('output nodes that fit together are all shown; when they do not, the right-most one; none at all: the first node', () => {
    const nodes = chain(10);
    const bounds = unionOf(nodes)!;
    const wide = { width: 640, height: 340 };
    const two = openingView(wide, bounds, [nodes[8]!, nodes[9]!], nodes[0], 1, LIMITS);
    assert.equal(two.zoom, 1);
    for (const n of [nodes[8]!, nodes[9]!]) assert.ok(inside(onCanvas(two, n), wide));
    const apart = openingView(PANEL, bounds, [nodes[9]!, nodes[2]!], nodes[0], 1, LIMITS);
    assert.ok(inside(onCanvas(apart, nodes[9]!), PANEL));
    assert.ok(!inside(onCanvas(apart, nodes[2]!), PANEL));
    const none = openingView(PANEL, bounds, [], nodes[0], 1, LIMITS);
    assert.ok(inside(onCanvas(none, nodes[0]!), PANEL));
  });

  it('opening on an output node shows what leads into it (the node at the right margin, its input nodes to its left); a node taller than the panel shows its title', () => {
    const nodes = chain(12);
    const bounds = unionOf(nodes)!;
    const view = openingView(PANEL, bounds, [nodes[11]!], nodes[0], 1, LIMITS);
    const output = onCanvas(view, nodes[11]!);
    assert.equal(output.x + output.width, PANEL.width - 20);
    assert.ok(onCanvas(view, nodes[10]!).x + 200 > 0, 'the node before it is not in view');
    // A saved Save Image box, 360 × 900, larger than the panel: not where the graph opens (an empty box); its first
    // node instead, at the left margin.
    const tall = { x: 3200, y: 0, width: 360, height: 900 };
    const big = openingView(PANEL, unionOf([...nodes, tall])!, [tall], nodes[0], 1, LIMITS);
    assert.equal(onCanvas(big, nodes[0]!).x, 20);
    // A first node larger than the panel: its top (its title) at the top margin.
    const huge = openingView(PANEL, unionOf([tall])!, [], tall, 1, LIMITS);
    assert.equal(onCanvas(huge, tall).y, 20);
    // Laid out top to bottom: the output node at the bottom margin, centred across.
    const column = nodes.map((n, i) => ({ ...n, x: 0, y: i * 140 }));
    const down = openingView(PANEL, unionOf(column)!, [column[11]!], column[0], 1, LIMITS, 'TB');
    const last = onCanvas(down, column[11]!);
    assert.equal(last.y + last.height, PANEL.height - 20);
    assert.equal(last.x + last.width / 2, PANEL.width / 2);
  });

  it('the zoom stays within its limits, and an empty graph does not divide by zero', () => {
    const tiny = openingView(PANEL, { x: 0, y: 0, width: 0, height: 0 }, [], undefined, 100, LIMITS);
    assert.equal(tiny.zoom, LIMITS.max);
    assert.ok(Number.isFinite(tiny.panX) && Number.isFinite(tiny.panY));
    const huge = fitAllView(PANEL, { x: 0, y: 0, width: 1e7, height: 10 }, LIMITS);
    assert.equal(huge.zoom, LIMITS.min);
  });

  it('the minimap shows when the view does not hold the whole graph (the readable opening of a long chain), and for more than 40 nodes; never on a small canvas', () => {
    const nodes = chain(12);
    const bounds = unionOf(nodes)!;
    const wide = { width: 900, height: 500 };
    const open = openingView(wide, bounds, [nodes[11]!], nodes[0], 1, LIMITS);
    assert.equal(minimapShown(12, onCanvas(open, bounds), wide), true);
    const all = fitAllView(wide, bounds, LIMITS);
    assert.equal(minimapShown(12, onCanvas(all, bounds), wide), false);
    assert.equal(minimapShown(41, onCanvas(all, bounds), wide), true);
    // The monitor's graph section in a half-width panel, the graph above a node's form: no minimap to cover them.
    for (const small of [PANEL, { width: 480, height: 400 }])
      assert.equal(
        minimapShown(41, onCanvas(openingView(small, bounds, [nodes[11]!], nodes[0], 1, LIMITS), bounds), small),
        false,
      );
  });
});
