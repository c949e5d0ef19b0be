/**
 * Fault injection: the one place where the emulator decides to misbehave on purpose, so that a client's
 * "never lose or duplicate a job" rules (Job and Asset API v2, POST /api/v2/jobs, rules 3–7, Errors, Events, and
 * what public sources fill in where it says "not shown") can be tested against real HTTP.
 *
 * A {@link FaultPlan} is a list of rules. A rule names the requests it targets (`on`, a {@link RouteKind}), what
 * it does (`kind` and its fields, see {@link FaultAction}) and when (`times`, `every`, `share`, `after`, see
 * {@link FaultSchedule}). Deterministic by default: counts and "every Nth"; a `share` draws from a PRNG seeded
 * by the plan's `seed`, so a run repeats.
 *
 * The server consults the plan at five hooks, each for its own kinds of rule:
 * - before the handler: `status` (an error envelope, Retry-After), `reset` (the socket is destroyed before any
 *   answer), `delay` (the answer is held, then the request is handled normally: a job submitted that way is
 *   created even when the client gave up). On a submission a `status` or `reset` creates no job, and says whether
 *   the request had reached submission (`claims`), so that its Idempotency-Key is claimed as the contract says
 *   (below);
 * - when a submission is about to create its job: `lag` (the listing omits the job, and its own routes answer 404,
 *   for a while after its creation: a listing lags the truth);
 * - after a submission created and queued its job: `afterCreate` (answer 5xx, reset, or answer late: the job
 *   exists whatever the client sees);
 * - when an event stream opens: `dropStream` (end or reset it after N frames, never the terminal status),
 *   `silentStream` (N frames, then nothing at all: no keep-alive, no end); the same when a v1 WebSocket opens
 *   (`v1:ws`: N frames, text and binary, then a close frame 1001, a reset, or silence);
 * - when content bytes are sent: `cutAfterBytes` (the connection closes after N bytes of the body).
 *
 * What a submission (POST /api/v2/jobs) can come to, and the fault that gives each (Job and Asset API v2,
 * POST /api/v2/jobs, rules 3–7):
 * - refused before submission, no job: a validation refusal (a real one, or `status` with a 4xx such as
 *   `invalid_workflow`); the key is released (rule 4), so the same key can be presented again;
 * - busy, no job: `status` with `queue_full` (429, Retry-After) or `insufficient_credits` (402): the key is released
 *   (rules 4 and 7);
 * - unknown outcome WITHOUT a job: `status` with a 5xx (e.g. 503 `upstream_unreachable`) or `reset`: nothing is
 *   created, yet the key stays claimed (rule 5): presenting it again gets 422 `idempotency_key_reuse`, and the client
 *   must look for its job (it finds none);
 * - unknown outcome WITH a job: `afterCreate` (created and queued, then a 5xx, a reset, or the 201 after the client's
 *   timeout): the key stays claimed (rule 5);
 * - a created job that the listing and its own routes show only after a while: `lag`.
 * A `status` or `reset` that reached submission (`claims`, see {@link SUBMISSION_REFUSALS}) claims the key first, as
 * every submission does: a key already presented gets 422 `idempotency_key_reuse` instead of the fault's answer
 * (rule 3). One with `claims: false` answers for a proxy in front of the service, before the request reached
 * submission: the key is never looked at, and no claim is left (a 5xx or reset of a proxy is not an unknown outcome).
 *
 * Every rule counts every request it targets at its hook; at most one rule fires per request and hook: the
 * first, in plan order, that is due. Each firing is appended to {@link FaultInjector.log}.
 */
import { STATUS_OF_CODE } from './errors';
import { isPlainObject } from '../core/util/workflow';

/** Which requests a rule targets: an operation, or `any`. `content` covers the content endpoint and the signed origin. */
export const ROUTE_KINDS = [
  'submit',
  'list',
  'get',
  'cancel',
  'events',
  'workflow',
  'upload',
  'fromHash',
  'byHash',
  'getAsset',
  'deleteAsset',
  'content',
  'health',
  'any',
  // The model router (modelRouter/): its own operations; `any` above is every job and asset route, `router:any`
  // every router route.
  'router:list',
  'router:get',
  'router:schema',
  'router:invoke',
  'router:any',
  // The deprecated v1 surface (v1/, Cloud API v1 (deprecated)): its own operations; `v1:ws` is the WebSocket upgrade
  // and its connection, `v1:any` every v1 route (`any` above stays the v2 job and asset routes).
  'v1:objectInfo',
  'v1:upload',
  'v1:prompt',
  'v1:status',
  'v1:jobs',
  'v1:history',
  'v1:view',
  'v1:cancel',
  'v1:ws',
  'v1:any',
] as const;

/** One of {@link ROUTE_KINDS}. */
export type RouteKind = (typeof ROUTE_KINDS)[number];

/** The route name of POST /api/v2/jobs: the one route whose faults claim an Idempotency-Key. */
const SUBMIT_ROUTE = 'submitJob';

