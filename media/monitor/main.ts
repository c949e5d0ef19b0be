/**
 * The job monitor webview: renders the view model (src/core/views/monitor/viewModel.ts) into the page the host
 * builds (src/extension/monitor/): `#monitor-state` holds the first state as JSON, `#monitor` is filled here.
 *
 * Rules it keeps:
 * - Safe: every host message goes through `parseHostMessage` (an invalid one is dropped); data is only ever set as
 *   text (`textContent`, attributes), never as HTML; nothing reaches the network (images are `data:` URLs or the
 *   host's webview resource URIs).
 * - No flicker: the page is built once and updated in place (element identities kept; outputs keyed by id); a preview
 *   frame is decoded off-screen and the visible `<img>` swapped only once it decoded (double buffer).
 * - Accessible: every control is a button with a label, progress is announced through an `aria-live="polite"` region
 *   on status changes and every 10%.
 * - The Graph section embeds the workflow graph's component (media/graph/render.ts, its stylesheet linked by the
 *   host): made at the first graph, drawn once per model, its nodes' states set on every update; choosing a node
 *   (click, Enter) is the monitor's Go to node for that node, when the graph was read from the workflow's file.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import { GraphView } from '../graph/render';
import type { GraphModel } from '../../src/core/graph/types';
import { parseHostMessage, parseMonitorState, PROTOCOL_VERSION, type MonitorPreview, type MonitorState, type WebviewMessage } from '../../src/core/views/monitor/protocol';
import {
  announcement,
  initialView,
  persistedState,
  present,
  previewDecoded,
  previewFailed,
  previewUrl,
  reduce,
  type MonitorPresentation,
  type MonitorView,
  type OutputCard,
} from '../../src/core/views/monitor/viewModel';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

// ---- small DOM helpers (text only, never HTML) --------------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function setText(e: HTMLElement, text: string | null): void {
  const t = text ?? '';
  if (e.textContent !== t) e.textContent = t;
}

function show(e: HTMLElement, visible: boolean): void {
  if (e.hidden === visible) e.hidden = !visible;
}

function button(label: string, icon: string, message: WebviewMessage, secondary = true): HTMLElement {
  const b = el('vscode-button');
  b.textContent = label;
  b.setAttribute('icon', icon);
  if (secondary) b.setAttribute('secondary', '');
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) vscode.postMessage(message);
  });
  return b;
}

function enable(b: HTMLElement, enabled: boolean): void {
  if (enabled) b.removeAttribute('disabled');
  else if (!b.hasAttribute('disabled')) b.setAttribute('disabled', '');
}

function section(className: string, heading: string): { root: HTMLElement; title: HTMLElement } {
  const root = el('section', `section ${className}`);
  const title = el('h2', 'section-title', heading);
  const id = `h-${className}`;
  title.id = id;
  root.setAttribute('aria-labelledby', id);
  root.append(title);
  return { root, title };
}

// ---- the page, built once -----------------------------------------------------------------------------------------

/** The elements the page updates in place. */
interface Page {
  name: HTMLElement;
  badge: HTMLElement;
  jobId: HTMLElement;
  connection: HTMLElement;
  times: { label: HTMLElement; value: HTMLElement }[];
  retrying: HTMLElement;
  actions: { cancel: HTMLElement; rerun: HTMLElement; openWorkflow: HTMLElement; revealOutputs: HTMLElement };
  progress: { root: HTMLElement; bar: HTMLElement & { value?: number; indeterminate: boolean }; percent: HTMLElement; details: HTMLElement[]; queue: HTMLElement };
  preview: { root: HTMLElement; img: HTMLImageElement; from: HTMLElement; placeholder: HTMLElement };
  error: { root: HTMLElement; code: HTMLElement; message: HTMLElement; node: HTMLElement; goToNode: HTMLElement; traceback: HTMLElement & { open: boolean }; tracebackText: HTMLElement };
  outputs: { root: HTMLElement; list: HTMLElement; empty: HTMLElement; downloadAll: HTMLElement; cards: Map<string, CardElements> };
  logs: { root: HTMLElement; pre: HTMLElement };
  metrics: { root: HTMLElement; list: HTMLElement };
  graph: { root: HTMLElement; host: HTMLElement; text: HTMLElement; view: GraphView | null; model: GraphModel | null; canReveal: boolean };
  live: HTMLElement;
}

