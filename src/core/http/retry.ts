/**
 * Retry policy: a pure module that says whether a failed request is tried again and after how long.
 * Rules: Job and Asset API v2, Errors (any 429 with Retry-After means back off and retry; a 429 is told apart by
 * `error.code` alone), POST /api/v2/jobs rules 3–5 (a submission whose outcome is unknown is never resubmitted),
 * and what the document leaves not shown, from public sources (Retry-After is integer seconds; GET and cancel can
 * answer 429 `rate_limited`; cancel is idempotent).
 *
 * - any 429, whatever its code (`rate_limited`, `queue_full`, `deployment_not_ready`, a code not in the documents):
 *   after its Retry-After when it has a valid one (integer seconds), else after the jittered backoff: never at once.
 *   A submission is retried with the SAME key: a 429 created nothing and claimed no key (POST /api/v2/jobs, rule 4).
 *   A 402 `insufficient_credits` that carries a Retry-After is "not now" too ({@link isBusyRefusal}); without one it
 *   is definitive.
 * - reads (GET) and cancel: also 5xx, timeouts and network errors, with jittered exponential backoff; bounded in
 *   attempts and elapsed time.
 * - submit: never after a timeout, a reset or a 5xx: the job may exist.
 * - nothing else.
 * - requests that share a server's pause ({@link RetryPause}: a batch's submissions, a watch's reads and its event
 *   stream) start again only once the LONGEST pause asked for has passed: a later, shorter Retry-After (or a backoff,
 *   or a poll's cadence) never shortens an earlier, longer one.
 */
import { AbortError, ApiError, ComfyError, ConnectionError, ResponseShapeError, TimeoutError } from './errors';
import type { Clock } from './clock';

/** What kind of request failed: decides what may be retried. */
export type RequestKind = 'read' | 'cancel' | 'submit';

/** Bounds of retrying. Times in ms, except `maxRetryAfterS` (s). */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** No retry is started once this much time has passed since the first attempt. */
  maxElapsedMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error goes to the caller. */
  maxRetryAfterS: number;
  /** Source of jitter in [0, 1). */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  maxElapsedMs: 120_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterS: 120,
  random: Math.random,
};

/** The decision for one failure. */
export type RetryDecision = { retry: false } | { retry: true; delayMs: number; reason: string };

/**
 * True when a refusal says "not now": the same request may be sent again after a pause. Any 429 (Job and Asset API v2,
 * Errors: any 429 with Retry-After means back off and retry), and a 402 `insufficient_credits` that carries a
 * Retry-After: the server says when to come back (assumed: credits are being replenished); the refusal made no job
 * and released the key (POST /api/v2/jobs, rule 4). A 402 without a Retry-After is definitive (rule 7).
 */
export function isBusyRefusal(error: unknown): boolean {
  return ApiError.is(error) && (error.status === 429 || (error.status === 402 && error.retryAfter !== undefined));
}

/** Codes that are never retried whatever the request (terminal or needing a person), unless {@link isBusyRefusal}. */
const NEVER = new Set([
  'deployment_stopped',
  'insufficient_credits',
  'idempotency_key_reuse',
  'unauthorized',
  'forbidden',
  'not_found',
]);

/**
 * Decides whether to retry after `error` on the `attempt`-th try (1-based), `elapsedMs` after the first.
 * Pure: same inputs, same answer (jitter comes from `policy.random`).
 */
export function decideRetry(
  error: unknown,
  kind: RequestKind,
  attempt: number,
  elapsedMs: number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): RetryDecision {
  if (attempt >= policy.maxAttempts || elapsedMs >= policy.maxElapsedMs) return { retry: false };
  if (AbortError.is(error)) return { retry: false };
  if (ApiError.is(error)) {
    if (NEVER.has(error.code) && !isBusyRefusal(error)) return { retry: false };
    if (isBusyRefusal(error)) {
      const seconds = error.retryAfter;
      if (seconds === undefined)
        return { retry: true, delayMs: backoff(attempt, policy), reason: `${error.code} without Retry-After` };
      if (seconds > policy.maxRetryAfterS) return { retry: false };
      return { retry: true, delayMs: seconds * 1000, reason: `${error.code}: Retry-After ${seconds} s` };
    }
    if (error.status >= 500 && kind !== 'submit')
      return { retry: true, delayMs: backoff(attempt, policy), reason: `${error.code} (HTTP ${error.status})` };
    return { retry: false };
  }
  if ((ConnectionError.is(error) || TimeoutError.is(error)) && kind !== 'submit') {
    return { retry: true, delayMs: backoff(attempt, policy), reason: error.code };
  }
  return { retry: false };
}

