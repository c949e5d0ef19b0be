/**
 * UI format to API format, the rules for graph structure, one test per rule, each expected graph worked out by reading
 * ComfyUI_frontend's graphToPrompt, ExecutableNodeDTO (resolveInput / resolveOutput / bypass slot matching) and
 * GroupNodeConfig (src/extensions/core/groupNode.ts): bypassed nodes, link formats, nested subgraphs, legacy group
 * nodes and v3 dynamic combos.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseObjectInfo } from '../../src/core/workflowSchema';
import {
  convert,
  find,
  input,
  nestedSubgraphs,
  node,
  output,
  relink,
  txt2img,
  txt2imgExpected,
} from './convert-rules.fixtures';
import { convertFixtures } from './convertBuilders';

describe('UI format to API format: the rules (ComfyUI_frontend graphToPrompt)', () => {
  it('a bypassed node (mode 4) passes each output on from its input of the same slot and type, else the first of that type', () => {
    const g = txt2img();
    // LoraLoader 10 between the checkpoint and the sampler/prompts, bypassed.
    g.nodes.push(
      node(
        10,
        'LoraLoader',
        ['x.safetensors', 1, 1],
        [input('model', 'MODEL', 20), input('clip', 'CLIP', 21)],
        [output('MODEL', 'MODEL', [1]), output('CLIP', 'CLIP', [2, 3])],
        { mode: 4 },
      ),
    );
    g.links.push([20, 4, 0, 10, 0, 'MODEL'], [21, 4, 1, 10, 1, 'CLIP']);
    relink(g, 1, 10, 0);
    relink(g, 2, 10, 1);
    relink(g, 3, 10, 1);
    assert.deepEqual(convert(g), txt2imgExpected());
    // Outputs whose slot has another type: the first input of the target's type. LatentUpscaleBy bypassed between
    // the sampler and the decoder: its LATENT output takes its `samples` input.
    const h = txt2img();
    h.nodes.push(
      node(
        11,
        'LatentUpscaleBy',
        ['nearest-exact', 1.5],
        [input('samples', 'LATENT', 22)],
        [output('LATENT', 'LATENT', [7])],
        { mode: 4 },
      ),
    );
    h.links.push([22, 3, 0, 11, 0, 'LATENT']);
    relink(h, 7, 11, 0);
    assert.deepEqual(convert(h), txt2imgExpected());
    // KSampler bypassed: its LATENT output (slot 0, where its input is a MODEL) takes latent_image, the first LATENT.
    const k = txt2img();
    find(k.nodes, 3).mode = 4;
    const want = txt2imgExpected();
    delete want['3'];
    want['8']!.inputs.samples = ['5', 0];
    assert.deepEqual(convert(k), want);
    // Same slot first: output 1 of a bypassed node with two LATENT inputs takes input 1 (a class the engine need
    // not have: a bypassed node is never queued).
    const m = txt2img();
    m.nodes.push(
      node(
        12,
        'TwoLatents',
        [],
        [input('a', 'LATENT', 23), input('b', 'LATENT', 24)],
        [output('A', 'LATENT'), output('B', 'LATENT', [7])],
        { mode: 4 },
      ),
    );
    m.nodes.push(node(13, 'EmptyLatentImage', [64, 64, 1], [], [output('LATENT', 'LATENT', [23])]));
    m.links.push([23, 13, 0, 12, 0, 'LATENT'], [24, 3, 0, 12, 1, 'LATENT']);
    relink(m, 7, 12, 1);
    const wantM = txt2imgExpected();
    wantM['13'] = { class_type: 'EmptyLatentImage', inputs: { width: 64, height: 64, batch_size: 1 } };
    assert.deepEqual(convert(m), wantM);
  });

  it('schema 0.4 array links and version-1 object links give the same graph', () => {
    const g = txt2img();
    const v1 = {
      version: 1,
      nodes: g.nodes,
      links: g.links.map(([id, o, os, t, ts, type]) => ({
        id,
        origin_id: o,
        origin_slot: os,
        target_id: t,
        target_slot: ts,
        type,
      })),
    };
    assert.deepEqual(convert(v1), convert({ ...g, version: 0.4 }));
    assert.deepEqual(convert(v1), txt2imgExpected());
  });

  it('nested subgraphs: inner nodes get path ids ("10:20:30"), links cross the -10/-20 boxes, promoted widgets feed inner inputs', () => {
    const api = convert(nestedSubgraphs());
    const want = txt2imgExpected();
    delete want['6'];
    want['10:20:30'] = { class_type: 'CLIPTextEncode', inputs: { text: 'a promoted castle', clip: ['4', 1] } };
    want['3']!.inputs.positive = ['10:20:30', 0];
    assert.deepEqual(api, want);
  });

  it('a legacy group node (extra.groupNodes, type workflow>Name) is opened: inner nodes "id:index", its inputs, outputs and widgets handed through', () => {
    const g = txt2img();
    g.nodes = g.nodes.filter((n) => n.id !== 6 && n.id !== 7);
    // Both prompts in one group node 40: two inputs (clip, "CLIPTextEncode clip"), two widgets, two outputs.
    g.nodes.push(
      node(
        40,
        'workflow>Prompts',
        ['a castle', 'blurry'],
        [input('clip', 'CLIP', 2), input('CLIPTextEncode clip', 'CLIP', 3)],
        [output('CONDITIONING', 'CONDITIONING', [4]), output('CLIPTextEncode CONDITIONING', 'CONDITIONING', [5])],
      ),
    );
    g.links.find((l) => l[0] === 2)!.splice(3, 2, 40, 0);
    g.links.find((l) => l[0] === 3)!.splice(3, 2, 40, 1);
    relink(g, 4, 40, 0);
    relink(g, 5, 40, 1);
    const groupNodes = {
      Prompts: {
        nodes: [
          {
            type: 'CLIPTextEncode',
            index: 0,
            mode: 0,
            inputs: [{ name: 'clip', type: 'CLIP', link: null }],
            outputs: [{ name: 'CONDITIONING', type: 'CONDITIONING', links: [] }],
            widgets_values: [''],
          },
          {
            type: 'CLIPTextEncode',
            index: 1,
            mode: 0,
            inputs: [{ name: 'clip', type: 'CLIP', link: null }],
            outputs: [{ name: 'CONDITIONING', type: 'CONDITIONING', links: [] }],
            widgets_values: [''],
          },
        ],
        links: [
          [null, 1, 0, 0, 4, 'CLIP'],
          [null, 1, 1, 0, 4, 'CLIP'],
        ],
        external: [
          [0, 0, 'CONDITIONING'],
          [1, 0, 'CONDITIONING'],
        ],
      },
    };
    const api = convert({ ...g, extra: { groupNodes } });
    const want = txt2imgExpected();
    delete want['6'];
    delete want['7'];
    want['40:0'] = { class_type: 'CLIPTextEncode', inputs: { text: 'a castle', clip: ['4', 1] } };
    want['40:1'] = { class_type: 'CLIPTextEncode', inputs: { text: 'blurry', clip: ['4', 1] } };
    want['3']!.inputs.positive = ['40:0', 0];
    want['3']!.inputs.negative = ['40:1', 0];
    assert.deepEqual(api, want);
  });

  it("v3 dynamic combo: the chosen option's widgets follow it, named <input>.<name>; autogrow slots are sent under their own names", () => {
    const defs = parseObjectInfo({
      ...JSON.parse(
        fs.readFileSync(
          path.join(convertFixtures(), '..', 'object_info', 'comfy-ts-object_info-v3-widgets.json'),
          'utf8',
        ),
      ),
      LoadImage: { input: { required: { image: [['a.png'], { image_upload: true }] } }, output: ['IMAGE', 'MASK'] },
      Stack: {
        input: {
          required: {
            images: [
              'COMFY_AUTOGROW_V3',
              { template: { input: { required: { image: ['IMAGE', {}] } }, prefix: 'image', min: 1 } },
            ],
          },
        },
        output: ['IMAGE'],
      },
    });
    const wf = {
      nodes: [
        node(1, 'LoadImage', ['a.png', 'image'], [], [output('IMAGE', 'IMAGE', [1, 2, 3]), output('MASK', 'MASK')]),
        node(
          2,
          'ResizeImageMaskNode',
          ['scale dimensions', 640, 480, 'center', 'lanczos'],
          [input('input', 'IMAGE,MASK', 1)],
          [output('IMAGE', 'IMAGE')],
        ),
        node(
          3,
          'Stack',
          [],
          [input('images.image0', 'IMAGE', 2), input('images.image1', 'IMAGE', 3)],
          [output('IMAGE', 'IMAGE')],
        ),
      ],
      links: [
        [1, 1, 0, 2, 0, 'IMAGE'],
        [2, 1, 0, 3, 0, 'IMAGE'],
        [3, 1, 0, 3, 1, 'IMAGE'],
      ],
    };
    assert.deepEqual(convert(wf, defs), {
      '1': { class_type: 'LoadImage', inputs: { image: 'a.png' } },
      '2': {
        class_type: 'ResizeImageMaskNode',
        inputs: {
          resize_type: 'scale dimensions',
          'resize_type.width': 640,
          'resize_type.height': 480,
          'resize_type.crop': 'center',
          scale_method: 'lanczos',
          input: ['1', 0],
        },
      },
      '3': { class_type: 'Stack', inputs: { 'images.image0': ['1', 0], 'images.image1': ['1', 0] } },
    });
  });
});
