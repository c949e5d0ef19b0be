import * as assert from 'node:assert/strict';
import {
  checkWorkflow,
  nodeErrorsOf,
  parseObjectInfo,
  summarizeWorkflowProblems,
  type WorkflowCheck,
  type WorkflowDiagnostic,
} from '../../src/core/workflowSchema';
import { untranslated } from '../../src/core/util/l10n';
import { invertWorkflow } from './builders';
import { emulatorObjectInfo, recordedObjectInfo } from './workflowSchemaBuilders';

const emulator = parseObjectInfo(emulatorObjectInfo());
const real = parseObjectInfo(recordedObjectInfo('comfy-ts-object_info.json'));

type Wf = Record<string, { class_type: string; inputs: Record<string, unknown> }>;
/** The weight-free sample workflow, changed by `change`. */
function invert(change: (wf: Wf) => void = () => undefined): Wf {
  const wf = invertWorkflow() as Wf;
  change(wf);
  return wf;
}

function diagnosticsOf(check: WorkflowCheck): readonly WorkflowDiagnostic[] {
  assert.equal(check.status, 'checked');
  return check.diagnostics;
}

/** The one diagnostic of `workflow` (fails when there is not exactly one). */
function only(workflow: unknown, defs = emulator, scope: 'all' | 'beyondSchema' = 'all'): WorkflowDiagnostic {
  const found = diagnosticsOf(checkWorkflow(workflow, defs, untranslated, { scope }));
  assert.equal(found.length, 1, JSON.stringify(found));
  return found[0]!;
}