/**
 * Failures of a read that a reader rides out, a watch of a job or a download of its outputs (an outage is not the
 * job's end; Job and Asset API v2, Errors: any 429 means back off and retry, `upstream_error` can hit any
 * operation): any 429, any 5xx but 501
 * `not_implemented` (this server does not do it), no answer (ConnectionError, TimeoutError) and an answer that could
 * not be read (ResponseShapeError). Anything else is definitive: 404, 401, 403, other 4xx, an abort, a bug.
 * Told apart by code, never by class name (minification renames classes).
 */
export function isTransientReadFailure(err: unknown): boolean {
  if (ApiError.is(err)) return err.status === 429 || (err.status >= 500 && err.status !== 501);
  if (!ComfyError.is(err)) return false;
  // Any lost connection (refused while the server restarts, reset, stalled), a timeout, or an answer that could not
  // be read; not one too large to read, which a retry would only fetch again.
  return (
    ConnectionError.is(err) || TimeoutError.is(err) || (ResponseShapeError.is(err) && err.code !== 'response_too_large')
  );
}

/** Full-jitter exponential backoff: random in [0, min(max, base·2^(attempt-1))], at least 1/4 of it (ms). */
export function backoff(attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (0.25 + 0.75 * policy.random()));
}

/**
 * A deadline before which a group of requests does not start again, shared by every request of the group that hears
 * a 429's Retry-After (Job and Asset API v2, Errors: any 429 with Retry-After means back off and retry): the longest
 * pause asked for wins; a later, shorter one never shortens it, and pauses asked at once do not add up. Time goes
 * through the injected clock only.
 */
export class RetryPause {
  /** Until when (ms since the epoch, on the clock) nothing of the group starts. */
  private until = -Infinity;

  constructor(private readonly clock: Clock) {}

  /** Holds the group until `ms` from now (ms; Retry-After × 1000), unless a later deadline stands. */
  extend(ms: number): void {
    this.until = Math.max(this.until, this.clock.now() + Math.max(0, ms));
  }

  /** What is left of the pause (ms), 0 when none stands. */
  remainingMs(): number {
    return Math.max(0, this.until - this.clock.now());
  }

  /**
   * Resolves once no pause stands (at once when none does); a longer pause asked meanwhile is waited out too.
   * @throws AbortError when `signal` aborts.
   */
  async wait(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const left = this.until - this.clock.now();
      if (left <= 0) return;
      await this.clock.sleep(left, signal);
    }
  }
}

/** The pause (ms) a 429 asks for with its Retry-After, undefined for any other error or a 429 without one. */
export function retryAfterMs(error: unknown): number | undefined {
  return ApiError.is(error) && error.status === 429 && error.retryAfter !== undefined
    ? error.retryAfter * 1000
    : undefined;
}

/** Options of {@link withRetry}. */
export interface RetryOptions {
  clock: Clock;
  signal?: AbortSignal;
  policy?: RetryPolicy;
  /**
   * Replaces {@link decideRetry} for an API with its own retry rules (the model router retries only `rate_limited`
   * with Retry-After and `service_unavailable`: Model router API, Errors); same arguments but `kind`. Default:
   * decideRetry.
   */
  decide?: (error: unknown, attempt: number, elapsedMs: number, policy: RetryPolicy) => RetryDecision;
  /** Told before each wait: the error, the wait (ms) and why. */
  onRetry?: (info: { error: unknown; delayMs: number; attempt: number; reason: string }) => void;
}

/**
 * Runs `operation` and retries it as {@link decideRetry} says, waiting on the injected clock (abortable).
 * @throws the last error when no retry is allowed, carrying in `retries` (a ComfyError's `RetryHistory`, errors.ts) the
 *   attempts made, the time they took (ms) and the policy's `maxRetryAfterS`, so what is said about it is true
 *   (presentation.ts); AbortError (`requestSent: false`) when `signal` aborts during a wait.
 */
export async function withRetry<T>(
  kind: RequestKind,
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const policy = options.policy ?? DEFAULT_RETRY_POLICY;
  const started = options.clock.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      const elapsedMs = options.clock.now() - started;
      const decision = options.decide
        ? options.decide(error, attempt, elapsedMs, policy)
        : decideRetry(error, kind, attempt, elapsedMs, policy);
      if (!decision.retry) {
        // Set once: an error that already went through a retry loop keeps that loop's account.
        if (error instanceof ComfyError && error.retries === undefined) {
          error.retries = {
            attempts: attempt,
            elapsedMs: options.clock.now() - started,
            maxRetryAfterS: policy.maxRetryAfterS,
          };
        }
        throw error;
      }
      options.onRetry?.({ error, delayMs: decision.delayMs, attempt, reason: decision.reason });
      try {
        await options.clock.sleep(decision.delayMs, options.signal);
      } catch {
        // Aborted while waiting: the last attempt was answered definitively, so nothing is under way (a submission
        // waiting out a 429 made no job).
        throw new AbortError('aborted while waiting to retry', {}, { requestSent: false });
      }
    }
  }
}
