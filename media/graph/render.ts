/**
 * The workflow graph renderer: a component that draws a {@link GraphModel} (src/core/graph/model.ts) into an element
 * it is given, as SVG. Used by the standalone graph page (media/graph/main.ts) and meant to be embedded in the job
 * monitor's page: `new GraphView(element, callbacks)`, then `setGraph`, `setStates`, `setProblems`, `select`,
 * `setBanner` as messages come; it owns nothing outside its element and posts nothing itself (the callbacks do).
 * To embed it, a page links dist/webview/graph.css (its classes all start with `graph-`), gives the component an
 * element with a height, and maps the callbacks to its own messages (the job monitor: `onReveal` to `goToNode`).
 *
 * Rules it keeps:
 * - Layout in the webview, never on the extension host: an API-format graph (no positions) is laid out with dagre,
 *   layered left to right, in a worker (./layoutPath.ts): the graph drawn before stays while it works, and its nodes
 *   come in nearest the view first; a UI-format graph is drawn at its saved positions, with its groups.
 * - Fluid at 500 nodes: the graph is built once per model; a state, a selection or a problem changes classes and a
 *   few attributes of the nodes concerned; pan and zoom change one transform, at most once per frame.
 * - Safe: every string is set as text (`textContent`), never as HTML; images are `data:` URLs of preview bytes.
 * - Keyboard and screen readers: the graph is one tab stop (arrows pan, +/- zoom, 0 fits); Tab enters the nodes (one
 *   roving tab stop: arrows move to the nearest node in that direction, Enter reveals it, Space or double-click opens
 *   a subgraph, Backspace goes back out, Escape clears the selection); each node is a button labelled with its title,
 *   class, state and problems; changes are announced in a polite live region.
 * - Colours only from the theme (classes styled in graph.css with `--vscode-*` variables); states and problems are
 *   also told by a symbol and the border's style, never by colour alone (high contrast).
 *
 * Its parts: the chrome (./chrome.ts), the layout (./layout.ts), the nodes (./nodes.ts), the groups, edges and
 * minimap (./scene.ts), moving between graphs and nodes (./navigation.ts), pointer input (./input.ts); the viewport,
 * the keyboard and the state shown are kept here.
 */
import type { GraphModel, GraphProblems, NodeRunState, WorkflowGraph } from '../../src/core/graph/types';
import { buildChrome, type GraphChrome } from './chrome';
import { html, svg } from './dom';
import { listenInput } from './input';
import type { Placed } from './layout';
import { attachItems, GraphLayouts } from './layoutPath';
import { redrawInPlace, valuesOnlyChanged } from './inPlace';
import { graphHolding, graphShown, neighbour, openingTargets } from './navigation';
import { describeNode, drawNode, paintNode as paintNodeView, type NodePaint, type NodeView } from './nodes';
import { drawEdges, drawGroups, drawMinimap, sceneBounds } from './scene';
import { fitAllView, minimapShown, openingView, type GraphView as View } from '../../src/core/graph/viewport';
import { GRAPH_WORDS, type GraphViewCallbacks, type GraphViewport, type GraphWords } from './words';

export { layoutWithDagre } from './layout';

const ZOOM_MIN = 0.05;
const ZOOM_MAX = 4;
/** A node title's font size at zoom 1 (px; `.graph-node-title` in graph.css). */
const TITLE_FONT_PX = 13;
/** Edge labels are drawn only from this zoom on (unreadable below, and 500 labels cost frames). */
const LABEL_ZOOM = 0.6;

/**
 * The graph component. Construct it on an empty element; it fills it with a toolbar, a banner, the SVG canvas, a
 * minimap and a live region. Methods may be called in any order; `setGraph` draws.
 */
export class GraphView {
  readonly root: HTMLElement;
  private readonly ui: GraphChrome;
  private model: GraphModel | null = null;
  private shown: string | null = null;
  private nodes = new Map<string, NodeView>();
  private states: Record<string, NodeRunState> = {};
  private problems: GraphProblems = { byNode: {}, graph: [] };
  private selected: string | null = null;
  private active: string | null = null;
  private zoom = 1;
  private panX = 0;
  private panY = 0;
  private bounds = { x: 0, y: 0, width: 1, height: 1 };
  private frame = 0;
  private sharpen: ReturnType<typeof setTimeout> | undefined;
  private drawnZoom = 1;
  private restored = false;
  private readonly layouts: GraphLayouts;
  /** Set when `open` was called while the graph shown was being laid out: it opens once drawn. */
  private openWhenDrawn = false;
  /** A node selected while the graph shown was being laid out: brought into view once drawn. */
  private revealWhenDrawn: string | null = null;
  private readonly cleanup: (() => void)[] = [];

