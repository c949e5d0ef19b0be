/**
 * The model of a batch (src/core/batch/variations.ts): `--set` specs (ranges, files of lines, folders, literals),
 * grid and zip, batch files, and every bad input refused as an InputError before any request.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  MAX_VARIATIONS,
  applyVariation,
  combine,
  expandSpec,
  parseBatchFile,
  parseRange,
  parseSetOption,
  variationLabel,
  variationsFromBatchFile,
  variationsFromSetOptions,
  type ValueSource,
  type Variation,
} from '../../src/core/batch/variations';
import type { ApiWorkflow } from '../../src/core/util/workflow';
import { inputError } from './builders';
import { fileWriter } from './tmp';

/** A workflow with a sampler (3: seed, steps; model wired to 4), a prompt (6: text) and an image loader (10). */
function workflow(): ApiWorkflow {
  return {
    '3': { class_type: 'KSampler', inputs: { seed: 0, steps: 20, model: ['4', 0] } },
    '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'a.safetensors' } },
    '6': { class_type: 'CLIPTextEncode', inputs: { text: 'a cat' } },
    '10': { class_type: 'LoadImage', inputs: { image: 'x.png' } },
  };
}

const lit = (value: string | number | boolean | null) => ({ kind: 'literal' as const, value });
const values = (vs: Variation[], field: string) => vs.map((v) => v.inputs.find((i) => i.field === field)!.value);

