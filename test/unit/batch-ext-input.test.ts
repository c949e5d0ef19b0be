/**
 * "Run with Variations…" without vscode: the node input under the cursor (core util/workflowPositions.ts, from the
 * JSON tree) and the values of a quick input (core batch/quickInput.ts), checked before anything is recorded.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nodeInputAt } from '../../src/core/graph/positions';
import { listValues, rangeProblem, variationsFromQuickInput } from '../../src/core/batch/quickInput';
import { inputError, invertWorkflow } from './builders';
import { tempDir } from './tmp';

describe('Run with Variations: the node input at the cursor and the quick input values', () => {
  const text = JSON.stringify(invertWorkflow(), null, 2);

  it('rule: the cursor on an input name or its value gives that node id and input name', () => {
    const name = text.indexOf('"color"');
    assert.deepEqual(nodeInputAt(text, name + 2), { nodeId: '1', field: 'color' });
    const value = text.indexOf(':', name) + 2;
    assert.deepEqual(nodeInputAt(text, value), { nodeId: '1', field: 'color' });
    assert.deepEqual(nodeInputAt(text, text.indexOf('"filename_prefix"') + 1), {
      nodeId: '3',
      field: 'filename_prefix',
    });
  });

  it('rule: the cursor elsewhere (class_type, the top) gives no input', () => {
    assert.equal(nodeInputAt(text, text.indexOf('"class_type"') + 1), undefined);
    assert.equal(nodeInputAt(text, 0), undefined);
    assert.equal(nodeInputAt('not json', 2), undefined);
  });

  it('rule: a list is one value a line when it has line breaks, else comma separated; literals as --set reads them', () => {
    assert.deepEqual(listValues('1, 2.5, true, null, a cat'), [1, 2.5, true, null, 'a cat']);
    assert.deepEqual(listValues('a, b\nc\n\n'), ['a, b', 'c']);
    assert.deepEqual(listValues(' , '), []);
  });

  it('rule: a range gives one variation per value; a bad or empty range is refused before anything is recorded', async () => {
    const wf = invertWorkflow() as never;
    const variations = await variationsFromQuickInput(wf, '1', 'color', 'range', '1..8', '.');
    assert.equal(variations.length, 8);
    assert.deepEqual(
      variations.map((v) => v.inputs[0]!.value),
      Array.from({ length: 8 }, (_, i) => ({ kind: 'literal', value: i + 1 })),
    );
    await assert.rejects(variationsFromQuickInput(wf, '1', 'color', 'range', 'one..two', '.'), inputError('bad_range'));
    await assert.rejects(variationsFromQuickInput(wf, '1', 'color', 'range', '8..1', '.'), inputError('empty_values'));
    await assert.rejects(variationsFromQuickInput(wf, '1', 'color', 'list', ' , ', '.'), inputError('empty_values'));
    assert.equal(rangeProblem('1..20:5'), undefined);
    assert.ok(rangeProblem('1..'));
  });

  it('rule: the input is checked against the workflow: no such node, a link', async () => {
    const wf = invertWorkflow() as never;
    await assert.rejects(variationsFromQuickInput(wf, '99', 'seed', 'range', '1..2', '.'), inputError('no_such_node'));
    await assert.rejects(variationsFromQuickInput(wf, '2', 'image', 'list', 'a,b', '.'), inputError('input_is_link'));
  });

  it('rule: a file gives one value a line; a folder one file value per file (uploaded when run)', async () => {
    const dir = tempDir('cc-batch-ext-input-');
    fs.writeFileSync(path.join(dir, 'prefixes.txt'), 'a\n\nb\n');
    fs.mkdirSync(path.join(dir, 'inputs'));
    fs.writeFileSync(path.join(dir, 'inputs', 'x.png'), 'x');
    fs.writeFileSync(path.join(dir, 'inputs', 'y.png'), 'y');
    const wf = invertWorkflow() as never;
    const fromFile = await variationsFromQuickInput(wf, '3', 'filename_prefix', 'file', 'prefixes.txt', dir);
    assert.deepEqual(
      fromFile.map((v) => v.inputs[0]!.value),
      [
        { kind: 'literal', value: 'a' },
        { kind: 'literal', value: 'b' },
      ],
    );
    const fromFolder = await variationsFromQuickInput(
      wf,
      '3',
      'filename_prefix',
      'folder',
      path.join(dir, 'inputs'),
      dir,
    );
    assert.deepEqual(
      fromFolder.map((v) => v.inputs[0]!.value),
      [
        { kind: 'file', path: path.join(dir, 'inputs', 'x.png') },
        { kind: 'file', path: path.join(dir, 'inputs', 'y.png') },
      ],
    );
  });
});