interface CardElements {
  li: HTMLElement;
  open: HTMLButtonElement;
  img: HTMLImageElement;
  icon: HTMLElement;
  name: HTMLElement;
  meta: HTMLElement;
  save: HTMLElement;
  workflow: HTMLElement;
}

function buildPage(root: HTMLElement, state: MonitorState): Page {
  const s = state.strings;

  // Header: name, status, id (copy), connection, times, actions.
  const header = el('header', 'header');
  const titleRow = el('div', 'title-row');
  const name = el('h1', 'name');
  const badge = el('vscode-badge', 'status');
  badge.setAttribute('role', 'status');
  titleRow.append(name, badge);
  const idRow = el('div', 'id-row');
  const jobId = el('code', 'job-id');
  const copy = el('vscode-button', 'copy');
  copy.setAttribute('icon', 'copy');
  copy.setAttribute('secondary', '');
  copy.setAttribute('aria-label', s.copyJobId);
  copy.setAttribute('title', s.copyJobId);
  copy.textContent = s.copyJobId;
  copy.addEventListener('click', () => vscode.postMessage({ type: 'copyJobId' }));
  const connLabel = el('span', 'label', `${s.connection}:`);
  const connection = el('span', 'connection');
  idRow.append(jobId, copy, connLabel, connection);
  const timesList = el('dl', 'times');
  const times = [s.created, s.started, s.finished].map((label) => {
    const dt = el('dt', undefined, label);
    const dd = el('dd');
    timesList.append(dt, dd);
    return { label: dt, value: dd };
  });
  const retrying = el('p', 'retrying');
  retrying.setAttribute('role', 'status');
  const actionBar = el('div', 'actions');
  actionBar.setAttribute('role', 'toolbar');
  const actions = {
    cancel: button(s.cancel, 'debug-stop', { type: 'cancel' }),
    rerun: button(s.rerun, 'refresh', { type: 'rerun' }),
    openWorkflow: button(s.openWorkflow, 'go-to-file', { type: 'openWorkflow' }),
    revealOutputs: button(s.revealOutputs, 'folder-opened', { type: 'revealOutputs' }),
  };
  actionBar.append(actions.cancel, actions.rerun, actions.openWorkflow, actions.revealOutputs);
  header.append(titleRow, idRow, timesList, retrying, actionBar);

  // Progress.
  const prog = section('progress', s.progress);
  const barRow = el('div', 'bar-row');
  const bar = el('vscode-progress-bar') as Page['progress']['bar'];
  bar.setAttribute('aria-label', s.progress);
  const percent = el('span', 'percent');
  barRow.append(bar, percent);
  const detailList = el('ul', 'details');
  const details = [0, 1, 2, 3].map(() => {
    const li = el('li');
    detailList.append(li);
    return li;
  });
  const queue = el('p', 'queue');
  prog.root.append(barRow, queue, detailList);

  // Preview: the visible <img> only ever gets a frame that already decoded.
  const pv = section('preview', s.preview);
  const frame = el('div', 'frame');
  const img = el('img', 'preview-img');
  img.alt = s.preview;
  img.hidden = true;
  const placeholder = el('p', 'placeholder');
  frame.append(img, placeholder);
  const from = el('p', 'from');
  pv.root.append(frame, from);

  // Error.
  const er = section('error', s.error);
  const code = el('p', 'error-code');
  const message = el('p', 'error-message');
  const nodeRow = el('div', 'error-node');
  const node = el('span');
  const goToNode = button(s.goToNode, 'go-to-file', { type: 'goToNode' });
  nodeRow.append(node, goToNode);
  const traceback = el('vscode-collapsible') as Page['error']['traceback'];
  traceback.setAttribute('heading', s.traceback);
  const tracebackText = el('pre', 'traceback');
  tracebackText.tabIndex = 0;
  traceback.append(tracebackText);
  er.root.append(code, message, nodeRow, traceback);

  // Outputs.
  const out = section('outputs', s.outputs);
  const downloadAll = button(s.downloadAll, 'cloud-download', { type: 'downloadAll' });
  out.title.after(downloadAll);
  const list = el('ul', 'gallery');
  const empty = el('p', 'placeholder');
  out.root.append(list, empty);

  // Logs and metrics.
  const lg = section('logs', s.logs);
  const pre = el('pre', 'log');
  pre.tabIndex = 0; // scrollable by keyboard
  pre.setAttribute('aria-labelledby', 'h-logs');
  lg.root.append(pre);
  const mt = section('metrics', s.metrics);
  const metricList = el('dl', 'metric-list');
  mt.root.append(metricList);

  // Graph: the component is made at the first graph (no layout work for a page that never gets one).
  const gr = section('graph', s.graph);
  const graphText = el('p', 'placeholder');
  const graphHost = el('div', 'graph-host');
  graphHost.hidden = true;
  gr.root.append(graphText, graphHost);

  const live = el('div', 'sr-only');
  live.setAttribute('aria-live', 'polite');
  live.setAttribute('role', 'status');

  // The graph below the outputs: the preview and the result stay where a person looks first.
  root.replaceChildren(header, prog.root, er.root, pv.root, out.root, gr.root, lg.root, mt.root, live);
  return {
    name,
    badge,
    jobId,
    connection,
    times,
    retrying,
    actions,
    progress: { root: prog.root, bar, percent, details, queue },
    preview: { root: pv.root, img, from, placeholder },
    error: { root: er.root, code, message, node, goToNode, traceback, tracebackText },
    outputs: { root: out.root, list, empty, downloadAll, cards: new Map() },
    logs: { root: lg.root, pre },
    metrics: { root: mt.root, list: metricList },
    graph: { root: gr.root, host: graphHost, text: graphText, view: null, model: null, canReveal: false },
    live,
  };
}

