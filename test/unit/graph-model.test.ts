/**
 * The workflow graph's model (src/core/graph): a graph from an API-format workflow (edges typed by the definitions),
 * from a UI-format workflow (positions, groups, modes, notes, subgraphs), node states from a job through its life,
 * problems on nodes, and the bounds on every text.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GRAPH_LIMITS,
  graphFromApi,
  graphFromUi,
  graphNodeIds,
  literalText,
  workflowGraph,
  type GraphModel,
} from '../../src/core/graph/model';
import { PROBLEM_LIMITS, problemsOnNodes } from '../../src/core/graph/problems';
import { nodeRunStates } from '../../src/core/graph/runStates';
import { checkWorkflow } from '../../src/core/workflowSchema/validate';
import { untranslated } from '../../src/core/util/l10n';
import { convertFixtures, recordedDefinitions } from './convertBuilders';
import { modelJob, modelOutput, modelProgress } from './modelBuilders';

/** A three-node API-format workflow: a checkpoint into a sampler into a decoder. */
function apiWorkflow(): Record<string, unknown> {
  return {
    '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sd_xl_base_1.0.safetensors' } },
    '3': {
      class_type: 'KSampler',
      inputs: {
        model: ['4', 0],
        seed: 42,
        steps: 20,
        cfg: 7.5,
        sampler_name: 'euler',
        scheduler: 'normal',
        denoise: 1,
        positive: ['6', 0],
        negative: ['6', 0],
        latent_image: ['5', 0],
      },
      _meta: { title: 'My sampler' },
    },
    '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
  };
}

/** A UI-format workflow of the given nodes and links (schema 0.4 link arrays). */
function uiWorkflow(
  nodes: Record<string, unknown>[],
  links: unknown[][] = [],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { last_node_id: 99, last_link_id: 99, nodes, links, groups: [], version: 0.4, ...extra };
}

function uiNode(id: number, type: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    type,
    pos: [10 * id, 20 * id],
    size: [300, 120],
    mode: 0,
    inputs: [],
    outputs: [],
    properties: {},
    widgets_values: [],
    ...fields,
  };
}

function node(model: GraphModel, id: string) {
  const all = [model.root, ...Object.values(model.subgraphs)].flatMap((g) => g.nodes);
  const found = all.find((n) => n.id === id);
  assert.ok(found, `node ${id}`);
  return found;
}

