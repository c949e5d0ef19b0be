/**
 * The model router's errors (Model router API, Errors; the status of each bucket, not shown there, from public
 * sources): the bucket from the body's `error_type`, else the `X-Svc-Error-Type` header (or `X-Comfy-Error-Type`); an
 * unknown bucket is `internal_error`; the 422 validation body parsed into field errors; committed-spend headers (USD
 * cents) on a 429 `concurrency_limit_exceeded`.
 */
import {
  ApiError,
  ComfyError,
  bodyExcerpt,
  parseRetryAfter,
  type ApiErrorInit,
  type ErrorContext,
} from '../http/errors';
import { neutralize } from '../util/text';

/** The closed set of fifteen buckets (Model router API, Errors). */
export const ROUTER_BUCKETS = [
  'invalid_input',
  'content_policy_violation',
  'provider_error',
  'provider_timeout',
  'insufficient_credits',
  'model_not_found',
  'unauthorized',
  'forbidden',
  'concurrency_limit_exceeded',
  'client_disconnected',
  'internal_error',
  'deadline_exceeded',
  'not_enabled',
  'service_unavailable',
  'rate_limited',
] as const;
/** One of the fifteen buckets. */
export type RouterBucket = (typeof ROUTER_BUCKETS)[number];
const BUCKETS = new Set<string>(ROUTER_BUCKETS);

/** One entry of a 422 validation body (Model router API, Errors, validation error response). */
export interface RouterFieldError {
  /** Path to the field, outermost first; an integer indexes an array. */
  loc: (string | number)[];
  msg: string;
  /** The provider's own reason, passed through (an open string). */
  type: string;
  /** The violated bound, provider-specific keys; absent when not sent. */
  ctx?: Record<string, unknown>;
  /** The offending value echoed back; absent when the provider did not echo it. */
  input?: unknown;
  /** True when `input` was sent (it may be `null`). */
  hasInput: boolean;
}

/**
 * Committed-spend figures of a 429 `concurrency_limit_exceeded`, USD cents (Model router API,
 * POST /v1/models/{provider}/{model}).
 */
export interface CommittedSpend {
  limitCents?: number;
  currentCents?: number;
  remainingCents?: number;
}

/** Fields of a router refusal besides an ApiError's. */
export interface RouterErrorInit extends ApiErrorInit {
  bucket: RouterBucket;
  /** The bucket as the server wrote it, when it was not one of the fifteen (then `bucket` is `internal_error`). */
  reportedBucket?: string;
  /**
   * The body's `detail` as text, safe to show (public sources), control characters neutralized (server text is
   * untrusted).
   */
  detail: string;
  fieldErrors?: RouterFieldError[];
  spend?: CommittedSpend;
  suggestions?: string[];
}

/**
 * The router answered with an error status. `code` and `bucket` are one of the fifteen buckets; `detail` the
 * body's detail (text); `fieldErrors` the 422 entries; `spend` the committed-spend headers (USD cents) of a 429;
 * `suggestions` the model ids of a `model_not_found`; `idempotencyKey` the key of the invocation that failed (set by
 * RouterClient.run, so the call can be collected or retried with the same key).
 */
export class RouterError extends ApiError {
  readonly bucket: RouterBucket;
  readonly reportedBucket: string | undefined;
  readonly detail: string;
  readonly fieldErrors: RouterFieldError[];
  readonly spend: CommittedSpend | undefined;
  readonly suggestions: string[];
  idempotencyKey: string | undefined;

  constructor(init: RouterErrorInit) {
    super(init);
    this.bucket = init.bucket;
    this.reportedBucket = init.reportedBucket;
    this.detail = init.detail;
    this.fieldErrors = init.fieldErrors ?? [];
    this.spend = init.spend;
    this.suggestions = init.suggestions ?? [];
    this.idempotencyKey = undefined;
  }
}

/**
 * 504 `deadline_exceeded`: the router stopped holding the connection; the generation may still run. With
 * `retryAfter` (s), a retry with the same `idempotencyKey` collects it; without, RouterClient.run stops and this
 * error names the key to collect with later (Model router API, POST /v1/models/{provider}/{model}).
 */
export class DeadlineExceededError extends RouterError {}

/**
 * An invocation whose answer never came (a timeout, a reset connection after sending): the model may have run.
 * `idempotencyKey` is the key to retry with, never a new one (a new key could run and bill the model twice).
 */
export class RouterOutcomeUnknownError extends ComfyError {
  readonly idempotencyKey: string;
  constructor(message: string, idempotencyKey: string, context: ErrorContext, cause: unknown) {
    super('outcome_unknown', message, context, { cause });
    this.idempotencyKey = idempotencyKey;
  }
}

/**
 * The bucket of a status when neither body nor header names one (Model router API, Errors: the mapping is not shown
 * there; public sources).
 */
