/**
 * A node's sockets as the workflow graph draws them (src/core/graph/sockets.ts): its linked inputs by name, its used
 * outputs by index, each with the link's type where the node definitions (or the UI file's link) give it.
 */
import * as assert from 'node:assert/strict';
import { graphFromApi } from '../../src/core/graph/model';
import { socketsOf } from '../../src/core/graph/sockets';
import { txt2imgExpected } from './convert-rules.fixtures';
import { recordedDefinitions } from './convertBuilders';

/** A text-to-image graph in API format, as ComfyUI's frontend queues it. */
const SD = txt2imgExpected();

describe('graph sockets: inputs and outputs drawn on the nodes, typed by their links', () => {
  it('with node definitions: each linked input by name and each used output by index, typed (MODEL, CLIP, VAE, LATENT, IMAGE)', () => {
    const graph = graphFromApi(SD, recordedDefinitions()).root;
    const sockets = socketsOf(graph);
    assert.deepEqual(sockets.get('4')!.outputs, [
      { index: 0, name: 'MODEL', type: 'MODEL' },
      { index: 1, name: 'CLIP', type: 'CLIP' },
      { index: 2, name: 'VAE', type: 'VAE' },
    ]);
    assert.deepEqual(sockets.get('4')!.inputs, []);
    assert.deepEqual(
      sockets
        .get('3')!
        .inputs.map((i) => `${i.name}:${i.type}`)
        .sort(),
      ['latent_image:LATENT', 'model:MODEL', 'negative:CONDITIONING', 'positive:CONDITIONING'],
    );
    assert.deepEqual(sockets.get('8')!.outputs, [{ index: 0, name: 'IMAGE', type: 'IMAGE' }]);
    // The output node: inputs only (no link leaves it).
    assert.deepEqual(sockets.get('9'), { inputs: [{ name: 'images', type: 'IMAGE' }], outputs: [] });
  });

  it('without definitions the links carry no type: sockets are still drawn, an output named by its index', () => {
    const graph = graphFromApi(SD).root;
    const sockets = socketsOf(graph);
    assert.deepEqual(sockets.get('4')!.outputs, [
      { index: 0, name: 'output 0', type: null },
      { index: 1, name: 'output 1', type: null },
      { index: 2, name: 'output 2', type: null },
    ]);
    assert.deepEqual(sockets.get('9')!.inputs, [{ name: 'images', type: null }]);
  });
});