describe('workflow graph: model from a workflow', function () {
  this.timeout(20_000);

  it("API format: each link [node_id, output_index] is an edge, typed by the source class's output[index]", () => {
    const model = graphFromApi(apiWorkflow(), recordedDefinitions());
    const edges = model.root.edges.map((e) => `${e.from}/${e.fromOutput}->${e.to}.${e.toInput}:${e.type}`);
    assert.ok(edges.includes('4/0->3.model:MODEL'), edges.join(' '));
    assert.ok(edges.includes('4/2->8.vae:VAE'));
    assert.ok(edges.includes('3/0->8.samples:LATENT'));
    assert.equal(model.root.positioned, false);
    assert.ok(
      model.root.nodes.every((n) => n.box === null),
      'API format has no positions: the webview lays it out',
    );
  });

  it('API format: a link to a node not in the workflow makes no edge; without definitions edges are untyped', () => {
    const model = graphFromApi(apiWorkflow());
    assert.ok(!model.root.edges.some((e) => e.from === '6' || e.from === '5'));
    assert.ok(model.root.edges.every((e) => e.type === null));
  });

  it("API format: the title is _meta.title, else the class's display name, else class_type; unknown classes flagged", () => {
    const defs = recordedDefinitions();
    const model = graphFromApi({ ...apiWorkflow(), '9': { class_type: 'NoSuchNode', inputs: {} } }, defs);
    assert.equal(node(model, '3').title, 'My sampler');
    assert.equal(node(model, '4').title, defs.classes.get('CheckpointLoaderSimple')!.displayName);
    assert.equal(node(model, '9').title, 'NoSuchNode');
    assert.equal(node(model, '9').unknownClass, true);
    assert.equal(node(model, '3').unknownClass, false);
    assert.equal(
      graphFromApi({ '9': { class_type: 'NoSuchNode', inputs: {} } }).root.nodes[0]!.unknownClass,
      false,
      'not flagged without definitions',
    );
  });

  it("API format: literal inputs are listed in the definition's order as short text, links are not literals", () => {
    const model = graphFromApi(apiWorkflow(), recordedDefinitions());
    const sampler = node(model, '3');
    assert.deepEqual(sampler.literals.slice(0, 3), [
      { name: 'seed', text: '42' },
      { name: 'steps', text: '20' },
      { name: 'cfg', text: '7.5' },
    ]);
    assert.ok(!sampler.literals.some((l) => l.name === 'model'));
  });

  it('literal text: numbers, booleans and strings as written, long strings cut, asset refs and arrays summarized', () => {
    assert.equal(literalText(3), '3');
    assert.equal(literalText(274576428651941), '274576428651941', 'a seed as written, however large');
    assert.equal(literalText(0.123456), '0.1235', 'other numbers to 4 decimals');
    assert.equal(literalText(true), 'true');
    assert.equal(literalText('a\nb'), 'a b');
    const long = literalText('x'.repeat(10_000));
    assert.equal(long.length, GRAPH_LIMITS.literal);
    assert.ok(long.endsWith('…'));
    assert.equal(literalText({ __type: 'core/ASSET', info: { id: 'a1', file_path: 'in/cat.png' } }), 'asset cat.png');
    assert.equal(literalText({ __type: 'core/ASSET', info: { id: 'a1' } }), 'asset a1');
    assert.equal(literalText(new Array(5000).fill(1)), '[5000 items]');
    assert.equal(literalText({ a: 1 }), '{…}');
  });

  it('bounds: a node shows at most GRAPH_LIMITS.literals literals (the rest counted), its title at most GRAPH_LIMITS.title characters', () => {
    const inputs = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`in${i}`, i]));
    const model = graphFromApi({ '1': { class_type: 'X', inputs, _meta: { title: 't'.repeat(5000) } } });
    const n = node(model, '1');
    assert.equal(n.literals.length, GRAPH_LIMITS.literals);
    assert.equal(n.moreInputs, 30 - GRAPH_LIMITS.literals);
    assert.equal(n.title.length, GRAPH_LIMITS.title);
  });

  it('UI format: nodes at their saved pos and size (the title bar above pos), links as typed edges', () => {
    const wf = uiWorkflow(
      [
        uiNode(1, 'CheckpointLoaderSimple', {
          pos: [100, 200],
          size: [315, 98],
          outputs: [{ name: 'MODEL', type: 'MODEL', links: [5] }],
          widgets_values: ['m.safetensors'],
        }),
        uiNode(2, 'KSampler', {
          pos: { 0: 500, 1: 200 },
          size: { 0: 315, 1: 262 },
          inputs: [{ name: 'model', type: 'MODEL', link: 5 }],
        }),
      ],
      [[5, 1, 0, 2, 0, 'MODEL']],
    );
    const model = graphFromUi(wf, recordedDefinitions());
    assert.deepEqual(node(model, '1').box, { x: 100, y: 170, width: 315, height: 128 });
    assert.deepEqual(node(model, '2').box, { x: 500, y: 170, width: 315, height: 292 });
    assert.deepEqual(model.root.edges, [{ from: '1', fromOutput: 0, to: '2', toInput: 'model', type: 'MODEL' }]);
    assert.equal(model.root.positioned, true);
    assert.deepEqual(node(model, '1').literals, [{ name: 'ckpt_name', text: 'm.safetensors' }]);
  });

  it('UI format: groups keep their title, bounding box and color; a color that is not a plain hex one is dropped', () => {
    const wf = uiWorkflow([uiNode(1, 'Note', { widgets_values: ['hello'] })], [], {
      groups: [
        { title: 'Load', bounding: [0, 10, 400, 300], color: '#3f789e' },
        { title: 'Odd', bounding: [0, 0, 10, 10], color: 'url(javascript:alert(1))' },
        { title: 'Short', bounding: [0, 0, 10, 10], color: '#8A8' },
      ],
    });
    assert.deepEqual(graphFromUi(wf).root.groups, [
      { title: 'Load', box: { x: 0, y: 10, width: 400, height: 300 }, color: '#3f789e' },
      { title: 'Odd', box: { x: 0, y: 0, width: 10, height: 10 }, color: null },
      { title: 'Short', box: { x: 0, y: 0, width: 10, height: 10 }, color: '#8A8' },
    ]);
  });

  it('UI format: muted and bypassed modes are shown; Note and MarkdownNote are notes with their text (bounded)', () => {
    const wf = uiWorkflow([
      uiNode(1, 'KSampler', { mode: 2 }),
      uiNode(2, 'KSampler', { mode: 4 }),
      uiNode(3, 'Note', { widgets_values: ['read me'] }),
      uiNode(4, 'MarkdownNote', { widgets_values: ['#'.repeat(10_000)] }),
    ]);
    const model = graphFromUi(wf);
    assert.equal(node(model, '1').mode, 'muted');
    assert.equal(node(model, '2').mode, 'bypassed');
    assert.equal(node(model, '3').kind, 'note');
    assert.equal(node(model, '3').note, 'read me');
    assert.equal(node(model, '4').note!.length, GRAPH_LIMITS.note);
  });

  it('UI format: a subgraph instance is a box whose inner graph is keyed by its id, inner nodes named by path ("12:6")', () => {
    const wf = JSON.parse(
      fs.readFileSync(path.join(convertFixtures(), 'der-subgraph-lora_multiple', 'workflow.json'), 'utf8'),
    ) as Record<string, unknown>;
    const model = graphFromUi(wf, recordedDefinitions());
    const instance = node(model, '12');
    assert.equal(instance.kind, 'subgraph');
    assert.equal(instance.subgraph, '12');
    const inner = model.subgraphs['12']!;
    assert.equal(inner.title, 'Prompts');
    assert.deepEqual(
      inner.nodes
        .filter((n) => n.kind === 'node')
        .map((n) => n.id)
        .sort(),
      ['12:6', '12:7'],
    );
    assert.ok(
      inner.edges.some((e) => e.from === '12:-10' && e.to === '12:6' && e.type === 'CLIP'),
      'the input box feeds the inner nodes',
    );
    assert.ok(inner.edges.some((e) => e.from === '12:6' && e.to === '12:-20'));
    // The execution ids the converter gives are the model's node ids.
    const expected = Object.keys(
      JSON.parse(
        fs.readFileSync(path.join(convertFixtures(), 'der-subgraph-lora_multiple', 'expected.json'), 'utf8'),
      ) as object,
    );
    const ids = new Set(graphNodeIds(model));
    for (const id of expected) assert.ok(ids.has(id), `execution id ${id} has a box`);
  });

  it('UI format: a subgraph that contains itself stops (its inner instance does not open)', () => {
    const self = { id: 'loop', name: 'Loop', nodes: [uiNode(1, 'loop')], links: [] };
    const model = graphFromUi(uiWorkflow([uiNode(5, 'loop')], [], { definitions: { subgraphs: [self] } }));
    assert.deepEqual(Object.keys(model.subgraphs), ['5']);
    assert.equal(node(model, '5:1').subgraph, null);
  });

  it('a document that is neither format, or a malformed UI graph, is a problem in words, not an exception', () => {
    assert.ok('problem' in workflowGraph([1, 2]));
    const bad = workflowGraph({ nodes: [{ id: 1 }] });
    assert.ok('problem' in bad && bad.problem.includes('no type'), JSON.stringify(bad));
    const good = workflowGraph(apiWorkflow());
    assert.ok('model' in good && good.model.format === 'api');
  });
});

