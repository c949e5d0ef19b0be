/**
 * The workflow graph's webview protocol (src/core/graph/protocol.ts): each message type round-trips through JSON
 * and its parser; bad messages (unknown type, missing or oversized fields, a preview that is not base64 image data)
 * are refused; the saved view state is read back only when it is of this version. The page's HTML builder keeps a
 * strict CSP.
 */
import * as assert from 'node:assert/strict';
import { graphFromApi } from '../../src/core/graph/model';
import { graphHtml } from '../../src/core/graph/page';
import {
  GRAPH_MESSAGE_LIMITS,
  GRAPH_PROTOCOL_VERSION,
  isGraphCurrent,
  parseGraphHostMessage,
  parseGraphViewState,
  parseGraphWebviewMessage,
  type GraphHostMessage,
  type GraphWebviewMessage,
} from '../../src/core/graph/protocol';
import { nodeRunStates } from '../../src/core/graph/runStates';
import { modelJob, modelOutput, modelProgress } from './modelBuilders';

/** A message as it crosses: through JSON (what postMessage's structured clone keeps of plain data). */
function across<T>(m: T): unknown {
  return JSON.parse(JSON.stringify(m));
}

function model() {
  return graphFromApi({
    '1': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'a.safetensors' } },
    '2': { class_type: 'KSampler', inputs: { model: ['1', 0], seed: 1 } },
  });
}

describe('workflow graph protocol: host → webview', () => {
  it('graph, states, problems, select and banner round-trip', () => {
    const states = nodeRunStates(
      {
        job: modelJob('running', {
          progress: modelProgress({ currentNode: '2', step: 3, steps: 9 }),
          outputs: [modelOutput({ nodeId: '1' })],
        }),
        preview: { seq: 1, nodeId: '2', contentType: 'image/jpeg', dataBase64: 'QUJD' },
      },
      ['1', '2'],
    );
    const messages: GraphHostMessage[] = [
      { type: 'graph', documentVersion: 7, model: model() },
      { type: 'states', states },
      {
        type: 'problems',
        problems: {
          byNode: { '2': [{ field: 'seed', message: 'too big', source: 'check' }] },
          graph: ['no output node'],
        },
      },
      { type: 'select', nodeId: '2' },
      { type: 'select', nodeId: null },
      { type: 'banner', text: 'Not valid JSON: the last good graph is shown.' },
      { type: 'banner', text: null },
    ];
    for (const m of messages) assert.deepEqual(parseGraphHostMessage(across(m)), m, m.type);
  });

  it('refuses an unknown type, a graph without its document version, and a node id over the bound', () => {
    assert.equal(parseGraphHostMessage({ type: 'explode' }), undefined);
    assert.equal(parseGraphHostMessage({ type: 'graph', model: model() }), undefined);
    assert.equal(parseGraphHostMessage({ type: 'select', nodeId: 'x'.repeat(GRAPH_MESSAGE_LIMITS.id + 1) }), undefined);
    assert.equal(parseGraphHostMessage({ type: 'select', nodeId: '' }), undefined);
    assert.equal(parseGraphHostMessage(null), undefined);
  });

  it('refuses a graph whose node is missing a field or has a text over the bound, and a non-finite number', () => {
    const m = across({ type: 'graph', documentVersion: 1, model: model() }) as {
      model: { root: { nodes: Record<string, unknown>[] } };
    };
    const missing = structuredClone(m);
    delete missing.model.root.nodes[0]!.kind;
    assert.equal(parseGraphHostMessage(missing), undefined);
    const long = structuredClone(m);
    long.model.root.nodes[0]!.title = 'x'.repeat(GRAPH_MESSAGE_LIMITS.text + 1);
    assert.equal(parseGraphHostMessage(long), undefined);
    assert.equal(parseGraphHostMessage({ type: 'graph', documentVersion: Infinity, model: model() }), undefined);
  });

  it('refuses a preview that is not image data in base64 (no script URL can ride in a state)', () => {
    const state = {
      status: 'running',
      progress: null,
      error: null,
      outputs: [],
      preview: { seq: 1, contentType: 'text/html', dataBase64: 'QUJD' },
    };
    assert.equal(parseGraphHostMessage({ type: 'states', states: { '1': state } }), undefined);
    assert.equal(
      parseGraphHostMessage({
        type: 'states',
        states: { '1': { ...state, preview: { seq: 1, contentType: 'image/png', dataBase64: 'javascript:alert(1)' } } },
      }),
      undefined,
    );
    assert.equal(
      parseGraphHostMessage({ type: 'states', states: { '1': { ...state, status: 'exploded', preview: null } } }),
      undefined,
    );
  });
});

