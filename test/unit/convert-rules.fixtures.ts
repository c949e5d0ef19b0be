/**
 * Shared by the convert-rules-*.test.ts suites (UI format to API format, one test per conversion rule): small
 * UI-format graph builders, the txt2img graph of the corpus's ex-lora_multiple layout (checkpoint 4, KSampler 3, prompts
 * 6 and 7, latent 5, decode 8, save 9) with its expected API graph, and a conversion or refusal over the recorded
 * definitions.
 */
import * as assert from 'node:assert/strict';
import { ConversionError, convertUiWorkflow } from '../../src/core/convert';
import type { ApiWorkflow } from '../../src/core/util/workflow';
import { recordedDefinitions } from './convertBuilders';

/*
 * One test per conversion rule. The workflows are small UI-format graphs written here (most from the corpus's
 * ex-lora_multiple layout: checkpoint 4, KSampler 3, prompts 6 and 7, latent 5, decode 8, save 9), each with its
 * expected graph worked out by reading ComfyUI_frontend's graphToPrompt (src/utils/executionUtil.ts),
 * ExecutableNodeDTO (resolveInput / resolveOutput / bypass slot matching), PrimitiveNode's applyToGraph, the widget
 * constructors (control_after_generate, upload) and GroupNodeConfig (src/extensions/core/groupNode.ts).
 */

export type Slot = { name: string; type: string; link: number | null; widget?: { name: string } };
export type Out = { name: string; type: string; links: number[] | null };
export type UiNode = {
  id: number;
  type: string;
  mode: number;
  title?: string;
  inputs: Slot[];
  outputs: Out[];
  widgets_values?: unknown;
  properties: Record<string, unknown>;
};
export type LinkRow = [number, number, number, number, number, string];

export function node(
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
export const input = (name: string, type: string, link: number | null, widget?: string): Slot => ({
  name,
  type,
  link,
  ...(widget ? { widget: { name: widget } } : {}),
});
export const output = (name: string, type: string, links: number[] = []): Out => ({ name, type, links });

/** The ex-lora_multiple layout without its LoRAs: a plain txt2img graph, links 1 to 9. */
export function txt2img(): { nodes: UiNode[]; links: LinkRow[] } {
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
export function txt2imgExpected(): ApiWorkflow {
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

export function find(nodes: UiNode[], id: number): UiNode {
  const n = nodes.find((x) => x.id === id);
  assert.ok(n, `node ${id}`);
  return n;
}

/** Re-points link `id` (and the input it ends at) to a new origin. */
export function relink(g: { nodes: UiNode[]; links: LinkRow[] }, id: number, origin: number, slot: number): void {
  const row = g.links.find((l) => l[0] === id)!;
  row[1] = origin;
  row[2] = slot;
}

export function convert(workflow: unknown, definitions = recordedDefinitions()): ApiWorkflow {
  const api = convertUiWorkflow(workflow, definitions);
  // _meta is not part of the comparison.
  return Object.fromEntries(Object.entries(api).map(([id, n]) => [id, { class_type: n.class_type, inputs: n.inputs }]));
}

export function refusal(workflow: unknown, definitions = recordedDefinitions()): ConversionError {
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
export function nestedSubgraphs(innerType = 'CLIPTextEncode'): unknown {
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