describe('workflow graph: node states from a job', () => {
  const ids = ['4', '3', '8', '9'];

  it('a queued job: every node waits', () => {
    const states = nodeRunStates(modelJob('queued'), ids);
    assert.deepEqual(
      Object.values(states).map((s) => s.status),
      ['waiting', 'waiting', 'waiting', 'waiting'],
    );
  });

  it('a running job: the current node runs with its step of steps, nodes with outputs are done, the rest wait', () => {
    const job = modelJob('running', {
      progress: modelProgress({ currentNode: '3', step: 7, steps: 20 }),
      outputs: [modelOutput({ id: 'o1', nodeId: '9', name: 'a.png' })],
    });
    const states = nodeRunStates(job, ids);
    assert.equal(states['3']!.status, 'running');
    assert.deepEqual(states['3']!.progress, { value: 7, max: 20 });
    assert.equal(states['9']!.status, 'done');
    assert.deepEqual(states['9']!.outputs, [{ id: 'o1', name: 'a.png', type: 'image' }]);
    assert.equal(states['8']!.status, 'waiting');
  });

  it("a running node's step is never shown above its steps (a step reported past the end is capped at steps)", () => {
    const past = nodeRunStates(
      modelJob('running', { progress: modelProgress({ currentNode: '3', step: 23, steps: 20 }) }),
      ids,
    );
    assert.deepEqual(past['3']!.progress, { value: 20, max: 20 });
  });

  it('a succeeded job: every node is done', () => {
    const states = nodeRunStates(modelJob('succeeded'), ids);
    assert.ok(Object.values(states).every((s) => s.status === 'done'));
    assert.equal(Object.keys(states).length, ids.length);
  });

  it("a failed job: the error's node failed with its message (cleaned); nodes not known to have run have no state", () => {
    const job = modelJob('failed', {
      error: { code: 'execution_error', message: 'CUDA out of memory sk-secret', nodeId: '3', classType: 'KSampler' },
      outputs: [modelOutput({ nodeId: '4' })],
    });
    const states = nodeRunStates(job, ids, { clean: (t) => t.replace('sk-secret', '«redacted»') });
    assert.equal(states['3']!.status, 'failed');
    assert.equal(states['3']!.error, 'CUDA out of memory «redacted»');
    assert.equal(states['4']!.status, 'done');
    assert.equal(states['8'], undefined);
  });

  it('a canceled job: only nodes with outputs are done; nothing runs', () => {
    const states = nodeRunStates(
      modelJob('canceled', { progress: modelProgress({ currentNode: '3' }), outputs: [modelOutput({ nodeId: '9' })] }),
      ids,
    );
    assert.deepEqual(Object.keys(states), ['9']);
  });

  it('the preview is placed on the node that drew it', () => {
    const job = modelJob('running', { progress: modelProgress({ currentNode: '3' }) });
    const states = nodeRunStates(
      { job, preview: { seq: 4, nodeId: '3', contentType: 'image/png', dataBase64: 'AAAA' } },
      ids,
    );
    assert.deepEqual(states['3']!.preview, { seq: 4, contentType: 'image/png', dataBase64: 'AAAA' });
  });

  it('a running or failed node inside a subgraph instance makes its instance box running or failed', () => {
    const running = nodeRunStates(modelJob('running', { progress: modelProgress({ currentNode: '12:6' }) }), [
      '12',
      '12:6',
      '12:7',
    ]);
    assert.equal(running['12']!.status, 'running');
    assert.equal(running['12:7']!.status, 'waiting');
    const failed = nodeRunStates(
      modelJob('failed', { error: { code: null, message: 'bad', nodeId: '12:5:3', classType: null } }),
      [],
    );
    assert.equal(failed['12']!.status, 'failed');
    assert.equal(failed['12:5']!.error, 'bad');
  });

  it('a job through its life: queued, running node by node, succeeded', () => {
    const life = [
      modelJob('queued'),
      modelJob('running', { progress: modelProgress({ currentNode: '4' }) }),
      modelJob('running', { progress: modelProgress({ currentNode: '3', step: 1, steps: 2 }) }),
      modelJob('succeeded', { outputs: [modelOutput({ nodeId: '9' })] }),
    ].map((j) => nodeRunStates(j, ids));
    assert.deepEqual(
      life.map((s) => `${s['4']!.status}/${s['3']!.status}`),
      ['waiting/waiting', 'running/waiting', 'waiting/running', 'done/done'],
    );
    assert.equal(life[3]!['9']!.outputs.length, 1);
  });
});

