/**
 * Drawing a graph laid out in the worker without a long frame: its nodes' elements are made while the worker lays
 * them out ({@link NodeBuilder}, in the page's idle time), and once the positions are back, the nodes and edge
 * labels in view go into the document at once and the rest a frame's share at a time, nearest the view first
 * ({@link Attacher}). The browser styles, lays out and paints only what is put in, so the first frame of the new
 * graph costs what the view shows, and panning stays smooth while the rest comes in.
 */
import type { Placed } from './layout';
import { drawNode, paintNode, type NodePaint, type NodeView } from './nodes';

/** Milliseconds of element making at a time at most, while the worker lays out (a frame is 16.7 ms at 60 Hz). */
const BUILD_SLICE_MS = 6;

/**
 * Runs `work` when the page is next idle, with the milliseconds it may take (at most {@link BUILD_SLICE_MS}): a frame
 * being drawn is never delayed by it. Without requestIdleCallback, at the next frame, for 4 ms. Returns the cancel.
 */
function whenIdle(work: (ms: number) => void): () => void {
  if (typeof requestIdleCallback === 'function') {
    const id = requestIdleCallback((deadline) => work(Math.min(BUILD_SLICE_MS, deadline.timeRemaining())));
    return () => cancelIdleCallback(id);
  }
  const id = requestAnimationFrame(() => work(4));
  return () => cancelAnimationFrame(id);
}

/**
 * Makes the nodes' views ahead of their positions (at 0, 0 with their final sizes), a slice at a time in the page's
 * idle time, until {@link finish} is called or every view is made.
 */
export class NodeBuilder {
  private readonly order: Placed[];
  private readonly views = new Map<string, { view: NodeView; paint: NodePaint }>();
  private next = 0;
  private stopSlice: () => void = () => undefined;

  constructor(
    placed: Iterable<Placed>,
    private readonly paint: () => NodePaint,
  ) {
    this.order = [...placed];
    this.schedule();
  }

  /**
   * Every node's view, in the graph's order: the rest made now (at their placed positions: the caller set them), each
   * painted from the current state. A view made ahead is still at 0, 0: {@link AttachItem}'s `prepare` moves it as it
   * goes in. Stops the slices.
   */
  finish(): Map<string, NodeView> {
    this.stopSlice();
    const paint = this.paint();
    const out = new Map<string, NodeView>();
    for (const p of this.order) {
      const made = this.views.get(p.node.id);
      let v: NodeView;
      if (made) {
        v = made.view;
        // Painted again only when what it was painted from changed meanwhile (a state, a problem, the selection).
        if (!samePaint(made.paint, paint)) paintNode(v, paint);
      } else v = drawNode(p, paint);
      out.set(p.node.id, v);
    }
    return out;
  }

  /** Stops making views (the layout was dropped). */
  cancel(): void {
    this.stopSlice();
    this.next = this.order.length;
  }

  private schedule(): void {
    if (this.next >= this.order.length) return;
    this.stopSlice = whenIdle((ms) => {
      const end = performance.now() + ms;
      const paint = this.paint();
      // At least one view a slice, however short the idle time: the views are all made in the end.
      do {
        const p = this.order[this.next++]!;
        this.views.set(p.node.id, { view: drawNode(p, paint), paint });
      } while (this.next < this.order.length && performance.now() < end);
      this.schedule();
    });
  }
}

/** A rectangle in graph units. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One element to put in: where it goes (`into`, kept in `order` among its siblings) and the box it covers. */
export interface AttachItem {
  element: SVGElement;
  into: SVGGElement;
  order: number;
  box: Rect;
  /** About how many elements it holds (the work of styling and laying it out). */
  weight: number;
  /** What to do to it just before it goes in (a node made ahead moved to its place). */
  prepare?: () => void;
}

/** Elements styled, laid out and painted in the first frames; changed by how long frames take. */
const FIRST_BUDGET = 300;
const MIN_BUDGET = 40;
const MAX_BUDGET = 2000;
/**
 * A frame (ms) after which the next slice is halved, and one under which it grows by half. Each frame that adds
 * elements also paints again all that is in (about 10 ms at 500 nodes), so slices of about two frames' time finish
 * sooner, in fewer slow frames, than slices that try to fit one.
 */
const SLOW_FRAME_MS = 40;
const FAST_FRAME_MS = 25;
/** Items of the first frame at most (a view zoomed far out holds the whole graph). */
const FIRST_FRAME_ITEMS = 160;

