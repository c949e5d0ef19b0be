import * as assert from 'node:assert/strict';
import Ajv from 'ajv';
import { parseObjectInfo, workflowJsonSchema, type JsonSchema } from '../../src/core/workflowSchema';
import { untranslated } from '../../src/core/util/l10n';
import { invertWorkflow } from './builders';
import { emulatorObjectInfo, jsonService, recordedObjectInfo } from './workflowSchemaBuilders';

/** A diagnostic's message as text (the LSP types allow Markdown content). */
function messageOf(d: { message: string | { value: string } }): string {
  return typeof d.message === 'string' ? d.message : d.message.value;
}

/** ajv (draft-07) knowing VS Code's annotation keywords; `strict: false` for the tuple form of `items`. */
function compile(schema: JsonSchema) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addVocabulary(['markdownDescription', 'markdownEnumDescriptions', 'enumDetails', 'errorMessage']);
  return ajv.compile(schema);
}

const recorded = () =>
  workflowJsonSchema(parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json')), untranslated);
let recordedValidator: ReturnType<typeof compile> | undefined;
/** The recorded engine's schema compiled by ajv, once (1017 if/then branches take ajv seconds to compile). */
const recordedValidate = () => (recordedValidator ??= compile(recorded()));
const emulator = () => workflowJsonSchema(parseObjectInfo(emulatorObjectInfo()), untranslated);

/** A txt2img workflow of the recorded engine's core nodes. */
function txt2img(): Record<string, unknown> {
  return {
    $schema: 'comfy-workflow-schema://active/workflow.schema.json',
    '3': {
      class_type: 'KSampler',
      inputs: {
        seed: 1,
        steps: 20,
        cfg: 7.5,
        sampler_name: 'euler',
        scheduler: 'normal',
        denoise: 1,
        model: ['4', 0],
        positive: ['6', 0],
        negative: ['7', 0],
        latent_image: ['5', 0],
      },
    },
    '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'photon_v1.safetensors' } },
    '5': { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512, batch_size: 1 } },
    '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a cat', clip: ['4', 1] }, _meta: { title: 'Positive' } },
    '7': { class_type: 'CLIPTextEncode', inputs: { text: '', clip: ['4', 1] } },
    '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
    '9': { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'ComfyUI' } },
  };
}

