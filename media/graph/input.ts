/**
 * The pointer and keyboard input of the graph canvas: the wheel zooms around the pointer (Shift+wheel pans), a drag
 * pans (a press that moves less than 4 px is a click), a click chooses a node, a double-click opens a subgraph, keys
 * go to the component, and a press on the minimap centres the view there. Listeners are removed by the returned
 * functions.
 */
import type { GraphBounds } from './scene';

/** What the input does to the component. */
export interface InputActions {
  /** Multiplies the zoom by `factor` around (cx, cy), px in the canvas. */
  zoomAt(factor: number, cx: number, cy: number): void;
  /** Moves the view by (dx, dy) px. */
  panBy(dx: number, dy: number): void;
  /** A press and release without a drag on `target`. */
  click(target: EventTarget | null): void;
  doubleClick(target: EventTarget | null): void;
  key(e: KeyboardEvent): void;
  /** The bounds of the drawing (graph units), which the minimap shows. */
  bounds(): GraphBounds;
  /** Centres the view on the graph point (x, y). */
  centreOn(x: number, y: number): void;
}

/** Listens to `canvas` and `minimap`; returns the functions that remove each listener. */
export function listenInput(canvas: HTMLElement, minimap: SVGSVGElement, actions: InputActions): (() => void)[] {
  const cleanup: (() => void)[] = [];
  const on = <K extends keyof HTMLElementEventMap>(
    target: EventTarget,
    type: K | string,
    fn: (e: never) => void,
    opts?: AddEventListenerOptions,
  ) => {
    target.addEventListener(type, fn as EventListener, opts);
    cleanup.push(() => target.removeEventListener(type, fn as EventListener, opts));
  };
  on(
    canvas,
    'wheel',
    (e: WheelEvent) => {
      e.preventDefault();
      const r = canvas.getBoundingClientRect();
      if (e.ctrlKey || !e.shiftKey)
        actions.zoomAt(
          Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)),
          e.clientX - r.left,
          e.clientY - r.top,
        );
      else actions.panBy(-e.deltaY, 0);
    },
    { passive: false },
  );
  let drag: { x: number; y: number; moved: boolean; id: number } | undefined;
  on(canvas, 'pointerdown', (e: PointerEvent) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, moved: false, id: e.pointerId };
  });
  on(canvas, 'pointermove', (e: PointerEvent) => {
    if (!drag || drag.id !== e.pointerId) return;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) canvas.setPointerCapture(e.pointerId);
    drag.moved = true;
    drag.x = e.clientX;
    drag.y = e.clientY;
    actions.panBy(dx, dy);
  });
  on(canvas, 'pointerup', (e: PointerEvent) => {
    const wasDrag = drag?.moved;
    drag = undefined;
    if (wasDrag) return;
    actions.click(e.target);
  });
  on(canvas, 'dblclick', (e: MouseEvent) => {
    actions.doubleClick(e.target);
  });
  on(canvas, 'keydown', (e: KeyboardEvent) => actions.key(e));
  on(minimap, 'pointerdown', (e: PointerEvent) => {
    const r = minimap.getBoundingClientRect();
    const b = actions.bounds();
    const scale = Math.max(b.width / r.width, b.height / r.height);
    const gx = b.x + (e.clientX - r.left) * scale - (r.width * scale - b.width) / 2;
    const gy = b.y + (e.clientY - r.top) * scale - (r.height * scale - b.height) / 2;
    actions.centreOn(gx, gy);
  });
  return cleanup;
}
