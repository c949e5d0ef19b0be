/**
 * UI format to API format, the rules for widgets and links, one test per rule, each expected graph worked out by
 * reading ComfyUI_frontend's graphToPrompt (src/utils/executionUtil.ts), PrimitiveNode's applyToGraph and the widget
 * constructors (control_after_generate, upload): widget values by position, defaults, boxed arrays, Reroutes,
 * PrimitiveNodes, converted widgets, and muted nodes.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseObjectInfo } from '../../src/core/workflowSchema';
import { convert, find, input, node, output, relink, txt2img, txt2imgExpected } from './convert-rules.fixtures';
import { caseDefinitions, convertFixtures } from './convertBuilders';

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

  it('saved values past the last widget are ignored as LGraphNode.configure ignores them: SaveImage ["ComfyUI", ""] is queued as filename_prefix "ComfyUI"', () => {
    const g = txt2img();
    find(g.nodes, 9).widgets_values = ['ComfyUI', ''];
    assert.deepEqual(convert(g), txt2imgExpected());
    // The values before them still have to line up: a value of the wrong type is still refused.
    find(g.nodes, 9).widgets_values = [7, 'ComfyUI'];
    assert.throws(() => convert(g), /node 9 \(SaveImage\): widget "filename_prefix" \(STRING\) holds 7/);
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
});
