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
 *   layered left to right; a UI-format graph is drawn at its saved positions, with its groups.
 * - Fluid at 500 nodes: the graph is built once per model; a state, a selection or a problem changes classes and a
 *   few attributes of the nodes concerned; pan and zoom change one transform, at most once per frame.
 * - Safe: every string is set as text (`textContent`), never as HTML; images are `data:` URLs of preview bytes.
 * - Keyboard and screen readers: the graph is one tab stop (arrows pan, +/- zoom, 0 fits); Tab enters the nodes (one
 *   roving tab stop: arrows move to the nearest node in that direction, Enter reveals it, Space or double-click opens
 *   a subgraph, Backspace goes back out, Escape clears the selection); each node is a button labelled with its title,
 *   class, state and problems; changes are announced in a polite live region.
 * - Colours only from the theme (classes styled in graph.css with `--vscode-*` variables); states and problems are
 *   also told by a symbol and the border's style, never by colour alone (high contrast).
 */
import dagre from '@dagrejs/dagre';
import type { GraphEdge, GraphModel, GraphNode, GraphProblems, NodeRunState, WorkflowGraph } from '../../src/core/graph/types';
import { clampFraction } from '../../src/core/jobs/progress';

const SVG = 'http://www.w3.org/2000/svg';

/** Sizes of a laid-out node, in graph units. */
const NODE_WIDTH = 220;
const TITLE_HEIGHT = 30;
const LINE = 16;
/** More nodes than this: the minimap is shown. */
const MINIMAP_THRESHOLD = 40;
const ZOOM_MIN = 0.05;
const ZOOM_MAX = 4;
/** Edge labels are drawn only from this zoom on (unreadable below, and 500 labels cost frames). */
const LABEL_ZOOM = 0.6;

/** What the view reports: pan (px) and zoom, and the inner graph shown (null: the workflow's). */
interface GraphViewport {
  zoom: number;
  panX: number;
  panY: number;
  subgraph: string | null;
}

/** The callbacks of a {@link GraphView}; each is optional. */
interface GraphViewCallbacks {
  /** A node was chosen (click, Enter): the host selects it in the JSON. */
  onReveal?(nodeId: string): void;
  /** The inner graph shown changed (null: back to the workflow's). */
  onOpenSubgraph?(path: string | null): void;
  /** The viewport changed (debounced to once per frame): what the page saves with `setState`. */
  onViewChange?(view: GraphViewport): void;
}

/** The words of the component (translated by the host where it has them). */
interface GraphWords {
  graph: string;
  zoomIn: string;
  zoomOut: string;
  fit: string;
  up: string;
  waiting: string;
  running: string;
  done: string;
  cached: string;
  failed: string;
  muted: string;
  bypassed: string;
  problems: string;
  unknownClass: string;
  help: string;
}

/** The English words (default). */
const GRAPH_WORDS: GraphWords = {
  graph: 'Workflow graph',
  zoomIn: 'Zoom in',
  zoomOut: 'Zoom out',
  fit: 'Fit to view',
  up: 'Back to the workflow',
  waiting: 'waiting',
  running: 'running',
  done: 'done',
  cached: 'cached',
  failed: 'failed',
  muted: 'muted',
  bypassed: 'bypassed',
  problems: 'problems',
  unknownClass: 'unknown node class',
  help: 'Arrow keys pan, plus and minus zoom, 0 fits. Tab enters the nodes: arrow keys move between them, Enter reveals one in the JSON, Space opens a subgraph, Backspace goes back, Escape clears the selection.',
};

const STATUS_MARK: Record<NodeRunState['status'], string> = { waiting: '…', running: '▶', done: '✓', cached: '↺', failed: '✗' };