/**
 * Puts items into the document: those whose box meets the view at once (at most {@link FIRST_FRAME_ITEMS}), then,
 * each frame, the nearest to the view's centre up to a budget of elements (smaller after a long frame, larger after
 * a short one). Each item goes in at its place among its siblings, so the document's order stays the graph's.
 */
export class Attacher {
  private readonly placedIn = new Set<AttachItem>();
  private readonly slots = new Map<SVGGElement, (SVGElement | null)[]>();
  /** The items not yet in, nearest first from the centre (cx, cy) of the view they were sorted for. */
  private order: { cx: number; cy: number; items: AttachItem[]; next: number } | undefined;
  private budget = FIRST_BUDGET;
  private frame = 0;
  private last = 0;
  private readonly finished: Promise<void>;
  private finish!: () => void;

  /** `view` gives the part of the graph shown now (graph units). */
  constructor(
    private readonly items: AttachItem[],
    private readonly view: () => Rect,
  ) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
    const shown = this.view();
    let first = 0;
    for (const item of this.ordered(shown)) {
      if (first >= FIRST_FRAME_ITEMS) break;
      if (!meets(item.box, shown)) continue;
      this.put(item);
      first++;
    }
    this.schedule();
  }

  /** Resolves once every item is in the document (or the attacher was stopped). */
  get done(): Promise<void> {
    return this.finished;
  }

  /** True once every item is in the document. */
  get complete(): boolean {
    return this.placedIn.size === this.items.length;
  }

  /** Puts `element` in now, if it is waiting (a node about to take the focus). */
  attachNow(element: Element): void {
    const item = this.items.find((i) => i.element === element);
    if (item) this.put(item);
    if (this.complete) this.stop();
  }

  /** Stops putting items in (the drawing was replaced, or every item is in). */
  stop(): void {
    cancelAnimationFrame(this.frame);
    this.finish();
  }

  private schedule(): void {
    if (this.complete) return this.stop();
    this.frame = requestAnimationFrame((now) => {
      // The time since the last slice is about the frame its elements cost: a long one halves the next slice.
      if (this.last > 0) {
        const took = now - this.last;
        this.budget =
          took > SLOW_FRAME_MS
            ? Math.max(MIN_BUDGET, this.budget / 2)
            : took < FAST_FRAME_MS
              ? Math.min(MAX_BUDGET, this.budget * 1.5)
              : this.budget;
      }
      this.last = now;
      let spent = 0;
      for (const item of this.ordered(this.view())) {
        if (spent > 0 && spent + item.weight > this.budget) break;
        this.put(item);
        spent += item.weight;
      }
      this.schedule();
    });
  }

  /**
   * The items not yet in, nearest the centre of `shown` first. Sorted again only when the view's centre moved by more
   * than a quarter of its size since the last sort (a little panning changes little of the order).
   */
  private *ordered(shown: Rect): Generator<AttachItem> {
    const cx = shown.x + shown.width / 2;
    const cy = shown.y + shown.height / 2;
    let o = this.order;
    if (!o || Math.abs(o.cx - cx) > shown.width / 4 || Math.abs(o.cy - cy) > shown.height / 4) {
      const d = (b: Rect) => (b.x + b.width / 2 - cx) ** 2 + (b.y + b.height / 2 - cy) ** 2;
      const keyed = this.items.filter((i) => !this.placedIn.has(i)).map((item) => ({ item, d: d(item.box) }));
      keyed.sort((a, b) => a.d - b.d);
      this.order = o = { cx, cy, items: keyed.map((k) => k.item), next: 0 };
    }
    for (let i = o.next; i < o.items.length; i++) {
      const item = o.items[i]!;
      // Skip what went in already (at the start of the list: moved past for good).
      if (this.placedIn.has(item)) {
        if (i === o.next) o.next++;
        continue;
      }
      yield item;
    }
  }

  private put(item: AttachItem): void {
    if (this.placedIn.has(item)) return;
    this.placedIn.add(item);
    item.prepare?.();
    let slots = this.slots.get(item.into);
    if (!slots) this.slots.set(item.into, (slots = []));
    slots[item.order] = item.element;
    let before: SVGElement | null = null;
    for (let i = item.order + 1; i < slots.length && !before; i++) before = slots[i] ?? null;
    item.into.insertBefore(item.element, before);
  }
}

/** True when two paints are made of the same states, problems, selection and words (the same objects). */
function samePaint(a: NodePaint, b: NodePaint): boolean {
  return a.states === b.states && a.problems === b.problems && a.selected === b.selected && a.words === b.words;
}

/** True when two rectangles overlap. */
function meets(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}
