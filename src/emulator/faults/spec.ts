/**
 * The fault rule mini-language of the command line (`comfy-cloud emulator --fault <spec>`, and a string rule of a
 * plan): a spec reads into a plain rule object, which the schema (schema.ts) then checks and completes.
 *
 * Syntax: `ON:ACTION[:OPTION]…`
 * - ON: a route kind: submit, list, get, cancel, events, workflow, upload, fromHash, byHash, getAsset,
 *   deleteAsset, content, health, any (every job and asset route); the router's router:list, router:get,
 *   router:schema, router:invoke, router:any (every router route); v1's v1:objectInfo, v1:upload, v1:prompt,
 *   v1:status, v1:jobs, v1:history, v1:view, v1:cancel, v1:ws (the WebSocket), v1:any (every v1 route).
 * - ACTION:
 *   - `status=<http status>` or `status=<error code>`: answer the envelope (`status=500`, `status=queue_full`); on
 *     submit a 5xx leaves the Idempotency-Key claimed with no job (an unknown outcome), a 4xx releases it;
 *   - `reset`: destroy the connection before answering; on submit the key stays claimed with no job;
 *   - `delay=<ms>`: hold the request, then handle it;
 *   - `lag=<ms>` (submit): the job is created, but the listing omits it that long after its creation; with the
 *     option `get=<ms>` its GET, /events and /workflow answer 404 that long;
 *   - `afterCreate=<5xx status>`, `afterCreate=reset` or `afterCreate=201` (submit): create the job, then fail
 *     the answer, or answer it normally (201) — late with the option `delay=<ms>`;
 *   - `dropAfter=<frames>` (events, v1:ws): end the stream after that many frames (`how=reset` to reset instead);
 *   - `silent` or `silentAfter=<frames>` (events, v1:ws): that many frames (default 0), then nothing at all;
 *   - `cutAfter=<bytes>` (content): close the connection after that many body bytes.
 *   - `bucket=<error_type>` (router kinds): answer the router error of that bucket with its status
 *     (modelRouter/buckets.ts; a name outside the fifteen needs the option `status=`).
 * - OPTION: `times=<n>`, `every=<n>`, `share=<0..1>`, `after=<n>` (when it fires: `FaultSchedule`, schema.ts);
 *   `code=<error code>`, `retryAfter=<seconds>` (status); `claims=false` (status and reset on submit: a proxy failed
 *   before the request reached submission, so the key is not claimed); `get=<ms>` (lag); `code=`, `delay=<ms>`
 *   (afterCreate); `how=end|reset` (dropAfter); `status=<http status>`, `retryAfter=<seconds>`, `message=<detail>`,
 *   `spend=<limit>/<current>` (USD cents) or `spend=none` (bucket; spend only with concurrency_limit_exceeded).
 *
 * Examples: `submit:status=503:code=upstream_unreachable` (no job, the key stays claimed), `submit:reset:claims=false`,
 * `submit:lag=5000:get=1000:every=2`, `submit:afterCreate=502`, `submit:afterCreate=201:delay=40000:times=1`,
 * `get:status=500:every=3`, `get:status=rate_limited:retryAfter=2:times=2`, `events:dropAfter=2`,
 * `events:status=not_implemented`, `content:cutAfter=100000:times=3`, `get:reset:share=0.3`, `get:delay=40000:times=1`,
 * `router:invoke:bucket=content_policy_violation`, `router:list:bucket=rate_limited:retryAfter=2:times=1`,
 * `v1:ws:dropAfter=5`, `v1:ws:status=503:times=3` (refuse 3 upgrades), `v1:jobs:status=404`, `v1:prompt:afterCreate=502`.
 */
import { checkFaultRule, type FaultRule } from './schema';

/** Reads the value of an action or option, or throws a TypeError saying what `name=` takes. */
interface Reader {
  number(name: string, text: string | undefined): number;
  text(name: string, text: string | undefined, example?: string): string;
}

/** Each ACTION: the kind it reads into and its fields, from the value after `=` (undefined without one). */
const ACTIONS: Readonly<Record<string, (value: string | undefined, read: Reader) => Record<string, unknown>>> = {
  status: (value, read) => {
    const text = read.text('status', value, 'e.g. status=500 or status=queue_full');
    return /^\d+$/.test(text) ? { kind: 'status', status: Number(text) } : { kind: 'status', code: text };
  },
  reset: () => ({ kind: 'reset' }),
  delay: (value, read) => ({ kind: 'delay', ms: read.number('delay', value) }),
  lag: (value, read) => ({ kind: 'lag', listMs: read.number('lag', value) }),
  afterCreate: (value) => {
    if (value === 'reset') return { kind: 'afterCreate', reset: true };
    if (value !== undefined && /^\d+$/.test(value)) return { kind: 'afterCreate', status: Number(value) };
    return value === undefined || value === '' ? { kind: 'afterCreate' } : { kind: 'afterCreate', code: value };
  },
  dropAfter: (value, read) => ({ kind: 'dropStream', afterFrames: read.number('dropAfter', value) }),
  silent: (value, read) => ({
    kind: 'silentStream',
    afterFrames: value === undefined ? 0 : read.number('silent', value),
  }),
  silentAfter: (value, read) => ({
    kind: 'silentStream',
    afterFrames: value === undefined ? 0 : read.number('silentAfter', value),
  }),
  cutAfter: (value, read) => ({ kind: 'cutAfterBytes', bytes: read.number('cutAfter', value) }),
  bucket: (value, read) => ({
    kind: 'bucket',
    bucket: read.text('bucket', value, 'e.g. bucket=content_policy_violation'),
  }),
};