/** The route kind of each route name (router.ts names). */
const KIND_OF_ROUTE: Readonly<Record<string, RouteKind>> = {
  submitJob: 'submit',
  listJobs: 'list',
  getJob: 'get',
  cancelJob: 'cancel',
  jobEvents: 'events',
  jobWorkflow: 'workflow',
  uploadAsset: 'upload',
  assetFromHash: 'fromHash',
  assetByHash: 'byHash',
  getAsset: 'getAsset',
  deleteAsset: 'deleteAsset',
  assetContent: 'content',
  signedContent: 'content',
  health: 'health',
  routerListModels: 'router:list',
  routerGetModel: 'router:get',
  routerGetSchema: 'router:schema',
  routerInvoke: 'router:invoke',
  v1ObjectInfo: 'v1:objectInfo',
  v1ObjectInfoClass: 'v1:objectInfo',
  v1UploadImage: 'v1:upload',
  v1UploadMask: 'v1:upload',
  v1Prompt: 'v1:prompt',
  v1JobStatus: 'v1:status',
  v1Job: 'v1:jobs',
  v1History: 'v1:history',
  v1View: 'v1:view',
  v1Interrupt: 'v1:cancel',
  v1Queue: 'v1:cancel',
  v1Socket: 'v1:ws',
};

/**
 * When a rule fires, counting the requests it targets (1, 2, 3, …). Without `every` or `share` it fires on each
 * one. `times` caps any schedule.
 */
export interface FaultSchedule {
  /** Fire at most this many times (default: no limit). 0 disables the rule. */
  times?: number;
  /** Fire on every Nth request (N, 2N, …, counted after `after`). */
  every?: number;
  /** Fire on this share (0..1) of the requests, drawn from the plan's seeded PRNG. Not with `every`. */
  share?: number;
  /** Let this many requests through before the rule can fire (default 0). */
  after?: number;
}

/**
 * What a rule does.
 * - `status`: answer `status` with the error envelope of `code` (each defaults from the other: 429 →
 *   `rate_limited`, 5xx → `upstream_error`, `queue_full` → 429 …) and a `Retry-After` of `retryAfter` seconds
 *   (default 1 for 429 and 503, else none; none for 503 `upstream_unreachable`). Any route kind; for the event stream,
 *   501 `not_implemented` and 429 `too_many_streams` are such rules. On a submission no job is created; `claims`
 *   (`on: 'submit'` only) says whether the request reached submission (default {@link claimsByDefault}): its
 *   Idempotency-Key is then claimed, and released after a 4xx (rule 4) or kept after a 5xx (rule 5).
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
 * - `bucket` (router route kinds only): answer the router error of `bucket` (Model router API, Errors), see
 *   {@link BucketAnswer}.
 */
export type FaultAction =
  | { kind: 'status'; status?: number; code?: string; retryAfter?: number; message?: string; claims?: boolean }
  | { kind: 'reset'; claims?: boolean }
  | { kind: 'delay'; ms: number }
  | { kind: 'lag'; listMs: number; getMs?: number }
  | { kind: 'afterCreate'; status?: number; code?: string; reset?: boolean; delayMs?: number }
  | { kind: 'dropStream'; afterFrames: number; how?: 'end' | 'reset' }
  | { kind: 'silentStream'; afterFrames?: number }
  | { kind: 'cutAfterBytes'; bytes: number }
  | { kind: 'bucket'; bucket: string; status?: number; retryAfter?: number; message?: string; spendCents?: { limit: number; current: number } | null };

/** One rule: the requests it targets, what it does, when. */
export type FaultRule = { on: RouteKind } & FaultAction & FaultSchedule;

/** A fault plan. A string rule is a CLI spec, read by {@link parseFaultSpec}. */
export interface FaultPlan {
  /** Seed of the PRNG of `share` rules (default 1). */
  seed?: number;
  rules: ReadonlyArray<FaultRule | string>;
}

/** One firing of a rule. */
export interface FaultLogEntry {
  /** ISO 8601, the emulator's clock. */
  readonly at: string;
  /** Index of the rule in the plan. */
  readonly rule: number;
  readonly on: RouteKind;
  readonly kind: FaultAction['kind'];
  readonly method: string;
  /** Path and query, without the mount prefix. */
  readonly path: string;
  readonly requestId: string;
}

/** The request a fault decides on. */
export interface FaultRequest {
  readonly method: string;
  /** Without the mount prefix. */
  readonly path: string;
  /** The route's name, e.g. `submitJob`. */
  readonly route: string;
  readonly owner: string;
  readonly requestId: string;
}

/** An error answer a fault sends: the envelope of `code` with `status`, and Retry-After when set (seconds). */
export interface FaultAnswer {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly retryAfter: number | undefined;
}

/**
 * What replaces or holds a request before its handler. `claims` (a submission only; false elsewhere): the request
 * reached submission, so its Idempotency-Key is claimed before the answer (see {@link FaultAction} `status`).
 */
export type BeforeFault =
  | { readonly kind: 'status'; readonly answer: FaultAnswer; readonly claims: boolean }
  | { readonly kind: 'reset'; readonly claims: boolean }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'bucket'; readonly answer: BucketAnswer };

