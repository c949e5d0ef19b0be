/**
 * A fault rule as data: its zod schema, and its canonical form (each field a rule leaves out that has a default is
 * filled in: the status or code of an error answer from the other, how a stream ends, …). Written with `zod/mini`
 * and built at first use, as the core's shapes are (core/util/lazySchema.ts).
 *
 * Every refusal is a TypeError naming the rule (its index in the plan), the field and what is allowed, e.g.
 * `fault rule 2: "ms" must be an integer in 0..86400000; got -1`.
 */
import * as z from 'zod/mini';
import { STATUS_OF_CODE } from '../errors';
import { lazy } from '../../core/util/lazySchema';
import { ROUTE_KINDS, type RouteKind } from './routes';

/** The longest hold of a `delay`, an `afterCreate` answer or a `lag`: a day, in ms. */
const MAX_HOLD_MS = 24 * 60 * 60 * 1000;

/** The code of an error status when a rule gives none. */
const DEFAULT_CODE_OF_STATUS: Readonly<Record<number, string>> = {
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  429: 'rate_limited',
  500: 'upstream_error',
  501: 'not_implemented',
  502: 'upstream_error',
  503: 'upstream_error',
  504: 'upstream_error',
};

/** The only route kinds a kind of rule can target (the others: any but `bucket`, which takes the router's). */
const ROUTE_OF_KIND: Readonly<Partial<Record<string, readonly RouteKind[]>>> = {
  lag: ['submit'],
  afterCreate: ['submit', 'v1:prompt'],
  // v1:ws: the WebSocket of the v1 surface, cut after N frames like an event stream.
  dropStream: ['events', 'v1:ws'],
  silentStream: ['events', 'v1:ws'],
  cutAfterBytes: ['content'],
  bucket: ['router:list', 'router:get', 'router:schema', 'router:invoke', 'router:any'],
};

/** A value as a message shows it. */
const shown = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

/** An integer in `min..max` (without `max`: at least `min`); the message names the range and what was given. */
function integer(min: number, max?: number) {
  const error = (issue: { input?: unknown }): string =>
    `must be an integer ${max === undefined ? `of at least ${min}` : `in ${min}..${max}`}; got ${shown(issue.input)}`;
  return z.int({ error }).check(z.gte(min, { error }), ...(max === undefined ? [] : [z.lte(max, { error })]));
}

/** A snake_case name (an error code, a router bucket), e.g. `rate_limited`. */
const snakeCase = (what: string) => {
  const error = (issue: { input?: unknown }): string => `must be a snake_case ${what}; got ${shown(issue.input)}`;
  return z.string({ error }).check(z.regex(/^[a-z][a-z0-9_]*$/, { error }));
};

/** A number in 0..1 (a share of the requests). */
function fraction() {
  const error = (issue: { input?: unknown }): string => `must be a number in 0..1; got ${shown(issue.input)}`;
  return z.number({ error }).check(z.gte(0, { error }), z.lte(1, { error }));
}

const text = () =>
  z.string({ error: 'must be a non-empty string' }).check(z.minLength(1, { error: 'must be a non-empty string' }));
const flag = () => z.boolean({ error: (issue) => `must be true or false; got ${shown(issue.input)}` });
const httpError = () => integer(400, 599);
const holdMs = () => integer(0, MAX_HOLD_MS);

/** The fields of each kind of rule besides `on`, `kind` and the schedule (see {@link FaultAction} for what each does). */
const fieldsOfKind = lazy(() => ({
  status: {
    status: z.optional(httpError()),
    code: z.optional(snakeCase('error code such as rate_limited')),
    retryAfter: z.optional(integer(0)),
    message: z.optional(text()),
    claims: z.optional(flag()),
  },
  reset: { claims: z.optional(flag()) },
  delay: { ms: holdMs() },
  lag: { listMs: holdMs(), getMs: z.optional(holdMs()) },
  afterCreate: {
    status: z.optional(integer(200, 599)),
    code: z.optional(snakeCase('error code such as upstream_error')),
    reset: z.optional(flag()),
    delayMs: z.optional(holdMs()),
  },
  dropStream: {
    afterFrames: integer(0),
    how: z.optional(
      z.enum(['end', 'reset'], { error: (issue) => `must be "end" or "reset"; got ${shown(issue.input)}` }),
    ),
  },
  silentStream: { afterFrames: z.optional(integer(0)) },
  cutAfterBytes: { bytes: integer(0) },
  bucket: {
    // Any snake_case name: a bucket outside the closed fifteen (with its status) tests a client's fallback to internal_error.
    bucket: snakeCase('router bucket such as content_policy_violation'),
    status: z.optional(httpError()),
    retryAfter: z.optional(integer(0)),
    message: z.optional(text()),
    spendCents: z.optional(
      z.nullable(
        z.strictObject(
          { limit: integer(0), current: integer(0) },
          { error: 'must be {"limit": cents, "current": cents} or null' },
        ),
      ),
    ),
  },
}));

