/**
 * The graph view's layouts: each graph's placed nodes, made once per model (from the saved positions of a UI-format
 * graph, else by dagre: in the layout worker when the page has one, else on the page's thread), and the drawing of a
 * graph laid out in the worker, in steps (./progressive.ts).
 *
 * Rules it keeps:
 * - While the worker lays a graph out, the graph drawn before stays, pan and zoom work on it, and the canvas says
 *   `aria-busy`; the new graph's node elements are made meanwhile.
 * - Only the newest request is drawn: an answer for a request that a newer one overtook (another edit, another graph
 *   shown, a new model) is dropped (./layoutClient.ts numbers the requests; here, the request must still be the one
 *   awaited).
 * - Without a worker, or for a graph under {@link WORKER_MIN_NODES} nodes, the graph is laid out and drawn at once,
 *   as it always was.
 */
import type { WorkflowGraph } from '../../src/core/graph/types';
import {
  directionFor,
  layoutPositions,
  pendingLayout,
  placeAt,
  placeGraph,
  type LayoutDirection,
  type PendingLayout,
  type Placed,
} from './layout';
import { layoutClient, type LayoutClient } from './layoutClient';
import type { NodePaint, NodeView } from './nodes';
import { Attacher, NodeBuilder, type AttachItem, type Rect } from './progressive';

/**
 * Graphs with fewer nodes are laid out on the page's thread: dagre takes a few milliseconds there, less than the
 * worker's round trip and the frames of drawing in steps.
 */
export const WORKER_MIN_NODES = 40;

/** What the layouts need of the view that draws them. */
export interface LayoutHost {
  /** The canvas element (marked `aria-busy` while a layout is on its way). */
  readonly canvas: HTMLElement;
  /** What the nodes are painted from now. */
  paint(): NodePaint;
  /** The canvas's size (px). */
  canvasSize(): { width: number; height: number };
  /** The zoom and pan now. */
  view(): { zoom: number; panX: number; panY: number };
  /** Draws `graph` at `placed`; `views` are its nodes made ahead, when it was laid out in the worker. */
  drawPlaced(graph: WorkflowGraph, placed: Map<string, Placed>, views?: Map<string, NodeView>): void;
}

/** How many layouts' positions a view keeps (the graph now, and the few before it: an undo places it at once). */
const KEPT_LAYOUTS = 4;

interface Laying {
  graph: WorkflowGraph;
  builder: NodeBuilder;
}

/** The layouts of one graph view (see the module comment). */
export class GraphLayouts {
  private readonly made = new Map<WorkflowGraph, Map<string, Placed>>();
  /**
   * The positions of the last layouts by their input (the nodes' sizes, the edges, the direction): a graph made again
   * after an edit that changed values only (a node's form) is placed at once, where it was, without dagre.
   */
  private readonly positions = new Map<string, readonly number[]>();
  /**
   * The direction of the layouts (chosen by the canvas's shape at the first draw): kept for the view's life, so a
   * graph made again after an edit, or a canvas that changed shape (a node's form opened), does not turn the layout.
   */
  private direction: LayoutDirection | undefined;
  private laying: Laying | null = null;
  private attacher: Attacher | null = null;
  private waiters: { complete: boolean; resolve: () => void }[] = [];

  constructor(private readonly host: LayoutHost) {
    layoutClient()?.warm();
  }

  /** Forgets every layout (a new model) and drops the one on its way; the drawing shown stays until replaced. */
  clear(): void {
    this.made.clear();
    this.dropLaying();
    this.settle();
  }

  /** The direction the layouts run in (left to right until the first is made); saved positions read left to right. */
  directionOf(graph: WorkflowGraph): LayoutDirection {
    return graph.positioned ? 'LR' : (this.direction ?? 'LR');
  }

  /**
   * Takes `after` as the graph drawn for `before` (values changed only: the same places), when `before` is drawn
   * whole and nothing is on its way. False otherwise: `after` is to be drawn anew.
   */
  adopt(before: WorkflowGraph, after: WorkflowGraph): boolean {
    const placed = this.made.get(before);
    if (!placed || this.laying !== null || this.attacher !== null) return false;
    this.made.clear();
    this.made.set(after, placed);
    return true;
  }

  /** The placed nodes of `graph`, when laid out. */
  placed(graph: WorkflowGraph): Map<string, Placed> | undefined {
    return this.made.get(graph);
  }

  /** True while `graph`'s layout is on its way from the worker. */
  isLaying(graph: WorkflowGraph): boolean {
    return this.laying?.graph === graph;
  }

  /**
   * Draws `graph` through the host: at once when it is laid out or can be now (saved positions, no worker), else once
   * the worker has laid it out (nothing is drawn for it before; a request already on its way for it is kept).
   */
  draw(graph: WorkflowGraph): void {
    if (this.laying?.graph === graph) return;
    this.dropLaying();
    let placed = this.made.get(graph);
    if (!placed) {
      this.direction ??= directionFor(this.host.canvasSize());
      if (graph.positioned) placed = placeGraph(graph, this.direction);
      else {
        const pending = pendingLayout(graph, this.direction);
        const key = JSON.stringify(pending.input);
        const known = this.positions.get(key);
        const client = known || graph.nodes.length < WORKER_MIN_NODES ? null : layoutClient();
        // The drawing shown stays (and keeps coming in) while the worker lays the new graph out.
        if (client) return this.layOut(graph, client, pending, key);
        placed = placeAt(pending, known ?? this.remember(key, layoutPositions(pending.input)));
      }
      this.made.set(graph, placed);
    }
    this.stopAttaching();
    this.host.drawPlaced(graph, placed);
    this.settle();
  }