/**
 * A router error a `bucket` rule answers (Model router API, Errors): `bucket` as `error_type` and
 * `X-Svc-Error-Type`; `status` undefined means the bucket's own (modelRouter/buckets.ts); Retry-After in
 * seconds when set; `spendCents` the committed-spend headers of a 429 `concurrency_limit_exceeded`
 * (undefined: the router's default figures; null: none, the count bound was hit).
 */
export interface BucketAnswer {
  readonly bucket: string;
  readonly status: number | undefined;
  readonly message: string | undefined;
  readonly retryAfter: number | undefined;
  readonly spendCents: { readonly limit: number; readonly current: number } | null | undefined;
  /** Index of the rule in the plan, for the message. */
  readonly rule: number;
}

/** What a submission answers once its job is created: after `delayMs`, an error, a reset, or its normal 201. */
export interface AfterCreateFault {
  readonly delayMs: number;
  readonly then: { readonly kind: 'status'; readonly answer: FaultAnswer } | { readonly kind: 'reset' } | { readonly kind: 'created' };
}

/** How long after its creation a job stays out of sight (ms, the emulator's clock): see {@link FaultAction} `lag`. */
export interface JobLag {
  /** The listing omits the job this long. */
  readonly listMs: number;
  /** The job's own routes answer 404 `not_found` this long. */
  readonly getMs: number;
}

/** How an event stream is cut: after `afterFrames` frames it ends, is reset, or falls silent. */
export interface StreamFault {
  readonly afterFrames: number;
  readonly then: 'end' | 'reset' | 'silent';
}

/** The hooks the server and routes consult. */
export interface Faults {
  /** Before the handler runs. */
  before(request: FaultRequest): BeforeFault | undefined;
  /** A submission is about to create its job: how long the job stays out of sight, or undefined (at once). */
  lag(request: FaultRequest): JobLag | undefined;
  /** A submission created and queued its job. */
  afterCreate(request: FaultRequest): AfterCreateFault | undefined;
  /** An event stream opens. */
  eventStream(request: FaultRequest): StreamFault | undefined;
  /** Content bytes are about to be sent: the number of body bytes after which to close, or undefined. */
  contentCut(request: FaultRequest): number | undefined;
  /** Waits `ms` for a `delay`; rejects when the emulator closes meanwhile. */
  sleep(ms: number): Promise<void>;
}

type Hook = 'before' | 'lag' | 'afterCreate' | 'stream' | 'cut';

const HOOK_OF_KIND: Readonly<Record<FaultAction['kind'], Hook>> = {
  status: 'before',
  reset: 'before',
  delay: 'before',
  lag: 'lag',
  afterCreate: 'afterCreate',
  dropStream: 'stream',
  silentStream: 'stream',
  cutAfterBytes: 'cut',
  bucket: 'before',
};

/** The only route kinds a kind of rule can target (the others: any). */
const ROUTE_OF_KIND: Partial<Record<FaultAction['kind'], readonly RouteKind[]>> = {
  lag: ['submit'],
  afterCreate: ['submit', 'v1:prompt'],
  // v1:ws: the WebSocket of the v1 surface, cut after N frames like an event stream.
  dropStream: ['events', 'v1:ws'],
  silentStream: ['events', 'v1:ws'],
  cutAfterBytes: ['content'],
};

/** Fields each kind takes besides `on`, `kind` and the schedule. */
const FIELDS_OF_KIND: Readonly<Record<FaultAction['kind'], readonly string[]>> = {
  status: ['status', 'code', 'retryAfter', 'message', 'claims'],
  reset: ['claims'],
  delay: ['ms'],
  lag: ['listMs', 'getMs'],
  afterCreate: ['status', 'code', 'reset', 'delayMs'],
  dropStream: ['afterFrames', 'how'],
  silentStream: ['afterFrames'],
  cutAfterBytes: ['bytes'],
  bucket: ['bucket', 'status', 'retryAfter', 'message', 'spendCents'],
};

const SCHEDULE_FIELDS = ['times', 'every', 'share', 'after'];

/**
 * The refusals of a submission itself (Job and Asset API v2, POST /api/v2/jobs, rule 7, less
 * `idempotency_key_reuse`): a `status` rule answering one of them reached submission by default (its key is claimed,
 * then released, rule 4). Other 4xx codes (`rate_limited`, `unauthorized`, `deployment_not_ready`, …) are refusals in
 * front of it.
 */
export const SUBMISSION_REFUSALS: readonly string[] = ['invalid_workflow', 'workflow_format_ui', 'missing_asset', 'insufficient_credits', 'queue_full'];

/**
 * Whether a `status` (of `status` and `code`) or `reset` fault on a submission reached submission when its rule does
 * not say (`claims`): a reset or a 5xx did (an unknown outcome, rule 5), and so did the submission's own refusals
 * ({@link SUBMISSION_REFUSALS}).
 */
export function claimsByDefault(answer: { status: number; code: string } | 'reset'): boolean {
  return answer === 'reset' || answer.status >= 500 || SUBMISSION_REFUSALS.includes(answer.code);
}

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