interface Placed {
  node: GraphNode;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The lines of text a node shows under its title (class, literals, note), each cut to fit its width. */
function nodeLines(n: GraphNode, width: number): string[] {
  const chars = Math.max(8, Math.floor((width - 16) / 6.6));
  const cut = (t: string) => (t.length > chars ? `${t.slice(0, chars - 1)}…` : t);
  const lines: string[] = [];
  if (n.kind === 'note') {
    const words = (n.note ?? '').split(/\s+/);
    let line = '';
    for (const w of words) {
      if ((line + ' ' + w).trim().length > chars) {
        lines.push(cut(line));
        line = w;
        if (lines.length >= 6) break;
      } else line = (line + ' ' + w).trim();
    }
    if (lines.length < 6 && line) lines.push(cut(line));
    return lines;
  }
  if (n.classType && n.classType !== n.title && n.kind === 'node') lines.push(cut(n.classType));
  for (const l of n.literals) lines.push(cut(l.name ? `${l.name}: ${l.text}` : l.text));
  if (n.moreInputs > 0) lines.push(`+${n.moreInputs}`);
  return lines;
}

/** The height a laid-out node takes for its lines. */
function nodeHeight(n: GraphNode): number {
  return TITLE_HEIGHT + 8 + Math.max(1, nodeLines(n, NODE_WIDTH).length) * LINE;
}

/**
 * Positions for a graph without saved positions: dagre, layered left to right (rank separation 110, room for the
 * edges' type labels; node separation 24; graph units; the tight-tree ranker). Exported for the benchmark, which times it apart from drawing.
 */
export function layoutWithDagre(graph: WorkflowGraph): Map<string, { x: number; y: number; width: number; height: number }> {
  // One edge per pair of nodes (dagre places the nodes; the edges are drawn here), and the tight-tree ranker: about
  // a fifth faster than network-simplex at 500 nodes (bench/README.md, the workflow graph), the same left-to-right layers.
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', ranksep: 110, nodesep: 24, edgesep: 8, marginx: 20, marginy: 20, ranker: 'tight-tree' });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: nodeHeight(n) });
  for (const e of graph.edges) if (e.from !== e.to) g.setEdge(e.from, e.to, {});
  dagre.layout(g);
  const out = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (const n of graph.nodes) {
    const p = g.node(n.id);
    out.set(n.id, { x: p.x - p.width / 2, y: p.y - p.height / 2, width: p.width, height: p.height });
  }
  return out;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, cls?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (cls) e.setAttribute('class', cls);
  return e;
}

function html<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The drawn parts of one node that later messages update. */
interface NodeView {
  placed: Placed;
  g: SVGGElement;
  box: SVGRectElement;
  mark: SVGTextElement;
  /** Made at the first state, problem or output that needs them (most nodes of a big graph never do). */
  bar?: SVGRectElement;
  problem?: SVGGElement;
  extra?: SVGGElement;
}

/**
 * The graph component. Construct it on an empty element; it fills it with a toolbar, a banner, the SVG canvas, a
 * minimap and a live region. Methods may be called in any order; `setGraph` draws.
 */
export class GraphView {
  readonly root: HTMLElement;
  private readonly toolbar: HTMLElement;
  private readonly crumb: HTMLElement;
  private readonly upButton: HTMLButtonElement;
  private readonly banner: HTMLElement;
  private readonly graphProblems: HTMLElement;
  private readonly canvas: HTMLElement;
  private readonly layer: HTMLElement;
  private readonly drawing: SVGSVGElement;
  private readonly viewport: SVGGElement;
  private readonly minimap: SVGSVGElement;
  private readonly miniView: SVGRectElement;
  private readonly live: HTMLElement;
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
  private readonly layouts = new Map<WorkflowGraph, Map<string, Placed>>();
  private readonly cleanup: (() => void)[] = [];