// ---- updates in place ---------------------------------------------------------------------------------------------

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateFormat.format(d);
}

function render(page: Page, p: MonitorPresentation, strings: MonitorState['strings']): void {
  const h = p.header;
  setText(page.name, h.name);
  setText(page.badge, h.status);
  page.badge.dataset.kind = h.badge;
  setText(page.jobId, h.jobId);
  setText(page.connection, h.connection);
  h.times.forEach((t, i) => {
    const row = page.times[i];
    if (!row) return;
    setText(row.value, t.text);
    row.value.classList.toggle('not-yet', t.iso === null);
    if (t.iso !== null) row.value.title = t.iso;
  });
  setText(page.retrying, h.retrying);
  show(page.retrying, h.retrying !== null);
  enable(page.actions.cancel, p.actions.cancel);
  enable(page.actions.rerun, p.actions.rerun);
  enable(page.actions.openWorkflow, p.actions.openWorkflow);
  enable(page.actions.revealOutputs, p.actions.revealOutputs);

  const pr = p.progress;
  show(page.progress.root, pr.visible);
  if (pr.value === null) {
    page.progress.bar.indeterminate = true;
  } else {
    page.progress.bar.indeterminate = false;
    const percent = Math.round(pr.value * 1000) / 10; // the bar's max is 100 (its aria-valuenow is rounded)
    if (page.progress.bar.value !== percent) page.progress.bar.value = percent;
  }
  setText(page.progress.percent, pr.percentText);
  if (pr.percentText !== null) page.progress.bar.setAttribute('aria-valuetext', pr.percentText);
  [pr.nodes, pr.node, pr.step, pr.message].forEach((text, i) => {
    const li = page.progress.details[i];
    if (!li) return;
    setText(li, text);
    show(li, text !== null && text !== '');
  });
  setText(page.progress.queue, pr.queue);
  show(page.progress.queue, pr.queue !== null);

  show(page.preview.root, p.preview.visible);
  setText(page.preview.from, p.preview.from);
  setText(page.preview.placeholder, p.preview.placeholder);
  show(page.preview.placeholder, p.preview.placeholder !== null);
  // The shown frame's src is set only by the decoder (swap after decode); a frame dropped by a snapshot of another
  // job (a re-run) clears it.
  if (p.preview.src === null && !page.preview.img.hidden) {
    page.preview.img.hidden = true;
    page.preview.img.removeAttribute('src');
  }

  const e = p.error;
  show(page.error.root, e !== null);
  if (e) {
    setText(page.error.code, e.code);
    show(page.error.code, e.code !== null);
    setText(page.error.message, e.message);
    show(page.error.message, e.message !== null);
    setText(page.error.node, e.node);
    show(page.error.node.parentElement as HTMLElement, e.node !== null);
    enable(page.error.goToNode, p.actions.goToNode);
    setText(page.error.tracebackText, e.traceback);
    show(page.error.traceback, e.traceback !== null && e.traceback !== '');
  }

  renderOutputs(page, p.outputs.cards, strings);
  setText(page.outputs.empty, p.outputs.empty);
  show(page.outputs.empty, p.outputs.empty !== null);
  enable(page.outputs.downloadAll, p.actions.downloadAll);

  show(page.logs.root, p.logs !== null);
  if (p.logs !== null) {
    const pre = page.logs.pre;
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    const text = p.logs.join('\n');
    if (pre.textContent !== text) {
      pre.textContent = text;
      if (atBottom) pre.scrollTop = pre.scrollHeight; // follow the tail unless the reader scrolled up
    }
  }

  show(page.metrics.root, p.metrics.length > 0);
  renderMetrics(page.metrics.list, p.metrics);

  renderGraph(page.graph, p.graph);
}

