import * as assert from 'node:assert/strict';
import {
  parseHostMessage,
  parseMonitorState,
  parseWebviewMessage,
  PROTOCOL_VERSION,
  type HostMessage,
  type WebviewMessage,
} from '../../src/core/views/monitor/protocol';
import { workflowGraph } from '../../src/core/graph/model';
import type { GraphModel } from '../../src/core/graph/types';
import { invertWorkflow } from './builders';
import { monitorState, output, preview, progress } from './monitorBuilders';

const invertModel = (): GraphModel => {
  const made = workflowGraph(invertWorkflow());
  assert.ok('model' in made);
  return made.model;
};

const roundTrip = (m: unknown): unknown => JSON.parse(JSON.stringify(m));

describe('job monitor protocol (typed messages both ways, validated on receipt)', () => {
  const hostMessages: HostMessage[] = [
    { type: 'snapshot', state: monitorState('queued') },
    {
      type: 'snapshot',
      state: monitorState(
        'failed',
        {
          progress: progress(0.5),
          error: { code: 'node_error', message: 'boom', nodeId: '7', classType: 'VAEDecode', traceback: 'tb' },
          logs: ['line'],
          metrics: [{ name: 'gpu_seconds', value: null }],
          outputs: [output('o1'), output('o2', { thumbnail: null, contentType: null, sizeBytes: null })],
          retrying: 'server unreachable, retrying in 2 s',
        },
        preview(4),
      ),
    },
    { type: 'preview', preview: preview(1) },
    { type: 'preview', preview: preview(2, { nodeId: null, nodeClass: null, contentType: 'image/webp' }) },
    { type: 'output', output: output('o1') },
    {
      type: 'snapshot',
      state: monitorState('running', { progress: progress(0.5, { currentNode: '2' }) }, null, {
        '1': { status: 'done', progress: null, error: null, preview: null, outputs: [] },
        '2': { status: 'running', progress: { value: 3, max: 8 }, error: null, preview: null, outputs: [] },
        '3': {
          status: 'waiting',
          progress: null,
          error: null,
          preview: null,
          outputs: [{ id: 'o1', name: 'a.png', type: 'image' }],
        },
      }),
    },
    {
      type: 'delta',
      job: monitorState('running', { progress: progress(0.6, { currentNode: '3' }) }).job,
      nodeStates: {
        changed: {
          '3': { status: 'running', progress: { value: 1, max: 8 }, error: null, preview: null, outputs: [] },
        },
        removed: ['9'],
      },
    },
    { type: 'delta', job: monitorState('succeeded').job, nodeStates: { changed: {}, removed: [] } },
    { type: 'graph', graph: { model: invertModel(), unavailable: null, canReveal: true, typesUnknown: false } },
    { type: 'graph', graph: { model: invertModel(), unavailable: null, canReveal: false, typesUnknown: true } },
    {
      type: 'graph',
      graph: {
        model: null,
        unavailable: 'the server keeps no workflow per job',
        canReveal: false,
        typesUnknown: false,
      },
    },
  ];
  const webviewMessages: WebviewMessage[] = [
    { type: 'ready', version: PROTOCOL_VERSION },
    { type: 'cancel' },
    { type: 'rerun' },
    { type: 'copyJobId' },
    { type: 'openWorkflow' },
    { type: 'goToNode' },
    { type: 'goToNode', nodeId: '2' },
    { type: 'revealOutputs' },
    { type: 'downloadAll' },
    { type: 'openOutput', outputId: 'o1' },
    { type: 'saveOutput', outputId: 'o1' },
  ];

  it('every host message type round-trips through JSON and parseHostMessage', () => {
    assert.deepEqual(
      new Set(hostMessages.map((m) => m.type)),
      new Set(['snapshot', 'delta', 'preview', 'output', 'graph']),
    );
    for (const m of hostMessages) assert.deepEqual(parseHostMessage(roundTrip(m)), m, m.type);
  });

  it('every webview message type round-trips through JSON and parseWebviewMessage', () => {
    for (const m of webviewMessages) assert.deepEqual(parseWebviewMessage(roundTrip(m)), m, m.type);
  });

  it('the embedded state round-trips through JSON and parseMonitorState', () => {
    const s = monitorState('running', { progress: progress(0.3) }, preview(1));
    assert.deepEqual(parseMonitorState(roundTrip(s)), s);
  });

  it('a message of an unknown type is rejected by both sides', () => {
    assert.equal(parseHostMessage({ type: 'eval', code: 'x' }), undefined);
    assert.equal(parseWebviewMessage({ type: 'deleteEverything' }), undefined);
    // A host message is not a webview message and the other way round.
    assert.equal(parseWebviewMessage({ type: 'preview', preview: preview(1) }), undefined);
    assert.equal(parseHostMessage({ type: 'cancel' }), undefined);
    for (const junk of [null, undefined, 42, 'snapshot', [], {}]) {
      assert.equal(parseHostMessage(junk), undefined);
      assert.equal(parseWebviewMessage(junk), undefined);
    }
  });

  it('a message missing a field is rejected', () => {
    assert.equal(parseWebviewMessage({ type: 'openOutput' }), undefined);
    assert.equal(parseWebviewMessage({ type: 'saveOutput' }), undefined);
    assert.equal(parseWebviewMessage({ type: 'ready' }), undefined);
    const { dataBase64: _d, ...noData } = preview(1);
    assert.equal(parseHostMessage({ type: 'preview', preview: noData }), undefined);
    const { saved: _s, ...noSaved } = output('o1');
    assert.equal(parseHostMessage({ type: 'output', output: noSaved }), undefined);
    const state = monitorState('running');
    const { can: _c, ...noCan } = state.job;
    assert.equal(parseHostMessage({ type: 'snapshot', state: { ...state, job: noCan } }), undefined);
    const { goToNode: _g, ...strings } = state.strings;
    assert.equal(parseHostMessage({ type: 'snapshot', state: { ...state, strings } }), undefined);
  });

  it('a field of the wrong type is rejected', () => {
    assert.equal(parseHostMessage({ type: 'preview', preview: { ...preview(1), seq: '1' } }), undefined);
    assert.equal(parseHostMessage({ type: 'output', output: { ...output('o1'), sizeBytes: '12' } }), undefined);
    assert.equal(parseWebviewMessage({ type: 'openOutput', outputId: 7 }), undefined);
    assert.equal(parseMonitorState({ ...monitorState('running'), version: PROTOCOL_VERSION + 1 }), undefined);
  });

  it('a preview that is not base64 is rejected', () => {
    for (const dataBase64 of ['not base64!', 'AAAA"onerror="x', 'AA==AA', 'data:image/png;base64,AAAA'])
      assert.equal(
        parseHostMessage({ type: 'preview', preview: { ...preview(1), dataBase64 } }),
        undefined,
        dataBase64,
      );
  });

  it('a preview whose content type is not an image is rejected', () => {
    for (const contentType of ['text/html', 'image/svg+xml;charset=utf-8', 'application/javascript', 'image/png"', ''])
      assert.equal(
        parseHostMessage({ type: 'preview', preview: { ...preview(1), contentType } }),
        undefined,
        contentType,
      );
  });

  it('an oversized or empty id is rejected', () => {
    const long = 'x'.repeat(1025);
    assert.equal(parseWebviewMessage({ type: 'openOutput', outputId: long }), undefined);
    assert.equal(parseWebviewMessage({ type: 'saveOutput', outputId: '' }), undefined);
    assert.equal(parseHostMessage({ type: 'output', output: output(long) }), undefined);
    assert.equal(parseHostMessage({ type: 'snapshot', state: monitorState('running', { jobId: long }) }), undefined);
    assert.ok(parseWebviewMessage({ type: 'openOutput', outputId: 'x'.repeat(1024) }));
  });

  it("rule: a graph message and the nodes' states are validated as the graph page validates them (a bad node, status or id is dropped)", () => {
    const model = invertModel();
    const graph = (m: unknown) => ({
      type: 'graph',
      graph: { model: m, unavailable: null, canReveal: true, typesUnknown: false },
    });
    assert.ok(parseHostMessage(graph(model)));
    assert.equal(parseHostMessage(graph({ ...model, format: 'xml' })), undefined);
    assert.equal(
      parseHostMessage(graph({ ...model, root: { ...model.root, nodes: [{ ...model.root.nodes[0], id: '' }] } })),
      undefined,
    );
    assert.equal(parseHostMessage({ type: 'graph', graph: { model, unavailable: null } }), undefined);
    const state = monitorState('running');
    const states = (s: unknown) => ({ type: 'snapshot', state: { ...state, nodeStates: { '2': s } } });
    const ok = { status: 'running', progress: { value: 1, max: 4 }, error: null, preview: null, outputs: [] };
    assert.ok(parseHostMessage(states(ok)));
    assert.equal(parseHostMessage(states({ ...ok, status: 'exploded' })), undefined);
    assert.equal(
      parseHostMessage(states({ ...ok, preview: { seq: 1, contentType: 'text/html', dataBase64: 'AAAA' } })),
      undefined,
    );
    const { nodeStates: _n, ...noStates } = state;
    assert.equal(parseHostMessage({ type: 'snapshot', state: noStates }), undefined);
    // Go to node names a node by a bounded id, or none (the failed node).
    assert.equal(parseWebviewMessage({ type: 'goToNode', nodeId: '' }), undefined);
    assert.equal(parseWebviewMessage({ type: 'goToNode', nodeId: 'x'.repeat(1025) }), undefined);
    assert.equal(parseWebviewMessage({ type: 'goToNode', nodeId: 2 }), undefined);
  });

  it('rule: a delta is validated as a snapshot is (its job, its states), with bounded ids and counts', () => {
    const job = monitorState('running').job;
    const ok = { status: 'running', progress: { value: 1, max: 4 }, error: null, preview: null, outputs: [] };
    const delta = (changed: unknown, removed: unknown = [], j: unknown = job) => ({
      type: 'delta',
      job: j,
      nodeStates: { changed, removed },
    });
    assert.ok(parseHostMessage(delta({ '2': ok }, ['7'])));
    assert.equal(parseHostMessage(delta({ '2': { ...ok, status: 'exploded' } })), undefined, 'a bad state');
    assert.equal(parseHostMessage(delta({ '': ok })), undefined, 'an empty id');
    assert.equal(parseHostMessage(delta({}, ['x'.repeat(1025)])), undefined, 'an oversized removed id');
    assert.equal(
      parseHostMessage(
        delta(
          {},
          Array.from({ length: 20_001 }, (_, i) => String(i)),
        ),
      ),
      undefined,
    );
    assert.equal(parseHostMessage(delta({}, [], { ...job, can: undefined })), undefined, 'a job without can');
    assert.equal(parseHostMessage({ type: 'delta', job, nodeStates: { changed: {} } }), undefined, 'no removed');
    assert.equal(parseHostMessage({ type: 'delta', nodeStates: { changed: {}, removed: [] } }), undefined, 'no job');
  });
});