describe('batch variations: a range is inclusive integers, with an optional step', () => {
  it('1..8 is the 8 integers 1 to 8; 1..100:10 is 1, 11, …, 91; 5..5 is one value', () => {
    assert.deepEqual(parseRange('1..8'), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(parseRange('1..100:10'), [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]);
    assert.deepEqual(parseRange('5..5'), [5]);
    assert.deepEqual(parseRange('-2..1'), [-2, -1, 0, 1]);
    assert.equal(parseRange('a cat'), undefined);
    assert.equal(parseRange('1.5'), undefined);
  });

  it('a range with no values is refused (empty_values); a step below 1 is bad_range', () => {
    assert.throws(() => parseRange('8..1'), inputError('empty_values', /no values/));
    assert.throws(() => parseRange('1..8:0'), inputError('bad_range'));
    assert.throws(() => parseRange('1..8:-1'), inputError('bad_range'));
    assert.throws(() => parseRange('1..8:1.5'), inputError('bad_range'));
  });

  it('a range beyond the most variations a batch holds is refused (too_many_variations)', () => {
    assert.throws(() => parseRange(`1..${MAX_VARIATIONS + 1}`), inputError('too_many_variations'));
    assert.equal(parseRange(`1..${MAX_VARIATIONS}`)!.length, MAX_VARIATIONS);
  });
});

describe('batch variations: --set specs from files and folders', () => {
  it('@file is one value a line, blank lines skipped; a file of blank lines is empty_values', async () => {
    const write = fileWriter('batch-');
    write('prompts.txt', 'a cat\n\n  \r\na dog\r\na bird\n');
    assert.deepEqual(await expandSpec('@prompts.txt', write.dir()), [lit('a cat'), lit('a dog'), lit('a bird')]);
    write('blank.txt', '\n \n');
    await assert.rejects(expandSpec('@blank.txt', write.dir()), inputError('empty_values'));
  });

  it('@folder/ is each regular file by name (hidden files and subfolders skipped); an empty folder is empty_values', async () => {
    const write = fileWriter('batch-');
    const dir = path.join(write.dir(), 'inputs');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    for (const n of ['b.png', 'a.png', '.DS_Store']) fs.writeFileSync(path.join(dir, n), n);
    assert.deepEqual(await expandSpec('@inputs/', write.dir()), [
      { kind: 'file', path: path.join(dir, 'a.png') },
      { kind: 'file', path: path.join(dir, 'b.png') },
    ]);
    fs.mkdirSync(path.join(write.dir(), 'empty'));
    await assert.rejects(expandSpec('@empty/', write.dir()), inputError('empty_values', /no file/));
    write('file.txt', 'x');
    await assert.rejects(expandSpec('@file.txt/', write.dir()), inputError('not_a_folder'));
  });

  it('a literal is a JSON number, boolean or null when it parses as one, else the text', async () => {
    assert.deepEqual(await expandSpec('42', '.'), [lit(42)]);
    assert.deepEqual(await expandSpec('true', '.'), [lit(true)]);
    assert.deepEqual(await expandSpec('a cat', '.'), [lit('a cat')]);
    assert.deepEqual(await expandSpec('"7"', '.'), [lit('"7"')]);
  });

  it('--set without NODE.FIELD= is bad_set', () => {
    assert.throws(() => parseSetOption('seed=1..8'), inputError('bad_set'));
    assert.deepEqual(parseSetOption('3.seed=1..8'), { nodeId: '3', field: 'seed', spec: '1..8' });
  });
});

describe('batch variations: grid and zip', () => {
  const a: ValueSource = { nodeId: '3', field: 'seed', values: [lit(1), lit(2), lit(3)] };
  const b: ValueSource = { nodeId: '6', field: 'text', values: [lit('x'), lit('y')] };

  it('grid is the cartesian product in option order, the first option varying slowest, indexed from 0', () => {
    const vs = combine([a, b], 'grid');
    assert.equal(vs.length, 6);
    assert.deepEqual(
      vs.map((v) => v.index),
      [0, 1, 2, 3, 4, 5],
    );
    assert.deepEqual(values(vs, 'seed'), [lit(1), lit(1), lit(2), lit(2), lit(3), lit(3)]);
    assert.deepEqual(values(vs, 'text'), [lit('x'), lit('y'), lit('x'), lit('y'), lit('x'), lit('y')]);
  });

  it('zip pairs the i-th values; lengths that differ are refused (zip_lengths_differ)', () => {
    const c: ValueSource = { nodeId: '6', field: 'text', values: [lit('x'), lit('y'), lit('z')] };
    const vs = combine([a, c], 'zip');
    assert.deepEqual(
      vs.map((v) => v.inputs.map((i) => i.value)),
      [
        [lit(1), lit('x')],
        [lit(2), lit('y')],
        [lit(3), lit('z')],
      ],
    );
    assert.throws(() => combine([a, b], 'zip'), inputError('zip_lengths_differ', /3\.seed has 3, 6\.text has 2/));
  });

  it('a grid beyond the most variations a batch holds is refused (too_many_variations)', () => {
    const big: ValueSource = { nodeId: '3', field: 'seed', values: Array.from({ length: 101 }, (_, i) => lit(i)) };
    assert.throws(() => combine([big, { ...big, field: 'steps' }], 'grid'), inputError('too_many_variations'));
  });
});

describe('batch variations: --set options are checked against the workflow before any file is read', () => {
  it('a node not in the workflow is no_such_node; an input wired to a link is input_is_link', async () => {
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['99.seed=1..3'], 'grid', '.'),
      inputError('no_such_node', /its nodes: 3, 4, 6, 10/),
    );
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['3.model=1..3'], 'grid', '.'),
      inputError('input_is_link'),
    );
    // checked before the missing prompts file is read
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['6.text=@missing.txt', '99.seed=1'], 'grid', '.'),
      inputError('no_such_node'),
    );
  });

  it('an input the node does not have is no_such_input, naming its inputs (a typo never sends a job per value)', async () => {
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['3.sead=1..3'], 'grid', '.'),
      inputError('no_such_input', /node 3 \(KSampler\) has no input "sead" \(its inputs: seed, steps, model\)/),
    );
    const file = parseBatchFile(
      JSON.stringify({ workflow: 'w.json', variations: [{ '3.seed': 1 }, { '6.txt': 'a dog' }] }),
      'b.json',
    );
    await assert.rejects(variationsFromBatchFile(workflow(), file, '/data'), inputError('no_such_input'));
    const set = parseBatchFile(JSON.stringify({ workflow: 'w.json', set: { '6.txt': ['a', 'b'] } }), 'b.json');
    await assert.rejects(variationsFromBatchFile(workflow(), set, '/data'), inputError('no_such_input'));
  });

  it('one input set twice is duplicate_input', async () => {
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['3.seed=1..3', '3.seed=4..5'], 'grid', '.'),
      inputError('duplicate_input'),
    );
  });

  it('--set 3.seed=1..8 --set 6.text=@prompts.txt is a grid of 8 × lines; each variation applies to a copy', async () => {
    const write = fileWriter('batch-');
    write('prompts.txt', 'a cat\na dog\n');
    const wf = workflow();
    const vs = await variationsFromSetOptions(wf, ['3.seed=1..8', '6.text=@prompts.txt'], 'grid', write.dir());
    assert.equal(vs.length, 16);
    const w5 = applyVariation(wf, vs[5], () => assert.fail('no file value'));
    assert.equal(w5['3'].inputs.seed, 3);
    assert.equal(w5['6'].inputs.text, 'a dog');
    assert.equal(wf['3'].inputs.seed, 0, 'the original workflow is kept');
    assert.equal(variationLabel(vs[5]), '5-3_a-dog');
  });

  it("rule: a value takes the type of the input's value in the workflow: a line 42 stays text for a text input, a line 64 is a number for a number input, and text a number input cannot take is bad_value", async () => {
    const write = fileWriter('batch-');
    write('prompts.txt', '42\ntrue\na cat\n');
    write('seeds.txt', '64\n7.5\n');
    write('bad.txt', '12\nabc\n');
    const vs = await variationsFromSetOptions(
      workflow(),
      ['6.text=@prompts.txt', '3.seed=@seeds.txt'],
      'grid',
      write.dir(),
    );
    assert.deepEqual(
      [...new Set(values(vs, 'text').map((v) => JSON.stringify(v)))],
      [lit('42'), lit('true'), lit('a cat')].map((v) => JSON.stringify(v)),
    );
    assert.deepEqual(values(vs, 'seed').slice(0, 2), [lit(64), lit(7.5)]);
    // A literal and a range follow the same rule: a range into a text input is text.
    const [t] = await variationsFromSetOptions(workflow(), ['6.text=12'], 'grid', write.dir());
    assert.deepEqual(t.inputs[0].value, lit('12'));
    const r = await variationsFromSetOptions(workflow(), ['6.text=1..2'], 'grid', write.dir());
    assert.deepEqual(values(r, 'text'), [lit('1'), lit('2')]);
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['3.seed=@bad.txt'], 'grid', write.dir()),
      inputError('bad_value', /3\.seed takes a number.*"abc"/),
    );
    await assert.rejects(
      variationsFromSetOptions(workflow(), ['3.seed=1,2'], 'grid', write.dir()),
      inputError('bad_value', /"1,2" is not one \(for several values give a range such as 1\.\.8, or @values\.txt/),
    );
    // A batch file's explicit values are fitted too.
    const file = parseBatchFile(
      JSON.stringify({ workflow: 'w.json', variations: [{ '3.seed': '5', '6.text': 9 }] }),
      'b.batch.json',
    );
    const [e] = await variationsFromBatchFile(workflow(), file, write.dir());
    assert.deepEqual(
      e.inputs.map((i) => i.value),
      [lit(5), lit('9')],
    );
  });

  it('a file value becomes what fileValue returns (the asset reference of its upload)', async () => {
    const write = fileWriter('batch-');
    fs.mkdirSync(path.join(write.dir(), 'in'));
    fs.writeFileSync(path.join(write.dir(), 'in', 'p.png'), 'x');
    const [v] = await variationsFromSetOptions(workflow(), ['10.image=@in/'], 'grid', write.dir());
    const w = applyVariation(workflow(), v, (file) => ({ ref: path.basename(file) }));
    assert.deepEqual(w['10'].inputs.image, { ref: 'p.png' });
  });
});