/** The Graph section: the line (loading, or why no graph), else the graph drawn once per model with its states. */
function renderGraph(g: Page['graph'], p: MonitorPresentation['graph']): void {
  setText(g.text, p.text);
  show(g.text, p.text !== null);
  show(g.host, p.model !== null);
  g.canReveal = p.canReveal;
  if (p.model === null) return;
  if (!g.view) {
    g.view = new GraphView(g.host, {
      onReveal: (nodeId) => {
        if (g.canReveal) vscode.postMessage({ type: 'goToNode', nodeId });
      },
    });
  }
  // Drawn once per model (the host posts it once, and again after a reload); states change classes only.
  if (g.model !== p.model) {
    g.model = p.model;
    g.view.setGraph(p.model);
  }
  g.view.setStates(p.states);
}

function renderOutputs(page: Page, cards: OutputCard[], strings: MonitorState['strings']): void {
  const known = page.outputs.cards;
  const ids = new Set(cards.map((c) => c.id));
  for (const [id, c] of known) {
    if (!ids.has(id)) {
      c.li.remove();
      known.delete(id);
    }
  }
  let previous: Element | null = null;
  for (const card of cards) {
    let c = known.get(card.id);
    if (!c) {
      c = buildCard(card.id, strings);
      known.set(card.id, c);
    }
    updateCard(c, card);
    // Keep the order of the list without moving elements that are already in place (no flicker).
    const expected: Element | null = previous ? previous.nextElementSibling : page.outputs.list.firstElementChild;
    if (expected !== c.li) page.outputs.list.insertBefore(c.li, expected);
    previous = c.li;
  }
}

function buildCard(outputId: string, strings: MonitorState['strings']): CardElements {
  const li = el('li', 'card');
  const open = el('button', 'card-open');
  open.type = 'button';
  const img = el('img', 'thumb');
  img.alt = '';
  img.loading = 'lazy';
  const icon = el('vscode-icon', 'file-icon');
  icon.setAttribute('name', 'file');
  icon.setAttribute('size', '32');
  const name = el('span', 'card-name');
  const meta = el('span', 'card-meta');
  open.append(img, icon, name, meta);
  open.addEventListener('click', () => vscode.postMessage({ type: 'openOutput', outputId }));
  const save = button(strings.save, 'save', { type: 'saveOutput', outputId });
  // A PNG may carry the workflow that made it: "Open Workflow from Image" (shown for PNG outputs only).
  const workflow = button(strings.imageWorkflow, 'json', { type: 'openImageWorkflow', outputId });
  const actions = el('div', 'card-actions');
  actions.append(save, workflow);
  li.append(open, actions);
  return { li, open, img, icon, name, meta, save, workflow };
}

function updateCard(c: CardElements, card: OutputCard): void {
  c.open.setAttribute('aria-label', `${card.openLabel}${card.typeLabel ? `, ${card.typeLabel}` : ''}${card.sizeLabel ? `, ${card.sizeLabel}` : ''}`);
  c.open.title = card.name;
  c.save.setAttribute('aria-label', card.saveLabel);
  c.workflow.setAttribute('aria-label', card.workflowLabel);
  show(c.workflow, card.pngWorkflow);
  setText(c.name, card.name);
  setText(c.meta, [card.typeLabel, card.sizeLabel].filter((x) => x !== '').join(' · '));
  const image = card.kind === 'image' && card.thumbnail !== null && isLocalImageUrl(card.thumbnail);
  if (image && c.img.getAttribute('src') !== card.thumbnail) c.img.src = card.thumbnail as string;
  show(c.img, image);
  show(c.icon, !image);
  c.li.classList.toggle('file', !image);
}

