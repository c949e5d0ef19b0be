/**
 * Every outcome of a submission the contract names, each on demand from the emulator's fault plan, over real HTTP:
 * what the client sees, whether a job exists (listing and GET), and whether the same Idempotency-Key can be presented
 * again (Job and Asset API v2, POST /api/v2/jobs, rules 3–5 and 7; Errors). And a created job that the listing and
 * its own routes show only after a while (`lag`), on the emulator's injectable clock. No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { FaultRule } from '../../src/emulator';
import { call, submit, useEmulator, type Answer, type Json } from './harness';

/** EmptyImage → SaveImage: valid, quick. */
function sample(prefix = 'outcome'): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 255 } },
    '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: prefix } },
  };
}

/** What a submission answered: an HTTP status and error code, or a broken connection. */
type Seen = { status: number; code?: string; retryAfter?: string | null } | 'reset';

/** POSTs a submission with `key`; a broken connection is `'reset'`. */
async function present(
  url: string,
  key: string | undefined,
  workflow: Json = sample(),
): Promise<{ seen: Seen; answer?: Answer }> {
  try {
    const answer = await call(`${url}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      body: JSON.stringify({ workflow }),
    });
    return {
      seen: { status: answer.status, code: answer.body.error?.code, retryAfter: answer.headers.get('retry-after') },
      answer,
    };
  } catch {
    return { seen: 'reset' };
  }
}

describe('emulator: every outcome of a submission (POST /api/v2/jobs, rules 3–5 and 7)', () => {
  const emu = useEmulator();
  afterEach(() => emu().setFaults({ rules: [] }));

  const listed = async (): Promise<string[]> =>
    (await call(`${emu().baseUrl}/api/v2/jobs?limit=1000`)).body.jobs.map((j: Json) => j.id);

  /**
   * One outcome: the rule fires once on a submission presenting a fresh key; `seen` is what the client gets, `job`
   * whether a job now exists, `again` what the same key gets when presented once more.
   */
  interface Outcome {
    readonly name: string;
    readonly rule: FaultRule | string;
    readonly seen: Seen;
    readonly job: boolean;
    readonly again: { status: 201 } | { status: 422; code: 'idempotency_key_reuse' };
  }
  const reuse = { status: 422, code: 'idempotency_key_reuse' } as const;
  const outcomes: Outcome[] = [
    // Rule 4: refused before submission (validation), no job, the key released.
    {
      name: 'refused (a validation 4xx, invalid_workflow): no job, the key released (rule 4)',
      rule: 'submit:status=invalid_workflow',
      seen: { status: 422, code: 'invalid_workflow', retryAfter: null },
      job: false,
      again: { status: 201 },
    },
    // Rules 4 and 7: busy, no job, the key released.
    {
      name: 'busy (429 queue_full with Retry-After): no job, the key released (rules 4, 7)',
      rule: 'submit:status=queue_full',
      seen: { status: 429, code: 'queue_full', retryAfter: '1' },
      job: false,
      again: { status: 201 },
    },
    {
      name: 'busy (402 insufficient_credits): no job, the key released (rules 4, 7)',
      rule: 'submit:status=insufficient_credits',
      seen: { status: 402, code: 'insufficient_credits', retryAfter: null },
      job: false,
      again: { status: 201 },
    },
    // Rule 5: an unknown outcome where no job was created: the key stays claimed all the same.
    {
      name: 'unknown outcome without a job (503 upstream_unreachable, no Retry-After): the key stays claimed (rule 5)',
      rule: 'submit:status=upstream_unreachable',
      seen: { status: 503, code: 'upstream_unreachable', retryAfter: null },
      job: false,
      again: reuse,
    },
    {
      name: 'unknown outcome without a job (500 upstream_error): the key stays claimed (rule 5)',
      rule: 'submit:status=500',
      seen: { status: 500, code: 'upstream_error', retryAfter: null },
      job: false,
      again: reuse,
    },
    {
      name: 'unknown outcome without a job (a reset before any answer): the key stays claimed (rule 5)',
      rule: 'submit:reset',
      seen: 'reset',
      job: false,
      again: reuse,
    },
    {
      name: 'unknown outcome without a job (a 502 of an `any` rule): a submission claims its key whatever rule fires (rule 5)',
      rule: 'any:status=502',
      seen: { status: 502, code: 'upstream_error', retryAfter: null },
      job: false,
      again: reuse,
    },
    // A proxy in front of the service failed: the request never reached submission.
    {
      name: 'a proxy 502 before submission (claims=false): no job, no claim',
      rule: 'submit:status=502:claims=false',
      seen: { status: 502, code: 'upstream_error', retryAfter: null },
      job: false,
      again: { status: 201 },
    },
    {
      name: 'a proxy reset before submission (claims=false): no job, no claim',
      rule: 'submit:reset:claims=false',
      seen: 'reset',
      job: false,
      again: { status: 201 },
    },
    // Rule 5: an unknown outcome where the job was created.
    {
      name: 'unknown outcome with a job (created, then 502): the key stays claimed (rule 5)',
      rule: 'submit:afterCreate=502',
      seen: { status: 502, code: 'upstream_error', retryAfter: null },
      job: true,
      again: reuse,
    },
    {
      name: 'unknown outcome with a job (created, then a reset): the key stays claimed (rule 5)',
      rule: 'submit:afterCreate=reset',
      seen: 'reset',
      job: true,
      again: reuse,
    },
  ];

  for (const outcome of outcomes) {
    it(outcome.name, async () => {
      const rule = typeof outcome.rule === 'string' ? `${outcome.rule}:times=1` : { ...outcome.rule, times: 1 };
      const before = await listed();
      emu().setFaults({ rules: [rule] });
      const key = randomUUID();
      const first = await present(emu().baseUrl, key);
      assert.deepEqual(first.seen, outcome.seen);
      const created = (await listed()).filter((id) => !before.includes(id));
      assert.equal(created.length, outcome.job ? 1 : 0, outcome.job ? 'one job was created' : 'no job was created');
      for (const id of created) assert.equal((await call(`${emu().baseUrl}/api/v2/jobs/${id}`)).status, 200);
      const again = await present(emu().baseUrl, key);
      assert.deepEqual(
        again.seen === 'reset'
          ? 'reset'
          : { status: again.seen.status, ...(again.seen.code === undefined ? {} : { code: again.seen.code }) },
        outcome.again,
      );
      assert.equal(
        (await listed()).length,
        before.length + created.length + (outcome.again.status === 201 ? 1 : 0),
        'a refused key executes nothing',
      );
    });
  }

  it('a fault that reached submission checks the key first: a key already presented gets 422 idempotency_key_reuse, not the fault (rule 3)', async () => {
    const key = randomUUID();
    assert.equal(((await present(emu().baseUrl, key)).seen as { status: number }).status, 201);
    emu().setFaults({ rules: ['submit:status=503:times=1', 'submit:status=queue_full:times=1'] });
    assert.deepEqual((await present(emu().baseUrl, key)).seen, { ...reuse, retryAfter: null }, 'the 5xx');
    assert.deepEqual((await present(emu().baseUrl, key)).seen, { ...reuse, retryAfter: null }, 'the 429');
  });

  it('without an Idempotency-Key a 5xx on submit claims nothing and creates nothing', async () => {
    emu().setFaults({ rules: ['submit:status=503:times=1'] });
    const before = await listed();
    assert.deepEqual((await present(emu().baseUrl, undefined)).seen, {
      status: 503,
      code: 'upstream_error',
      retryAfter: '1',
    });
    assert.deepEqual(await listed(), before);
    assert.equal(((await present(emu().baseUrl, undefined)).seen as { status: number }).status, 201);
  });

  it('a refusal in front of submission (429 rate_limited) leaves no claim and is not refused as a reused key', async () => {
    const key = randomUUID();
    assert.equal(((await present(emu().baseUrl, key)).seen as { status: number }).status, 201);
    emu().setFaults({ rules: ['submit:status=rate_limited:times=1'] });
    assert.deepEqual(
      (await present(emu().baseUrl, key)).seen,
      { status: 429, code: 'rate_limited', retryAfter: '1' },
      'the gateway answers before the key is looked at',
    );
    const fresh = randomUUID();
    emu().setFaults({ rules: ['submit:status=rate_limited:times=1'] });
    await present(emu().baseUrl, fresh);
    assert.equal(((await present(emu().baseUrl, fresh)).seen as { status: number }).status, 201);
  });
});

describe('emulator: a created job the listing and its own routes show only after a while (lag)', () => {
  let clock = Date.UTC(2030, 0, 1);
  const emu = useEmulator({ now: () => clock });
  afterEach(() => emu().setFaults({ rules: [] }));

  const listed = async (): Promise<string[]> =>
    (await call(`${emu().baseUrl}/api/v2/jobs?limit=1000`)).body.jobs.map((j: Json) => j.id);
  /** The statuses of the job's own routes: GET, its events (the stream's body is left unread) and its workflow. */
  const ownRoutes = async (id: string): Promise<number[]> => {
    const url = `${emu().baseUrl}/api/v2/jobs/${id}`;
    const events = await fetch(`${url}/events`, {
      headers: { accept: 'text/event-stream' },
      signal: AbortSignal.timeout(15_000),
    });
    await events.body?.cancel();
    return [(await call(url)).status, events.status, (await call(`${url}/workflow`)).status];
  };

  it('lag=5000:get=1000: the 201 names the job; GET, events and workflow answer 404 not_found until 1000 ms after its creation, the listing omits it until 5000 ms', async () => {
    emu().setFaults({ rules: ['submit:lag=5000:get=1000:times=1'] });
    const created = await submit(emu(), sample('lag'));
    assert.equal(created.status, 201);
    const id = created.body.id as string;
    const hidden = await call(`${emu().baseUrl}/api/v2/jobs/${id}`);
    assert.equal(hidden.body.error.code, 'not_found');
    assert.deepEqual(await ownRoutes(id), [404, 404, 404]);
    assert.ok(!(await listed()).includes(id));
    clock += 999;
    assert.deepEqual(await ownRoutes(id), [404, 404, 404], '1 ms before getMs');
    clock += 1;
    assert.deepEqual(await ownRoutes(id), [200, 200, 200], 'at getMs');
    assert.ok(!(await listed()).includes(id), 'the listing still lags');
    clock += 3999;
    assert.ok(!(await listed()).includes(id), '1 ms before listMs');
    clock += 1;
    assert.ok((await listed()).includes(id), 'at listMs');
    const statusFiltered = (
      await call(`${emu().baseUrl}/api/v2/jobs?status=queued,running,succeeded,failed&limit=1000`)
    ).body.jobs.map((j: Json) => j.id);
    assert.ok(statusFiltered.includes(id));
  });

  it('the lag is decided per created job: with every=2 only the second and fourth jobs lag; an invalid submission does not count', async () => {
    emu().setFaults({ rules: ['submit:lag=1000:every=2'] });
    assert.equal((await submit(emu(), { '1': { class_type: 'NoSuchNode', inputs: {} } })).status, 422);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await submit(emu(), sample(`every-${i}`))).body.id);
    const shown = await listed();
    assert.deepEqual(
      ids.map((id) => shown.includes(id)),
      [true, false, true, false],
    );
    assert.deepEqual(await ownRoutes(ids[1]), [200, 200, 200], 'getMs defaults to 0');
    clock += 1000;
    const later = await listed();
    assert.deepEqual(
      ids.map((id) => later.includes(id)),
      [true, true, true, true],
    );
  });
});