  constructor(
    host: HTMLElement,
    private readonly callbacks: GraphViewCallbacks = {},
    private readonly words: GraphWords = GRAPH_WORDS,
  ) {
    this.ui = buildChrome(host, words, {
      up: () => this.openSubgraph(null),
      zoomOut: () => this.zoomAt(1 / 1.25),
      zoomIn: () => this.zoomAt(1.25),
      fit: () => this.fit(),
    });
    this.root = this.ui.root;
    this.layouts = new GraphLayouts({
      canvas: this.ui.canvas,
      paint: () => this.paint(),
      canvasSize: () => this.canvasSize(),
      view: () => this.view(),
      drawPlaced: (graph, placed, views) => this.drawPlaced(graph, placed, views),
    });
    this.listen();
    this.updateChrome();
  }

  // ---- public API -----------------------------------------------------------------------------------------------

  /** Draws `model` (replacing the graph shown). Keeps the inner graph shown while the new model still has it. */
  setGraph(model: GraphModel): void {
    const first = this.model === null;
    const before = graphShown(this.model, this.shown);
    this.model = model;
    if (this.shown !== null && !model.subgraphs[this.shown]) this.shown = null;
    const after = graphShown(model, this.shown);
    // Values changed only (./inPlace.ts): the nodes whose model changed drawn again where they are.
    if (before && after && valuesOnlyChanged(before, after) && this.layouts.adopt(before, after))
      return void (redrawInPlace(this.nodes, before, after, this.paint()), this.roving());
    this.layouts.clear();
    this.draw();
    if (first && !this.restored) this.open();
  }

  /** The run's states by node id ({} clears them). */
  setStates(states: Record<string, NodeRunState>): void {
    this.states = states;
    for (const v of this.nodes.values()) this.paintNode(v);
  }

  /** Problems on nodes (replacing the earlier ones), marked on their boxes; whole-workflow ones listed above the graph. */
  setProblems(problems: GraphProblems): void {
    this.problems = problems;
    this.ui.graphProblems.replaceChildren(...problems.graph.map((p) => html('li', undefined, `⚠ ${p}`)));
    this.ui.graphProblems.hidden = problems.graph.length === 0;
    for (const v of this.nodes.values()) this.paintNode(v);
  }

  /** Selects a node (opening the inner graph that holds it) and brings it into view; null clears the selection. */
  select(nodeId: string | null): void {
    if (nodeId !== null && this.model) {
      const inner = graphHolding(this.model, nodeId);
      if (inner !== undefined && inner !== this.shown) this.openSubgraph(inner);
    }
    const before = this.selected;
    this.selected = nodeId;
    const graph = graphShown(this.model, this.shown);
    this.revealWhenDrawn = graph && this.layouts.isLaying(graph) ? nodeId : null;
    if (before) {
      const v = this.nodes.get(before);
      if (v) this.paintNode(v);
    }
    const v = nodeId ? this.nodes.get(nodeId) : undefined;
    if (v) {
      this.paintNode(v);
      this.active = nodeId;
      this.roving();
      this.bringIntoView(v.placed);
      this.announce(this.describe(v));
    }
  }

  /** Words over the last good graph (null removes them). */
  setBanner(text: string | null): void {
    this.ui.banner.textContent = text ?? '';
    this.ui.banner.hidden = text === null;
  }

  /** The viewport (what the page saves). */
  view(): GraphViewport {
    return { zoom: this.zoom, panX: this.panX, panY: this.panY, subgraph: this.shown };
  }

  /** Restores a saved viewport (before or after the first graph); no fit happens after it. */
  setView(view: GraphViewport): void {
    this.restored = true;
    this.zoom = clamp(view.zoom, ZOOM_MIN, ZOOM_MAX);
    this.panX = view.panX;
    this.panY = view.panY;
    if (
      view.subgraph !== this.shown &&
      (!this.model || this.model.subgraphs[view.subgraph ?? ''] || view.subgraph === null)
    ) {
      this.shown = view.subgraph;
      if (this.model) this.draw();
    }
    this.schedule();
  }