  /** Drops the layout on its way and stops putting the drawing's elements in (nothing is drawn, or the view goes). */
  stop(): void {
    this.dropLaying();
    this.stopAttaching();
    this.settle();
  }

  private dropLaying(): void {
    this.laying?.builder.cancel();
    this.laying = null;
    this.host.canvas.removeAttribute('aria-busy');
  }

  private stopAttaching(): void {
    this.attacher?.stop();
    this.attacher = null;
  }

  /** Puts a drawing's elements in, nearest the view first (./progressive.ts); the host calls it as it draws. */
  attach(items: AttachItem[]): void {
    this.stopAttaching();
    const attacher = new Attacher(items, () => this.shownRect());
    this.attacher = attacher;
    void attacher.done.then(() => {
      if (this.attacher === attacher) this.attacher = null;
      this.settle();
    });
  }

  /** Puts `element` in now when it is waiting to go in (a node about to take the focus). */
  attachNow(element: Element | undefined): void {
    if (element) this.attacher?.attachNow(element);
  }

  /** The part of the graph in view now (graph units). */
  private shownRect(): Rect {
    const { zoom, panX, panY } = this.host.view();
    const { width, height } = this.host.canvasSize();
    return { x: -panX / zoom, y: -panY / zoom, width: width / zoom, height: height / zoom };
  }

  /**
   * Resolves once the graph shown is drawn: at once when it is, else when its layout came back and what the view
   * shows was put in (or the layout was dropped). The rest follows over the next frames: {@link whenComplete}.
   */
  whenDrawn(): Promise<void> {
    return this.wait(false);
  }

  /** Resolves once every element of the graph shown is in the document (or its drawing was dropped). */
  whenComplete(): Promise<void> {
    return this.wait(true);
  }

  private wait(complete: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ complete, resolve });
      this.settle();
    });
  }

  private settle(): void {
    const drawn = this.laying === null;
    const complete = drawn && this.attacher === null;
    const ready = this.waiters.filter((w) => (w.complete ? complete : drawn));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve();
  }

  /** Keeps `positions` as the layout of input `key` (the last few), and returns them. */
  private remember(key: string, positions: readonly number[]): readonly number[] {
    this.positions.delete(key);
    this.positions.set(key, positions);
    for (const old of this.positions.keys()) {
      if (this.positions.size <= KEPT_LAYOUTS) break;
      this.positions.delete(old);
    }
    return positions;
  }

  private layOut(graph: WorkflowGraph, client: LayoutClient, pending: PendingLayout, key: string): void {
    // Sent first: the worker starts while this thread makes the nodes' elements.
    const answer = client.layout(pending.input, this);
    const laying: Laying = { graph, builder: new NodeBuilder(pending.placed.values(), () => this.host.paint()) };
    this.laying = laying;
    this.host.canvas.setAttribute('aria-busy', 'true');
    const done = (placed: Map<string, Placed> | undefined) => {
      if (this.laying !== laying) return;
      this.laying = null;
      if (placed) {
        this.made.set(graph, placed);
        this.stopAttaching();
        this.host.drawPlaced(graph, placed, laying.builder.finish());
      } else laying.builder.cancel();
      // After the drawing: it reads the canvas before it writes.
      this.host.canvas.removeAttribute('aria-busy');
      this.settle();
    };
    void answer.then(
      (positions) => {
        let placed: Map<string, Placed> | undefined;
        try {
          placed = positions && placeAt(pending, positions);
          if (positions) this.remember(key, positions);
        } catch {
          placed = undefined;
        }
        done(placed);
      },
      // dagre threw (as it would on this thread): the graph drawn before stays.
      () => done(undefined),
    );
  }
}

/** The items to put in for a drawing: its nodes' groups and its edges' labels (boxes from their positions). */
export function attachItems(
  views: Map<string, NodeView>,
  nodes: SVGGElement,
  labels: SVGGElement,
  labelElements: SVGElement[],
): AttachItem[] {
  const items: AttachItem[] = [];
  let order = 0;
  for (const v of views.values()) {
    const p = v.placed;
    items.push({
      element: v.g,
      into: nodes,
      order: order++,
      box: p,
      // Its children, about (a text's spans uncounted): cheaper to read than every element under it.
      weight: 1 + v.g.childElementCount,
      // Made ahead at 0, 0 (./progressive.ts, NodeBuilder): moved to its place as it goes in.
      prepare: () => v.g.setAttribute('transform', `translate(${p.x},${p.y})`),
    });
  }
  order = 0;
  for (const t of labelElements) {
    const x = Number(t.getAttribute('x'));
    const y = Number(t.getAttribute('y'));
    items.push({
      element: t,
      into: labels,
      order: order++,
      box: { x: x - 30, y: y - 10, width: 60, height: 12 },
      weight: 1,
    });
  }
  return items;
}