describe('workflow validator beyond the schema (links, types, output node; the words the server would use)', () => {
  it("a valid workflow has no diagnostics, with the emulator's definitions and with a real engine's", () => {
    assert.deepEqual(diagnosticsOf(checkWorkflow(invertWorkflow(), emulator, untranslated)), []);
    const txt2img = {
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
          negative: ['6', 0],
          latent_image: ['5', 0],
        },
      },
      '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'photon_v1.safetensors' } },
      '5': { class_type: 'EmptyLatentImage', inputs: { width: 512, height: 512, batch_size: 1 } },
      '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a cat', clip: ['4', 1] } },
      '8': { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 2] } },
      '9': { class_type: 'SaveImage', inputs: { images: ['8', 0], filename_prefix: 'x' } },
    };
    assert.deepEqual(diagnosticsOf(checkWorkflow(txt2img, real, untranslated)), []);
  });

  it("a link to a node that is not in the workflow is reported on the link's node id", () => {
    const d = only(invert((wf) => (wf['2']!.inputs.image = ['9', 0])));
    assert.deepEqual(
      [d.code, d.nodeId, d.field, d.path],
      ['link_to_missing_node', '2', 'image', ['2', 'inputs', 'image', 0]],
    );
    assert.equal(d.message, 'links to node "9", which is not in the workflow');
  });

  it('an output index out of range is reported on the index, naming the outputs the node has', () => {
    const d = only(invert((wf) => (wf['2']!.inputs.image = ['1', 1])));
    assert.deepEqual([d.code, d.path], ['output_index_out_of_range', ['2', 'inputs', 'image', 1]]);
    assert.equal(d.message, 'links to output 1 of node "1" (EmptyImage), which has only output 0: IMAGE');
    const none = only(invert((wf) => (wf['4'] = { class_type: 'PreviewImage', inputs: { images: ['3', 0] } })));
    assert.deepEqual(
      [none.code, none.message],
      ['output_index_out_of_range', 'links to node "3" (SaveImage), which has no outputs'],
    );
  });

  it("a linked output whose type does not fit the input is a return_type_mismatch, in the emulator's words", () => {
    const wf = invert((w) => {
      w['4'] = { class_type: 'LoadImage', inputs: { image: 'example.png' } };
      w['2']!.inputs.image = ['4', 1];
    });
    const d = only(wf);
    assert.deepEqual(
      [d.code, d.path, d.message],
      ['return_type_mismatch', ['2', 'inputs', 'image'], 'expects IMAGE, but output 1 of node "4" (LoadImage) is MASK'],
    );
    const real1 = only(
      {
        '1': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'photon_v1.safetensors' } },
        '2': { class_type: 'VAEDecode', inputs: { samples: ['1', 0], vae: ['1', 2] } },
        '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'x' } },
      },
      real,
    );
    assert.deepEqual([real1.code, real1.field], ['return_type_mismatch', 'samples']);
  });

  it("a link into a widget input (converted to an input) is checked against the widget's type", () => {
    const d = only(invert((wf) => (wf['1']!.inputs.width = ['2', 0])));
    assert.deepEqual(
      [d.code, d.message],
      ['return_type_mismatch', 'expects INT, but output 0 of node "2" (ImageInvert) is IMAGE'],
    );
  });

  it('a link to a * input or from a * output matches any type', () => {
    const defs = parseObjectInfo({
      Any: { input: { required: { anything: ['*'] } }, output: ['*'], output_node: true },
      Img: { input: { required: { image: ['IMAGE'] } }, output: ['IMAGE'] },
    });
    const wf = {
      '1': { class_type: 'Any', inputs: { anything: ['2', 0] } },
      '2': { class_type: 'Img', inputs: { image: ['1', 0] } },
    };
    assert.deepEqual(diagnosticsOf(checkWorkflow(wf, defs, untranslated)), []);
  });

  it('an unknown class_type is missing_node_type on class_type, and links to it are not judged', () => {
    const d = only(invert((wf) => (wf['1']!.class_type = 'EmptyImageX')));
    assert.deepEqual([d.code, d.path], ['missing_node_type', ['1', 'class_type']]);
    assert.match(d.message, /^unknown node class "EmptyImageX"; this service runs /);
    const big = only(
      {
        '1': { class_type: 'NoSuch', inputs: {} },
        '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'x' } },
      },
      real,
    );
    assert.equal(
      big.message,
      'unknown node class "NoSuch"; the node definitions (1017 classes) have no such class_type',
    );
  });

  it("a missing required input is reported on the node's inputs; an optional one is not", () => {
    const d = only(invert((wf) => delete wf['2']!.inputs.image));
    assert.deepEqual(
      [d.code, d.field, d.path, d.message],
      ['required_input_missing', 'image', ['2', 'inputs'], 'required input is missing'],
    );
    assert.deepEqual(
      diagnosticsOf(
        checkWorkflow(
          invert((wf) => delete wf['3']!.inputs.filename_prefix),
          emulator,
          untranslated,
        ),
      ),
      [],
    );
  });

  it('a graph with no output node is prompt_no_outputs on the whole document, naming the output classes', () => {
    const d = only({ '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } } });
    assert.deepEqual([d.code, d.path, d.nodeId], ['prompt_no_outputs', [], undefined]);
    assert.equal(d.message, 'the workflow has no output node (SaveImage or PreviewImage), so it would produce nothing');
  });

  it("literals are checked before submit: range, type, choices (the server's value checks)", () => {
    assert.deepEqual(
      [
        only(invert((wf) => (wf['1']!.inputs.width = 0))).message,
        only(invert((wf) => (wf['1']!.inputs.width = 0))).code,
      ],
      ['value 0 is below the minimum 1', 'value_smaller_than_min'],
    );
    assert.equal(only(invert((wf) => (wf['1']!.inputs.width = 20000))).code, 'value_bigger_than_max');
    assert.deepEqual(
      [
        only(invert((wf) => (wf['1']!.inputs.width = '64'))).code,
        only(invert((wf) => (wf['1']!.inputs.width = '64'))).message,
      ],
      ['invalid_input_type', 'expects an integer; got the string "64"'],
    );
    const scale = {
      '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
      '2': {
        class_type: 'ImageScale',
        inputs: { image: ['1', 0], upscale_method: 'cubic', width: 0, height: 0, crop: 'disabled' },
      },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } },
    };
    const d = only(scale);
    assert.deepEqual(
      [d.code, d.message],
      ['value_not_in_list', 'value "cubic" is not one of nearest-exact, bilinear, area, bicubic, lanczos'],
    );
    assert.equal(only(invert((wf) => (wf['2']!.inputs.image = 'not a link'))).code, 'invalid_input_type');
    assert.equal(only(invert((wf) => (wf['2']!.inputs.image = ['1']))).code, 'bad_linked_input');
  });

  it('an upload input takes a file name not (yet) among its choices and a core/ASSET reference; other combos stay closed', () => {
    const load = (image: unknown) => ({
      '1': { class_type: 'LoadImage', inputs: { image } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0] } },
    });
    assert.deepEqual(diagnosticsOf(checkWorkflow(load('uploaded-later.png'), emulator, untranslated)), []);
    assert.deepEqual(
      diagnosticsOf(checkWorkflow(load({ __type: 'core/ASSET', info: { id: 'a1' } }), emulator, untranslated)),
      [],
    );
    assert.equal(only(load(3)).code, 'invalid_input_type');
  });

  it('beyondSchema leaves out what the generated schema reports (unknown class, missing input, literals), keeps links and the output node', () => {
    const wf = invert((w) => {
      w['1']!.inputs.width = 0;
      delete w['1']!.inputs.height;
      w['2']!.inputs.image = ['1', 3];
    });
    const codes = diagnosticsOf(checkWorkflow(wf, emulator, untranslated, { scope: 'beyondSchema' })).map(
      (d) => d.code,
    );
    assert.deepEqual(codes, ['output_index_out_of_range']);
    const all = diagnosticsOf(checkWorkflow(wf, emulator, untranslated)).map((d) => d.code);
    assert.deepEqual(all.sort(), ['output_index_out_of_range', 'required_input_missing', 'value_smaller_than_min']);
  });

  it('quiet with a reason when the node definitions are unknown (none fetched, or an empty map)', () => {
    for (const defs of [undefined, parseObjectInfo({}), parseObjectInfo('not a map')]) {
      const check = checkWorkflow({ '1': { class_type: 'Nope', inputs: {} } }, defs, untranslated);
      assert.equal(check.status, 'quiet');
      assert.deepEqual(check.diagnostics, []);
      assert.match((check as { reason: string }).reason, /Node definitions are not known/);
    }
  });

  it('quiet for a UI-format export; a top-level $schema string is not a node', () => {
    assert.equal(checkWorkflow({ nodes: [], links: [] }, emulator, untranslated).status, 'quiet');
    assert.deepEqual(
      diagnosticsOf(
        checkWorkflow({ $schema: 'comfy-workflow-schema://x', ...invertWorkflow() }, emulator, untranslated),
      ),
      [],
    );
  });

  it("a node without class_type or inputs is reported in the emulator's words", () => {
    const d = only(invert((wf) => ((wf['4'] as unknown) = { inputs: {} })));
    assert.deepEqual(
      [d.code, d.message],
      ['invalid_prompt', 'missing: every node needs a "class_type" string; got undefined'],
    );
    const e = only(invert((wf) => ((wf['2'] as unknown) = { class_type: 'ImageInvert' })));
    assert.deepEqual([e.code, e.field], ['invalid_inputs', 'inputs']);
  });

  it("before submit the problems read as the server's node_errors and one summary line", () => {
    const wf = invert((w) => {
      w['1']!.inputs.width = 0;
      w['2']!.inputs.image = ['9', 0];
    });
    const diagnostics = diagnosticsOf(checkWorkflow(wf, emulator, untranslated));
    assert.deepEqual(nodeErrorsOf(diagnostics), {
      nodeErrors: {
        '1': [{ field: 'width', reason: 'value 0 is below the minimum 1' }],
        '2': [{ field: 'image', reason: 'links to node "9", which is not in the workflow' }],
      },
      graph: [],
    });
    assert.equal(
      summarizeWorkflowProblems(diagnostics, untranslated),
      'invalid workflow: node 1 input width: value 0 is below the minimum 1 (and 1 more problem)',
    );
    assert.equal(summarizeWorkflowProblems([], untranslated), undefined);
  });
});