  constructor(
    host: HTMLElement,
    private readonly callbacks: GraphViewCallbacks = {},
    private readonly words: GraphWords = GRAPH_WORDS,
  ) {
    this.root = html('div', 'graph-view');
    this.toolbar = html('div', 'graph-toolbar');
    this.toolbar.setAttribute('role', 'toolbar');
    this.toolbar.setAttribute('aria-label', words.graph);
    this.upButton = this.button('⤴', words.up, () => this.openSubgraph(null));
    this.crumb = html('span', 'graph-crumb');
    this.toolbar.append(
      this.upButton,
      this.crumb,
      html('span', 'graph-spacer'),
      this.button('−', words.zoomOut, () => this.zoomAt(1 / 1.25)),
      this.button('+', words.zoomIn, () => this.zoomAt(1.25)),
      this.button('⤢', words.fit, () => this.fit()),
    );
    this.banner = html('div', 'graph-banner');
    this.banner.setAttribute('role', 'status');
    this.banner.hidden = true;
    this.graphProblems = html('ul', 'graph-problems');
    this.graphProblems.setAttribute('role', 'status');
    this.graphProblems.setAttribute('aria-label', words.problems);
    this.graphProblems.hidden = true;
    this.canvas = html('div', 'graph-canvas');
    this.canvas.setAttribute('tabindex', '0');
    this.canvas.setAttribute('role', 'application');
    this.canvas.setAttribute('aria-roledescription', words.graph);
    this.canvas.setAttribute('aria-label', words.graph);
    this.canvas.setAttribute('aria-description', words.help);
    // Pan and zoom move one composited layer (a CSS transform), not the SVG's contents: a 500-node drawing is
    // rasterized once and moved by the compositor, and rasterized again only when a zoom settles.
    this.layer = html('div', 'graph-layer');
    this.drawing = svg('svg', {}, 'graph-drawing');
    this.viewport = svg('g', {}, 'graph-viewport');
    this.drawing.append(this.viewport);
    this.layer.append(this.drawing);
    this.canvas.append(this.layer);
    this.minimap = svg('svg', { 'aria-hidden': 'true' }, 'graph-minimap');
    this.miniView = svg('rect', {}, 'graph-minimap-view');
    this.live = html('div', 'graph-sr-only');
    this.live.setAttribute('aria-live', 'polite');
    const stage = html('div', 'graph-stage');
    stage.append(this.canvas, this.minimap);
    this.root.append(this.toolbar, this.banner, this.graphProblems, stage, this.live);
    host.append(this.root);
    this.listen();
    this.updateChrome();
  }

  private button(text: string, label: string, action: () => void): HTMLButtonElement {
    const b = html('button', 'graph-button', text);
    b.type = 'button';
    b.title = label;
    b.setAttribute('aria-label', label);
    b.addEventListener('click', action);
    return b;
  }

  // ---- public API -----------------------------------------------------------------------------------------------

  /** Draws `model` (replacing the graph shown). Keeps the inner graph shown while the new model still has it. */
  setGraph(model: GraphModel): void {
    const first = this.model === null;
    this.model = model;
    this.layouts.clear();
    if (this.shown !== null && !model.subgraphs[this.shown]) this.shown = null;
    this.draw();
    if (first && !this.restored) this.fit();
  }

  /** The run's states by node id ({} clears them). */
  setStates(states: Record<string, NodeRunState>): void {
    this.states = states;
    for (const v of this.nodes.values()) this.paintNode(v);
  }

  /** Problems on nodes (replacing the earlier ones), marked on their boxes; whole-workflow ones listed above the graph. */
  setProblems(problems: GraphProblems): void {
    this.problems = problems;
    this.graphProblems.replaceChildren(...problems.graph.map((p) => html('li', undefined, `⚠ ${p}`)));
    this.graphProblems.hidden = problems.graph.length === 0;
    for (const v of this.nodes.values()) this.paintNode(v);
  }