function checkInteger(where: string, name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${where}: ${name} must be an integer in ${min}..${max}; got ${JSON.stringify(value)}`);
  }
  return value;
}

function checkBoolean(where: string, name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new TypeError(`${where}: ${name} must be true or false; got ${JSON.stringify(value)}`);
  return value;
}

/** The status and code of a `status` or `afterCreate` rule, each completed from the other. */
function statusAndCode(where: string, rawStatus: unknown, rawCode: unknown, fallbackStatus?: number): { status: number; code: string } {
  if (rawCode !== undefined && (typeof rawCode !== 'string' || !/^[a-z][a-z0-9_]*$/.test(rawCode))) {
    throw new TypeError(`${where}: code must be a snake_case error code such as rate_limited; got ${JSON.stringify(rawCode)}`);
  }
  const code = rawCode as string | undefined;
  let status = rawStatus === undefined ? undefined : checkInteger(where, 'status', rawStatus, 400, 599);
  // Own properties only: a code such as `constructor` must not find Object.prototype's.
  if (status === undefined && code !== undefined && Object.prototype.hasOwnProperty.call(STATUS_OF_CODE, code)) status = (STATUS_OF_CODE as Readonly<Record<string, number>>)[code];
  status ??= fallbackStatus;
  if (status === undefined) throw new TypeError(`${where}: give a status (e.g. 500) or a known code (e.g. queue_full)`);
  const resolved = code ?? DEFAULT_CODE_OF_STATUS[status];
  if (resolved === undefined) throw new TypeError(`${where}: status ${status} has no default code; give one (e.g. code=invalid_workflow)`);
  return { status, code: resolved };
}

/**
 * Checks one rule (a JSON object or a CLI spec string) and returns it in canonical form.
 * @throws TypeError naming the rule and the problem: an unknown route kind, kind or field; a field out of
 *   range; a kind on a route kind it cannot target; `every` together with `share`.
 */
export function checkFaultRule(raw: unknown, index = 0): FaultRule {
  if (typeof raw === 'string') return parseFaultSpec(raw);
  const where = `fault rule ${index}`;
  if (!isPlainObject(raw)) throw new TypeError(`${where}: expected an object {"on", "kind", …} or a spec string; got ${JSON.stringify(raw)}`);
  const on = raw.on;
  if (typeof on !== 'string' || !(ROUTE_KINDS as readonly string[]).includes(on)) {
    throw new TypeError(`${where}: "on" must be one of ${ROUTE_KINDS.join(', ')}; got ${JSON.stringify(on)}`);
  }
  const kind = raw.kind;
  if (typeof kind !== 'string' || !Object.hasOwn(HOOK_OF_KIND, kind)) {
    throw new TypeError(`${where}: "kind" must be one of ${Object.keys(HOOK_OF_KIND).join(', ')}; got ${JSON.stringify(kind)}`);
  }
  const k = kind as FaultAction['kind'];
  const only = ROUTE_OF_KIND[k];
  if (only !== undefined && !only.includes(on as RouteKind)) {
    const v1 = only.find((o) => o.startsWith('v1:'));
    throw new TypeError(`${where}: ${k} applies to "on": "${only[0]}" only${v1 === undefined ? '' : `, or "${v1}" on the v1 surface`}; got "${on}"`);
  }
  if (raw.claims !== undefined && on !== 'submit') throw new TypeError(`${where}: claims applies to "on": "submit" only (whether a submission's Idempotency-Key was claimed); got "${on}"`);
  if (k === 'bucket' && !on.startsWith('router:')) throw new TypeError(`${where}: bucket applies to the router's route kinds (router:list, router:get, router:schema, router:invoke, router:any) only; got "${on}"`);
  const allowed = new Set(['on', 'kind', ...SCHEDULE_FIELDS, ...FIELDS_OF_KIND[k]]);
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) throw new TypeError(`${where}: ${k} takes no field "${key}" (it takes ${[...allowed].join(', ')})`);
  }
  const rule: Record<string, unknown> = { on, kind: k };
  switch (k) {
    case 'status': {
      Object.assign(rule, statusAndCode(where, raw.status, raw.code));
      if (raw.retryAfter !== undefined) rule.retryAfter = checkInteger(where, 'retryAfter', raw.retryAfter, 0);
      if (raw.message !== undefined) {
        if (typeof raw.message !== 'string' || raw.message === '') throw new TypeError(`${where}: message must be a non-empty string`);
        rule.message = raw.message;
      }
      if (raw.claims !== undefined) rule.claims = checkBoolean(where, 'claims', raw.claims);
      break;
    }
    case 'reset':
      if (raw.claims !== undefined) rule.claims = checkBoolean(where, 'claims', raw.claims);
      break;
    case 'delay':
      rule.ms = checkInteger(where, 'ms', raw.ms, 0, 24 * 60 * 60 * 1000);
      break;
    case 'lag':
      rule.listMs = checkInteger(where, 'listMs', raw.listMs, 0, 24 * 60 * 60 * 1000);
      rule.getMs = raw.getMs === undefined ? 0 : checkInteger(where, 'getMs', raw.getMs, 0, 24 * 60 * 60 * 1000);
      break;
    case 'afterCreate':
      if (raw.reset !== undefined && typeof raw.reset !== 'boolean') throw new TypeError(`${where}: reset must be true or false`);
      if (raw.reset === true) {
        if (raw.status !== undefined || raw.code !== undefined) throw new TypeError(`${where}: afterCreate either resets or answers a status, not both`);
        rule.reset = true;
      } else if (raw.status === 201) {
        if (raw.code !== undefined) throw new TypeError(`${where}: status 201 is the normal answer; it takes no code`);
        rule.status = 201;
      } else {
        const answer = statusAndCode(where, raw.status, raw.code, 502);
        if (answer.status < 500) throw new TypeError(`${where}: afterCreate answers 201 (late) or a 5xx (an unknown outcome); got ${answer.status}`);
        Object.assign(rule, answer);
      }
      if (raw.delayMs !== undefined) rule.delayMs = checkInteger(where, 'delayMs', raw.delayMs, 0, 24 * 60 * 60 * 1000);
      break;
    case 'dropStream':
      rule.afterFrames = checkInteger(where, 'afterFrames', raw.afterFrames, 0);
      if (raw.how !== undefined && raw.how !== 'end' && raw.how !== 'reset') throw new TypeError(`${where}: how must be "end" or "reset"; got ${JSON.stringify(raw.how)}`);
      rule.how = raw.how ?? 'end';
      break;
    case 'silentStream':
      rule.afterFrames = raw.afterFrames === undefined ? 0 : checkInteger(where, 'afterFrames', raw.afterFrames, 0);
      break;
    case 'cutAfterBytes':
      rule.bytes = checkInteger(where, 'bytes', raw.bytes, 0);
      break;
    case 'bucket': {
      // Any snake_case name: a bucket outside the closed fifteen (with its status) tests a client's fallback to internal_error.
      if (typeof raw.bucket !== 'string' || !/^[a-z][a-z0-9_]*$/.test(raw.bucket)) throw new TypeError(`${where}: bucket must be a snake_case router bucket such as content_policy_violation; got ${JSON.stringify(raw.bucket)}`);
      rule.bucket = raw.bucket;
      if (raw.status !== undefined) rule.status = checkInteger(where, 'status', raw.status, 400, 599);
      if (raw.retryAfter !== undefined) rule.retryAfter = checkInteger(where, 'retryAfter', raw.retryAfter, 0);
      if (raw.message !== undefined) {
        if (typeof raw.message !== 'string' || raw.message === '') throw new TypeError(`${where}: message must be a non-empty string`);
        rule.message = raw.message;
      }
      if (raw.spendCents !== undefined) {
        if (raw.bucket !== 'concurrency_limit_exceeded') throw new TypeError(`${where}: spendCents goes with bucket concurrency_limit_exceeded only`);
        if (raw.spendCents === null) rule.spendCents = null;
        else if (isPlainObject(raw.spendCents)) rule.spendCents = { limit: checkInteger(where, 'spendCents.limit', raw.spendCents.limit, 0), current: checkInteger(where, 'spendCents.current', raw.spendCents.current, 0) };
        else throw new TypeError(`${where}: spendCents must be {"limit": cents, "current": cents} or null`);
      }
      break;
    }
  }
  if (raw.times !== undefined) rule.times = checkInteger(where, 'times', raw.times, 0);
  if (raw.after !== undefined) rule.after = checkInteger(where, 'after', raw.after, 0);
  if (raw.every !== undefined) rule.every = checkInteger(where, 'every', raw.every, 1);
  if (raw.share !== undefined) {
    if (typeof raw.share !== 'number' || !(raw.share >= 0 && raw.share <= 1)) throw new TypeError(`${where}: share must be a number in 0..1; got ${JSON.stringify(raw.share)}`);
    if (raw.every !== undefined) throw new TypeError(`${where}: give every or share, not both`);
    rule.share = raw.share;
  }
  return rule as unknown as FaultRule;
}

