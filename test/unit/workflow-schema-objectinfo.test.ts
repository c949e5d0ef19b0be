import * as assert from 'node:assert/strict';
import { OBJECT_INFO_LIMITS, linkTypeMatches, parseObjectInfo } from '../../src/core/workflowSchema';
import { emulatorObjectInfo, recordedObjectInfo } from './workflowSchemaBuilders';

describe("object_info read into node definitions (Cloud API v1 (deprecated), Resources and their fields; the engine's fields)", () => {
  it("a real engine's recorded object_info is read whole: every class, none skipped", () => {
    const raw = recordedObjectInfo('comfy-ts-object_info.json');
    const defs = parseObjectInfo(raw);
    assert.equal(defs.classes.size, Object.keys(raw).length);
    assert.equal(defs.classes.size, 1017);
    assert.equal(defs.skipped, 0);
  });

  it('inputs keep required/optional, type, default, min, max, step, multiline and tooltip, in input_order', () => {
    const ks = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json')).classes.get('KSampler')!;
    assert.deepEqual(
      ks.inputs.map((i) => i.name),
      ['model', 'seed', 'steps', 'cfg', 'sampler_name', 'scheduler', 'positive', 'negative', 'latent_image', 'denoise'],
    );
    const steps = ks.inputs.find((i) => i.name === 'steps')!;
    assert.deepEqual(
      [steps.kind, steps.type, steps.required, steps.default, steps.min, steps.max],
      ['int', 'INT', true, 20, 1, 10000],
    );
    const cfg = ks.inputs.find((i) => i.name === 'cfg')!;
    assert.deepEqual([cfg.kind, cfg.step], ['float', 0.1]);
    assert.equal(ks.inputs.find((i) => i.name === 'model')!.kind, 'link');
    assert.match(ks.inputs.find((i) => i.name === 'seed')!.tooltip ?? '', /random seed/);
    const text = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json')).classes.get('CLIPTextEncode')!
      .inputs[0]!;
    assert.deepEqual([text.kind, text.multiline], ['string', true]);
  });

  it("input_order wins over the map's key order", () => {
    const defs = parseObjectInfo({
      N: { input: { required: { b: ['INT'], a: ['INT'] } }, input_order: { required: ['a', 'b'] }, output: [] },
    });
    assert.deepEqual(
      defs.classes.get('N')!.inputs.map((i) => i.name),
      ['a', 'b'],
    );
  });

  it('a combo is a list of choices (v1) or ["COMBO", {options}] (v3), multiselect kept', () => {
    const ks = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json')).classes.get('KSampler')!;
    const sampler = ks.inputs.find((i) => i.name === 'sampler_name')!;
    assert.equal(sampler.kind, 'combo');
    assert.equal(sampler.type, 'COMBO');
    assert.ok(sampler.choices!.includes('euler'));
    const v3 = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json'));
    const format = v3.classes.get('SaveVideo')!.inputs.find((i) => i.name === 'format')!;
    assert.deepEqual([format.kind, format.choices, format.default], ['combo', ['auto', 'mp4'], 'auto']);
    const multi = parseObjectInfo({
      N: { input: { required: { tags: ['COMBO', { options: ['a', 'b'], multiselect: true }] } } },
    }).classes.get('N')!.inputs[0]!;
    assert.equal(multi.multiselect, true);
  });

  it('an input with image_upload (or another *_upload) is an upload: its choices are the input folder of that moment', () => {
    const classes = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json')).classes;
    assert.equal(classes.get('LoadImage')!.inputs[0]!.upload, true);
    assert.equal(classes.get('KSampler')!.inputs.find((i) => i.name === 'sampler_name')!.upload, undefined);
  });

  it('forceInput makes a widget a link-only input; any other type name is a link type', () => {
    const v3 = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json'));
    const text = v3.classes.get('TestControlCombo')!.inputs.find((i) => i.name === 'text')!;
    assert.deepEqual([text.kind, text.type, text.forceInput], ['link', 'STRING', true]);
    const defs = parseObjectInfo({ N: { input: { required: { any: ['*'], img: ['IMAGE'] } } } });
    assert.deepEqual(
      defs.classes.get('N')!.inputs.map((i) => [i.kind, i.type]),
      [
        ['link', '*'],
        ['link', 'IMAGE'],
      ],
    );
  });

  it('v3 inputs: a dynamic combo is a combo of its keys, a match type is a link of its allowed types, autogrow and socketless are dynamic (never required)', () => {
    const v3 = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json')).classes;
    const resize = v3.get('ResizeImageMaskNode')!;
    const resizeType = resize.inputs.find((i) => i.name === 'resize_type')!;
    assert.equal(resizeType.kind, 'combo');
    assert.ok(resizeType.choices!.includes('scale dimensions'));
    assert.deepEqual(
      [resize.inputs.find((i) => i.name === 'input')!.kind, resize.inputs.find((i) => i.name === 'input')!.type],
      ['link', 'IMAGE,MASK'],
    );
    const values = v3.get('ComfyMathExpression')!.inputs.find((i) => i.name === 'values')!;
    assert.deepEqual([values.kind, values.required], ['dynamic', false]);
    const compare = v3.get('ImageCompare')!.inputs.find((i) => i.name === 'compare_view')!;
    assert.deepEqual([compare.kind, compare.required], ['dynamic', false]);
  });

  it('a comma-separated type with a primitive is a widget of that primitive that keeps the whole type for links', () => {
    const model = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json'))
      .classes.get('Preview3D')!
      .inputs.find((i) => i.name === 'model_file')!;
    assert.equal(model.kind, 'string');
    assert.match(model.type, /^STRING,FILE_3D_GLB,/);
  });

  it('outputs keep types, names and list flags; a combo output reads COMBO; output_node, display_name, category, description, deprecated, experimental', () => {
    const classes = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json')).classes;
    const ckpt = classes.get('CheckpointLoaderSimple')!;
    assert.deepEqual(
      ckpt.outputs.map((o) => o.type),
      ['MODEL', 'CLIP', 'VAE'],
    );
    assert.deepEqual([ckpt.displayName, ckpt.category, ckpt.outputNode], ['Load Checkpoint', 'loaders', false]);
    assert.match(ckpt.description, /checkpoint/);
    assert.equal(classes.get('SaveImage')!.outputNode, true);
    assert.ok([...classes.values()].some((d) => d.deprecated));
    assert.ok([...classes.values()].some((d) => d.experimental));
    const combo = parseObjectInfo({
      N: { input: {}, output: [['a', 'b']], output_name: ['choice'], output_is_list: [true], api_node: true },
    }).classes.get('N')!;
    assert.deepEqual(combo.outputs, [{ type: 'COMBO', name: 'choice', isList: true }]);
    assert.equal(combo.apiNode, true);
  });

  it("the emulator's own object_info is read: its six classes with their limits and the output nodes", () => {
    const defs = parseObjectInfo(emulatorObjectInfo());
    assert.deepEqual([...defs.classes.keys()].sort(), [
      'EmptyImage',
      'ImageInvert',
      'ImageScale',
      'LoadImage',
      'PreviewImage',
      'SaveImage',
    ]);
    const width = defs.classes.get('EmptyImage')!.inputs.find((i) => i.name === 'width')!;
    assert.deepEqual([width.min, width.max, width.default], [1, 16384, 512]);
    assert.deepEqual(
      [...defs.classes.values()]
        .filter((d) => d.outputNode)
        .map((d) => d.classType)
        .sort(),
      ['PreviewImage', 'SaveImage'],
    );
  });

  it('tolerant: odd classes and inputs are skipped and counted, odd fields read as absent, nothing throws', () => {
    const defs = parseObjectInfo({
      Good: {
        input: { required: { a: ['INT', { min: 'x', default: 3 }], b: 'not a tuple', c: [] } },
        output: 'IMAGE',
        display_name: 7,
        extra: { anything: true },
      },
      Bad: 'not an object',
      Null: null,
    });
    assert.deepEqual([...defs.classes.keys()], ['Good']);
    const good = defs.classes.get('Good')!;
    assert.deepEqual(
      good.inputs.map((i) => [i.name, i.min, i.default]),
      [['a', undefined, 3]],
    );
    assert.deepEqual([good.outputs, good.displayName], [[], 'Good']);
    assert.equal(defs.skipped, 4);
    for (const v of [null, [], 'x', 3]) assert.equal(parseObjectInfo(v).classes.size, 0);
  });

  it('bounded: at most OBJECT_INFO_LIMITS.classes classes and choicesPerInput choices are kept', () => {
    const many: Record<string, unknown> = {};
    for (let i = 0; i < OBJECT_INFO_LIMITS.classes + 3; i++) many[`C${i}`] = { input: {} };
    const defs = parseObjectInfo(many);
    assert.equal(defs.classes.size, OBJECT_INFO_LIMITS.classes);
    assert.equal(defs.skipped, 3);
    const choices = Array.from({ length: OBJECT_INFO_LIMITS.choicesPerInput + 10 }, (_, i) => `f${i}`);
    const combo = parseObjectInfo({ N: { input: { required: { f: [choices] } } } }).classes.get('N')!.inputs[0]!;
    assert.equal(combo.choices!.length, OBJECT_INFO_LIMITS.choicesPerInput);
  });
});