/** The fields of the schedule, which every kind takes (see {@link FaultSchedule}). */
const scheduleFields = lazy(() => ({
  times: z.optional(integer(0)),
  every: z.optional(integer(1)),
  share: z.optional(fraction()),
  after: z.optional(integer(0)),
}));

/** One kind of rule: `on`, `kind`, its fields and the schedule, nothing else. */
function ruleOf<K extends keyof ReturnType<typeof fieldsOfKind>>(kind: K) {
  const fields = fieldsOfKind()[kind];
  const allowed = ['on', 'kind', ...Object.keys(fields), ...Object.keys(scheduleFields())];
  return z.strictObject(
    {
      on: z.enum(ROUTE_KINDS, {
        error: (issue) => `must be one of ${ROUTE_KINDS.join(', ')}; got ${shown(issue.input)}`,
      }),
      kind: z.literal(kind),
      ...fields,
      ...scheduleFields(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `${kind} takes no field ${issue.keys.map((k) => `"${k}"`).join(', ')} (it takes ${allowed.join(', ')})`
          : `expected an object {"on", "kind", …}; got ${shown(issue.input)}`,
    },
  );
}

/** Any rule as written: one of the kinds, told apart by `kind`. */
const ruleUnion = lazy(() =>
  z.discriminatedUnion(
    'kind',
    [
      ruleOf('status'),
      ruleOf('reset'),
      ruleOf('delay'),
      ruleOf('lag'),
      ruleOf('afterCreate'),
      ruleOf('dropStream'),
      ruleOf('silentStream'),
      ruleOf('cutAfterBytes'),
      ruleOf('bucket'),
    ],
    {
      error: (issue) =>
        issue.code === 'invalid_union'
          ? `must be one of ${Object.keys(fieldsOfKind()).join(', ')}; got ${shown((issue.input as { kind?: unknown } | undefined)?.kind)}`
          : `expected an object {"on", "kind", …} or a spec string; got ${shown(issue.input)}`,
    },
  ),
);

/** A fault rule as written (a JSON object of the plan, or what a CLI spec reads into): `on`, `kind`, its fields, its schedule. */
export type FaultRule = z.input<ReturnType<typeof ruleUnion>>;

/**
 * When a rule fires, counting the requests it targets (1, 2, 3, …). Without `every` or `share` it fires on each
 * one. `times` caps any schedule.
 * - `times`: fire at most this many times (default: no limit); 0 disables the rule.
 * - `every`: fire on every Nth request (N, 2N, …, counted after `after`).
 * - `share`: fire on this share (0..1) of the requests, drawn from the plan's seeded PRNG. Not with `every`.
 * - `after`: let this many requests through before the rule can fire (default 0).
 */
export type FaultSchedule = Pick<FaultRule, keyof ReturnType<typeof scheduleFields>>;

/**
 * What a rule does: its `kind` and that kind's fields.
 * - `status`: answer `status` with the error envelope of `code` (each defaults from the other: 429 →
 *   `rate_limited`, 5xx → `upstream_error`, `queue_full` → 429 …) and a `Retry-After` of `retryAfter` seconds
 *   (default 1 for 429 and 503, else none; none for 503 `upstream_unreachable`). Any route kind; for the event stream,
 *   501 `not_implemented` and 429 `too_many_streams` are such rules. On a submission no job is created; `claims`
 *   (`on: 'submit'` only) says whether the request reached submission (default: see injector.ts, `claimsByDefault`):
 *   its Idempotency-Key is then claimed, and released after a 4xx (rule 4) or kept after a 5xx (rule 5).
 * - `reset`: destroy the connection before answering. Any route kind. On a submission no job is created; `claims`
 *   as for `status` (default true: an unknown outcome, the key stays claimed, rule 5).
 * - `delay`: hold the request `ms` milliseconds before it is handled, then handle it normally. Any route kind.
 *   A client that gave up meanwhile closed the connection, and Node then discards the request: a submission or
 *   an upload held this way is not processed (to answer a created job late, use `afterCreate` with `delayMs`).
 * - `lag` (`on: 'submit'` only): the job is created as usual, but the listing (`GET /api/v2/jobs`) omits it until
 *   `listMs` after its creation, and its own routes (`GET /api/v2/jobs/{id}`, its `/events` and `/workflow`) answer 404
 *   `not_found` until `getMs` (default 0) after it, on the emulator's clock: a listing lags the truth, and a read
 *   replica may not know a job yet. Decided per created job, so `every` and `share` pick which jobs lag.
 * - `afterCreate` (`on: 'submit'` or `'v1:prompt'`): create and queue the job, wait `delayMs` (default 0), then answer
 *   `status` with `code` (default 502 `upstream_error`; 201 is the normal answer, late), or destroy the
 *   connection when `reset` is true.
 * - `dropStream` (`on: 'events'` or `'v1:ws'`): after `afterFrames` event frames, end the stream (`how: 'end'`, the
 *   default) or destroy the connection (`how: 'reset'`); the terminal status is never among the frames cut.
 * - `silentStream` (`on: 'events'` or `'v1:ws'`): send the headers and `afterFrames` frames (default 0), then nothing:
 *   no keep-alive, no event, no end.
 * - `cutAfterBytes` (`on: 'content'` only): close the connection after `bytes` bytes of the body (of this
 *   response: a resumed download is cut `bytes` after its offset).
 * - `bucket` (router route kinds only): answer the router error of `bucket` (Model router API, Errors): its status
 *   unless `status` is given, Retry-After `retryAfter` seconds when given, `message` as its detail, `spendCents` the
 *   committed-spend headers of a 429 `concurrency_limit_exceeded` (`null`: none).
 */
export type FaultAction = FaultRule extends infer R
  ? R extends unknown
    ? Omit<R, 'on' | keyof FaultSchedule>
    : never
  : never;

/** A problem found across fields; `path` names the field when one is to blame. */
interface Problem {
  readonly problem: string;
  readonly path?: string[];
}

/** The status and code of a `status` or `afterCreate` answer, each completed from the other, or the problem. */
function statusAndCode(
  rawStatus: number | undefined,
  code: string | undefined,
  fallbackStatus?: number,
): { status: number; code: string } | Problem {
  // Own properties only: a code such as `constructor` must not find Object.prototype's.
  const known =
    code !== undefined && Object.hasOwn(STATUS_OF_CODE, code)
      ? (STATUS_OF_CODE as Readonly<Record<string, number>>)[code]
      : undefined;
  const status = rawStatus ?? known ?? fallbackStatus;
  if (status === undefined) return { problem: 'give a status (e.g. 500) or a known code (e.g. queue_full)' };
  const resolved = code ?? DEFAULT_CODE_OF_STATUS[status];
  if (resolved === undefined)
    return { problem: `status ${status} has no default code; give one (e.g. code=invalid_workflow)` };
  return { status, code: resolved };
}

/**
 * A rule that passed the field checks, checked across its fields and put in canonical form, or the problem: a kind
 * on a route kind it cannot target, `claims` off a submission, `every` with `share`, an `afterCreate` that both resets
 * and answers, `spendCents` off `concurrency_limit_exceeded`, a status without a code or the reverse.
 */
function canonical(rule: FaultRule): FaultRule | Problem {
  const only = ROUTE_OF_KIND[rule.kind];
  if (only !== undefined && !only.includes(rule.on)) {
    if (rule.kind === 'bucket')
      return { problem: `bucket applies to the router's route kinds (${only.join(', ')}) only; got "${rule.on}"` };
    const v1 = only.find((o) => o.startsWith('v1:'));
    return {
      problem: `${rule.kind} applies to "on": "${only[0]}" only${v1 === undefined ? '' : `, or "${v1}" on the v1 surface`}; got "${rule.on}"`,
    };
  }
  if ('claims' in rule && rule.claims !== undefined && rule.on !== 'submit')
    return {
      problem: `applies to "on": "submit" only (whether a submission's Idempotency-Key was claimed); got "${rule.on}"`,
      path: ['claims'],
    };
  if (rule.every !== undefined && rule.share !== undefined) return { problem: 'give every or share, not both' };
  switch (rule.kind) {
    case 'status': {
      const answer = statusAndCode(rule.status, rule.code);
      return 'problem' in answer ? answer : { ...rule, ...answer };
    }
    case 'lag':
      return { ...rule, getMs: rule.getMs ?? 0 };
    case 'afterCreate': {
      const { status, code, reset, ...rest } = rule;
      if (reset === true)
        return status !== undefined || code !== undefined
          ? { problem: 'afterCreate either resets or answers a status, not both' }
          : { ...rest, reset };
      if (status === 201)
        return code !== undefined
          ? { problem: 'status 201 is the normal answer; it takes no code' }
          : { ...rest, status };
      const answer = statusAndCode(status, code, 502);
      if ('problem' in answer) return answer;
      if (answer.status < 500)
        return { problem: `afterCreate answers 201 (late) or a 5xx (an unknown outcome); got ${answer.status}` };
      return { ...rest, ...answer };
    }
    case 'dropStream':
      return { ...rule, how: rule.how ?? 'end' };
    case 'silentStream':
      return { ...rule, afterFrames: rule.afterFrames ?? 0 };
    case 'bucket':
      if (rule.spendCents !== undefined && rule.bucket !== 'concurrency_limit_exceeded')
        return { problem: 'goes with bucket concurrency_limit_exceeded only', path: ['spendCents'] };
      return rule;
    default:
      return rule;
  }
}

/**
 * The schema of a fault rule: the fields of its kind, each checked, then the checks across fields; it reads into
 * the canonical form (every field a default fills is present, no key is `undefined`).
 */
const faultRuleSchema = lazy(() =>
  z.pipe(
    ruleUnion(),
    z.transform((rule, ctx) => {
      const checked = canonical(rule);
      if ('problem' in checked) {
        ctx.issues.push({ code: 'custom', input: rule, message: checked.problem, path: checked.path ?? [] });
        return z.NEVER;
      }
      return Object.fromEntries(Object.entries(checked).filter(([, v]) => v !== undefined)) as FaultRule;
    }),
  ),
);

/** The message of the first problem of a refused value: the field (its path, quoted) when one is to blame, then what is wrong. */
function firstProblem(error: z.core.$ZodError): string {
  const issue = error.issues[0];
  return issue.path.length > 0 ? `"${issue.path.map(String).join('.')}" ${issue.message}` : issue.message;
}

/**
 * Checks one rule (a JSON object) and returns it in canonical form: every field a default fills is present (the
 * status and code of an error answer, `how` of `dropStream`, `afterFrames` of `silentStream`, `getMs` of `lag`).
 * @param where names the rule in the message: `fault rule <its index in the plan>`, or the CLI spec it came from.
 * @throws TypeError `<where>: "<field>" <problem>` (without the field when the rule as a whole is wrong): an
 *   unknown route kind, kind or field; a field of the wrong type or out of range; a kind on a route kind it cannot
 *   target; `every` together with `share`; …
 */
export function checkFaultRule(raw: unknown, where = 'fault rule 0'): FaultRule {
  const parsed = faultRuleSchema().safeParse(raw);
  if (!parsed.success) throw new TypeError(`${where}: ${firstProblem(parsed.error)}`);
  return parsed.data;
}

/** A plan as written: its seed and its rules, each still a JSON object or a CLI spec string. */
const planSchema = lazy(() =>
  z.strictObject(
    {
      seed: z.optional(integer(0, 0xffffffff)),
      rules: z.optional(z.array(z.unknown(), { error: 'must be an array of rules (objects or spec strings)' })),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `takes "seed" and "rules" only; got ${issue.keys.map((k) => `"${k}"`).join(', ')}`
          : `must be an object {"seed"?: integer, "rules": [...]}; got ${shown(issue.input)}`,
    },
  ),
);

/**
 * The seed (default 1) and the rules, unchecked, of a plan.
 * @throws TypeError `fault plan: …` for a plan that is not `{seed?, rules?}` or whose seed or rules are of the wrong type.
 */
export function planParts(raw: unknown): { seed: number; rules: readonly unknown[] } {
  const parsed = planSchema().safeParse(raw);
  if (!parsed.success) throw new TypeError(`fault plan: ${firstProblem(parsed.error)}`);
  return { seed: parsed.data.seed ?? 1, rules: parsed.data.rules ?? [] };
}