/**
 * Checks a whole plan (library option, or the body of `POST /__emulator/faults`).
 * @returns the plan with every rule in canonical form (strings parsed) and its seed (default 1).
 * @throws TypeError as {@link checkFaultRule}, or for a plan that is not `{seed?, rules: […]}`.
 */
export function checkFaultPlan(raw: unknown): { seed: number; rules: FaultRule[] } {
  if (!isPlainObject(raw)) throw new TypeError(`a fault plan is an object {"seed"?: integer, "rules": [...]}; got ${JSON.stringify(raw)}`);
  for (const key of Object.keys(raw)) if (key !== 'seed' && key !== 'rules') throw new TypeError(`a fault plan takes "seed" and "rules"; got "${key}"`);
  const seed = raw.seed === undefined ? 1 : checkInteger('fault plan', 'seed', raw.seed, 0, 0xffffffff);
  const rules = raw.rules ?? [];
  if (!Array.isArray(rules)) throw new TypeError('a fault plan\'s "rules" must be an array');
  return { seed, rules: rules.map((r, i) => checkFaultRule(r, i)) };
}

/**
 * Reads a fault rule written for the command line (`--fault <spec>`).
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
 * - OPTION: `times=<n>`, `every=<n>`, `share=<0..1>`, `after=<n>` (when it fires, {@link FaultSchedule});
 *   `code=<error code>`, `retryAfter=<seconds>` (status); `claims=false` (status and reset on submit: a proxy failed
 *   before the request reached submission, so the key is not claimed); `get=<ms>` (lag); `code=`, `delay=<ms>` (afterCreate); `how=end|reset`
 *   (dropAfter); `status=<http status>`, `retryAfter=<seconds>`, `message=<detail>`, `spend=<limit>/<current>`
 *   (USD cents) or `spend=none` (bucket; spend only with concurrency_limit_exceeded).
 *
 * Examples: `submit:status=503:code=upstream_unreachable` (no job, the key stays claimed), `submit:reset:claims=false`,
 * `submit:lag=5000:get=1000:every=2`, `submit:afterCreate=502`, `submit:afterCreate=201:delay=40000:times=1`, `get:status=500:every=3`,
 * `get:status=rate_limited:retryAfter=2:times=2`, `events:dropAfter=2`, `events:status=not_implemented`,
 * `content:cutAfter=100000:times=3`, `get:reset:share=0.3`, `get:delay=40000:times=1`,
 * `router:invoke:bucket=content_policy_violation`, `router:list:bucket=rate_limited:retryAfter=2:times=1`,
 * `v1:ws:dropAfter=5`, `v1:ws:status=503:times=3` (refuse 3 upgrades), `v1:jobs:status=404`, `v1:prompt:afterCreate=502`.
 * @throws TypeError saying what is wrong, with the syntax.
 */