describe('workflow graph protocol: which graph is drawn', () => {
  it('a graph of an older document version than the one shown is not drawn; the same or a newer one is', () => {
    assert.equal(isGraphCurrent(undefined, 0), true);
    assert.equal(isGraphCurrent(5, 4), false);
    assert.equal(isGraphCurrent(5, 5), true);
    assert.equal(isGraphCurrent(5, 6), true);
  });
});

describe('workflow graph protocol: webview → host', () => {
  it('ready, reveal, openSubgraph and goToNode round-trip', () => {
    const messages: GraphWebviewMessage[] = [
      { type: 'ready', version: GRAPH_PROTOCOL_VERSION },
      { type: 'reveal', nodeId: '12:5' },
      { type: 'openSubgraph', path: '12' },
      { type: 'openSubgraph', path: null },
      { type: 'goToNode', nodeId: '3' },
    ];
    for (const m of messages) assert.deepEqual(parseGraphWebviewMessage(across(m)), m, m.type);
  });

  it('refuses an unknown type, a reveal without a node id, and a host message sent back', () => {
    assert.equal(parseGraphWebviewMessage({ type: 'runCommand', command: 'rm' }), undefined);
    assert.equal(parseGraphWebviewMessage({ type: 'reveal' }), undefined);
    assert.equal(parseGraphWebviewMessage({ type: 'reveal', nodeId: 3 }), undefined);
    assert.equal(parseGraphWebviewMessage({ type: 'select', nodeId: '1' }), undefined);
  });
});

describe('workflow graph protocol: the state kept across a reload', () => {
  it('a saved view of this version is read back; another version, a zoom out of range or a wrong shape is not', () => {
    const view = { version: GRAPH_PROTOCOL_VERSION, zoom: 0.8, panX: -120, panY: 40, subgraph: '12' };
    assert.deepEqual(parseGraphViewState(across(view)), view);
    assert.equal(parseGraphViewState({ ...view, version: GRAPH_PROTOCOL_VERSION + 1 }), undefined);
    assert.equal(parseGraphViewState({ ...view, zoom: 0 }), undefined);
    assert.equal(parseGraphViewState({ ...view, panX: 'left' }), undefined);
    assert.equal(parseGraphViewState(undefined), undefined);
  });

  it('the workflow file shown is kept with the view (a restored panel reopens it); a document that is not a string is refused', () => {
    const view = {
      version: GRAPH_PROTOCOL_VERSION,
      zoom: 1,
      panX: 0,
      panY: 0,
      subgraph: null,
      document: 'file:///ws/flux.json',
    };
    assert.deepEqual(parseGraphViewState(across(view)), view);
    assert.equal(parseGraphViewState({ ...view, document: 42 }), undefined);
    assert.equal(parseGraphViewState({ ...view, document: 'x'.repeat(GRAPH_MESSAGE_LIMITS.text + 1) }), undefined);
  });
});

describe('workflow graph page: the HTML the host builds', () => {
  const page = graphHtml({
    lang: 'en',
    cspSource: 'vscode-webview://abc',
    nonce: 'n0nce+/=',
    graphCss: 'vscode-webview://abc/graph.css',
    graphJs: 'vscode-webview://abc/graph.js',
    title: '<b>flux.json</b>',
  });

  it('CSP: default-src none, scripts only by the nonce, styles and images from the webview source (and data:, blob:), no unsafe-inline, no remote origin', () => {
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(page)![1]!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-n0nce\+\/='/);
    assert.match(csp, /style-src vscode-webview:\/\/abc/);
    assert.match(csp, /img-src vscode-webview:\/\/abc data: blob:/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.match(page, /<script nonce="n0nce\+\/=" src="vscode-webview:\/\/abc\/graph.js"><\/script>/);
  });

  it('the title is escaped as text (a file name cannot add markup)', () => {
    assert.match(page, /<title>&lt;b&gt;flux.json&lt;\/b&gt;<\/title>/);
    assert.doesNotMatch(page, /<b>/);
  });

  it("the workflow's URI is on #graph as data-document, escaped (only when given)", () => {
    const withUri = graphHtml({
      lang: 'en',
      cspSource: 'c',
      nonce: 'n',
      graphCss: 'a.css',
      graphJs: 'a.js',
      title: 't',
      documentUri: 'file:///ws/a"b<c>.json',
    });
    assert.match(withUri, /<main id="graph" data-document="file:\/\/\/ws\/a&quot;b&lt;c&gt;\.json"><\/main>/);
    assert.match(page, /<main id="graph"><\/main>/);
  });
});