describe('batch variations: a batch file is checked against its schema', () => {
  it('a valid batch file with set (spec strings and value lists) gives the grid; with mode zip, the zip', async () => {
    const write = fileWriter('batch-');
    write('prompts.txt', 'a\nb\n');
    const file = parseBatchFile(
      JSON.stringify({ workflow: 'w.json', set: { '3.seed': '1..2', '6.text': '@prompts.txt' } }),
      'b.json',
    );
    assert.equal((await variationsFromBatchFile(workflow(), file, write.dir())).length, 4);
    const zipped = parseBatchFile(
      JSON.stringify({ workflow: 'w.json', mode: 'zip', set: { '3.seed': [7, 8], '6.text': '@prompts.txt' } }),
      'b.json',
    );
    const vs = await variationsFromBatchFile(workflow(), zipped, write.dir());
    assert.deepEqual(
      vs.map((v) => v.inputs.map((i) => i.value)),
      [
        [lit(7), lit('a')],
        [lit(8), lit('b')],
      ],
    );
  });

  it('explicit variations, a {"file"} value resolved against the batch file\'s folder', async () => {
    const file = parseBatchFile(
      JSON.stringify({
        workflow: 'w.json',
        variations: [{ '3.seed': 1, '10.image': { file: 'a.png' } }, { '3.seed': 2 }],
      }),
      'b.json',
    );
    const vs = await variationsFromBatchFile(workflow(), file, '/data');
    assert.equal(vs.length, 2);
    assert.deepEqual(vs[0].inputs[1].value, { kind: 'file', path: path.resolve('/data', 'a.png') });
    const bad = parseBatchFile(JSON.stringify({ workflow: 'w.json', variations: [{ '99.seed': 1 }] }), 'b.json');
    await assert.rejects(variationsFromBatchFile(workflow(), bad, '/data'), inputError('no_such_node'));
  });

  it('a batch file that is not valid is bad_batch_file (or bad_json), naming the problem', () => {
    assert.throws(() => parseBatchFile('{', 'b.json'), inputError('bad_json'));
    assert.throws(
      () => parseBatchFile(JSON.stringify({ set: { '3.seed': '1..2' } }), 'b.json'),
      inputError('bad_batch_file', /workflow/),
    );
    assert.throws(
      () => parseBatchFile(JSON.stringify({ workflow: 'w.json' }), 'b.json'),
      inputError('bad_batch_file', /exactly one of "set" and "variations"/),
    );
    assert.throws(
      () => parseBatchFile(JSON.stringify({ workflow: 'w.json', set: { seed: '1..2' } }), 'b.json'),
      inputError('bad_batch_file', /NODE\.FIELD/),
    );
    assert.throws(
      () => parseBatchFile(JSON.stringify({ workflow: 'w.json', set: { '3.seed': [] } }), 'b.json'),
      inputError('bad_batch_file'),
    );
    assert.throws(
      () => parseBatchFile(JSON.stringify({ workflow: 'w.json', set: { '3.seed': '1..2' }, extra: 1 }), 'b.json'),
      inputError('bad_batch_file'),
    );
  });
});