/**
 * Each OPTION: the field it sets and how its value reads; `only` the kind it goes with, and what to say when it is
 * given to another (its name means something else there, or nothing).
 */
const OPTIONS: Readonly<
  Record<
    string,
    { field: string; value: 'number' | 'text' | 'boolean' | 'spend'; only?: { kind: string; otherwise: string } }
  >
> = {
  times: { field: 'times', value: 'number' },
  every: { field: 'every', value: 'number' },
  share: { field: 'share', value: 'number' },
  after: { field: 'after', value: 'number' },
  retryAfter: { field: 'retryAfter', value: 'number' },
  code: { field: 'code', value: 'text' },
  message: { field: 'message', value: 'text' },
  how: { field: 'how', value: 'text' },
  claims: { field: 'claims', value: 'boolean' },
  delay: {
    field: 'delayMs',
    value: 'number',
    only: {
      kind: 'afterCreate',
      otherwise:
        'the option delay= goes with afterCreate (to hold a request before it is handled, use the action delay=)',
    },
  },
  get: { field: 'getMs', value: 'number', only: { kind: 'lag', otherwise: 'the option get= goes with lag=' } },
  status: {
    field: 'status',
    value: 'number',
    only: { kind: 'bucket', otherwise: 'the option status= goes with bucket= (elsewhere status= is the action)' },
  },
  spend: {
    field: 'spendCents',
    value: 'spend',
    only: { kind: 'bucket', otherwise: 'the option spend= goes with bucket=concurrency_limit_exceeded' },
  },
};

function splitAssignment(text: string): [string, string | undefined] {
  const eq = text.indexOf('=');
  return eq < 0 ? [text, undefined] : [text.slice(0, eq).trim(), text.slice(eq + 1).trim()];
}

/**
 * Reads a fault rule written for the command line (`--fault <spec>`; the syntax above) and checks it as any rule.
 * @returns the rule in canonical form (as {@link checkFaultRule}).
 * @throws TypeError saying what is wrong, with the syntax or the field.
 */
export function parseFaultSpec(spec: string): FaultRule {
  const where = `fault spec ${JSON.stringify(spec)}`;
  const fields = spec.trim().split(':');
  if (fields.length < 2 || fields.some((f) => f.trim() === '')) {
    throw new TypeError(
      `a fault spec is ON:ACTION[:OPTION]…, e.g. get:status=500:every=3 or content:cutAfter=100000:times=2; got ${JSON.stringify(spec)}`,
    );
  }
  // The router's and v1's route kinds contain a colon themselves (router:invoke, v1:ws): join the first two fields back.
  const family = fields[0].trim();
  if ((family === 'router' || family === 'v1') && fields.length >= 3)
    fields.splice(0, 2, `${family}:${fields[1].trim()}`);
  const [on, action, ...options] = fields.map((f) => f.trim());
  const read: Reader = {
    number: (name, text) => {
      const n = text === undefined || text === '' ? NaN : Number(text);
      if (!Number.isFinite(n))
        throw new TypeError(`${where}: ${name} needs a number (${name}=N); got ${JSON.stringify(text ?? '')}`);
      return n;
    },
    text: (name, text, example) => {
      if (text === undefined || text === '')
        throw new TypeError(`${where}: ${name} needs a value (${example ?? `${name}=…`})`);
      return text;
    },
  };
  const [name, value] = splitAssignment(action);
  if (!Object.hasOwn(ACTIONS, name))
    throw new TypeError(`${where}: unknown action ${JSON.stringify(name)} (${Object.keys(ACTIONS).join(', ')})`);
  const rule: Record<string, unknown> = { on, ...ACTIONS[name](value, read) };
  for (const option of options) {
    const [key, text] = splitAssignment(option);
    if (!Object.hasOwn(OPTIONS, key))
      throw new TypeError(
        `${where}: unknown option ${JSON.stringify(key)} (${Object.keys(OPTIONS)
          .map((k) => `${k}=`)
          .join(', ')})`,
      );
    const { field, value: reading, only } = OPTIONS[key];
    if (only !== undefined && rule.kind !== only.kind) throw new TypeError(`${where}: ${only.otherwise}`);
    rule[field] =
      reading === 'number'
        ? read.number(key, text)
        : reading === 'text'
          ? read.text(key, text)
          : reading === 'boolean'
            ? flag(where, key, text)
            : spend(where, text);
  }
  return checkFaultRule(rule, where);
}

function flag(where: string, key: string, text: string | undefined): boolean {
  if (text !== 'true' && text !== 'false') throw new TypeError(`${where}: ${key}= takes true or false`);
  return text === 'true';
}

/** `spend=LIMIT/CURRENT` (USD cents) or `spend=none`. */
function spend(where: string, text: string | undefined): { limit: number; current: number } | null {
  if (text === 'none') return null;
  const m = /^(\d+)\/(\d+)$/.exec(text ?? '');
  if (m === null)
    throw new TypeError(`${where}: spend= takes LIMIT/CURRENT in USD cents (e.g. spend=5000/4990) or none`);
  return { limit: Number(m[1]), current: Number(m[2]) };
}