  /** Shows the inner graph of subgraph instance `path` (null: the workflow's own graph), fitted. */
  openSubgraph(path: string | null): void {
    if (!this.model || (path !== null && !this.model.subgraphs[path])) return;
    if (path === this.shown) return;
    const from = this.shown;
    this.shown = path;
    this.draw();
    this.open();
    this.callbacks.onOpenSubgraph?.(path);
    // Back out of an inner graph: the instance box it came from takes the focus.
    if (from !== null && this.nodes.has(from)) this.active = from;
    this.roving();
  }

  /** "Fit All": zooms and pans so the whole graph shown fits the canvas (at most 100%, however small). */
  fit(): void {
    this.apply(fitAllView(this.canvasSize(), this.bounds, { min: ZOOM_MIN, max: ZOOM_MAX }));
  }

  /**
   * Opens the graph shown readable (core graph/viewport.ts, openingView): whole when it fits with node titles at the
   * editor's font size, else at that size on its output nodes (the nodes no edge leaves), the minimap to move around.
   */
  open(): void {
    const graph = graphShown(this.model, this.shown);
    if (graph && this.layouts.isLaying(graph)) {
      this.openWhenDrawn = true;
      return;
    }
    const placed = (graph && this.layouts.placed(graph)) ?? new Map<string, Placed>();
    const { outputs, first } = openingTargets(graph, placed);
    const direction = graph ? this.layouts.directionOf(graph) : 'LR';
    const limits = { min: ZOOM_MIN, max: ZOOM_MAX };
    this.apply(openingView(this.canvasSize(), this.bounds, outputs, first, this.readableZoom(), limits, direction));
  }

  /** The zoom at which a node title is drawn at the editor's font size (`--vscode-editor-font-size`, else 13 px). */
  private readableZoom(): number {
    const editorPx = parseFloat(getComputedStyle(this.ui.root).getPropertyValue('--vscode-editor-font-size'));
    return (Number.isFinite(editorPx) && editorPx > 0 ? editorPx : 13) / TITLE_FONT_PX;
  }

  private apply(view: View): void {
    this.zoom = view.zoom;
    this.panX = view.panX;
    this.panY = view.panY;
    this.schedule();
  }

  /** Multiplies the zoom by `factor` around the point (px in the canvas; default its centre). */
  zoomAt(factor: number, cx?: number, cy?: number): void {
    const { width, height } = this.canvasSize();
    const x = cx ?? width / 2;
    const y = cy ?? height / 2;
    const zoom = clamp(this.zoom * factor, ZOOM_MIN, ZOOM_MAX);
    const k = zoom / this.zoom;
    this.panX = x - (x - this.panX) * k;
    this.panY = y - (y - this.panY) * k;
    this.zoom = zoom;
    this.schedule();
  }

  /** Moves the view by (dx, dy) px. */
  panBy(dx: number, dy: number): void {
    this.panX += dx;
    this.panY += dy;
    this.schedule();
  }

  /** Resolves once the graph shown is drawn (its layout back from the worker, the nodes in view in: ./layoutPath.ts). */
  whenDrawn(): Promise<void> {
    return this.layouts.whenDrawn();
  }

  /** Resolves once every node of the graph shown is in the document. */
  whenComplete(): Promise<void> {
    return this.layouts.whenComplete();
  }

  /** Removes the component and its listeners. */
  dispose(): void {
    this.layouts.stop();
    cancelAnimationFrame(this.frame);
    clearTimeout(this.sharpen);
    for (const c of this.cleanup) c();
    this.ui.root.remove();
  }

  // ---- drawing --------------------------------------------------------------------------------------------------

  private draw(): void {
    const graph = graphShown(this.model, this.shown);
    if (graph) return this.layouts.draw(graph);
    this.layouts.stop();
    this.ui.viewport.replaceChildren();
    this.nodes.clear();
  }

