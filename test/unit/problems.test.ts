/**
 * Where Problems entries of a 422 `invalid_workflow` land (Job and Asset API v2, Error envelope: `node_errors`):
 * positions from the JSON tree (jsonc-parser, never a regex), as offsets and lengths in the text.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as esbuild from 'esbuild';
import { nodeErrorSpans, type NodeErrorTarget } from '../../src/core/util';

/** The text each error's span covers. */
function covered(text: string, targets: NodeErrorTarget[]): string[] {
  return nodeErrorSpans(text, targets).map(({ offset, length }) => text.slice(offset, offset + length));
}

/** The offset of the `n`-th (0-based) occurrence of `needle` in `text`. */
function nth(text: string, needle: string, n: number): number {
  let at = -1;
  for (let i = 0; i <= n; i++) {
    at = text.indexOf(needle, at + 1);
    assert.notEqual(at, -1, `${needle} #${n}`);
  }
  return at;
}

const WORKFLOW = `{
  "1": { "class_type": "EmptyImage", "inputs": { "width": 64, "height": 64, "batch_size": 1, "color": 0 } },
  "2": { "class_type": "ImageInvert", "inputs": {} },
  "3": { "class_type": "ImageInvert", "inputs": { "image": ["1", 0] } },
  "4": { "class_type": "SaveImage", "inputs": { "images": ["3", 0], "filename_prefix": "out" } }
}`;

describe('workflow problems: where each node error lands', () => {
  it("rule: a missing input (the field is absent) lands on the node's key, not on the next node that has that field", () => {
    const [span] = nodeErrorSpans(WORKFLOW, [{ nodeId: '2', field: 'image' }]);
    assert.deepEqual(span, { offset: nth(WORKFLOW, '"2"', 0), length: 3 });
  });

  it("rule: a field the node has (an unknown or bad input) lands on that field's key in that node", () => {
    const [span] = nodeErrorSpans(WORKFLOW, [{ nodeId: '4', field: 'images' }]);
    assert.deepEqual(span, { offset: nth(WORKFLOW, '"images"', 0), length: '"images"'.length });
    // "image" of node 3 and "images" of node 4: the field is looked up in its node only.
    const [image] = nodeErrorSpans(WORKFLOW, [{ nodeId: '3', field: 'image' }]);
    assert.equal(image.offset, nth(WORKFLOW, '"image"', 0));
  });

  it("rule: an error without a field lands on the node's key", () => {
    assert.deepEqual(covered(WORKFLOW, [{ nodeId: '3' }, { nodeId: '3', field: null }]), ['"3"', '"3"']);
    assert.equal(nodeErrorSpans(WORKFLOW, [{ nodeId: '3' }])[0].offset, nth(WORKFLOW, '"3": {', 0));
  });

  it("rule: several nodes' errors each land in their own node, in the order given", () => {
    const spans = nodeErrorSpans(WORKFLOW, [
      { nodeId: '4', field: 'filename_prefix' },
      { nodeId: '1', field: 'width' },
      { nodeId: '2', field: 'image' },
    ]);
    assert.deepEqual(spans, [
      { offset: nth(WORKFLOW, '"filename_prefix"', 0), length: '"filename_prefix"'.length },
      { offset: nth(WORKFLOW, '"width"', 0), length: '"width"'.length },
      { offset: nth(WORKFLOW, '"2"', 0), length: 3 },
    ]);
  });

  it('rule: a node id that appears earlier as a string value, a nested key or in a comment is not mistaken for the node', () => {
    const text = `{
  // "7": the old saver, removed
  "1": { "class_type": "Note", "inputs": { "text": "7", "meta": { "7": "x", "images": 1 }, "link": ["7", 0] } },
  "7": { "class_type": "SaveImage", "inputs": { "images": ["1", 0] } }
}`;
    const nodeKey = text.indexOf('"7": { "class_type": "SaveImage"');
    assert.deepEqual(nodeErrorSpans(text, [{ nodeId: '7' }]), [{ offset: nodeKey, length: 3 }]);
    assert.deepEqual(nodeErrorSpans(text, [{ nodeId: '7', field: 'images' }]), [
      { offset: text.indexOf('"images"', nodeKey), length: 8 },
    ]);
    assert.deepEqual(nodeErrorSpans(text, [{ nodeId: '7', field: 'filename_prefix' }]), [
      { offset: nodeKey, length: 3 },
    ]);
  });

  it('rule: JSON with comments and trailing commas still gets positions', () => {
    const text = `/* exported by hand */
{
  "5": {
    // the sampler
    "class_type": "KSampler",
    "inputs": { "seed": 1, "steps": 20, },
  },
}`;
    assert.deepEqual(
      covered(text, [
        { nodeId: '5', field: 'steps' },
        { nodeId: '5', field: 'cfg' },
      ]),
      ['"steps"', '"5"'],
    );
    assert.equal(nodeErrorSpans(text, [{ nodeId: '5', field: 'steps' }])[0].offset, text.indexOf('"steps"'));
  });

  it('rule: a node the file does not have (or text that is not a JSON object) lands at the start of the file', () => {
    assert.deepEqual(nodeErrorSpans(WORKFLOW, [{ nodeId: '99', field: 'image' }]), [{ offset: 0, length: 0 }]);
    assert.deepEqual(nodeErrorSpans('[1, 2]', [{ nodeId: '0' }]), [{ offset: 0, length: 0 }]);
    assert.deepEqual(nodeErrorSpans('', [{ nodeId: '1' }]), [{ offset: 0, length: 0 }]);
  });

  it('rule: offsets count UTF-16 code units, as TextDocument.positionAt does', () => {
    const text = '{ "1": { "inputs": { "text": "🎨🎨" } }, "2": { "inputs": { "x": 1 } } }';
    assert.deepEqual(covered(text, [{ nodeId: '2', field: 'x' }]), ['"x"']);
  });

  it("rule: bundled as esbuild.mjs bundles it (jsonc-parser's ESM build), errors are placed as with the package's main build", () => {
    // The bundles take the package's ESM build (esbuild.mjs mainFields: its UMD main cannot be bundled); the tests
    // above run tsc's output, which Node gives the UMD main.
    const root = path.resolve(__dirname, '../../..');
    const bundle = esbuild.buildSync({
      entryPoints: [path.join(root, 'src/core/util/workflowPositions.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      mainFields: ['module', 'main'],
      write: false,
      logLevel: 'silent',
    });
    assert.match(
      bundle.outputFiles[0].text,
      /node_modules\/jsonc-parser\/lib\/esm\//,
      'not the ESM build: the comparison proves nothing',
    );
    const module = { exports: {} as { nodeErrorSpans: typeof nodeErrorSpans } };
    vm.runInThisContext(`(function (module, exports, require) { ${bundle.outputFiles[0].text} \n})`)(
      module,
      module.exports,
      require,
    );
    const targets = [{ nodeId: '2', field: 'image' }, { nodeId: '4', field: 'images' }, { nodeId: '99' }];
    assert.deepEqual(module.exports.nodeErrorSpans(WORKFLOW, targets), nodeErrorSpans(WORKFLOW, targets));
    assert.deepEqual(nodeErrorSpans(WORKFLOW, targets)[0], { offset: nth(WORKFLOW, '"2"', 0), length: 3 });
  });
});
