/**
 * When the model router client asks again (Model router API, Errors): its retry bounds, its retry rule, and what it
 * tells a listener before each wait (the one line the CLI prints per retry).
 */
import { untranslated, type Translate } from '../util/l10n';
import { backoff, type RetryDecision, type RetryPolicy } from '../http/retry';
import { RouterError } from './errors';

/**
 * The router's retry bounds: about 10 s in all (a synchronous call is not held up long), each wait at most 10 s; times
 * in ms except `maxRetryAfterS` (s).
 */
export const ROUTER_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  maxElapsedMs: 10_000,
  baseDelayMs: 500,
  maxDelayMs: 4_000,
  maxRetryAfterS: 10,
  random: Math.random,
};

/**
 * The router's retry rule (Model router API, Errors; statuses per bucket from public sources): `rate_limited` WITH a
 * Retry-After (after it) and `service_unavailable` (after its Retry-After, else jittered backoff) are retried while the
 * total stays within `policy.maxElapsedMs`; every other bucket, and any failure that is not a router answer, is not.
 * Pure.
 */
export function decideRouterRetry(
  error: unknown,
  attempt: number,
  elapsedMs: number,
  policy: RetryPolicy = ROUTER_RETRY_POLICY,
): RetryDecision {
  if (attempt >= policy.maxAttempts || !RouterError.is(error)) return { retry: false };
  let delayMs: number;
  if (error.bucket === 'rate_limited') {
    if (error.retryAfter === undefined || error.retryAfter > policy.maxRetryAfterS) return { retry: false };
    delayMs = error.retryAfter * 1000;
  } else if (error.bucket === 'service_unavailable') {
    if (error.retryAfter !== undefined && error.retryAfter > policy.maxRetryAfterS) return { retry: false };
    delayMs = error.retryAfter !== undefined ? error.retryAfter * 1000 : backoff(attempt, policy);
  } else {
    return { retry: false };
  }
  if (elapsedMs + delayMs > policy.maxElapsedMs) return { retry: false };
  return {
    retry: true,
    delayMs,
    reason: `${error.bucket}${error.retryAfter !== undefined ? `: Retry-After ${error.retryAfter} s` : ''}`,
  };
}

/**
 * One wait of the router client before it asks again: a bounded retry of `rate_limited` / `service_unavailable`
 * (Model router API, Errors), or collecting a generation after a 504 `deadline_exceeded` with Retry-After (Model
 * router API, POST /v1/models/{provider}/{model}). Told BEFORE the wait.
 */
export interface RouterRetryInfo {
  /** The number of the request about to be made after the wait (2 for the first retry). */
  attempt: number;
  /** The wait, ms. */
  delayMs: number;
  /** Why: the bucket that was answered (`rate_limited`, `service_unavailable`, `deadline_exceeded`, …). */
  reason: string;
  /** The request that was answered, e.g. `POST /v1/models/emulator/echo`. */
  request: string;
}

/**
 * `rate_limited: retrying in 2 s (attempt 2)`: the one line the CLI prints on stderr, and the extension shows in its
 * progress, per retry (a wait is never silent). Seconds with at most one decimal. `t` translates (l10n.ts).
 */
export function retryMessage(info: RouterRetryInfo, t: Translate = untranslated): string {
  const seconds = Math.round(info.delayMs / 100) / 10;
  return t('{0}: retrying in {1} s (attempt {2})', info.reason, seconds, info.attempt);
}