export function parseFaultSpec(spec: string): FaultRule {
  const syntax = 'a fault spec is ON:ACTION[:OPTION]…, e.g. get:status=500:every=3 or content:cutAfter=100000:times=2';
  const fields = spec.trim().split(':');
  if (fields.length < 2 || fields.some((f) => f.trim() === '')) throw new TypeError(`${syntax}; got ${JSON.stringify(spec)}`);
  // The router's and v1's route kinds contain a colon themselves (router:invoke, v1:ws): join the first two fields back.
  const family = fields[0].trim();
  if ((family === 'router' || family === 'v1') && fields.length >= 3) fields.splice(0, 2, `${family}:${fields[1].trim()}`);
  const [on, action, ...options] = fields.map((f) => f.trim());
  const [name, value] = splitAssignment(action);
  const number = (what: string, text: string | undefined): number => {
    const n = text === undefined || text === '' ? NaN : Number(text);
    if (!Number.isFinite(n)) throw new TypeError(`fault spec ${JSON.stringify(spec)}: ${what} needs a number (${what}=N); got ${JSON.stringify(text ?? '')}`);
    return n;
  };
  const rule: Record<string, unknown> = { on };
  switch (name) {
    case 'status':
      if (value === undefined || value === '') throw new TypeError(`fault spec ${JSON.stringify(spec)}: status needs a value, e.g. status=500 or status=queue_full`);
      if (/^\d+$/.test(value)) rule.status = Number(value);
      else rule.code = value;
      rule.kind = 'status';
      break;
    case 'reset':
      rule.kind = 'reset';
      break;
    case 'delay':
      Object.assign(rule, { kind: 'delay', ms: number('delay', value) });
      break;
    case 'lag':
      Object.assign(rule, { kind: 'lag', listMs: number('lag', value) });
      break;
    case 'afterCreate':
      rule.kind = 'afterCreate';
      if (value === 'reset') rule.reset = true;
      else if (value !== undefined && /^\d+$/.test(value)) rule.status = Number(value);
      else if (value !== undefined && value !== '') rule.code = value;
      break;
    case 'dropAfter':
      Object.assign(rule, { kind: 'dropStream', afterFrames: number('dropAfter', value) });
      break;
    case 'silent':
    case 'silentAfter':
      Object.assign(rule, { kind: 'silentStream', afterFrames: value === undefined ? 0 : number(name, value) });
      break;
    case 'cutAfter':
      Object.assign(rule, { kind: 'cutAfterBytes', bytes: number('cutAfter', value) });
      break;
    case 'bucket':
      if (value === undefined || value === '') throw new TypeError(`fault spec ${JSON.stringify(spec)}: bucket needs a value, e.g. bucket=content_policy_violation`);
      Object.assign(rule, { kind: 'bucket', bucket: value });
      break;
    default:
      throw new TypeError(`fault spec ${JSON.stringify(spec)}: unknown action ${JSON.stringify(name)} (status=, reset, delay=, lag=, afterCreate=, dropAfter=, silent, silentAfter=, cutAfter=, bucket=)`);
  }
  for (const option of options) {
    const [key, text] = splitAssignment(option);
    switch (key) {
      case 'times':
      case 'every':
      case 'share':
      case 'after':
      case 'retryAfter':
        rule[key] = number(key, text);
        break;
      case 'delay':
        if (rule.kind !== 'afterCreate') throw new TypeError(`fault spec ${JSON.stringify(spec)}: the option delay= goes with afterCreate (to hold a request before it is handled, use the action delay=)`);
        rule.delayMs = number(key, text);
        break;
      case 'get':
        if (rule.kind !== 'lag') throw new TypeError(`fault spec ${JSON.stringify(spec)}: the option get= goes with lag=`);
        rule.getMs = number(key, text);
        break;
      case 'claims':
        if (text !== 'true' && text !== 'false') throw new TypeError(`fault spec ${JSON.stringify(spec)}: claims= takes true or false`);
        rule.claims = text === 'true';
        break;
      case 'status':
        if (rule.kind !== 'bucket') throw new TypeError(`fault spec ${JSON.stringify(spec)}: the option status= goes with bucket= (elsewhere status= is the action)`);
        rule.status = number(key, text);
        break;
      case 'spend':
        if (rule.kind !== 'bucket') throw new TypeError(`fault spec ${JSON.stringify(spec)}: the option spend= goes with bucket=concurrency_limit_exceeded`);
        if (text === 'none') rule.spendCents = null;
        else {
          const m = /^(\d+)\/(\d+)$/.exec(text ?? '');
          if (m === null) throw new TypeError(`fault spec ${JSON.stringify(spec)}: spend= takes LIMIT/CURRENT in USD cents (e.g. spend=5000/4990) or none`);
          rule.spendCents = { limit: Number(m[1]), current: Number(m[2]) };
        }
        break;
      case 'message':
        if (text === undefined || text === '') throw new TypeError(`fault spec ${JSON.stringify(spec)}: message needs a value`);
        rule.message = text;
        break;
      case 'code':
      case 'how':
        if (text === undefined || text === '') throw new TypeError(`fault spec ${JSON.stringify(spec)}: ${key} needs a value (${key}=…)`);
        rule[key] = text;
        break;
      default:
        throw new TypeError(`fault spec ${JSON.stringify(spec)}: unknown option ${JSON.stringify(key)} (times=, every=, share=, after=, code=, retryAfter=, claims=, delay=, get=, how=, status=, spend=, message=)`);
    }
  }
  try {
    return checkFaultRule(rule);
  } catch (e) {
    throw new TypeError(`fault spec ${JSON.stringify(spec)}: ${(e as Error).message.replace(/^fault rule \d+: /, '')}`);
  }
}

