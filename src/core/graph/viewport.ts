/**
 * Where the workflow graph opens, as pure arithmetic (the webview's renderer applies it; media/graph/render.ts).
 *
 * Rules:
 * - "Fit All" ({@link fitAllView}) shows the whole graph, centred, at most 100%, however small that makes it.
 * - Opening ({@link openingView}) never shrinks to unreadable: the zoom stops where a node title is at least the
 *   editor's font size (`readableZoom` = editor font px ÷ title font px). A graph that fits at that zoom is shown
 *   whole; a larger one opens on its output nodes (the nodes no link leaves: what the run saves or shows), or on the
 *   first node when no output node fits, and the caller shows the minimap to move around. The output nodes are placed
 *   at the end of the layout's direction (right, or bottom top-to-bottom: the nodes leading into them show before
 *   them), the first node at its start. An output node larger than the panel at that zoom is passed over; a first
 *   node larger than the panel shows its title.
 *
 * Units: px of the canvas for `canvas` and the result's pan; graph units (px at zoom 1) for boxes.
 */

/** A rectangle: its top-left corner and size. */
export interface ViewBox {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A zoom (1 = 100%) and the pan: the canvas point (px) where the graph's origin is drawn. */
export interface GraphView {
  readonly zoom: number;
  readonly panX: number;
  readonly panY: number;
}

/** The zoom's bounds. */
export interface ZoomLimits {
  readonly min: number;
  readonly max: number;
}

/** The free margin (px) kept around a fitted graph on each side. */
export const FIT_MARGIN_PX = 20;

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** The view that centres `box` in `canvas` at `zoom`. */
export function centredOn(canvas: { width: number; height: number }, box: ViewBox, zoom: number): GraphView {
  return {
    zoom,
    panX: (canvas.width - box.width * zoom) / 2 - box.x * zoom,
    panY: (canvas.height - box.height * zoom) / 2 - box.y * zoom,
  };
}

/** The zoom at which `box` fits `canvas` within the margins (unbounded). */
function fittingZoom(canvas: { width: number; height: number }, box: ViewBox): number {
  const w = Math.max(1, box.width);
  const h = Math.max(1, box.height);
  return Math.min((canvas.width - 2 * FIT_MARGIN_PX) / w, (canvas.height - 2 * FIT_MARGIN_PX) / h);
}

/** "Fit All": the whole of `bounds` centred in `canvas`, at most 100% (and within `limits`). */
export function fitAllView(canvas: { width: number; height: number }, bounds: ViewBox, limits: ZoomLimits): GraphView {
  return centredOn(canvas, bounds, clamp(Math.min(fittingZoom(canvas, bounds), 1), limits.min, limits.max));
}

/** The union of `boxes` (undefined for none). */
export function unionOf(boxes: readonly ViewBox[]): ViewBox | undefined {
  if (boxes.length === 0) return undefined;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width);
    y1 = Math.max(y1, b.y + b.height);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * Where the graph opens (see the module's rules).
 * @param bounds the whole graph.
 * @param outputs the boxes of its output nodes (any order); `first` the box of its first node.
 * @param readableZoom the zoom at which a node title is the editor's font size (e.g. 14 / 13).
 * @returns the view, and `whole`: false when the graph is larger than the canvas at that zoom (show the minimap).
 */
export function openingView(
  canvas: { width: number; height: number },
  bounds: ViewBox,
  outputs: readonly ViewBox[],
  first: ViewBox | undefined,
  readableZoom: number,
  limits: ZoomLimits,
  direction: 'LR' | 'TB' = 'LR',
): GraphView & { whole: boolean } {
  const readable = clamp(readableZoom, limits.min, limits.max);
  // A graph that fits whole at a readable zoom: shown whole, at up to 100% (or the readable zoom, if larger).
  const fits = fittingZoom(canvas, bounds);
  if (fits >= readable) return { ...centredOn(canvas, bounds, Math.min(fits, Math.max(1, readable))), whole: true };
  // Too large: its output nodes at the readable zoom, all of them if they fit together, else the last one drawn
  // (the right-most in a left-to-right layout); no output node: the first node.
  // An output node larger than the panel at that zoom (a saved Save Image box with room for its picture) shows little
  // but an empty box: the graph opens on one that fits, else on its first node.
  const fitting = outputs.filter((b) => fittingZoom(canvas, b) >= readable);
  const together = unionOf(fitting);
  const output =
    together && fittingZoom(canvas, together) >= readable
      ? together
      : [...fitting].sort((a, b) => b.x + b.width - (a.x + a.width) || a.y - b.y)[0];
  const target = output ?? first ?? bounds;
  const side = direction === 'TB' ? (output ? 'bottom' : 'top') : output ? 'right' : 'left';
  return { ...placedOn(canvas, target, readable, side), whole: false };
}

/**
 * The view at `zoom` that shows `box` with what is around it: against the canvas's `side` margin where it fits that
 * way (output nodes at the end of the layout's direction, so the nodes that lead into them show before them; the
 * first node at its start), centred the other way when it fits, else with its top-left corner (its title) in view.
 */
function placedOn(
  canvas: { width: number; height: number },
  box: ViewBox,
  zoom: number,
  side: 'left' | 'right' | 'top' | 'bottom',
): GraphView {
  const across = box.width * zoom <= canvas.width - 2 * FIT_MARGIN_PX;
  const down = box.height * zoom <= canvas.height - 2 * FIT_MARGIN_PX;
  const centred = centredOn(canvas, box, zoom);
  const start = { x: FIT_MARGIN_PX - box.x * zoom, y: FIT_MARGIN_PX - box.y * zoom };
  const end = {
    x: canvas.width - FIT_MARGIN_PX - (box.x + box.width) * zoom,
    y: canvas.height - FIT_MARGIN_PX - (box.y + box.height) * zoom,
  };
  const horizontal = side === 'left' || side === 'right';
  return {
    zoom,
    panX: !across ? start.x : horizontal ? (side === 'right' ? end.x : start.x) : centred.panX,
    panY: !down ? start.y : horizontal ? centred.panY : side === 'bottom' ? end.y : start.y,
  };
}

/**
 * The smallest canvas (px) that shows the minimap (180 × 120). Below it (the monitor's graph section, some 330 px high
 * in a half-width panel; the graph above a node's form) it would cover much of the nodes in view; a half-width graph
 * panel keeps it.
 */
export const MINIMAP_CANVAS = { width: 400, height: 420 } as const;

/** More nodes than this: the minimap is shown, even when the whole graph is in view. */
export const MINIMAP_THRESHOLD = 40;

/**
 * Whether the minimap shows: for a graph of more than {@link MINIMAP_THRESHOLD} nodes, and for any graph that the view
 * does not hold whole (opened readable on its output nodes, or zoomed in): there it is how to move around. Never on
 * a canvas smaller than {@link MINIMAP_CANVAS}.
 * @param drawn the graph's bounds on the canvas (px); `canvas` its size (px).
 */
export function minimapShown(nodes: number, drawn: ViewBox, canvas: { width: number; height: number }): boolean {
  // A small canvas (a narrow panel, the monitor's section, the graph above a node's form): the minimap would cover
  // much of the graph; dragging moves it.
  if (canvas.width < MINIMAP_CANVAS.width || canvas.height < MINIMAP_CANVAS.height) return false;
  const slack = 1;
  const whole =
    drawn.x >= -slack &&
    drawn.y >= -slack &&
    drawn.x + drawn.width <= canvas.width + slack &&
    drawn.y + drawn.height <= canvas.height + slack;
  return nodes > MINIMAP_THRESHOLD || !whole;
}