describe('workflow JSON Schema generated from node definitions (workflow IntelliSense)', function () {
  // ajv compiles the real engine's schema once, in seconds on a busy machine.
  this.timeout(120_000);
  it("the schema of a real engine's 1017 classes is draft-07 that a maintained validator compiles, and stays under 1.5 MB", () => {
    const schema = recorded();
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    const size = JSON.stringify(schema).length;
    assert.ok(size < 1_500_000, `${size} bytes`);
    assert.equal(typeof recordedValidate(), 'function');
  });

  it('a valid workflow of the real engine (with a top-level $schema string and _meta) passes', () => {
    const validate = recordedValidate();
    assert.ok(validate(txt2img()), JSON.stringify(validate.errors?.slice(0, 3)));
  });

  it("class_type must be one of the engine's classes", () => {
    const validate = recordedValidate();
    const wf = txt2img();
    (wf['4'] as { class_type: string }).class_type = 'NoSuchNode';
    assert.equal(validate(wf), false);
    assert.ok(validate.errors!.some((e) => e.instancePath === '/4/class_type' && e.keyword === 'enum'));
  });

  it('per class: a required input missing, a value below its minimum, a choice not in the list, a wrong literal type are refused', () => {
    const validate = recordedValidate();
    const cases: [string, (wf: Record<string, { inputs: Record<string, unknown> }>) => void, string][] = [
      ['missing', (wf) => delete wf['5']!.inputs.width, '/5/inputs'],
      ['below min', (wf) => (wf['5']!.inputs.width = 8), '/5/inputs/width'],
      ['not a choice', (wf) => (wf['3']!.inputs.sampler_name = 'no_such_sampler'), '/3/inputs/sampler_name'],
      ['wrong type', (wf) => (wf['3']!.inputs.steps = 'twenty'), '/3/inputs/steps'],
      ['float for an INT', (wf) => (wf['3']!.inputs.steps = 2.5), '/3/inputs/steps'],
    ];
    for (const [name, change, pointer] of cases) {
      const wf = txt2img() as Record<string, { inputs: Record<string, unknown> }>;
      change(wf);
      assert.equal(validate(wf), false, name);
      assert.ok(
        validate.errors!.some((e) => e.instancePath === pointer),
        `${name}: ${JSON.stringify(validate.errors?.map((e) => e.instancePath))}`,
      );
    }
  });

  it('links are [node_id (string), output_index (integer >= 0)], for link inputs and for widget inputs alike', () => {
    const validate = recordedValidate();
    const ok = txt2img() as Record<string, { inputs: Record<string, unknown> }>;
    ok['3']!.inputs.seed = ['10', 0]; // a widget converted to an input
    assert.ok(validate(ok), JSON.stringify(validate.errors?.slice(0, 3)));
    for (const bad of [['4', -1], ['4', 0.5], [4, 0], ['4'], ['4', 0, 1], 'MODEL']) {
      const wf = txt2img() as Record<string, { inputs: Record<string, unknown> }>;
      wf['3']!.inputs.model = bad;
      assert.equal(validate(wf), false, JSON.stringify(bad));
    }
  });

  it('a node needs class_type and inputs; a top-level $schema must be a string', () => {
    const validate = recordedValidate();
    assert.equal(validate({ '1': { inputs: {} } }), false);
    assert.equal(validate({ '1': { class_type: 'SaveImage' } }), false);
    assert.equal(validate({ ...txt2img(), $schema: 3 }), false);
  });

  it("the emulator's definitions give a schema that accepts its weight-free workflow and refuses width 0 and an unknown class", () => {
    const validate = compile(emulator());
    assert.ok(validate(invertWorkflow()), JSON.stringify(validate.errors));
    assert.equal(validate(invertWorkflow({ width: 0 })), false);
    const unknown = invertWorkflow() as Record<string, { class_type: string }>;
    unknown['2']!.class_type = 'ImageInvertt';
    assert.equal(validate(unknown), false);
  });

  it('an upload combo offers its files but takes a file uploaded since, and a job-service core/ASSET reference (Job and Asset API v2, POST /api/v2/jobs, rule 1)', () => {
    const validate = compile(emulator());
    const load = (image: unknown) => ({
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
    });
    assert.ok(validate(load('example.png')), JSON.stringify(validate.errors));
    assert.ok(validate(load('uploaded-later.png')), JSON.stringify(validate.errors));
    assert.ok(
      validate(load({ __type: 'core/ASSET', info: { id: 'a1b2', file_path: 'photo.png' } })),
      JSON.stringify(validate.errors),
    );
    assert.equal(validate(load({ __type: 'other', info: { id: 'a1b2' } })), false);
    assert.equal(validate(load(3)), false);
    const scale = {
      '1': { class_type: 'LoadImage', inputs: { image: 'example.png' } },
      '2': {
        class_type: 'ImageScale',
        inputs: { image: ['1', 0], upscale_method: 'cubic', width: 0, height: 0, crop: 'disabled' },
      },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } },
    };
    assert.equal(validate(scale), false, 'a combo that is not an upload keeps its list closed');
  });

  it('long choice lists used by several inputs are written once under definitions', () => {
    const schema = recorded() as { definitions: Record<string, unknown> };
    const shared = Object.keys(schema.definitions).filter((k) => k.startsWith('choices'));
    assert.ok(shared.length > 0);
    assert.ok(JSON.stringify(schema).split(`"#/definitions/${shared[0]}"`).length > 2);
  });
});

