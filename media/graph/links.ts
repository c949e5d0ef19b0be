/**
 * The path of a link between two sockets, as SVG path data (graph units). A link that runs forward (its input socket
 * right of its output socket, with room between) is one smooth curve. One that does not (a top-to-bottom layout puts
 * a node below the one feeding it, so its input socket is left of the output) would cross both nodes as a curve:
 * it leaves its output to the right, runs in the gap between the two nodes, and comes into its input from the left,
 * with rounded corners.
 */

/** A node's box (graph units). */
export interface LinkBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** How far (graph units) a routed link runs out of a socket before it turns, and the radius of its corners. */
const STUB = 16;
const RADIUS = 8;

/**
 * The path from output socket (`x1`, `y1`) on the right side of box `from` to input socket (`x2`, `y2`) on the left
 * side of box `to`: starts at the first point, ends at the second.
 */
export function linkPath(x1: number, y1: number, x2: number, y2: number, from: LinkBox, to: LinkBox): string {
  if (x2 >= x1 + 2 * STUB) {
    const c = Math.max(40, (x2 - x1) / 2);
    return `M${x1},${y1}C${x1 + c},${y1} ${x2 - c},${y2} ${x2},${y2}`;
  }
  // The horizontal run: in the gap between the boxes when one is above the other, else below both.
  const fromBottom = from.y + from.height;
  const toBottom = to.y + to.height;
  const run =
    to.y >= fromBottom
      ? (fromBottom + to.y) / 2
      : toBottom <= from.y
        ? (toBottom + from.y) / 2
        : Math.max(fromBottom, toBottom) + STUB;
  const right = x1 + STUB;
  const left = x2 - STUB;
  return roundedPolyline([
    [x1, y1],
    [right, y1],
    [right, run],
    [left, run],
    [left, y2],
    [x2, y2],
  ]);
}

/** Straight segments through `points`, each corner rounded (a quadratic curve of at most {@link RADIUS}). */
function roundedPolyline(points: [number, number][]): string {
  const [sx, sy] = points[0]!;
  let d = `M${sx},${sy}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [px, py] = points[i - 1]!;
    const [cx, cy] = points[i]!;
    const [nx, ny] = points[i + 1]!;
    const r = Math.min(RADIUS, Math.hypot(cx - px, cy - py) / 2, Math.hypot(nx - cx, ny - cy) / 2);
    const inX = cx - Math.sign(cx - px) * r;
    const inY = cy - Math.sign(cy - py) * r;
    const outX = cx + Math.sign(nx - cx) * r;
    const outY = cy + Math.sign(ny - cy) * r;
    d += `L${inX},${inY}Q${cx},${cy} ${outX},${outY}`;
  }
  const [ex, ey] = points[points.length - 1]!;
  return `${d}L${ex},${ey}`;
}