describe("object_info: what the UI-format conversion needs (the frontend's widgets: control_after_generate, upload, dynamic prompts, v3 dynamic inputs)", () => {
  it('control_after_generate is kept as given (true, a mode name, or false), absent when not given', () => {
    const v3 = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json'));
    const combo = v3.classes.get('TestControlCombo')!.inputs;
    assert.deepEqual(
      combo.map((i) => [i.name, i.controlAfterGenerate]),
      [
        ['mode', true],
        ['seed', false],
        ['text', undefined],
        ['steps', undefined],
      ],
    );
    assert.equal(v3.classes.get('TestControlString')!.inputs[0]!.controlAfterGenerate, true);
  });

  it("the upload widget's kind and dynamicPrompts are kept", () => {
    const defs = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json'));
    assert.equal(defs.classes.get('LoadImage')!.inputs[0]!.uploadKind, 'image_upload');
    assert.equal(defs.classes.get('CLIPTextEncode')!.inputs[0]!.dynamicPrompts, true);
    assert.equal(
      parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json')).classes.get('Load3D')!.inputs[0]!
        .uploadKind,
      'file_upload',
    );
  });

  it("a v3 dynamic combo keeps each option's inputs, an autogrow input its template inputs", () => {
    const v3 = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info-v3-widgets.json'));
    const resize = v3.classes.get('ResizeImageMaskNode')!.inputs.find((i) => i.name === 'resize_type')!;
    const scale = resize.dynamicOptions!.find((o) => o.key === 'scale dimensions')!;
    assert.deepEqual(
      scale.inputs.map((i) => [i.name, i.kind]),
      [
        ['width', 'int'],
        ['height', 'int'],
        ['crop', 'combo'],
      ],
    );
    const values = v3.classes.get('ComfyMathExpression')!.inputs.find((i) => i.name === 'values')!;
    assert.deepEqual(
      [values.kind, values.template!.map((i) => [i.name, i.type])],
      ['dynamic', [['value', 'FLOAT,INT,BOOLEAN']]],
    );
  });
});

describe("link types (a link's type is the source node's output[index]; * matches any type; the engine's validate_node_input)", () => {
  it('equal types match, different ones do not', () => {
    assert.ok(linkTypeMatches('IMAGE', 'IMAGE'));
    assert.ok(!linkTypeMatches('MASK', 'IMAGE'));
    assert.ok(!linkTypeMatches('FLOAT', 'INT'));
  });
  it('* on either side matches anything', () => {
    assert.ok(linkTypeMatches('*', 'IMAGE'));
    assert.ok(linkTypeMatches('LATENT', '*'));
  });
  it("comma-separated types match when they share a type (the engine's non-strict rule)", () => {
    assert.ok(linkTypeMatches('MASK', 'IMAGE,MASK'));
    assert.ok(linkTypeMatches('STRING,BOOLEAN', 'STRING, INT'));
    assert.ok(!linkTypeMatches('LATENT', 'IMAGE,MASK'));
  });
  it('a combo output fits a combo input', () => {
    assert.ok(linkTypeMatches('COMBO', 'COMBO'));
    assert.ok(!linkTypeMatches('STRING', 'COMBO'));
  });
});