describe('workflow graph: problems on nodes', () => {
  it('IntelliSense diagnostics land on the nodes they name; whole-workflow ones apart', () => {
    const check = checkWorkflow(
      { '1': { class_type: 'KSampler', inputs: { steps: 'many' } } },
      recordedDefinitions(),
      untranslated,
    );
    const problems = problemsOnNodes(check.diagnostics);
    assert.ok(problems.byNode['1']!.length > 0);
    assert.ok(problems.byNode['1']!.every((p) => p.source === 'check'));
    assert.ok(problems.graph.length > 0, 'no output node is a whole-workflow problem');
  });

  it("a 422's node errors land on their nodes first, cleaned; a repeat of a check's problem is kept once", () => {
    const diagnostics = [
      { code: 'required_input_missing' as const, message: 'x missing', path: ['2', 'inputs'], nodeId: '2', field: 'x' },
    ];
    const problems = problemsOnNodes(
      diagnostics,
      [
        { nodeId: '2', field: 'x', reason: 'x missing' },
        { nodeId: '3', reason: 'bad token sk-1' },
      ],
      (t) => t.replace('sk-1', '«redacted»'),
    );
    assert.deepEqual(problems.byNode['2'], [{ field: 'x', message: 'x missing', source: 'server' }]);
    assert.deepEqual(problems.byNode['3'], [{ field: 'inputs', message: 'bad token «redacted»', source: 'server' }]);
  });

  it('bounds: at most PROBLEM_LIMITS.perNode problems per node, each message at most PROBLEM_LIMITS.message characters', () => {
    const errors = Array.from({ length: 100 }, (_, i) => ({ nodeId: '1', field: `f${i}`, reason: 'r'.repeat(10_000) }));
    const list = problemsOnNodes([], errors).byNode['1']!;
    assert.equal(list.length, PROBLEM_LIMITS.perNode);
    assert.ok(list.every((p) => p.message.length === PROBLEM_LIMITS.message));
  });
});
