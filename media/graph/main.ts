/**
 * The standalone workflow graph page: the protocol (src/core/graph/protocol.ts) wired to the renderer
 * (./render.ts). The host builds the page (src/core/graph/page.ts: `#graph` is filled here), the page says `ready`,
 * then draws what the host posts. Every message goes through `parseGraphHostMessage` (an invalid one is dropped); a
 * graph older than the one shown is ignored. The view (zoom, pan, inner graph shown) is kept with `setState`, so a
 * reloaded page comes back as it was.
 */
import {
  GRAPH_PROTOCOL_VERSION,
  isGraphCurrent,
  parseGraphHostMessage,
  parseGraphViewState,
  type GraphViewState,
  type GraphWebviewMessage,
} from '../../src/core/graph/protocol';
import { NodeFormView } from './form';
import { GraphView } from './render';

interface VsCodeApi {
  postMessage(message: GraphWebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const page = document.getElementById('graph') ?? document.body;
// The graph and, beside it (below it in a narrow panel), the chosen node's form.
const host = document.createElement('div');
host.className = 'graph-pane';
const aside = document.createElement('aside');
page.append(host, aside);
page.classList.add('graph-page');
const form = new NodeFormView(aside, {
  edit: (nodeId, field, value) => vscode.postMessage({ type: 'edit', nodeId, field, value }),
  close: () => vscode.postMessage({ type: 'closeForm' }),
});
let shownVersion: number | undefined;

// The workflow file shown, kept in the saved state so a panel restored after a reload reopens it.
const documentUri = page.dataset.document;

const view = new GraphView(host, {
  onReveal: (nodeId) => vscode.postMessage({ type: 'reveal', nodeId }),
  onOpenSubgraph: (path) => vscode.postMessage({ type: 'openSubgraph', path }),
  onViewChange: (v) => {
    const state: GraphViewState = {
      version: GRAPH_PROTOCOL_VERSION,
      zoom: v.zoom,
      panX: v.panX,
      panY: v.panY,
      subgraph: v.subgraph,
      ...(documentUri === undefined ? {} : { document: documentUri }),
    };
    vscode.setState(state);
  },
});

// The view saved before a reload, applied once the first graph is drawn (its inner graph must exist to be shown).
let saved = parseGraphViewState(vscode.getState());
if (saved) view.setView({ ...saved, subgraph: null });
else if (documentUri !== undefined)
  vscode.setState({
    version: GRAPH_PROTOCOL_VERSION,
    zoom: 1,
    panX: 0,
    panY: 0,
    subgraph: null,
    document: documentUri,
  } satisfies GraphViewState);

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const m = parseGraphHostMessage(event.data);
  if (!m) return;
  switch (m.type) {
    case 'graph':
      if (!isGraphCurrent(shownVersion, m.documentVersion)) return;
      shownVersion = m.documentVersion;
      view.setGraph(m.model);
      if (saved)
        view.setView(saved.subgraph && m.model.subgraphs[saved.subgraph] ? saved : { ...saved, subgraph: null });
      saved = undefined;
      return;
    case 'states':
      view.setStates(m.states);
      return;
    case 'problems':
      view.setProblems(m.problems);
      return;
    case 'select':
      view.select(m.nodeId);
      return;
    case 'banner':
      view.setBanner(m.text);
      return;
    case 'form': {
      const opened = m.form !== null && form.nodeId !== m.form.nodeId;
      form.show(m.form, m.words, m.problem);
      // The graph's canvas is smaller once the form shows: the chosen node brought back into view.
      if (opened) requestAnimationFrame(() => view.select(m.form?.nodeId ?? null));
      return;
    }
  }
});

vscode.postMessage({ type: 'ready', version: GRAPH_PROTOCOL_VERSION });
