import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConversionError, convertUiWorkflow } from '../../src/core/convert';
import type { ApiWorkflow } from '../../src/core/util/workflow';
import { parseObjectInfo } from '../../src/core/workflowSchema';
import { caseDefinitions, convertFixtures, recordedDefinitions } from './convertBuilders';

/*
 * One test per conversion rule. The workflows are small UI-format graphs written here (most from the corpus's
 * ex-lora_multiple layout: checkpoint 4, KSampler 3, prompts 6 and 7, latent 5, decode 8, save 9), each with its
 * expected graph worked out by reading ComfyUI_frontend's graphToPrompt (src/utils/executionUtil.ts),
 * ExecutableNodeDTO (resolveInput / resolveOutput / bypass slot matching), PrimitiveNode's applyToGraph, the widget
 * constructors (control_after_generate, upload) and GroupNodeConfig (src/extensions/core/groupNode.ts).
 */

type Slot = { name: string; type: string; link: number | null; widget?: { name: string } };
type Out = { name: string; type: string; links: number[] | null };
type UiNode = {
  id: number;
  type: string;
  mode: number;
  title?: string;
  inputs: Slot[];
  outputs: Out[];
  widgets_values?: unknown;
  properties: Record<string, unknown>;
};
type LinkRow = [number, number, number, number, number, string];

function node(
  id: number,
  type: string,
  widgets: unknown[] | undefined,
  inputs: Slot[] = [],
  outputs: Out[] = [],
  more: Partial<UiNode> = {},
): UiNode {
  return {
    id,
    type,
    mode: 0,
    inputs,
    outputs,
    ...(widgets !== undefined ? { widgets_values: widgets } : {}),
    properties: {},
    ...more,
  };
}
const input = (name: string, type: string, link: number | null, widget?: string): Slot => ({
  name,
  type,
  link,
  ...(widget ? { widget: { name: widget } } : {}),
});
const output = (name: string, type: string, links: number[] = []): Out => ({ name, type, links });

/** The ex-lora_multiple layout without its LoRAs: a plain txt2img graph, links 1 to 9. */
function txt2img(): { nodes: UiNode[]; links: LinkRow[] } {
  return {
    nodes: [
      node(
        4,
        'CheckpointLoaderSimple',
        ['photon_v1.safetensors'],
        [],
        [output('MODEL', 'MODEL', [1]), output('CLIP', 'CLIP', [2, 3]), output('VAE', 'VAE', [8])],
      ),
      node(
        6,
        'CLIPTextEncode',
        ['a castle'],
        [input('clip', 'CLIP', 2)],
        [output('CONDITIONING', 'CONDITIONING', [4])],
      ),
      node(7, 'CLIPTextEncode', ['blurry'], [input('clip', 'CLIP', 3)], [output('CONDITIONING', 'CONDITIONING', [5])]),
      node(5, 'EmptyLatentImage', [512, 512, 1], [], [output('LATENT', 'LATENT', [6])]),
      node(
        3,
        'KSampler',
        [42, 'randomize', 20, 8, 'euler', 'normal', 1],
        [
          input('model', 'MODEL', 1),
          input('positive', 'CONDITIONING', 4),
          input('negative', 'CONDITIONING', 5),
          input('latent_image', 'LATENT', 6),
        ],
        [output('LATENT', 'LATENT', [7])],
      ),
      node(
        8,
        'VAEDecode',
        undefined,
        [input('samples', 'LATENT', 7), input('vae', 'VAE', 8)],
        [output('IMAGE', 'IMAGE', [9])],
      ),
      node(9, 'SaveImage', ['ComfyUI'], [input('images', 'IMAGE', 9)], []),
    ],
    links: [
      [1, 4, 0, 3, 0, 'MODEL'],
      [2, 4, 1, 6, 0, 'CLIP'],
      [3, 4, 1, 7, 0, 'CLIP'],
      [4, 6, 0, 3, 1, 'CONDITIONING'],
      [5, 7, 0, 3, 2, 'CONDITIONING'],
      [6, 5, 0, 3, 3, 'LATENT'],
      [7, 3, 0, 8, 0, 'LATENT'],
      [8, 4, 2, 8, 1, 'VAE'],
      [9, 8, 0, 9, 0, 'IMAGE'],
    ],
  };
}

