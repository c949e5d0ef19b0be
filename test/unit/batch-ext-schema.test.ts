/**
 * schemas/batch.schema.json (the batch file's IntelliSense in the editor) says what the core's parseBatchFile
 * accepts: every sample file is accepted by both or refused by both (validated with ajv, never by hand).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import { parseBatchFile } from '../../src/core/batch';
import { repositoryRoot } from './repositoryRoot';

const SAMPLES: Array<[string, unknown]> = [
  ['set with a range', { workflow: 'flow.json', set: { '3.seed': '1..8' } }],
  [
    'set zipped, with a list of literals',
    { workflow: 'flow.json', mode: 'zip', set: { '3.seed': [1, 2], '6.text': ['a', null] } },
  ],
  [
    'explicit variations with a file',
    { workflow: 'flow.json', variations: [{ '3.seed': 1, '10.image': { file: 'in/a.png' } }, { '3.seed': true }] },
  ],
  ['no workflow', { set: { '3.seed': '1..8' } }],
  ['an empty workflow', { workflow: '', set: { '3.seed': '1..8' } }],
  ['both set and variations', { workflow: 'f.json', set: { '3.seed': '1..2' }, variations: [{ '3.seed': 1 }] }],
  ['neither set nor variations', { workflow: 'f.json' }],
  ['an unknown key', { workflow: 'f.json', set: { '3.seed': '1..2' }, extra: 1 }],
  ['a key that is not NODE.FIELD', { workflow: 'f.json', set: { seed: '1..2' } }],
  ['a variation key that is not NODE.FIELD', { workflow: 'f.json', variations: [{ seed: 1 }] }],
  ['an empty list of values', { workflow: 'f.json', set: { '3.seed': [] } }],
  ['an object as a value', { workflow: 'f.json', set: { '3.seed': [{ a: 1 }] } }],
  ['no variations', { workflow: 'f.json', variations: [] }],
  ['a file without its path', { workflow: 'f.json', variations: [{ '10.image': { file: '' } }] }],
  ['a file with another key', { workflow: 'f.json', variations: [{ '10.image': { file: 'a.png', name: 'x' } }] }],
  ['an unknown mode', { workflow: 'f.json', mode: 'all', set: { '3.seed': '1..2' } }],
];

describe('batch file schema (schemas/batch.schema.json)', () => {
  const schema = JSON.parse(
    fs.readFileSync(path.join(repositoryRoot(), 'schemas', 'batch.schema.json'), 'utf8'),
  ) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

  for (const [name, sample] of SAMPLES) {
    it(`rule: the schema and parseBatchFile agree on a sample: ${name}`, () => {
      let parsed = true;
      try {
        parseBatchFile(JSON.stringify(sample), 'sample.batch.json');
      } catch {
        parsed = false;
      }
      assert.equal(
        validate(sample),
        parsed,
        `schema ${validate(sample) ? 'accepts' : 'refuses'} it, parseBatchFile ${parsed ? 'accepts' : 'refuses'} it`,
      );
    });
  }
});