function splitAssignment(text: string): [string, string | undefined] {
  const eq = text.indexOf('=');
  return eq < 0 ? [text, undefined] : [text.slice(0, eq).trim(), text.slice(eq + 1).trim()];
}

/** mulberry32: a small, fast, seedable PRNG; uniform in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How often a rule has been consulted and has fired since the plan was set. */
export interface FaultCounter {
  seen: number;
  fired: number;
}

/** The plan in force, its counters and what fired: `GET /__emulator/faults` answers this. */
export interface FaultState {
  readonly seed: number;
  readonly rules: readonly FaultRule[];
  readonly counters: readonly FaultCounter[];
  readonly log: readonly FaultLogEntry[];
}

/** Applies a fault plan: the {@link Faults} of an emulator. */
export class FaultInjector implements Faults {
  /** Every firing since the emulator started, in order (kept across plan changes). */
  readonly log: FaultLogEntry[] = [];
  private seed = 1;
  private rules: FaultRule[] = [];
  private counters: FaultCounter[] = [];
  private random: () => number = mulberry32(1);
  private readonly pending = new Set<{ timer: NodeJS.Timeout; reject: (e: Error) => void }>();
  private closed = false;

  /** @param now the emulator's clock, for the log. @throws TypeError for an invalid plan. */
  constructor(
    plan: FaultPlan | undefined,
    private readonly now: () => number,
  ) {
    if (plan !== undefined) this.setPlan(plan);
  }

  /**
   * Replaces the plan; counters restart and the PRNG is re-seeded (the log is kept).
   * @throws TypeError for an invalid plan (the plan in force is kept).
   */
  setPlan(plan: FaultPlan | unknown): void {
    const checked = checkFaultPlan(plan);
    this.seed = checked.seed;
    this.rules = checked.rules;
    this.counters = checked.rules.map(() => ({ seen: 0, fired: 0 }));
    this.random = mulberry32(checked.seed);
  }

  /** The plan in force, its counters and the log. */
  state(): FaultState {
    return { seed: this.seed, rules: this.rules, counters: this.counters.map((c) => ({ ...c })), log: [...this.log] };
  }

  before(request: FaultRequest): BeforeFault | undefined {
    const hit = this.pick('before', request);
    if (hit === undefined) return undefined;
    const { rule, index } = hit;
    // Only a submission claims a key; `any` rules fire on it too.
    const submission = request.route === SUBMIT_ROUTE;
    if (rule.kind === 'reset') return { kind: 'reset', claims: submission && (rule.claims ?? claimsByDefault('reset')) };
    if (rule.kind === 'delay') return { kind: 'delay', ms: rule.ms };
    if (rule.kind === 'status') {
      const answer = answerOf(rule.status!, rule.code!, rule.retryAfter, rule.message, index);
      return { kind: 'status', answer, claims: submission && (rule.claims ?? claimsByDefault(answer)) };
    }
    if (rule.kind === 'bucket') {
      return { kind: 'bucket', answer: { bucket: rule.bucket, status: rule.status, message: rule.message, retryAfter: rule.retryAfter, spendCents: rule.spendCents, rule: index } };
    }
    return undefined;
  }

