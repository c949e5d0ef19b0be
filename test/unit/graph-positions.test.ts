// Where a workflow graph's node is in its JSON and which node a place in the JSON belongs to (the graph view's
// click-to-reveal both ways, and where a diagnostic's node is): API format, UI format, a subgraph's inner node.
import * as assert from 'node:assert/strict';
import { graphFromUi } from '../../src/core/graph/model';
import { cleanModel, nodeAtOffset, nodeSpan } from '../../src/core/graph/positions';

const API = `{
  "$schema": "comfy-workflow-schema://schemas/api-format.json",
  "1": { "class_type": "EmptyImage", "inputs": { "width": 64 } },
  "2": { "class_type": "ImageInvert", "inputs": { "image": ["1", 0] } }
}`;

const UI = JSON.stringify(
  {
    nodes: [
      {
        id: 7,
        type: 'EmptyImage',
        pos: [0, 0],
        size: [100, 50],
        mode: 0,
        inputs: [],
        outputs: [],
        widgets_values: [64],
      },
      { id: 12, type: 'sub-a', pos: [200, 0], size: [100, 50], mode: 0, inputs: [], outputs: [] },
    ],
    links: [],
    definitions: {
      subgraphs: [
        {
          id: 'sub-a',
          name: 'Inner',
          nodes: [{ id: 5, type: 'ImageInvert', pos: [0, 0], size: [100, 50], mode: 0, inputs: [], outputs: [] }],
          links: [],
        },
      ],
    },
  },
  null,
  2,
);

describe('graph positions: a node in the workflow JSON and back', function () {
  it('nodeSpan: an API-format node is its member, from its key to its closing brace', function () {
    const span = nodeSpan(API, '2')!;
    assert.equal(
      API.slice(span.offset, span.offset + span.length),
      '"2": { "class_type": "ImageInvert", "inputs": { "image": ["1", 0] } }',
    );
    assert.equal(nodeSpan(API, '9'), undefined);
    assert.equal(nodeSpan(API, '$schema'), undefined, 'the $schema member is not a node');
  });

  it('nodeSpan: a UI-format node is the object in nodes with its id; an inner node is in its definition', function () {
    const outer = nodeSpan(UI, '7')!;
    assert.equal(JSON.parse(UI.slice(outer.offset, outer.offset + outer.length)).id, 7);
    const inner = nodeSpan(UI, '12:5')!;
    const object = JSON.parse(UI.slice(inner.offset, inner.offset + inner.length));
    assert.deepEqual([object.id, object.type], [5, 'ImageInvert']);
    assert.equal(nodeSpan(UI, '7:5'), undefined, 'node 7 is no subgraph instance');
    assert.equal(nodeSpan('{ not json', '1'), undefined);
  });

  it('nodeAtOffset: the API-format node under the cursor, with the input it is on', function () {
    assert.deepEqual(nodeAtOffset(API, API.indexOf('"ImageInvert"')), { nodeId: '2', field: 'class_type' });
    assert.deepEqual(nodeAtOffset(API, API.indexOf('"width"') + 2), { nodeId: '1', field: 'width' });
    assert.deepEqual(nodeAtOffset(API, API.indexOf('"2"') + 1), { nodeId: '2', field: 'inputs' }, 'on the key');
    assert.equal(nodeAtOffset(API, API.indexOf('comfy-workflow-schema')), undefined, 'the $schema member');
    assert.equal(nodeAtOffset(API, 0), undefined, 'outside every node');
  });

  it('nodeAtOffset: a UI-format node, and an inner node named by the path of its instance', function () {
    assert.deepEqual(nodeAtOffset(UI, UI.indexOf('"EmptyImage"')), { nodeId: '7', field: 'inputs' });
    assert.deepEqual(nodeAtOffset(UI, UI.indexOf('"ImageInvert"')), { nodeId: '12:5', field: 'inputs' });
    assert.equal(nodeAtOffset(UI, UI.indexOf('"links"')), undefined);
  });

  it("each direction undoes the other: the node at the start of a node's span is that node", function () {
    for (const [text, id] of [
      [API, '1'],
      [API, '2'],
      [UI, '7'],
      [UI, '12'],
      [UI, '12:5'],
    ] as const) {
      assert.equal(nodeAtOffset(text, nodeSpan(text, id)!.offset + 1)?.nodeId, id, id);
    }
  });
});

describe('graph texts: what the page shows is made safe by the display', function () {
  it('cleanModel cleans every shown text (titles, classes, literals, notes line by line, groups, edge types) and leaves ids as they are', function () {
    const model = graphFromUi({
      nodes: [
        {
          id: 1,
          type: 'EmptyImage',
          title: 'key sk-SECRET here',
          pos: [0, 0],
          size: [100, 50],
          mode: 0,
          inputs: [],
          outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }],
          widgets_values: ['sk-SECRET'],
        },
        {
          id: 2,
          type: 'SaveImage',
          pos: [200, 0],
          size: [100, 50],
          mode: 0,
          inputs: [{ name: 'images', type: 'IMAGE', link: 1 }],
          outputs: [],
          widgets_values: [],
        },
        {
          id: 3,
          type: 'Note',
          pos: [0, 200],
          size: [100, 50],
          mode: 0,
          inputs: [],
          outputs: [],
          widgets_values: ['line sk-SECRET\nsecond line'],
        },
      ],
      links: [[1, 1, 0, 2, 0, 'IMAGE']],
      groups: [{ title: 'group sk-SECRET', bounding: [0, 0, 10, 10] }],
    });
    const cleaned = cleanModel(model, (t) => t.replace(/sk-SECRET/g, '***'));
    const all = JSON.stringify(cleaned);
    assert.doesNotMatch(all, /sk-SECRET/);
    assert.equal(cleaned.root.nodes[0]!.title, 'key *** here');
    assert.equal(
      cleaned.root.nodes.find((n) => n.kind === 'note')!.note,
      'line ***\nsecond line',
      'the line break of a note is kept',
    );
    assert.deepEqual(
      cleaned.root.nodes.map((n) => n.id),
      model.root.nodes.map((n) => n.id),
    );
    assert.deepEqual(cleaned.root.edges, model.root.edges);
  });
});