  /** Draws `graph` at `placed`; with `views` (made during a worker's layout), put in nearest the view first. */
  private drawPlaced(graph: WorkflowGraph, placed: Map<string, Placed>, views?: Map<string, NodeView>): void {
    this.bounds = sceneBounds(placed, graph.groups);
    // Read the canvas before the drawing changes (a read after a write lays the page out at once).
    if (this.openWhenDrawn) {
      this.openWhenDrawn = false;
      this.open();
    }
    this.ui.viewport.replaceChildren();
    this.nodes.clear();
    const groups = svg('g', {}, 'graph-groups');
    const edges = svg('g', {}, 'graph-edges');
    const labels = svg('g', {}, 'graph-edge-labels');
    const nodes = svg('g', {}, 'graph-nodes');
    nodes.setAttribute('role', 'list');
    drawGroups(graph.groups, groups);
    const labelsMade = svg('g', {});
    drawEdges(graph.edges, placed, edges, views ? labelsMade : labels);
    const paint = this.paint();
    for (const p of placed.values()) {
      const v = views?.get(p.node.id) ?? drawNode(p, paint);
      if (!views) nodes.append(v.g);
      this.nodes.set(p.node.id, v);
    }
    this.ui.viewport.append(groups, edges, labels, nodes);
    const b = this.bounds;
    this.ui.drawing.setAttribute('viewBox', `${b.x} ${b.y} ${b.width} ${b.height}`);
    this.ui.drawing.setAttribute('width', String(b.width));
    this.ui.drawing.setAttribute('height', String(b.height));
    if (this.active === null || !this.nodes.has(this.active)) this.active = graph.nodes[0]?.id ?? null;
    this.roving();
    drawMinimap(this.ui.minimap, this.ui.miniView, placed, this.bounds);
    this.updateChrome();
    this.schedule();
    const reveal = this.revealWhenDrawn;
    this.revealWhenDrawn = null;
    if (reveal !== null && reveal === this.selected) this.select(reveal);
    if (views) this.layouts.attach(attachItems(this.nodes, nodes, labels, [...labelsMade.children] as SVGElement[]));
  }

  /** What the nodes are painted from now. */
  private paint(): NodePaint {
    return { states: this.states, problems: this.problems, selected: this.selected, words: this.words };
  }

  private paintNode(v: NodeView): void {
    paintNodeView(v, this.paint());
  }

  private describe(v: NodeView): string {
    return describeNode(v, this.paint());
  }

  private updateChrome(): void {
    this.ui.upButton.hidden = this.shown === null;
    const g = graphShown(this.model, this.shown);
    this.ui.crumb.textContent = this.shown !== null && g ? g.title : '';
  }

  // ---- view -----------------------------------------------------------------------------------------------------

  private canvasSize(): { width: number; height: number } {
    const r = this.ui.canvas.getBoundingClientRect();
    return { width: Math.max(100, r.width), height: Math.max(100, r.height) };
  }

