/**
 * The outward shapes of the graph component: its viewport (what a page saves), its callbacks (what it reports) and
 * its words (translated by the host where it has them), with the English defaults.
 */

/** What the view reports: pan (px) and zoom, and the inner graph shown (null: the workflow's). */
export interface GraphViewport {
  zoom: number;
  panX: number;
  panY: number;
  subgraph: string | null;
}

/** The callbacks of a graph component (`GraphView`); each is optional. */
export interface GraphViewCallbacks {
  /** A node was chosen (click, Enter): the host selects it in the JSON. */
  onReveal?(nodeId: string): void;
  /** The inner graph shown changed (null: back to the workflow's). */
  onOpenSubgraph?(path: string | null): void;
  /** The viewport changed (debounced to once per frame): what the page saves with `setState`. */
  onViewChange?(view: GraphViewport): void;
}

/** The words of the component (translated by the host where it has them). */
export interface GraphWords {
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
export const GRAPH_WORDS: GraphWords = {
  graph: 'Workflow graph',
  zoomIn: 'Zoom in',
  zoomOut: 'Zoom out',
  fit: 'Fit All',
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
  help: 'Arrow keys pan, plus and minus zoom, 0 fits the whole graph. Tab enters the nodes: arrow keys move between them, Enter reveals one in the JSON, Space opens a subgraph, Backspace goes back, Escape clears the selection.',
};