  lag(request: FaultRequest): JobLag | undefined {
    const rule = this.pick('lag', request)?.rule;
    return rule?.kind === 'lag' ? { listMs: rule.listMs, getMs: rule.getMs ?? 0 } : undefined;
  }

  afterCreate(request: FaultRequest): AfterCreateFault | undefined {
    const hit = this.pick('afterCreate', request);
    if (hit === undefined || hit.rule.kind !== 'afterCreate') return undefined;
    const { rule, index } = hit;
    const delayMs = rule.delayMs ?? 0;
    if (rule.reset === true) return { delayMs, then: { kind: 'reset' } };
    if (rule.status === 201) return { delayMs, then: { kind: 'created' } };
    return { delayMs, then: { kind: 'status', answer: answerOf(rule.status!, rule.code!, undefined, undefined, index) } };
  }

  eventStream(request: FaultRequest): StreamFault | undefined {
    const rule = this.pick('stream', request)?.rule;
    if (rule?.kind === 'dropStream') return { afterFrames: rule.afterFrames, then: rule.how === 'reset' ? 'reset' : 'end' };
    if (rule?.kind === 'silentStream') return { afterFrames: rule.afterFrames ?? 0, then: 'silent' };
    return undefined;
  }

  contentCut(request: FaultRequest): number | undefined {
    const rule = this.pick('cut', request)?.rule;
    return rule?.kind === 'cutAfterBytes' ? rule.bytes : undefined;
  }

  sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the emulator is closing'));
    return new Promise<void>((resolve, reject) => {
      const entry = {
        timer: setTimeout(() => {
          this.pending.delete(entry);
          resolve();
        }, ms),
        reject,
      };
      this.pending.add(entry);
    });
  }

  /** Ends every pending delay (they reject) and refuses new ones: the emulator is closing. */
  close(): void {
    this.closed = true;
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new Error('the emulator is closing'));
    }
    this.pending.clear();
  }

  /** Counts `request` for every rule of `hook` that targets it; fires the first that is due. */
  private pick(hook: Hook, request: FaultRequest): { rule: FaultRule; index: number } | undefined {
    const kind = KIND_OF_ROUTE[request.route];
    let chosen: { rule: FaultRule; index: number } | undefined;
    this.rules.forEach((rule, index) => {
      if (HOOK_OF_KIND[rule.kind] !== hook || !targets(rule.on, kind)) return;
      const counter = this.counters[index];
      counter.seen++;
      if (chosen !== undefined || !this.due(rule, counter)) return;
      counter.fired++;
      chosen = { rule, index };
    });
    if (chosen !== undefined) {
      this.log.push({
        at: new Date(this.now()).toISOString(),
        rule: chosen.index,
        on: chosen.rule.on,
        kind: chosen.rule.kind,
        method: request.method,
        path: request.path,
        requestId: request.requestId,
      });
    }
    return chosen;
  }

  private due(rule: FaultRule, counter: FaultCounter): boolean {
    if (rule.times !== undefined && counter.fired >= rule.times) return false;
    const n = counter.seen - (rule.after ?? 0);
    if (n <= 0) return false;
    if (rule.every !== undefined) return n % rule.every === 0;
    if (rule.share !== undefined) return this.random() < rule.share;
    return true;
  }
}

/**
 * Whether a rule `on` a route kind targets a request of route kind `kind`: `any` is every v2 job and asset route,
 * `router:any` every router route, `v1:any` every v1 route (the WebSocket included).
 */
function targets(on: RouteKind, kind: RouteKind | undefined): boolean {
  if (kind === undefined) return on === 'any';
  if (on === kind) return true;
  const family = kind.startsWith('router:') ? 'router' : kind.startsWith('v1:') ? 'v1' : 'v2';
  if (on === 'any') return family === 'v2';
  return (on === 'router:any' && family === 'router') || (on === 'v1:any' && family === 'v1');
}

function answerOf(status: number, code: string, retryAfter: number | undefined, message: string | undefined, index: number): FaultAnswer {
  const origin = `fault injected by the emulator's plan, rule ${index}`;
  const text =
    message ??
    (code === 'upstream_error'
      ? `the service failed unexpectedly (${origin})`
      : status === 429
        ? `${code.replace(/_/g, ' ')}: retry later (${origin})`
        : `${code.replace(/_/g, ' ')} (${origin})`);
  // The self-hosted companion's 503 upstream_unreachable (its engine down) carries no Retry-After.
  const defaultRetryAfter = (status === 429 || status === 503) && code !== 'upstream_unreachable' ? 1 : undefined;
  return { status, code, message: text, retryAfter: retryAfter ?? defaultRetryAfter };
}
