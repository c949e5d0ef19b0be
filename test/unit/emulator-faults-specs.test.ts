/**
 * Fault specs (parseFaultSpec) and the checking of a fault plan: what a spec may say, and the clear error a bad one
 * gets.
 */
import * as assert from 'node:assert/strict';
import { checkFaultPlan, parseFaultSpec, startEmulator, type FaultRule } from '../../src/emulator';
import { call } from './harness';

describe('fault specs (parseFaultSpec) and plan checking', () => {
  it('reads the CLI forms into canonical rules', () => {
    const cases: [string, FaultRule][] = [
      ['submit:afterCreate=502', { on: 'submit', kind: 'afterCreate', status: 502, code: 'upstream_error' }],
      ['submit:afterCreate=reset:times=1', { on: 'submit', kind: 'afterCreate', reset: true, times: 1 }],
      ['submit:afterCreate', { on: 'submit', kind: 'afterCreate', status: 502, code: 'upstream_error' }],
      ['submit:afterCreate=201:delay=40000', { on: 'submit', kind: 'afterCreate', status: 201, delayMs: 40_000 }],
      [
        'submit:afterCreate=503:code=queue_gone:delay=5',
        { on: 'submit', kind: 'afterCreate', status: 503, code: 'queue_gone', delayMs: 5 },
      ],
      ['get:status=500:every=3', { on: 'get', kind: 'status', status: 500, code: 'upstream_error', every: 3 }],
      [
        'get:status=rate_limited:retryAfter=2:times=2',
        { on: 'get', kind: 'status', status: 429, code: 'rate_limited', retryAfter: 2, times: 2 },
      ],
      ['submit:status=429:code=queue_full', { on: 'submit', kind: 'status', status: 429, code: 'queue_full' }],
      ['events:status=not_implemented', { on: 'events', kind: 'status', status: 501, code: 'not_implemented' }],
      ['events:dropAfter=2', { on: 'events', kind: 'dropStream', afterFrames: 2, how: 'end' }],
      ['events:dropAfter=0:how=reset', { on: 'events', kind: 'dropStream', afterFrames: 0, how: 'reset' }],
      ['events:silent', { on: 'events', kind: 'silentStream', afterFrames: 0 }],
      ['events:silentAfter=3', { on: 'events', kind: 'silentStream', afterFrames: 3 }],
      ['content:cutAfter=100000:times=3', { on: 'content', kind: 'cutAfterBytes', bytes: 100_000, times: 3 }],
      ['get:reset:share=0.3', { on: 'get', kind: 'reset', share: 0.3 }],
      ['any:delay=40000:after=1:times=1', { on: 'any', kind: 'delay', ms: 40_000, after: 1, times: 1 }],
      [' upload:status=502 ', { on: 'upload', kind: 'status', status: 502, code: 'upstream_error' }],
      [
        'submit:status=upstream_unreachable',
        { on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable' },
      ],
      [
        'submit:status=502:claims=false',
        { on: 'submit', kind: 'status', status: 502, code: 'upstream_error', claims: false },
      ],
      ['submit:reset:claims=true', { on: 'submit', kind: 'reset', claims: true }],
      ['submit:lag=5000:get=1000:every=2', { on: 'submit', kind: 'lag', listMs: 5000, getMs: 1000, every: 2 }],
      ['submit:lag=0', { on: 'submit', kind: 'lag', listMs: 0, getMs: 0 }],
    ];
    for (const [spec, rule] of cases) assert.deepEqual(parseFaultSpec(spec), rule, spec);
  });

  it('refuses a bad spec with a TypeError saying what is wrong', () => {
    const cases: [string, RegExp][] = [
      ['get', /ON:ACTION/],
      ['nowhere:reset', /"on" must be one of/],
      ['get:explode', /unknown action "explode"/],
      ['get:status', /status needs a value/],
      ['get:status=418', /no default code/],
      ['get:status=teapot', /give a status/],
      ['get:cutAfter=10', /cutAfterBytes applies to "on": "content" only/],
      ['content:dropAfter=1', /dropStream applies to "on": "events" only/],
      ['get:afterCreate=502', /afterCreate applies to "on": "submit" only/],
      ['submit:afterCreate=429', /answers 201 \(late\) or a 5xx/],
      ['get:status=500:every=2:share=0.5', /every or share, not both/],
      ['get:status=500:share=2', /"share" must be a number in 0..1/],
      ['get:status=500:every=0', /"every" must be an integer of at least 1/],
      ['get:status=500:times=x', /times needs a number/],
      ['get:reset:color=red', /unknown option "color"/],
      ['events:dropAfter=-1', /"afterFrames" must be an integer/],
      ['get:status=500:delay=10', /delay= goes with afterCreate/],
      ['get:lag=10', /lag applies to "on": "submit" only/],
      ['submit:lag', /lag needs a number/],
      ['submit:status=500:get=10', /get= goes with lag/],
      ['get:status=500:claims=false', /"claims" applies to "on": "submit" only/],
      ['submit:reset:claims=maybe', /claims= takes true or false/],
    ];
    for (const [spec, message] of cases)
      assert.throws(
        () => parseFaultSpec(spec),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
        spec,
      );
  });

  it('a plan is {seed?, rules}: unknown fields of a rule or a plan are refused', () => {
    assert.deepEqual(checkFaultPlan({ rules: ['get:reset'] }), { seed: 1, rules: [{ on: 'get', kind: 'reset' }] });
    assert.throws(() => checkFaultPlan({ rules: [{ on: 'get', kind: 'reset', time: 1 }] }), /takes no field "time"/);
    assert.throws(() => checkFaultPlan({ rule: [] }), /takes "seed" and "rules"/);
    assert.throws(() => checkFaultPlan([]), TypeError);
  });

  it('a refusal names the rule (its index), the field (its path) and what is allowed', () => {
    const cases: [unknown, RegExp][] = [
      [
        {
          rules: [
            'get:reset',
            {
              on: 'router:invoke',
              kind: 'bucket',
              bucket: 'concurrency_limit_exceeded',
              spendCents: { limit: -1, current: 0 },
            },
          ],
        },
        /^fault rule 1: "spendCents\.limit" must be an integer of at least 0; got -1$/,
      ],
      [
        { rules: [{ on: 'get', kind: 'explode' }] },
        /^fault rule 0: "kind" must be one of status, reset, delay, lag, afterCreate, dropStream, silentStream, cutAfterBytes, bucket; got "explode"$/,
      ],
      [
        {
          rules: [
            { on: 'get', kind: 'delay', ms: 1 },
            { on: 'get', kind: 'delay', ms: 1.5 },
          ],
        },
        /^fault rule 1: "ms" must be an integer in 0\.\.86400000; got 1\.5$/,
      ],
      [
        { rules: [{ on: 'submit', kind: 'lag', listMs: 5, every: 2, share: 0.5 }] },
        /^fault rule 0: give every or share, not both$/,
      ],
      [
        { rules: [{ on: 'events', kind: 'dropStream', afterFrames: 1, how: 'later' }] },
        /^fault rule 0: "how" must be "end" or "reset"; got "later"$/,
      ],
      [
        { rules: [{ on: 'submit', kind: 'reset', claims: 'yes' }] },
        /^fault rule 0: "claims" must be true or false; got "yes"$/,
      ],
      [
        { rules: [{ on: 'get', kind: 'status', status: 500, color: 'red' }] },
        /^fault rule 0: status takes no field "color" \(it takes on, kind, status, code, retryAfter, message, claims, times, every, share, after\)$/,
      ],
      [{ seed: -1, rules: [] }, /^fault plan: "seed" must be an integer in 0\.\.4294967295; got -1$/],
      [{ rules: 'get:reset' }, /^fault plan: "rules" must be an array of rules/],
      [{ rules: [], extra: 1 }, /^fault plan: takes "seed" and "rules" only; got "extra"$/],
    ];
    for (const [plan, message] of cases)
      assert.throws(
        () => checkFaultPlan(plan),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
        JSON.stringify(plan),
      );
  });

  it('startEmulator refuses an invalid plan; setFaults refuses one and keeps the plan in force; a plan given at start applies', async () => {
    await assert.rejects(startEmulator({ port: 0, faults: { rules: ['get:explode'] } }), TypeError);
    const emu = await startEmulator({ port: 0, faults: { rules: ['health:status=500:times=1'] } });
    try {
      assert.throws(
        () => emu.setFaults({ rules: [{ on: 'get', kind: 'delay' } as unknown as FaultRule] }),
        /"ms" must be an integer/,
      );
      assert.equal((await call(`${emu.baseUrl}/api/v2/health`)).status, 500);
      assert.equal((await call(`${emu.baseUrl}/api/v2/health`)).status, 200);
    } finally {
      await emu.close();
    }
  });
});
