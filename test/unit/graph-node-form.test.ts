/**
 * The graph view's node form (core/graph/nodeForm.ts): fields typed from the node definition, and a change made as an
 * edit of the JSON text that changes the value's text only, for API format and UI format (by the converter's widget
 * order); a refused value is never written.
 */
import * as assert from 'node:assert/strict';
import { applyEdits } from 'jsonc-parser';
import { fieldEdit, fieldProblem, formattingOf, nodeForm, type FormField } from '../../src/core/graph/nodeForm';
import { convert, txt2img, txt2imgExpected } from './convert-rules.fixtures';
import { recordedDefinitions } from './convertBuilders';

const API_TEXT = `{
    "3": {
        "class_type": "KSampler",
        "inputs": {
            "seed": 42,
            "steps": 20,
            "cfg": 8,
            "sampler_name": "euler",
            "scheduler": "normal",
            "denoise": 1,
            "model": ["4", 0],
            "positive": ["6", 0],
            "negative": ["7", 0],
            "latent_image": ["5", 0]
        },
        "_meta": { "title": "Sampler" }
    },
    "9": { "class_type": "SaveImage", "inputs": { "images": ["8", 0] } }
}
`;

function field(fields: FormField[], name: string): FormField {
  const f = fields.find((x) => x.name === name);
  assert.ok(f, `no field ${name} (fields: ${fields.map((x) => x.name).join(', ')})`);
  return f;
}

