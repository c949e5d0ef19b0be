/**
 * The chrome of the graph component, built once: a toolbar (back out of an inner graph, the inner graph's title,
 * zoom out, zoom in, fit), a banner, the whole-workflow problems, the canvas (one tab stop, with the composited layer
 * that holds the SVG drawing), the minimap, and a polite live region for screen readers.
 */
import { html, svg } from './dom';
import type { GraphWords } from './words';

/** The elements of the component that later calls update. */
export interface GraphChrome {
  root: HTMLElement;
  toolbar: HTMLElement;
  crumb: HTMLElement;
  upButton: HTMLButtonElement;
  banner: HTMLElement;
  graphProblems: HTMLElement;
  canvas: HTMLElement;
  layer: HTMLElement;
  drawing: SVGSVGElement;
  viewport: SVGGElement;
  minimap: SVGSVGElement;
  miniView: SVGRectElement;
  live: HTMLElement;
}

/** What the toolbar's buttons do. */
export interface ChromeActions {
  up(): void;
  zoomOut(): void;
  zoomIn(): void;
  fit(): void;
}

/** Builds the chrome into `host` with `words` (labels) and `actions` (what the toolbar's buttons do). */
export function buildChrome(host: HTMLElement, words: GraphWords, actions: ChromeActions): GraphChrome {
  const root = html('div', 'graph-view');
  const toolbar = html('div', 'graph-toolbar');
  toolbar.setAttribute('role', 'toolbar');
  toolbar.setAttribute('aria-label', words.graph);
  const upButton = button('⤴', words.up, actions.up);
  const crumb = html('span', 'graph-crumb');
  toolbar.append(
    upButton,
    crumb,
    html('span', 'graph-spacer'),
    button('−', words.zoomOut, actions.zoomOut),
    button('+', words.zoomIn, actions.zoomIn),
    button('⤢', words.fit, actions.fit),
  );
  const banner = html('div', 'graph-banner');
  banner.setAttribute('role', 'status');
  banner.hidden = true;
  const graphProblems = html('ul', 'graph-problems');
  graphProblems.setAttribute('role', 'status');
  graphProblems.setAttribute('aria-label', words.problems);
  graphProblems.hidden = true;
  const canvas = html('div', 'graph-canvas');
  canvas.setAttribute('tabindex', '0');
  canvas.setAttribute('role', 'application');
  canvas.setAttribute('aria-roledescription', words.graph);
  canvas.setAttribute('aria-label', words.graph);
  canvas.setAttribute('aria-description', words.help);
  // Pan and zoom move one composited layer (a CSS transform), not the SVG's contents: a 500-node drawing is
  // rasterized once and moved by the compositor, and rasterized again only when a zoom settles.
  const layer = html('div', 'graph-layer');
  const drawing = svg('svg', {}, 'graph-drawing');
  const viewport = svg('g', {}, 'graph-viewport');
  drawing.append(viewport);
  layer.append(drawing);
  canvas.append(layer);
  const minimap = svg('svg', { 'aria-hidden': 'true' }, 'graph-minimap');
  const miniView = svg('rect', {}, 'graph-minimap-view');
  const live = html('div', 'graph-sr-only');
  live.setAttribute('aria-live', 'polite');
  const stage = html('div', 'graph-stage');
  stage.append(canvas, minimap);
  root.append(toolbar, banner, graphProblems, stage, live);
  host.append(root);
  return {
    root,
    toolbar,
    crumb,
    upButton,
    banner,
    graphProblems,
    canvas,
    layer,
    drawing,
    viewport,
    minimap,
    miniView,
    live,
  };
}

/** A toolbar button showing `text`, labelled `label` (title and accessible name), doing `action` on click. */
function button(text: string, label: string, action: () => void): HTMLButtonElement {
  const b = html('button', 'graph-button', text);
  b.type = 'button';
  b.title = label;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', action);
  return b;
}