function bucketOfStatus(status: number): RouterBucket {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_input';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'model_not_found';
    case 503:
      return 'service_unavailable';
    default:
      return 'internal_error';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses the 422 `detail[]` entries; entries without a usable `loc`/`msg`/`type` keep what they have. */
function fieldErrorsOf(detail: unknown[]): RouterFieldError[] {
  return detail.filter(isRecord).map((entry) => {
    const loc = Array.isArray(entry.loc)
      ? entry.loc.filter(
          (p): p is string | number => typeof p === 'string' || (typeof p === 'number' && Number.isInteger(p)),
        )
      : [];
    const field: RouterFieldError = {
      loc,
      msg: typeof entry.msg === 'string' ? entry.msg : '',
      type: typeof entry.type === 'string' ? entry.type : '',
      hasInput: 'input' in entry,
    };
    if (isRecord(entry.ctx)) field.ctx = entry.ctx;
    if ('input' in entry) field.input = entry.input;
    return field;
  });
}

/** Model ids offered by a `model_not_found` (up to three): `suggestions` beside or inside `detail`, or a detail array. */
function suggestionsOf(body: Record<string, unknown>): string[] {
  const detail = body.detail;
  const list = Array.isArray(body.suggestions)
    ? body.suggestions
    : isRecord(detail) && Array.isArray(detail.suggestions)
      ? detail.suggestions
      : Array.isArray(detail)
        ? detail
        : [];
  return list.filter((s): s is string => typeof s === 'string').slice(0, 3);
}

function detailText(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (isRecord(detail) && typeof detail.message === 'string') return detail.message;
  if (detail === undefined || detail === null) return '';
  return JSON.stringify(detail).slice(0, 500);
}

function cents(header: string | null): number | undefined {
  if (header === null || !/^\s*-?\d+(\.\d+)?\s*$/.test(header)) return undefined;
  return Number(header);
}

/**
 * The router's error factory (an `ErrorFactory` for the transport): the bucket from the body's `error_type`, else
 * `X-Svc-Error-Type`, else `X-Comfy-Error-Type`, else the status (400/422 `invalid_input`, 401, 403, 404
 * `model_not_found`, 503, otherwise `internal_error`); a bucket outside the fifteen becomes `internal_error` (its raw
 * name kept in `reportedBucket`). A 422 body's `detail[]` becomes `fieldErrors`; a 429's `X-Committed-Spend-*`
 * headers `spend` (USD cents); Retry-After `retryAfter` (s). A 504 `deadline_exceeded` is a DeadlineExceededError.
 * Never throws.
 */
export function routerErrorFromResponse(
  status: number,
  bodyText: string,
  headers: { get(name: string): string | null },
  context: ErrorContext = {},
): RouterError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const record = isRecord(body) ? body : {};
  const raw =
    (typeof record.error_type === 'string' && record.error_type) ||
    headers.get('x-svc-error-type') ||
    headers.get('x-comfy-error-type') ||
    undefined;
  const rawBucket = raw?.trim().toLowerCase();
  const bucket: RouterBucket =
    rawBucket === undefined
      ? bucketOfStatus(status)
      : BUCKETS.has(rawBucket)
        ? (rawBucket as RouterBucket)
        : 'internal_error';
  const fieldErrors = status === 422 && Array.isArray(record.detail) ? fieldErrorsOf(record.detail) : [];
  const detail =
    fieldErrors.length > 0
      ? neutralize(fieldErrors.map((f) => `${f.loc.join('.') || '(body)'}: ${f.msg}`).join('; '))
      : body === undefined
        ? bodyExcerpt(bodyText)
        : neutralize(detailText(record.detail));
  let spend: CommittedSpend | undefined;
  if (bucket === 'concurrency_limit_exceeded') {
    const s = {
      limitCents: cents(headers.get('x-committed-spend-limit')),
      currentCents: cents(headers.get('x-committed-spend-current')),
      remainingCents: cents(headers.get('x-committed-spend-remaining')),
    };
    if (s.limitCents !== undefined || s.currentCents !== undefined || s.remainingCents !== undefined) spend = s;
  }
  const init: RouterErrorInit = {
    status,
    code: bucket,
    bucket,
    reportedBucket: rawBucket !== undefined && rawBucket !== bucket ? raw : undefined,
    message: `${bucket} (HTTP ${status})${detail ? `: ${detail}` : ''}`,
    detail,
    details: isRecord(body) ? body : null,
    retryAfter: parseRetryAfter(headers.get('retry-after')),
    requestId: context.requestId,
    request: context.request,
    fieldErrors,
    spend,
    suggestions: bucket === 'model_not_found' ? suggestionsOf(record) : [],
  };
  return bucket === 'deadline_exceeded' ? new DeadlineExceededError(init) : new RouterError(init);
}