/** What the frontend queues for {@link txt2img}. */
function txt2imgExpected(): ApiWorkflow {
  return {
    '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'photon_v1.safetensors' } },
    '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a castle', clip: ['4', 1] } },
    '7': { class_type: 'CLIPTextEncode', inputs: { text: 'blurry', clip: ['4', 1] } },
    '5': { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512, batch_size: 1 } },
    '3': {
      class_type: 'KSampler',
      inputs: {
        seed: 42,
        steps: 20,
        cfg: 8,
        sampler_name: 'euler',
        scheduler: 'normal',
        denoise: 1,
        model: ['4', 0],
        positive: ['6', 0],
        negative: ['7', 0],
        latent_image: ['5', 0],
      },
    },
    '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
    '9': { class_type: 'SaveImage', inputs: { filename_prefix: 'ComfyUI', images: ['8', 0] } },
  };
}

function find(nodes: UiNode[], id: number): UiNode {
  const n = nodes.find((x) => x.id === id);
  assert.ok(n, `node ${id}`);
  return n;
}

/** Re-points link `id` (and the input it ends at) to a new origin. */
function relink(g: { nodes: UiNode[]; links: LinkRow[] }, id: number, origin: number, slot: number): void {
  const row = g.links.find((l) => l[0] === id)!;
  row[1] = origin;
  row[2] = slot;
}

function convert(workflow: unknown, definitions = recordedDefinitions()): ApiWorkflow {
  const api = convertUiWorkflow(workflow, definitions);
  // _meta is not part of the comparison.
  return Object.fromEntries(Object.entries(api).map(([id, n]) => [id, { class_type: n.class_type, inputs: n.inputs }]));
}

function refusal(workflow: unknown, definitions = recordedDefinitions()): ConversionError {
  try {
    convertUiWorkflow(workflow, definitions);
  } catch (err) {
    assert.ok(err instanceof ConversionError, String(err));
    return err;
  }
  assert.fail('the conversion was not refused');
}

/**
 * {@link txt2img} with its positive prompt (node 6) moved two subgraphs deep: root instance 10 of subgraph A (clip in,
 * text promoted as a widget, conditioning out) holds instance 20 of subgraph B, which holds the CLIPTextEncode 30; the
 * API graph names that node by its path id `"10:20:30"`. `innerType` replaces node 30's class.
 */
function nestedSubgraphs(innerType = 'CLIPTextEncode'): unknown {
  const g = txt2img();
  g.nodes = g.nodes.filter((n) => n.id !== 6);
  g.nodes.push(
    node(
      10,
      'aaaaaaaa-0000-4000-8000-000000000001',
      ['a promoted castle'],
      [input('clip', 'CLIP', 2), input('text', 'STRING', null, 'text')],
      [output('CONDITIONING', 'CONDITIONING', [4])],
    ),
  );
  g.links.find((l) => l[0] === 2)![3] = 10;
  relink(g, 4, 10, 0);
  const io = (id: number, o: number, os: number, t: number, ts: number, type: string) => ({
    id,
    origin_id: o,
    origin_slot: os,
    target_id: t,
    target_slot: ts,
    type,
  });
  const subgraphA = {
    id: 'aaaaaaaa-0000-4000-8000-000000000001',
    name: 'A',
    inputs: [
      { name: 'clip', type: 'CLIP', linkIds: [1] },
      { name: 'text', type: 'STRING', linkIds: [2] },
    ],
    outputs: [{ name: 'CONDITIONING', type: 'CONDITIONING', linkIds: [3] }],
    nodes: [
      node(
        20,
        'bbbbbbbb-0000-4000-8000-000000000002',
        [],
        [input('clip', 'CLIP', 1), input('text', 'STRING', 2, 'text')],
        [output('CONDITIONING', 'CONDITIONING', [3])],
      ),
    ],
    links: [io(1, -10, 0, 20, 0, 'CLIP'), io(2, -10, 1, 20, 1, 'STRING'), io(3, 20, 0, -20, 0, 'CONDITIONING')],
  };
  const subgraphB = {
    id: 'bbbbbbbb-0000-4000-8000-000000000002',
    name: 'B',
    inputs: [
      { name: 'clip', type: 'CLIP', linkIds: [1] },
      { name: 'text', type: 'STRING', linkIds: [2] },
    ],
    outputs: [{ name: 'CONDITIONING', type: 'CONDITIONING', linkIds: [3] }],
    nodes: [
      node(
        30,
        innerType,
        ['the inner value, replaced'],
        [input('clip', 'CLIP', 1), input('text', 'STRING', 2, 'text')],
        [output('CONDITIONING', 'CONDITIONING', [3])],
      ),
    ],
    links: [io(1, -10, 0, 30, 0, 'CLIP'), io(2, -10, 1, 30, 1, 'STRING'), io(3, 30, 0, -20, 0, 'CONDITIONING')],
  };
  return { version: 1, nodes: g.nodes, links: g.links, definitions: { subgraphs: [subgraphA, subgraphB] } };
}