describe('Workflow graph: the node form', () => {
  const definitions = recordedDefinitions();

  it('API format: typed fields from the definition (int seed with randomize, float cfg range, combos with choices), links shown, not edited', () => {
    const form = nodeForm(API_TEXT, '3', definitions);
    assert.ok(form);
    assert.equal(form.title, 'Sampler');
    assert.equal(form.definitions, 'known');
    const seed = field(form.fields, 'seed');
    assert.equal(seed.kind, 'int');
    assert.equal(seed.seed, true);
    assert.deepEqual(seed.path, ['3', 'inputs', 'seed']);
    const cfg = field(form.fields, 'cfg');
    assert.equal(cfg.kind, 'float');
    assert.equal(cfg.min, 0);
    assert.equal(cfg.max, 100);
    const sampler = field(form.fields, 'sampler_name');
    assert.equal(sampler.kind, 'combo');
    assert.ok(sampler.choices?.includes('euler') && sampler.choices.includes('dpmpp_2m'));
    const model = field(form.fields, 'model');
    assert.equal(model.kind, 'link');
    assert.deepEqual(model.link, { from: '4', output: 0 });
    // A widget input the file leaves out shows its default and is inserted when changed.
    const save = nodeForm(API_TEXT, '9', definitions);
    assert.equal(field(save!.fields, 'filename_prefix').value, 'ComfyUI');
  });

  it("API format: a change replaces the value text only (formatting kept); a missing input is inserted with the file's indentation", () => {
    const { edits } = fieldEdit(API_TEXT, '3', 'steps', 30, definitions);
    assert.equal(applyEdits(API_TEXT, edits), API_TEXT.replace('"steps": 20', '"steps": 30'));
    const combo = applyEdits(API_TEXT, fieldEdit(API_TEXT, '3', 'sampler_name', 'dpmpp_2m', definitions).edits);
    assert.equal(combo, API_TEXT.replace('"euler"', '"dpmpp_2m"'));
    const inserted = applyEdits(API_TEXT, fieldEdit(API_TEXT, '9', 'filename_prefix', 'castle', definitions).edits);
    assert.deepEqual(JSON.parse(inserted)['9'].inputs, { images: ['8', 0], filename_prefix: 'castle' });
    assert.equal(
      inserted,
      API_TEXT.replace('"images": ["8", 0] }', '"images": ["8", 0], "filename_prefix": "castle" }'),
    );
    // Into a node written over several lines: a line of its own, indented as its neighbours.
    const without = API_TEXT.replace('            "denoise": 1,\n', '');
    const denoise = applyEdits(without, fieldEdit(without, '3', 'denoise', 0.5, definitions).edits);
    assert.match(denoise, /\n {12}"latent_image": \["5", 0\],\n {12}"denoise": 0\.5\n {8}\},/);
    assert.deepEqual(formattingOf(API_TEXT), { insertSpaces: true, tabSize: 4, eol: '\n' });
  });

  it('a value the definition refuses is flagged and never written: out of range, not an integer, not a choice', () => {
    const form = nodeForm(API_TEXT, '3', definitions)!;
    assert.equal(fieldProblem(field(form.fields, 'steps'), 0), 'below the minimum 1');
    assert.equal(fieldProblem(field(form.fields, 'steps'), 2.5), 'expects an integer');
    assert.equal(fieldProblem(field(form.fields, 'cfg'), 101), 'above the maximum 100');
    assert.equal(fieldProblem(field(form.fields, 'sampler_name'), 'nope'), 'not one of the choices');
    assert.equal(fieldProblem(field(form.fields, 'steps'), 25), undefined);
    assert.throws(
      () => fieldEdit(API_TEXT, '3', 'steps', 0, definitions),
      /input "steps" of node 3: below the minimum 1/,
    );
    assert.throws(() => fieldEdit(API_TEXT, '3', 'model', 1, definitions), /cannot be edited in the form/);
    assert.throws(() => fieldEdit(API_TEXT, '77', 'steps', 3, definitions), /node 77 is not in the workflow/);
  });

  it("UI format: widgets by the converter's order (the seed's control value skipped); a change lands at its position and converts as ComfyUI queues it", () => {
    const ui = txt2img();
    const text = JSON.stringify(ui, null, 2);
    const form = nodeForm(text, '3', definitions)!;
    assert.equal(form.format, 'ui');
    assert.deepEqual(
      form.fields.map((f) => [f.name, f.kind, f.value]),
      [
        ['seed', 'int', 42],
        ['steps', 'int', 20],
        ['cfg', 'float', 8],
        ['sampler_name', 'combo', 'euler'],
        ['scheduler', 'combo', 'normal'],
        ['denoise', 'float', 1],
      ],
    );
    // A widget converted to an input and linked: shown as the link, from the node the links table names.
    const converted = txt2img();
    const sampler = converted.nodes.find((n) => n.id === 3)!;
    sampler.inputs = [...(sampler.inputs ?? []), { name: 'steps', type: 'INT', link: 10, widget: { name: 'steps' } }];
    converted.links.push([10, 5, 0, 3, 4, 'INT']);
    const steps = field(nodeForm(JSON.stringify(converted), '3', definitions)!.fields, 'steps');
    assert.deepEqual([steps.kind, steps.link], ['link', { from: '5', output: 0 }]);
    const seedAt = ui.nodes.findIndex((n) => n.id === 3);
    assert.deepEqual(field(form.fields, 'steps').path, ['nodes', seedAt, 'widgets_values', 2]);
    const edited = applyEdits(text, fieldEdit(text, '3', 'steps', 31, definitions).edits);
    // Exactly one line changed: the steps value's.
    const before = text.split('\n');
    const after = edited.split('\n');
    assert.equal(after.length, before.length);
    const changed = after.flatMap((line, i) => (line === before[i] ? [] : [[before[i]!.trim(), line.trim()]]));
    assert.deepEqual(changed, [['20,', '31,']]);
    const expected = txt2imgExpected();
    (expected['3']!.inputs as Record<string, unknown>).steps = 31;
    assert.deepEqual(convert(JSON.parse(edited)), expected);
  });

  it('without definitions: each literal typed by its value (UI widgets by position), links still shown', () => {
    const form = nodeForm(API_TEXT, '3', undefined)!;
    assert.equal(form.definitions, 'none');
    assert.equal(field(form.fields, 'cfg').kind, 'int');
    assert.equal(field(form.fields, 'model').kind, 'link');
    const ui = nodeForm(JSON.stringify(txt2img()), '9', undefined)!;
    assert.deepEqual(
      ui.fields.map((f) => [f.label, f.kind, f.value]),
      [['widget 1', 'string', 'ComfyUI']],
    );
    assert.equal(nodeForm('{ not json', '3', definitions), undefined);
  });
});
