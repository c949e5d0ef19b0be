/**
 * The parts of the drawing around the nodes: the groups' frames, the edges (one path for all of them, with their type
 * labels), the bounds of the whole drawing, and the minimap (shown for graphs of more than 40 nodes, and whenever
 * the view does not hold the whole graph).
 */
import { linkPath } from './links';
import type { GraphEdge, GraphGroup } from '../../src/core/graph/types';
import { svg } from './dom';
import { firstSocketRow, rowMiddle, SOCKET_INSET, TITLE_HEIGHT, type Placed } from './layout';
import { typeClass } from './nodes';

/** The box around everything drawn, in graph units (at least 1 by 1). */
export interface GraphBounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A group's colour as the file saved it, when it is a plain hex colour (`#3f789e`); anything else is not used. */
export function groupColour(color: string | null): string | undefined {
  return color && /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/.test(color) ? color : undefined;
}

/**
 * The groups' frames with their titles, into `into`: each tinted with its saved colour mixed into the theme's
 * background (graph.css, `--graph-group-color`, set through the CSS object model: no inline style attribute), or the
 * theme's own tint without one; in high contrast, an outline only.
 */
export function drawGroups(groups: readonly GraphGroup[], into: SVGGElement): void {
  for (const group of groups) {
    const colour = groupColour(group.color);
    const g = svg('g', {}, colour ? 'graph-group coloured' : 'graph-group');
    if (colour) g.style.setProperty('--graph-group-color', colour);
    g.append(svg('rect', { x: group.box.x, y: group.box.y, width: group.box.width, height: group.box.height, rx: 6 }));
    const t = svg('text', { x: group.box.x + 8, y: group.box.y + 20 }, 'graph-group-title');
    t.textContent = group.title;
    g.append(t);
    into.append(g);
  }
}

/** The box around the placed nodes and the groups (1 by 1 at the origin when there is nothing). */
export function sceneBounds(placed: Map<string, Placed>, groups: readonly GraphGroup[]): GraphBounds {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const p of placed.values()) {
    minX = Math.min(minX, p.x);
    minY = Math.min(minY, p.y);
    maxX = Math.max(maxX, p.x + p.width);
    maxY = Math.max(maxY, p.y + p.height);
  }
  for (const group of groups) {
    minX = Math.min(minX, group.box.x);
    minY = Math.min(minY, group.box.y);
    maxX = Math.max(maxX, group.box.x + group.box.width);
    maxY = Math.max(maxY, group.box.y + group.box.height);
  }
  return Number.isFinite(minX)
    ? { x: minX, y: minY, width: Math.max(1, maxX - minX), height: Math.max(1, maxY - minY) }
    : { x: 0, y: 0, width: 1, height: 1 };
}

/**
 * Draws the edges into `edges` and their type labels into `labels`: each from its output socket to its input socket
 * (nodeRows' socket rows), one path per link type (a 500-node graph's edges cost a few elements to draw and move),
 * coloured by type from the theme, the type also named on hover and, from a readable zoom, on the edge.
 */
export function drawEdges(
  list: readonly GraphEdge[],
  placed: Map<string, Placed>,
  edges: SVGGElement,
  labels: SVGGElement,
): void {
  const byType = new Map<string | null, string[]>();
  for (const e of list) {
    const a = placed.get(e.from);
    const b = placed.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + a.width - SOCKET_INSET;
    const y1 =
      a.y +
      socketY(
        a,
        a.sockets.outputs.findIndex((o) => o.index === e.fromOutput),
      );
    const x2 = b.x + SOCKET_INSET;
    const y2 =
      b.y +
      socketY(
        b,
        b.sockets.inputs.findIndex((i) => i.name === e.toInput),
      );
    const d = byType.get(e.type) ?? byType.set(e.type, []).get(e.type)!;
    d.push(linkPath(x1, y1, x2, y2, a, b));
    if (e.type) {
      const t = svg('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4 }, 'graph-edge-label');
      t.textContent = e.type;
      labels.append(t);
    }
  }
  for (const [type, d] of byType) {
    const path = svg('path', { d: d.join('') }, `graph-edge ${typeClass(type)}`);
    if (type) path.append(Object.assign(svg('title', {}), { textContent: type }));
    edges.append(path);
  }
}

/** The y of the socket at `index` of a placed node (graph units below its top; -1: its title), kept inside its box. */
function socketY(p: Placed, index: number): number {
  return Math.min(p.height - 4, index < 0 ? TITLE_HEIGHT / 2 : rowMiddle(firstSocketRow(p.node) + index));
}

/**
 * Draws the minimap of `placed` within `b`; `miniView` is the frame of the view. Whether it shows is the renderer's
 * call (core graph/viewport.ts, minimapShown).
 */
export function drawMinimap(
  minimap: SVGSVGElement,
  miniView: SVGRectElement,
  placed: Map<string, Placed>,
  b: GraphBounds,
): void {
  minimap.replaceChildren();
  minimap.setAttribute('viewBox', `${b.x} ${b.y} ${b.width} ${b.height}`);
  const d: string[] = [];
  for (const p of placed.values()) d.push(`M${p.x},${p.y}h${p.width}v${p.height}h${-p.width}z`);
  minimap.append(svg('path', { d: d.join('') }, 'graph-minimap-nodes'), miniView);
}
