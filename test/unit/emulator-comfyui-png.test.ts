/**
 * The PNGs the emulator's ComfyUI server saves carry the graph as ComfyUI's SaveImage writes it (ComfyUI server API
 * (observed)): a `prompt` tEXt chunk (the API-format graph as run) and one chunk per key of the submission's
 * `extra_data.extra_pnginfo`, so a UI-format workflow sent as `extra_pnginfo.workflow` comes back out of its image.
 * Waits are on the socket's frames, never on sleeps.
 */
import * as assert from 'node:assert/strict';
import { readImageWorkflow } from '../../src/core/convert/image';
import { Socket } from './emulator-v1.fixtures';
import { call, useEmulator, type Json } from './harness';

/** EmptyImage → SaveImage, of a colour of its own (never answered from the cache). */
function prompt(color: number): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color } },
    '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'pnginfo' } },
  };
}

describe('emulator ComfyUI server: extra_pnginfo into the saved PNG (ComfyUI server API (observed))', function () {
  this.timeout(30_000);
  const emu = useEmulator();

  /** Posts `body` (with a client_id) and waits for its run to end; returns the bytes of its first output. */
  async function runAndFetch(body: Json, clientId: string): Promise<Uint8Array> {
    const socket = await Socket.open(`${emu().comfyui!.wsUrl}?clientId=${clientId}`);
    try {
      await socket.message('status');
      const answer = await call(`${emu().comfyuiUrl}/prompt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, client_id: clientId }),
      });
      assert.equal(answer.status, 200, answer.text);
      const id = answer.body.prompt_id as string;
      await socket.message('executing', id, (m) => m.data.node === null);
      const history = await call(`${emu().comfyuiUrl}/history/${id}`);
      const [image] = history.body[id].outputs['2'].images;
      const view = await fetch(
        `${emu().comfyuiUrl}/view?filename=${encodeURIComponent(image.filename)}&type=output&subfolder=`,
      );
      assert.equal(view.status, 200);
      return new Uint8Array(await view.arrayBuffer());
    } finally {
      await socket.close();
    }
  }

  it('a prompt sent with extra_pnginfo.workflow saves PNGs whose workflow chunk is that workflow, and whose prompt chunk is the graph as run', async () => {
    const graph = prompt(0x123456);
    // A UI-format document as the frontend sends it (with a character past ASCII: written \uXXXX, as json.dumps does).
    const workflow = { last_node_id: 2, nodes: [{ id: 1, type: 'EmptyImage', title: 'Café' }], links: [] };
    const png = await runAndFetch({ prompt: graph, extra_data: { extra_pnginfo: { workflow } } }, 'pnginfo-a');
    const found = readImageWorkflow(png);
    assert.deepEqual(found.workflow, workflow);
    assert.deepEqual(found.prompt, graph);
  });

  it('without extra_pnginfo only the prompt chunk is written; a key no tEXt keyword can hold is left out, the run unharmed', async () => {
    const plain = readImageWorkflow(await runAndFetch({ prompt: prompt(0x010203) }, 'pnginfo-b'));
    assert.equal(plain.workflow, undefined);
    assert.ok(plain.prompt);
    const odd = readImageWorkflow(
      await runAndFetch(
        { prompt: prompt(0x040506), extra_data: { extra_pnginfo: { ['k'.repeat(80)]: 1, é: 2 } } },
        'pnginfo-c',
      ),
    );
    assert.equal(odd.workflow, undefined);
    assert.ok(odd.prompt);
  });
});