/** Images come only from `data:` URLs or the host's webview resource URIs (never a remote origin; the CSP agrees). */
function isLocalImageUrl(url: string): boolean {
  return /^data:image\//.test(url) || /^https:\/\/[^/]*\.vscode-(resource|cdn)\.net\//.test(url) || /^vscode-(webview-)?resource:/.test(url) || /^blob:/.test(url);
}

function renderMetrics(list: HTMLElement, metrics: MonitorPresentation['metrics']): void {
  const rows = Array.from(list.children);
  const need = metrics.length * 2;
  while (rows.length > need) rows.pop()?.remove();
  metrics.forEach((m, i) => {
    let dt = list.children[i * 2] as HTMLElement | undefined;
    let dd = list.children[i * 2 + 1] as HTMLElement | undefined;
    if (!dt || !dd) {
      dt = el('dt');
      dd = el('dd');
      list.append(dt, dd);
    }
    setText(dt, m.name);
    setText(dd, m.text);
    dd.classList.toggle('not-yet', m.notYet);
  });
}

// ---- the preview's double buffer ------------------------------------------------------------------------------------

let decoding: MonitorPreview | null = null;

/** Decodes the pending frame off-screen; once decoded, swaps the visible image and tells the view model. */
function decodePending(page: Page): void {
  const pending = view.preview.pending;
  if (!pending || decoding === pending) return;
  const seq = pending.seq;
  decoding = pending;
  const url = previewUrl(pending);
  const buffer = new Image();
  buffer.src = url;
  buffer.decode().then(
    () => {
      if (decoding === pending) decoding = null;
      if (view.preview.pending !== pending) return; // overtaken by a newer frame, or another job
      const next = previewDecoded(view, seq);
      page.preview.img.src = url; // already decoded: the swap paints at once
      page.preview.img.hidden = false;
      update(next);
    },
    () => {
      if (decoding === pending) decoding = null;
      if (view.preview.pending === pending) update(previewFailed(view, seq));
    },
  );
}

// ---- start ------------------------------------------------------------------------------------------------------------

function readEmbeddedState(): MonitorState | undefined {
  const script = document.getElementById('monitor-state');
  if (script?.textContent) {
    try {
      const parsed = parseMonitorState(JSON.parse(script.textContent));
      if (parsed) return parsed;
    } catch {
      // fall through to the state kept by setState
    }
  }
  return parseMonitorState(vscode.getState());
}

const root = document.getElementById('monitor');
let view: MonitorView;
let page: Page | undefined;
let persisted = '';

function update(next: MonitorView): void {
  const before = view;
  view = next;
  if (page) paint(page, before);
}

/** Copies the view into the page; announces what changed since `before` (everything when undefined). */
function paint(p: Page, before: MonitorView | undefined): void {
  render(p, present(view, formatTime), view.state.strings);
  const said = announcement(before, view);
  if (said !== null) setText(p.live, said);
  const keep = persistedState(view);
  const key = JSON.stringify(keep);
  if (key !== persisted) {
    persisted = key;
    vscode.setState(keep);
  }
  decodePending(p);
}

/** Builds the page for a first state (the embedded one, else the first snapshot) and paints it. */
function start(state: MonitorState): void {
  if (!root) return;
  view = initialView(state);
  page = buildPage(root, state);
  paint(page, undefined);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const message = parseHostMessage(event.data);
  if (!message) return; // not ours, or malformed: dropped
  if (!page) {
    if (message.type === 'snapshot') start(message.state);
    return;
  }
  if (message.type === 'snapshot' && message.state.job.jobId !== view.state.job.jobId) {
    // Another job in this panel (a re-run): the labels stay, the gallery starts over.
    page.outputs.cards.forEach((c) => c.li.remove());
    page.outputs.cards.clear();
  }
  update(reduce(view, message));
});

const first = readEmbeddedState();
if (first) start(first);
vscode.postMessage({ type: 'ready', version: PROTOCOL_VERSION });