  /** Selects a node (opening the inner graph that holds it) and brings it into view; null clears the selection. */
  select(nodeId: string | null): void {
    if (nodeId !== null && this.model) {
      const inner = this.graphHolding(nodeId);
      if (inner !== undefined && inner !== this.shown) this.openSubgraph(inner);
    }
    const before = this.selected;
    this.selected = nodeId;
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
    this.banner.textContent = text ?? '';
    this.banner.hidden = text === null;
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
    if (view.subgraph !== this.shown && (!this.model || this.model.subgraphs[view.subgraph ?? ''] || view.subgraph === null)) {
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
    this.fit();
    this.callbacks.onOpenSubgraph?.(path);
    // Back out of an inner graph: the instance box it came from takes the focus.
    if (from !== null && this.nodes.has(from)) this.active = from;
    this.roving();
  }

  /** Zooms and pans so the whole graph shown fits the canvas (at most 100%). */
  fit(): void {
    const { width, height } = this.canvasSize();
    const b = this.bounds;
    const zoom = clamp(Math.min((width - 40) / b.width, (height - 40) / b.height, 1), ZOOM_MIN, ZOOM_MAX);
    this.zoom = zoom;
    this.panX = (width - b.width * zoom) / 2 - b.x * zoom;
    this.panY = (height - b.height * zoom) / 2 - b.y * zoom;
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

  /** Removes the component and its listeners. */
  dispose(): void {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.sharpen);
    for (const c of this.cleanup) c();
    this.root.remove();
  }

  // ---- drawing --------------------------------------------------------------------------------------------------

  private graphShown(): WorkflowGraph | undefined {
    if (!this.model) return undefined;
    return this.shown === null ? this.model.root : this.model.subgraphs[this.shown];
  }

  /** The key of the graph holding `nodeId` (null: the workflow's), or undefined when no graph has it. */
  private graphHolding(nodeId: string): string | null | undefined {
    if (!this.model) return undefined;
    if (this.model.root.nodes.some((n) => n.id === nodeId)) return null;
    const parent = nodeId.includes(':') ? nodeId.slice(0, nodeId.lastIndexOf(':')) : undefined;
    return parent !== undefined && this.model.subgraphs[parent] ? parent : undefined;
  }

  private placedOf(graph: WorkflowGraph): Map<string, Placed> {
    let placed = this.layouts.get(graph);
    if (placed) return placed;
    placed = new Map();
    if (graph.positioned) {
      for (const n of graph.nodes) {
        const b = n.box ?? { x: 0, y: 0, width: NODE_WIDTH, height: TITLE_HEIGHT };
        placed.set(n.id, { node: n, x: b.x, y: b.y, width: b.width, height: Math.max(TITLE_HEIGHT, b.height) });
      }
    } else {
      const at = layoutWithDagre(graph);
      for (const n of graph.nodes) placed.set(n.id, { node: n, ...at.get(n.id)! });
    }
    this.layouts.set(graph, placed);
    return placed;
  }

  private draw(): void {
    const graph = this.graphShown();
    this.viewport.replaceChildren();
    this.nodes.clear();
    if (!graph) return;
    const placed = this.placedOf(graph);
    const groups = svg('g', {}, 'graph-groups');
    const edges = svg('g', {}, 'graph-edges');
    const labels = svg('g', {}, 'graph-edge-labels');
    const nodes = svg('g', {}, 'graph-nodes');
    nodes.setAttribute('role', 'list');
    for (const group of graph.groups) {
      const g = svg('g', {}, 'graph-group');
      g.append(svg('rect', { x: group.box.x, y: group.box.y, width: group.box.width, height: group.box.height, rx: 6 }));
      const t = svg('text', { x: group.box.x + 8, y: group.box.y + 20 }, 'graph-group-title');
      t.textContent = group.title;
      g.append(t);
      groups.append(g);
    }
    this.drawEdges(graph.edges, placed, edges, labels);
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (const p of placed.values()) {
      const v = this.drawNode(p);
      nodes.append(v.g);
      this.nodes.set(p.node.id, v);
      minX = Math.min(minX, p.x);
      minY = Math.min(minY, p.y);
      maxX = Math.max(maxX, p.x + p.width);
      maxY = Math.max(maxY, p.y + p.height);
    }
    for (const group of graph.groups) {
      minX = Math.min(minX, group.box.x);
      minY = Math.min(minY, group.box.y);
      maxX = Math.max(maxX, group.box.x + group.box.width);
      maxY = Math.max(maxY, group.box.y + group.box.height);
    }
    this.bounds = Number.isFinite(minX) ? { x: minX, y: minY, width: Math.max(1, maxX - minX), height: Math.max(1, maxY - minY) } : { x: 0, y: 0, width: 1, height: 1 };
    this.viewport.append(groups, edges, labels, nodes);
    const b = this.bounds;
    this.drawing.setAttribute('viewBox', `${b.x} ${b.y} ${b.width} ${b.height}`);
    this.drawing.setAttribute('width', String(b.width));
    this.drawing.setAttribute('height', String(b.height));
    if (this.active === null || !this.nodes.has(this.active)) this.active = graph.nodes[0]?.id ?? null;
    this.roving();
    this.drawMinimap(placed);
    this.updateChrome();
    this.schedule();
  }

  private drawEdges(list: readonly GraphEdge[], placed: Map<string, Placed>, edges: SVGGElement, labels: SVGGElement): void {
    // Where each edge enters its target: inputs spread down the box, sorted by the source's height (fewer crossings).
    const into = new Map<string, GraphEdge[]>();
    for (const e of list) (into.get(e.to) ?? into.set(e.to, []).get(e.to)!).push(e);
    const slot = new Map<GraphEdge, number>();
    const middle = (id: string) => {
      const p = placed.get(id);
      return p ? p.y + p.height / 2 : 0;
    };
    for (const [, es] of into) {
      const names = [...new Set([...es].sort((a, b) => middle(a.from) - middle(b.from)).map((e) => e.toInput))];
      es.forEach((e) => slot.set(e, names.indexOf(e.toInput)));
    }
    const d: string[] = [];
    for (const e of list) {
      const a = placed.get(e.from);
      const b = placed.get(e.to);
      if (!a || !b) continue;
      const x1 = a.x + a.width;
      const y1 = a.y + Math.min(a.height - 4, TITLE_HEIGHT + (e.fromOutput + 0.7) * 20);
      const x2 = b.x;
      const y2 = b.y + Math.min(b.height - 4, TITLE_HEIGHT + (slot.get(e)! + 0.7) * 20);
      const c = Math.max(40, Math.abs(x2 - x1) / 2);
      const path = `M${x1},${y1}C${x1 + c},${y1} ${x2 - c},${y2} ${x2},${y2}`;
      d.push(path);
      if (e.type) {
        const t = svg('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4 }, 'graph-edge-label');
        t.textContent = e.type;
        labels.append(t);
      }
    }
    // One path element for every edge: a 500-node graph's edges cost one element to draw and to move.
    edges.append(svg('path', { d: d.join('') }, 'graph-edge'));
  }

  private drawNode(p: Placed): NodeView {
    const n = p.node;
    const g = svg('g', { transform: `translate(${p.x},${p.y})`, tabindex: -1, role: 'button', 'data-id': n.id }, `graph-node kind-${n.kind} mode-${n.mode}${n.unknownClass ? ' unknown' : ''}`);
    const box = svg('rect', { width: p.width, height: p.height, rx: 4 }, 'graph-node-box');
    g.append(box);
    if (n.kind !== 'note') g.append(svg('line', { x1: 0, y1: TITLE_HEIGHT, x2: p.width, y2: TITLE_HEIGHT }, 'graph-node-rule'));
    const title = svg('text', { x: 8, y: 20 }, 'graph-node-title');
    const chars = Math.max(6, Math.floor((p.width - 40) / 8));
    const prefix = n.kind === 'subgraph' ? '▣ ' : '';
    title.textContent = prefix + (n.title.length > chars ? `${n.title.slice(0, chars - 1)}…` : n.title);
    g.append(title);
    const lines = svg('text', {}, 'graph-node-lines');
    nodeLines(n, p.width).forEach((l, i) => {
      const y = TITLE_HEIGHT + 16 + i * LINE;
      if (y > p.height - 2 && i > 0) return;
      const span = svg('tspan', { x: 8, y });
      span.textContent = l;
      lines.append(span);
    });
    g.append(lines);
    const mark = svg('text', { x: p.width - 8, y: 20, 'text-anchor': 'end' }, 'graph-node-mark');
    g.append(mark);
    const v: NodeView = { placed: p, g, box, mark };
    this.paintNode(v);
    return v;
  }

  /** Sets the classes, mark, progress bar, problem marker, preview and label of one node from the current state. */
  private paintNode(v: NodeView): void {
    const n = v.placed.node;
    const s = this.states[n.id];
    const problems = this.problems.byNode[n.id] ?? [];
    const cls = `graph-node kind-${n.kind} mode-${n.mode}${n.unknownClass ? ' unknown' : ''}${s ? ` state-${s.status}` : ''}${problems.length > 0 ? ' has-problem' : ''}${this.selected === n.id ? ' selected' : ''}`;
    if (v.g.getAttribute('class') !== cls) v.g.setAttribute('class', cls);
    const mark = s ? STATUS_MARK[s.status] : n.mode === 'muted' ? '⊘' : n.mode === 'bypassed' ? '↷' : '';
    if (v.mark.textContent !== mark) v.mark.textContent = mark;
    const fraction = s?.status === 'running' && s.progress ? s.progress.value / s.progress.max : s?.status === 'running' ? 0 : -1;
    if (fraction >= 0 && !v.bar) v.g.append((v.bar = svg('rect', { x: 0, y: v.placed.height - 4, height: 4, width: 0 }, 'graph-node-bar')));
    if (v.bar) {
      v.bar.setAttribute('width', String((clampFraction(fraction) ?? 0) * v.placed.width));
      v.bar.setAttribute('visibility', fraction < 0 ? 'hidden' : 'visible');
    }
    if (problems.length > 0 && !v.problem) {
      v.problem = svg('g', { transform: `translate(${v.placed.width - 12},-10)` }, 'graph-node-problem');
      v.problem.append(svg('circle', { r: 9 }), Object.assign(svg('text', { 'text-anchor': 'middle', y: 4 }), { textContent: '!' }));
      v.g.append(v.problem);
    }
    v.problem?.setAttribute('visibility', problems.length > 0 ? 'visible' : 'hidden');
    this.paintExtra(v, s);
    v.g.setAttribute('aria-label', this.describe(v));
  }

  /** Below the box: the failed node's message, the outputs' names, the latest preview (swapped once decoded). */
  private paintExtra(v: NodeView, s: NodeRunState | undefined): void {
    const key = s ? `${s.error ?? ''}|${s.outputs.map((o) => o.id).join(',')}|${s.preview?.seq ?? ''}` : '';
    if ((v.extra?.dataset.key ?? '') === key) return;
    if (!v.extra) v.g.append((v.extra = svg('g', {}, 'graph-node-extra')));
    const extra = v.extra;
    extra.dataset.key = key;
    if (!s) {
      extra.replaceChildren();
      return;
    }
    const parts: SVGElement[] = [];
    let y = v.placed.height + 14;
    const chars = Math.max(8, Math.floor(v.placed.width / 6.6));
    if (s.error) {
      const t = svg('text', { x: 0, y }, 'graph-node-error');
      t.textContent = `✗ ${s.error.length > chars ? `${s.error.slice(0, chars - 1)}…` : s.error}`;
      parts.push(t);
      y += LINE;
    }
    if (s.outputs.length > 0) {
      const t = svg('text', { x: 0, y }, 'graph-node-outputs');
      const names = s.outputs.map((o) => o.name).join(', ');
      t.textContent = `⇣ ${names.length > chars ? `${names.slice(0, chars - 1)}…` : names}`;
      parts.push(t);
      y += LINE;
    }
    const old = extra.querySelector('image');
    if (s.preview) {
      const url = `data:${s.preview.contentType};base64,${s.preview.dataBase64}`;
      const img = new Image();
      img.src = url;
      const top = y - 10;
      // Double buffer: the visible frame changes only once the new one decoded (no flicker, no empty frame).
      img
        .decode()
        .then(() => {
          if (extra.dataset.key !== key) return;
          const image = svg('image', { x: 0, y: top, width: v.placed.width, height: Math.round((v.placed.width * img.naturalHeight) / Math.max(1, img.naturalWidth)) }, 'graph-node-preview');
          image.setAttribute('href', url);
          extra.querySelector('image')?.remove();
          extra.append(image);
        })
        .catch(() => undefined);
    }
    extra.replaceChildren(...parts, ...(old && s.preview ? [old] : []));
  }

  private describe(v: NodeView): string {
    const n = v.placed.node;
    const s = this.states[n.id];
    const w = this.words;
    const bits = [`${n.title}${n.classType && n.classType !== n.title ? ` (${n.classType})` : ''}, ${n.id}`];
    if (n.mode !== 'normal') bits.push(w[n.mode]);
    if (n.unknownClass) bits.push(w.unknownClass);
    if (s) bits.push(s.status === 'running' && s.progress ? `${w.running} ${s.progress.value}/${s.progress.max}` : w[s.status]);
    if (s?.error) bits.push(s.error);
    const problems = this.problems.byNode[n.id] ?? [];
    if (problems.length > 0) bits.push(`${problems.length} ${w.problems}: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
    return bits.join(', ');
  }

  private drawMinimap(placed: Map<string, Placed>): void {
    const show = placed.size > MINIMAP_THRESHOLD;
    this.minimap.style.display = show ? '' : 'none';
    this.minimap.replaceChildren();
    if (!show) return;
    const b = this.bounds;
    this.minimap.setAttribute('viewBox', `${b.x} ${b.y} ${b.width} ${b.height}`);
    const d: string[] = [];
    for (const p of placed.values()) d.push(`M${p.x},${p.y}h${p.width}v${p.height}h${-p.width}z`);
    this.minimap.append(svg('path', { d: d.join('') }, 'graph-minimap-nodes'), this.miniView);
  }

  private updateChrome(): void {
    this.upButton.hidden = this.shown === null;
    const g = this.graphShown();
    this.crumb.textContent = this.shown !== null && g ? g.title : '';
  }

  // ---- view -----------------------------------------------------------------------------------------------------

  private canvasSize(): { width: number; height: number } {
    const r = this.canvas.getBoundingClientRect();
    return { width: Math.max(100, r.width), height: Math.max(100, r.height) };
  }

  /** Applies the pan and zoom at the next frame (many wheel events in a frame cost one transform). */
  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const b = this.bounds;
      this.layer.style.transform = `translate(${this.panX + b.x * this.zoom}px,${this.panY + b.y * this.zoom}px) scale(${this.zoom})`;
      if (this.zoom !== this.drawnZoom) this.resharpen();
      this.canvas.classList.toggle('labels-hidden', this.zoom < LABEL_ZOOM);
      if (this.minimap.style.display !== 'none') {
        const { width, height } = this.canvasSize();
        this.miniView.setAttribute('x', String(-this.panX / this.zoom));
        this.miniView.setAttribute('y', String(-this.panY / this.zoom));
        this.miniView.setAttribute('width', String(width / this.zoom));
        this.miniView.setAttribute('height', String(height / this.zoom));
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
      this.layer.style.willChange = 'auto';
      requestAnimationFrame(() => {
        this.layer.style.willChange = 'transform';
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
    this.live.textContent = text;
  }

  /** The nearest node from `from` in direction (dx, dy): distance along it plus twice the distance across. */
  private neighbour(from: Placed, dx: number, dy: number): string | undefined {
    const cx = from.x + from.width / 2;
    const cy = from.y + from.height / 2;
    let best: string | undefined;
    let score = Infinity;
    for (const [id, v] of this.nodes) {
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
    const on = <K extends keyof HTMLElementEventMap>(target: EventTarget, type: K | string, fn: (e: never) => void, opts?: AddEventListenerOptions) => {
      target.addEventListener(type, fn as EventListener, opts);
      this.cleanup.push(() => target.removeEventListener(type, fn as EventListener, opts));
    };
    on(
      this.canvas,
      'wheel',
      (e: WheelEvent) => {
        e.preventDefault();
        const r = this.canvas.getBoundingClientRect();
        if (e.ctrlKey || !e.shiftKey) this.zoomAt(Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), e.clientX - r.left, e.clientY - r.top);
        else this.panBy(-e.deltaY, 0);
      },
      { passive: false },
    );
    let drag: { x: number; y: number; moved: boolean; id: number } | undefined;
    on(this.canvas, 'pointerdown', (e: PointerEvent) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, moved: false, id: e.pointerId };
    });
    on(this.canvas, 'pointermove', (e: PointerEvent) => {
      if (!drag || drag.id !== e.pointerId) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      if (!drag.moved) this.canvas.setPointerCapture(e.pointerId);
      drag.moved = true;
      drag.x = e.clientX;
      drag.y = e.clientY;
      this.panBy(dx, dy);
    });
    on(this.canvas, 'pointerup', (e: PointerEvent) => {
      const wasDrag = drag?.moved;
      drag = undefined;
      if (wasDrag) return;
      const v = this.nodeOf(e.target);
      if (v) this.choose(v);
    });
    on(this.canvas, 'dblclick', (e: MouseEvent) => {
      const v = this.nodeOf(e.target);
      if (v?.placed.node.subgraph) this.openSubgraph(v.placed.node.subgraph);
    });
    on(this.canvas, 'keydown', (e: KeyboardEvent) => this.key(e));
    on(this.minimap, 'pointerdown', (e: PointerEvent) => {
      const r = this.minimap.getBoundingClientRect();
      const b = this.bounds;
      const scale = Math.max(b.width / r.width, b.height / r.height);
      const gx = b.x + (e.clientX - r.left) * scale - (r.width * scale - b.width) / 2;
      const gy = b.y + (e.clientY - r.top) * scale - (r.height * scale - b.height) / 2;
      const { width, height } = this.canvasSize();
      this.panX = width / 2 - gx * this.zoom;
      this.panY = height / 2 - gy * this.zoom;
      this.schedule();
    });
  }

  private key(e: KeyboardEvent): void {
    const v = this.nodeOf(e.target);
    const dirs: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const dir = dirs[e.key];
    let handled = true;
    if (dir && v) {
      const next = this.neighbour(v.placed, dir[0], dir[1]);
      if (next) {
        this.active = next;
        this.roving();
        const nv = this.nodes.get(next)!;
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
      this.openSubgraph(this.graphHolding(back) ?? null);
      this.active = back;
      this.roving();
      this.nodes.get(back)?.g.focus();
    } else if (e.key === 'Escape') {
      this.select(null);
      this.paintAll();
      this.canvas.focus();
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
