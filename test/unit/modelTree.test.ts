import * as assert from 'node:assert/strict';
import {
  groupModels,
  matchesModelFilter,
  modelFilterDescription,
  presentModel,
  presentProvider,
  type ModelEntry,
} from '../../src/core/router';

const entry = (id: string, note?: string): ModelEntry =>
  ({
    id,
    provider: id.split('/')[0]!,
    model: id.split('/')[1]!,
    ...(note ? { billing: { charges_on_policy_rejection: note } } : {}),
  }) as ModelEntry;

describe('model tree (the Models view)', () => {
  const served = [entry('zeta/b'), entry('alpha/x'), entry('zeta/a'), entry('alpha/y'), entry('mid/q')];

  it('groups models by provider in the order served, neither providers nor models sorted', () => {
    const groups = groupModels(served);
    assert.deepEqual(
      groups.map((g) => g.provider),
      ['zeta', 'alpha', 'mid'],
    );
    assert.deepEqual(
      groups[0]!.models.map((m) => m.id),
      ['zeta/b', 'zeta/a'],
    );
  });

  it('an entry served twice (a repeating cursor) is shown once', () => {
    const groups = groupModels([entry('a/b'), entry('a/c'), entry('a/b')]);
    assert.deepEqual(
      groups[0]!.models.map((m) => m.id),
      ['a/b', 'a/c'],
    );
  });

  it('the filter keeps the ids containing its text, case-insensitively, and drops providers left empty', () => {
    const groups = groupModels(served, '  ZETA/A ');
    assert.deepEqual(
      groups.map((g) => [g.provider, g.models.map((m) => m.id)]),
      [['zeta', ['zeta/a']]],
    );
    assert.equal(groupModels(served, 'nothing').length, 0);
    assert.ok(matchesModelFilter(entry('p/m'), '   '));
  });

  it('the view description says "filtered: x" only while a filter is set', () => {
    assert.equal(modelFilterDescription('flux'), 'filtered: flux');
    assert.equal(modelFilterDescription('  '), '');
  });

  it('the billing note in the tooltip is yes, no or unknown (anything else or none: unknown)', () => {
    assert.match(presentModel(entry('p/m', 'yes')).tooltip, /content\\: yes$/);
    assert.match(presentModel(entry('p/m', 'no')).tooltip, /content\\: no$/);
    assert.match(presentModel(entry('p/m', 'sometimes')).tooltip, /content\\: unknown$/);
    assert.match(presentModel(entry('p/m')).tooltip, /content\\: unknown$/);
  });

  it('server strings are cleaned of control characters and Markdown-escaped in the tooltip', () => {
    const hostile = { id: 'p/[x](http://evil)', provider: 'p\u001b[31m', model: 'm\u202e' } as ModelEntry;
    const item = presentModel(hostile);
    assert.doesNotMatch(item.label, /\u202e/);
    assert.doesNotMatch(item.tooltip, /\[x\]\(http/);
    assert.match(item.tooltip, /\\\[x\\\]\\\(http/);
    const provider = presentProvider({ provider: hostile.provider, models: [hostile] });
    assert.ok(!provider.label.includes('\u001b'));
    assert.equal(provider.description, '1 model');
  });

  it('a provider item counts its shown models; the words go through the translator', () => {
    const t = (m: string, ...a: Array<string | number | boolean>) => `T(${m.replace('{0}', String(a[0]))})`;
    assert.equal(presentProvider(groupModels(served)[0]!, t).description, 'T({0} models)'.replace('{0}', '2'));
    assert.equal(modelFilterDescription('x', t), 'T(filtered: x)');
  });
});