describe("the workflow schema in VS Code's JSON language service (completion, hover, diagnostics)", () => {
  it('class_type completion offers every class with its display name and category, and its description as documentation', async () => {
    const service = jsonService(recorded());
    const list = await service.complete('{"1": {"class_type": |, "inputs": {}}}');
    const item = list!.items.find((i) => i.label === '"CheckpointLoaderSimple"');
    assert.ok(item, 'CheckpointLoaderSimple offered');
    assert.equal(item.detail, 'Load Checkpoint · loaders');
    assert.match(JSON.stringify(item.documentation ?? ''), /Loads a diffusion model checkpoint/);
    assert.ok(list!.items.length >= 1017);
  });

  it("inside inputs, completion offers the inputs of the node's own class (the if/then branch), with defaults", async () => {
    const service = jsonService(recorded());
    const list = await service.complete('{"1": {"class_type": "EmptyLatentImage", "inputs": {|}}}');
    const labels = list!.items.map((i) => i.label);
    assert.deepEqual(
      ['batch_size', 'height', 'width'].filter((l) => labels.includes(l)),
      ['batch_size', 'height', 'width'],
    );
    assert.ok(!labels.includes('sampler_name'), 'no input of another class');
    assert.match(list!.items.find((i) => i.label === 'width')!.insertText ?? '', /512/);
  });

  it("a node without class_type yet matches no class: inputs completion does not offer every class's inputs", async () => {
    const service = jsonService(recorded());
    const list = await service.complete('{"1": {"inputs": {|}}}');
    const labels = list!.items.map((i) => i.label);
    assert.ok(!labels.includes('sampler_name') && !labels.includes('ckpt_name'), labels.slice(0, 10).join());
  });

  it('a widget input completes its value in VS Code and accepts a link there (a widget converted to an input)', async () => {
    const service = jsonService(emulator());
    const wf = invertWorkflow() as Record<string, { inputs: Record<string, unknown> }>;
    wf['1']!.inputs.width = ['1', 0];
    const problems = await service.validate(JSON.stringify(wf));
    assert.deepEqual(problems.map(messageOf), []);
    const list = await service.complete('{"1": {"class_type": "ImageScale", "inputs": {"crop": |}}}');
    assert.deepEqual(
      list!.items
        .map((i) => i.label)
        .filter((l) => l.startsWith('"'))
        .sort(),
      ['"center"', '"disabled"'],
    );
  });

  it('an enum input completes its choices', async () => {
    const service = jsonService(recorded());
    const list = await service.complete('{"1": {"class_type": "KSampler", "inputs": {"sampler_name": |}}}');
    const labels = list!.items.map((i) => i.label);
    assert.ok(labels.includes('"euler"') && labels.includes('"dpmpp_2m"'), labels.slice(0, 5).join());
  });

  it("hover on class_type shows the node's description; hover on an input shows its type, range and tooltip", async () => {
    const service = jsonService(recorded());
    const node = await service.hover('{"1": {"class_type": "KSam|pler", "inputs": {}}}');
    assert.match(JSON.stringify(node?.contents), /denoise the latent image/);
    const input = await service.hover('{"1": {"class_type": "KSampler", "inputs": {"ste|ps": 20}}}');
    const text = JSON.stringify(input?.contents);
    assert.match(text, /INT/);
    assert.match(text, /max 10000/);
    assert.match(text, /number of steps/);
  });

  it('diagnostics: a value below the minimum and an unknown class_type; a valid workflow has none', async () => {
    const service = jsonService(emulator());
    assert.deepEqual(await service.validate(JSON.stringify(invertWorkflow())), []);
    const low = await service.validate(JSON.stringify(invertWorkflow({ width: 0 })));
    assert.ok(
      low.some((d) => /minimum/i.test(messageOf(d))),
      JSON.stringify(low),
    );
    const wf = invertWorkflow() as Record<string, { class_type: string }>;
    wf['2']!.class_type = 'Nope';
    const unknown = await service.validate(JSON.stringify(wf));
    assert.ok(
      unknown.some((d) => /unknown node class/.test(messageOf(d))),
      JSON.stringify(unknown),
    );
  });
});