  /** Applies the pan and zoom at the next frame (many wheel events in a frame cost one transform). */
  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const b = this.bounds;
      // Read before any write of the frame: a read after a style write forces a layout.
      const { width, height } = this.canvasSize();
      this.ui.layer.style.transform = `translate(${this.panX + b.x * this.zoom}px,${this.panY + b.y * this.zoom}px) scale(${this.zoom})`;
      if (this.zoom !== this.drawnZoom) this.resharpen();
      this.ui.canvas.classList.toggle('labels-hidden', this.zoom < LABEL_ZOOM);
      const drawn = { x: this.panX + b.x * this.zoom, y: this.panY + b.y * this.zoom };
      const shown = minimapShown(
        this.nodes.size,
        { ...drawn, width: b.width * this.zoom, height: b.height * this.zoom },
        { width, height },
      );
      this.ui.minimap.style.display = shown ? '' : 'none';
      if (shown) {
        this.ui.miniView.setAttribute('x', String(-this.panX / this.zoom));
        this.ui.miniView.setAttribute('y', String(-this.panY / this.zoom));
        this.ui.miniView.setAttribute('width', String(width / this.zoom));
        this.ui.miniView.setAttribute('height', String(height / this.zoom));
      }
      this.callbacks.onViewChange?.(this.view());
    });
  }

  /**
   * Once a zoom has settled (200 ms without one), the layer is rasterized again at the new scale: a composited layer
   * keeps the raster of the scale it was made at, so text would stay blurred after zooming in.
   */
  private resharpen(): void {
    clearTimeout(this.sharpen);
    this.sharpen = setTimeout(() => {
      this.drawnZoom = this.zoom;
      this.ui.layer.style.willChange = 'auto';
      requestAnimationFrame(() => {
        this.ui.layer.style.willChange = 'transform';
      });
    }, 200);
  }

  private bringIntoView(p: Placed): void {
    const { width, height } = this.canvasSize();
    const x = p.x * this.zoom + this.panX;
    const y = p.y * this.zoom + this.panY;
    const w = p.width * this.zoom;
    const h = p.height * this.zoom;
    if (x >= 0 && y >= 0 && x + w <= width && y + h <= height) return;
    this.panX = width / 2 - (p.x + p.width / 2) * this.zoom;
    this.panY = height / 2 - (p.y + p.height / 2) * this.zoom;
    this.schedule();
  }

  private roving(): void {
    for (const [id, v] of this.nodes) {
      const t = id === this.active ? '0' : '-1';
      if (v.g.getAttribute('tabindex') !== t) v.g.setAttribute('tabindex', t);
    }
  }

  private announce(text: string): void {
    this.ui.live.textContent = text;
  }

  private nodeOf(target: EventTarget | null): NodeView | undefined {
    const g = target instanceof Element ? target.closest('.graph-node') : null;
    const id = g?.getAttribute('data-id');
    return id ? this.nodes.get(id) : undefined;
  }

  private choose(v: NodeView): void {
    this.select(v.placed.node.id);
    this.callbacks.onReveal?.(v.placed.node.id);
  }

  private listen(): void {
    const input = listenInput(this.ui.canvas, this.ui.minimap, {
      zoomAt: (factor, cx, cy) => this.zoomAt(factor, cx, cy),
      panBy: (dx, dy) => this.panBy(dx, dy),
      click: (target) => {
        const v = this.nodeOf(target);
        if (v) this.choose(v);
      },
      doubleClick: (target) => {
        const v = this.nodeOf(target);
        if (v?.placed.node.subgraph) this.openSubgraph(v.placed.node.subgraph);
      },
      key: (e) => this.key(e),
      bounds: () => this.bounds,
      centreOn: (gx, gy) => {
        const { width, height } = this.canvasSize();
        this.panX = width / 2 - gx * this.zoom;
        this.panY = height / 2 - gy * this.zoom;
        this.schedule();
      },
    });
    this.cleanup.push(...input);
  }

  private key(e: KeyboardEvent): void {
    const v = this.nodeOf(e.target);
    const dirs: Record<string, [number, number]> = {
      ArrowLeft: [-1, 0],
      ArrowRight: [1, 0],
      ArrowUp: [0, -1],
      ArrowDown: [0, 1],
    };
    const dir = dirs[e.key];
    let handled = true;
    if (dir && v) {
      const next = neighbour(this.nodes, v.placed, dir[0], dir[1]);
      if (next) {
        this.active = next;
        this.roving();
        const nv = this.nodes.get(next)!;
        this.layouts.attachNow(nv.g);
        nv.g.focus();
        this.bringIntoView(nv.placed);
        this.announce(this.describe(nv));
      }
    } else if (dir) this.panBy(-dir[0] * 60, -dir[1] * 60);
    else if (e.key === '+' || e.key === '=') this.zoomAt(1.25);
    else if (e.key === '-' || e.key === '_') this.zoomAt(1 / 1.25);
    else if (e.key === '0') this.fit();
    else if (e.key === 'Enter' && v) this.choose(v);
    else if (e.key === ' ' && v?.placed.node.subgraph) this.openSubgraph(v.placed.node.subgraph);
    else if (e.key === 'Backspace' && this.shown !== null) {
      const back = this.shown;
      this.openSubgraph(graphHolding(this.model, back) ?? null);
      this.active = back;
      this.roving();
      this.layouts.attachNow(this.nodes.get(back)?.g);
      this.nodes.get(back)?.g.focus();
    } else if (e.key === 'Escape') {
      this.select(null);
      this.paintAll();
      this.ui.canvas.focus();
    } else handled = false;
    if (handled) e.preventDefault();
  }

  private paintAll(): void {
    for (const v of this.nodes.values()) this.paintNode(v);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
