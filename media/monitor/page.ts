/**
 * The monitor page, built once for a first state: the header (name, status, id, connection, times, actions), the
 * progress, the preview, the error, the outputs, the graph, the logs and the metrics, each an element kept to be
 * updated in place later (./render.ts). Data is never set as HTML.
 */
import type { GraphModel } from '../../src/core/graph/types';
import type { MonitorState } from '../../src/core/views/monitor/protocol';
import type { GraphView } from '../graph/render';
import { button, el, section } from './dom';
import { vscode } from './vscodeApi';

// ---- the page, built once -----------------------------------------------------------------------------------------

/** The elements the page updates in place. */
export interface Page {
  name: HTMLElement;
  badge: HTMLElement;
  jobId: HTMLElement;
  connection: HTMLElement;
  times: { label: HTMLElement; value: HTMLElement }[];
  retrying: HTMLElement;
  actions: { cancel: HTMLElement; rerun: HTMLElement; openWorkflow: HTMLElement; revealOutputs: HTMLElement };
  progress: {
    root: HTMLElement;
    bar: HTMLElement & { value?: number; indeterminate: boolean };
    percent: HTMLElement;
    details: HTMLElement[];
    queue: HTMLElement;
  };
  preview: { root: HTMLElement; img: HTMLImageElement; from: HTMLElement; placeholder: HTMLElement };
  error: {
    root: HTMLElement;
    code: HTMLElement;
    message: HTMLElement;
    node: HTMLElement;
    goToNode: HTMLElement;
    traceback: HTMLElement & { open: boolean };
    tracebackText: HTMLElement;
  };
  outputs: {
    root: HTMLElement;
    list: HTMLElement;
    empty: HTMLElement;
    downloadAll: HTMLElement;
    cards: Map<string, CardElements>;
  };
  logs: { root: HTMLElement; pre: HTMLElement };
  metrics: { root: HTMLElement; list: HTMLElement };
  graph: {
    root: HTMLElement;
    host: HTMLElement;
    text: HTMLElement;
    /** The line under a graph whose sockets have no types (no node definitions). */
    note: HTMLElement;
    view: GraphView | null;
    model: GraphModel | null;
    canReveal: boolean;
  };
  live: HTMLElement;
}

/** The elements of one output's card. */
export interface CardElements {
  li: HTMLElement;
  open: HTMLButtonElement;
  img: HTMLImageElement;
  icon: HTMLElement;
  name: HTMLElement;
  meta: HTMLElement;
  save: HTMLElement;
  workflow: HTMLElement;
}

/** Builds the page into `root` with the words of `state`; returns the elements updated later. */
export function buildPage(root: HTMLElement, state: MonitorState): Page {
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
  const graphNote = el('p', 'graph-note');
  graphNote.hidden = true;
  gr.root.append(graphText, graphHost, graphNote);

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
    graph: {
      root: gr.root,
      host: graphHost,
      text: graphText,
      note: graphNote,
      view: null,
      model: null,
      canReveal: false,
    },
    live,
  };
}
