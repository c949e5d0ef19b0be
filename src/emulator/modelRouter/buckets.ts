/**
 * The router's error answers (Model router API, Errors; the status of each bucket, not shown there, from public
 * sources): a body
 * `{detail, error_type}` with the bucket repeated in `X-Svc-Error-Type`; the 422 validation body has no
 * `error_type`, its bucket (`invalid_input`) is in the header only.
 */
import type { ServerResponse } from 'node:http';

/** The closed set of fifteen buckets (Model router API, Errors), each with its status (public sources). */
export const BUCKET_STATUS = {
  invalid_input: 400,
  content_policy_violation: 400, // status not shown anywhere: a request-level refusal, answered like invalid_input
  provider_error: 502, // status not shown: the provider failed, a bad gateway
  provider_timeout: 504,
  insufficient_credits: 402, // status not shown: the v2 API's status for the same refusal
  model_not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  concurrency_limit_exceeded: 429,
  client_disconnected: 499, // status not shown: the caller is gone; nginx's code, logged only
  internal_error: 500,
  deadline_exceeded: 504,
  not_enabled: 403,
  service_unavailable: 503,
  rate_limited: 429,
} as const satisfies Record<string, number>;

/** One of the fifteen buckets. */
export type Bucket = keyof typeof BUCKET_STATUS;

/** The buckets, in the document's order. */
export const BUCKETS = Object.keys(BUCKET_STATUS) as Bucket[];

/** The error-type header (the document's name; `X-Comfy-Error-Type` in public). */
export const ERROR_TYPE_HEADER = 'X-Svc-Error-Type';

/** The committed-spend headers of a 429 `concurrency_limit_exceeded`, values in USD cents. */
export const SPEND_HEADERS = {
  limit: 'X-Committed-Spend-Limit',
  current: 'X-Committed-Spend-Current',
  remaining: 'X-Committed-Spend-Remaining',
} as const;

/** One field error of the 422 validation body (Model router API, Errors, validation error response). */
export interface FieldError {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
  input?: unknown;
}

/**
 * A refusal of the router: answered with status `status` (default: the bucket's), body `{detail, error_type}`
 * plus `extra` fields, and `headers`. `bucket` is a string so that a fault can answer one outside the fifteen.
 */
export class RouterError extends Error {
  readonly status: number;

  constructor(
    readonly bucket: string,
    readonly detail: string,
    options: { status?: number; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.name = 'RouterError';
    this.status = options.status ?? (Object.hasOwn(BUCKET_STATUS, bucket) ? BUCKET_STATUS[bucket as Bucket] : 500);
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }

  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
}

/** A 422: the model reached and rejected the input, one {@link FieldError} per offending field. */
export class ValidationFailure extends Error {
  constructor(readonly errors: FieldError[]) {
    super(`${errors.length} field error(s)`);
    this.name = 'ValidationFailure';
  }
}

/** Answers `status` with the JSON text `text` (already serialized: byte-faithful bodies pass through). */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string | Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Answers a {@link RouterError}: its status, `{detail, error_type, …extra}`, `X-Svc-Error-Type` and its headers. */
export function sendRouterError(res: ServerResponse, error: RouterError): void {
  const body = JSON.stringify({ detail: error.detail, error_type: error.bucket, ...error.extra });
  sendText(res, error.status, body, {
    'cache-control': 'no-store',
    [ERROR_TYPE_HEADER]: error.bucket,
    ...error.headers,
  });
}

/** Answers a 422 validation failure: `{detail: [...]}` without `error_type`, the bucket `invalid_input` in the header. */
export function sendValidationFailure(res: ServerResponse, failure: ValidationFailure): void {
  sendText(res, 422, JSON.stringify({ detail: failure.errors }), {
    'cache-control': 'no-store',
    [ERROR_TYPE_HEADER]: 'invalid_input',
  });
}
