/**
 * The fault injector: the plan in force, its counters and its log, and the hooks the server and the routes consult
 * (see ../faults.ts for what each hook does and when). Each hook counts the request for every rule of its kinds that
 * targets it, and fires the first, in plan order, that is due.
 */
import { KIND_OF_ROUTE, SUBMIT_ROUTE, targets, type RouteKind } from './routes';
import type { FaultAction, FaultRule } from './schema';
import { checkFaultPlan, type FaultPlan } from './plan';

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
  readonly then:
    | { readonly kind: 'status'; readonly answer: FaultAnswer }
    | { readonly kind: 'reset' }
    | { readonly kind: 'created' };
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

/** The hook at which each kind of rule is consulted. */
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

/**
 * The refusals of a submission itself (Job and Asset API v2, POST /api/v2/jobs, rule 7, less
 * `idempotency_key_reuse`): a `status` rule answering one of them reached submission by default (its key is claimed,
 * then released, rule 4). Other 4xx codes (`rate_limited`, `unauthorized`, `deployment_not_ready`, …) are refusals in
 * front of it.
 */
const SUBMISSION_REFUSALS: readonly string[] = [
  'invalid_workflow',
  'workflow_format_ui',
  'missing_asset',
  'insufficient_credits',
  'queue_full',
];

/**
 * Whether a `status` (of `status` and `code`) or `reset` fault on a submission reached submission when its rule does
 * not say (`claims`): a reset or a 5xx did (an unknown outcome, rule 5), and so did the submission's own refusals
 * ({@link SUBMISSION_REFUSALS}).
 */
function claimsByDefault(answer: { status: number; code: string } | 'reset'): boolean {
  return answer === 'reset' || answer.status >= 500 || SUBMISSION_REFUSALS.includes(answer.code);
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
    if (rule.kind === 'reset')
      return { kind: 'reset', claims: submission && (rule.claims ?? claimsByDefault('reset')) };
    if (rule.kind === 'delay') return { kind: 'delay', ms: rule.ms };
    if (rule.kind === 'status') {
      const answer = answerOf(rule.status!, rule.code!, rule.retryAfter, rule.message, index);
      return { kind: 'status', answer, claims: submission && (rule.claims ?? claimsByDefault(answer)) };
    }
    if (rule.kind === 'bucket') {
      return {
        kind: 'bucket',
        answer: {
          bucket: rule.bucket,
          status: rule.status,
          message: rule.message,
          retryAfter: rule.retryAfter,
          spendCents: rule.spendCents,
          rule: index,
        },
      };
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
    return {
      delayMs,
      then: { kind: 'status', answer: answerOf(rule.status!, rule.code!, undefined, undefined, index) },
    };
  }

  eventStream(request: FaultRequest): StreamFault | undefined {
    const rule = this.pick('stream', request)?.rule;
    if (rule?.kind === 'dropStream')
      return { afterFrames: rule.afterFrames, then: rule.how === 'reset' ? 'reset' : 'end' };
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

/** The error answer of a `status` rule: its message names the rule; Retry-After (s) defaults for 429 and 503. */
function answerOf(
  status: number,
  code: string,
  retryAfter: number | undefined,
  message: string | undefined,
  index: number,
): FaultAnswer {
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
