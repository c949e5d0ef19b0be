import * as assert from 'node:assert/strict';
import { fieldErrorSpans, type RouterFieldError } from '../../src/core/router';

const err = (loc: (string | number)[]): RouterFieldError => ({ loc, msg: 'bad', type: 'x', hasInput: false });
const text =
  '{\n  "$schema": "comfy-router-schema:/p/m.json",\n  "steps": 500,\n  "loras": [\n    { "name": "" }\n  ]\n}\n';
const lineOf = (offset: number) => text.slice(0, offset).split('\n').length - 1;

describe('422 field errors placed in the input file (Model router API, Errors: Run Model → Problems)', () => {
  it('each loc path points at its value in the file (integers index arrays)', () => {
    const [steps, name] = fieldErrorSpans(text, [err(['steps']), err(['loras', 0, 'name'])]);
    assert.equal(text.slice(steps!.offset, steps!.offset + steps!.length), '500');
    assert.equal(lineOf(name!.offset), 4);
    assert.ok(steps!.exact && name!.exact);
  });
  it('a leading "body" (FastAPI style) is skipped when the input has no body field', () => {
    const [span] = fieldErrorSpans(text, [err(['body', 'steps'])]);
    assert.equal(text.slice(span!.offset, span!.offset + span!.length), '500');
  });
  it('a missing field points at its deepest existing parent, not exact; an unplaceable one at the top-level object', () => {
    const [missing, nested] = fieldErrorSpans(text, [err(['prompt']), err(['loras', 0, 'weight'])]);
    assert.equal(missing!.offset, 0);
    assert.equal(missing!.exact, false);
    assert.equal(lineOf(nested!.offset), 4);
    assert.equal(fieldErrorSpans('not json', [err(['a'])])[0]!.offset, 0);
  });
});