describe('UI format to API format: the rules (ComfyUI_frontend graphToPrompt)', () => {
  it('widgets take widgets_values by position; control_after_generate values (seed, noise_seed) are skipped and never sent', () => {
    assert.deepEqual(convert({ ...txt2img(), version: 0.4 }), txt2imgExpected());
    // The first frontends saved the control as a true/false "randomize" toggle.
    const old = txt2img();
    find(old.nodes, 3).widgets_values = [42, true, 20, 8, 'euler', 'normal', 1];
    assert.deepEqual(convert(old), txt2imgExpected());
    // Recent frontends keep the control out of widgets_values.
    const recent = txt2img();
    find(recent.nodes, 3).widgets_values = [42, 20, 8, 'euler', 'normal', 1];
    assert.deepEqual(convert(recent), txt2imgExpected());
  });

  it('control_after_generate from the definition: explicit false has none, a combo with it has a control and a filter widget', () => {
    const defs = parseObjectInfo(
      JSON.parse(
        fs.readFileSync(
          path.join(convertFixtures(), '..', 'object_info', 'comfy-ts-object_info-v3-widgets.json'),
          'utf8',
        ),
      ),
    );
    const wf = {
      nodes: [node(1, 'TestControlCombo', ['b', 'increment', '', 7, 30], [input('text', 'STRING', null)], [])],
      links: [],
    };
    assert.deepEqual(convert(wf, defs), {
      '1': { class_type: 'TestControlCombo', inputs: { mode: 'b', seed: 7, steps: 30 } },
    });
  });

  it('an image upload widget takes its saved value but is not sent', () => {
    const wf = {
      nodes: [node(1, 'LoadImage', ['example.png', 'image'], [], [output('IMAGE', 'IMAGE'), output('MASK', 'MASK')])],
      links: [],
    };
    assert.deepEqual(convert(wf), { '1': { class_type: 'LoadImage', inputs: { image: 'example.png' } } });
  });

  it('a widget with no saved value (the input is newer than the workflow) takes its default', () => {
    const g = txt2img();
    find(g.nodes, 3).widgets_values = [42, 'fixed', 20, 8, 'euler', 'normal'];
    assert.deepEqual(convert(g), txt2imgExpected());
  });

  it('array widget values are boxed as {__value__: [...]}', () => {
    const defs = parseObjectInfo({
      Multi: { input: { required: { tags: ['COMBO', { options: ['a', 'b', 'c'], multiselect: true }] } }, output: [] },
    });
    const wf = { nodes: [node(1, 'Multi', [['a', 'c']])], links: [] };
    assert.deepEqual(convert(wf, defs), { '1': { class_type: 'Multi', inputs: { tags: { __value__: ['a', 'c'] } } } });
  });

  it('Reroute chains and fan-outs resolve to the node behind them', () => {
    const g = txt2img();
    // Checkpoint MODEL -> Reroute 100 -> Reroute 101 -> KSampler; checkpoint CLIP -> Reroute 102 -> both prompts.
    g.nodes.push(
      node(100, 'Reroute', undefined, [input('', '*', 20)], [output('', 'MODEL', [21])]),
      node(101, 'Reroute', undefined, [input('', '*', 21)], [output('', 'MODEL', [1])]),
      node(102, 'Reroute', undefined, [input('', '*', 22)], [output('', 'CLIP', [2, 3])]),
    );
    g.links.push([20, 4, 0, 100, 0, 'MODEL'], [21, 100, 0, 101, 0, 'MODEL'], [22, 4, 1, 102, 0, 'CLIP']);
    relink(g, 1, 101, 0);
    relink(g, 2, 102, 0);
    relink(g, 3, 102, 0);
    assert.deepEqual(convert(g), txt2imgExpected());
  });

  it('a PrimitiveNode writes its value onto every widget it feeds, and is not queued', () => {
    const g = txt2img();
    g.nodes.push(
      node(50, 'PrimitiveNode', [768, 'fixed'], [], [{ ...output('INT', 'INT', [30, 31]) }], { title: 'size' }),
    );
    find(g.nodes, 5).inputs.push(input('width', 'INT', 30, 'width'), input('height', 'INT', 31, 'height'));
    g.links.push([30, 50, 0, 5, 0, 'INT'], [31, 50, 0, 5, 1, 'INT']);
    const want = txt2imgExpected();
    want['5']!.inputs = { width: 768, height: 768, batch_size: 1 };
    assert.deepEqual(convert(g), want);
  });

  it('a widget converted to an input and linked takes the link instead of its value', () => {
    // PrimitiveInt (a real class, with control_after_generate) of the 2025-10 engine feeds KSampler's steps.
    const defs = caseDefinitions('comfy-ts+comfyui-a125cd8.json');
    const g = txt2img();
    find(g.nodes, 3).inputs.push(input('steps', 'INT', 40, 'steps'));
    g.nodes.push(node(62, 'PrimitiveInt', [30, 'fixed'], [], [output('INT', 'INT', [40])]));
    g.links.push([40, 62, 0, 3, 4, 'INT']);
    const want = txt2imgExpected();
    want['3']!.inputs.steps = ['62', 0];
    want['62'] = { class_type: 'PrimitiveInt', inputs: { value: 30 } };
    assert.deepEqual(convert(g, defs), want);
  });

  it("a widget's socket is found through its link id even when the link record names another slot; links between nodes that are gone are dropped", () => {
    // The shape of ComfyUI_frontend's rgthree_corrupt_link asset: the record says slot 5, the socket is input 4.
    const g = txt2img();
    find(g.nodes, 3).inputs.push(input('steps', 'INT', 40, 'steps'));
    g.nodes.push(node(62, 'EmptyLatentImage', [64, 64, 1], [], [output('LATENT', 'LATENT', [])]));
    g.links.push([40, 5, 0, 3, 5, 'INT'], [99, 404, 0, 405, 0, 'INT']);
    // Link 41 goes to input "clip" of 7 from node 77, which is not in the workflow: the input is left unconnected.
    find(g.nodes, 7).inputs[0]!.link = 41;
    g.links.push([41, 77, 0, 7, 0, 'CLIP']);
    const api = convert(g);
    assert.deepEqual(api['3']!.inputs.steps, ['5', 0]);
    assert.deepEqual(api['7']!.inputs, { text: 'blurry' });
  });

  it('a muted node (mode 2) is left out, and inputs linked to it are dropped', () => {
    const g = txt2img();
    find(g.nodes, 8).mode = 2;
    const want = txt2imgExpected();
    delete want['8'];
    want['9']!.inputs = { filename_prefix: 'ComfyUI' };
    assert.deepEqual(convert(g), want);
  });

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

  it('a class the engine does not have is refused, naming the node, its class and title', () => {
    const g = txt2img();
    find(g.nodes, 7).type = 'T5TokenizerOptions';
    find(g.nodes, 7).title = 'Tokenizer';
    const err = refusal(g);
    assert.equal(err.code, 'workflow_not_convertible');
    assert.deepEqual(
      err.problems.map((p) => [p.nodeId, p.classType, p.title]),
      [['7', 'T5TokenizerOptions', 'Tokenizer']],
    );
    assert.match(err.problems[0]!.reason, /not among this engine's node definitions/);
    assert.match(err.problems[0]!.fix, /Install the custom node/);
  });

  it('a refused node inside a subgraph is named by its path id ("10:20:30"), as the API graph and the server name it, not by its inner id', () => {
    const err = refusal(nestedSubgraphs('NotInstalled'));
    assert.deepEqual(
      err.problems.map((p) => [p.nodeId, p.classType]),
      [['10:20:30', 'NotInstalled']],
    );
    assert.match(err.message, /^node 10:20:30 \(NotInstalled\): /m);
  });

  it("KJNodes' SetNode/GetNode (frontend-only) are refused with their fix", () => {
    const g = txt2img();
    g.nodes.push(
      node(20, 'SetNode', ['CLIP'], [input('CLIP', 'CLIP', 30)], [output('*', '*')], { title: 'Set_CLIP' }),
      node(21, 'GetNode', ['CLIP'], [], [output('CLIP', 'CLIP', [2, 3])], { title: 'Get_CLIP' }),
    );
    g.links.push([30, 4, 1, 20, 0, 'CLIP']);
    relink(g, 2, 21, 0);
    relink(g, 3, 21, 0);
    const err = refusal(g);
    assert.deepEqual(
      err.problems.map((p) => [p.nodeId, p.classType]),
      [
        ['20', 'SetNode'],
        ['21', 'GetNode'],
      ],
    );
    for (const p of err.problems) assert.match(p.fix, /SetNode\/GetNode pair with a direct link/);
  });

  it('every unconvertible node is listed, one line each in a readable message', () => {
    const g = txt2img();
    find(g.nodes, 6).type = 'NotInstalled';
    find(g.nodes, 3).widgets_values = [42, 'randomize', 'twenty', 8, 'euler', 'normal', 1];
    find(g.nodes, 9).widgets_values = ['ComfyUI', 'extra'];
    const err = refusal(g);
    assert.deepEqual(err.problems.map((p) => p.nodeId).sort(), ['3', '6', '9']);
    const lines = err.message.split('\n');
    assert.equal(lines[0], '3 nodes of the UI-format workflow cannot be converted to API format exactly:');
    assert.equal(lines.length, 4);
    assert.match(err.message, /^node 3 \(KSampler\): widget "steps" \(INT\) holds "twenty"/m);
    assert.match(
      err.message,
      /^node 9 \(SaveImage\): widgets_values holds 2 values where this engine's definition of the node has 1 widgets/m,
    );
    for (const p of err.problems) assert.ok(p.reason.length > 0 && p.fix.length > 0);
  });

  it('text the frontend rewrites when queued ({a|b} choices, comments in dynamic prompts; %date% in filename_prefix) is refused', () => {
    const g = txt2img();
    find(g.nodes, 6).widgets_values = ['a {red|blue} castle'];
    find(g.nodes, 9).widgets_values = ['%date:yyyy-MM-dd%/img'];
    assert.deepEqual(
      refusal(g)
        .problems.map((p) => p.nodeId)
        .sort(),
      ['6', '9'],
    );
  });

  it('a malformed links table is refused as ui_workflow_malformed', () => {
    const g = txt2img();
    (g.links as unknown[]).push(['x', 4, 0]);
    const err = refusal(g);
    assert.equal(err.code, 'ui_workflow_malformed');
    assert.match(err.message, /links\[9\] is not a link/);
    assert.equal(refusal({ nodes: 'none' }).code, 'ui_workflow_malformed');
    assert.equal(refusal([1, 2]).code, 'ui_workflow_malformed');
  });

  it('a loop of Reroutes is refused as ui_workflow_malformed, not followed forever', () => {
    const g = txt2img();
    g.nodes.push(
      node(100, 'Reroute', undefined, [input('', '*', 21)], [output('', 'MODEL', [20, 1])]),
      node(101, 'Reroute', undefined, [input('', '*', 20)], [output('', 'MODEL', [21])]),
    );
    g.links.push([20, 100, 0, 101, 0, 'MODEL'], [21, 101, 0, 100, 0, 'MODEL']);
    relink(g, 1, 100, 0);
    assert.equal(refusal(g).code, 'ui_workflow_malformed');
  });
});
