/**
 * The error base shared by every API the core speaks (v2 jobs and assets, the deprecated v1, the model router).
 * Nothing here assumes one API's error body: the v2 envelope `{error: {code, message, details}}`, its code table and
 * its own subclasses live in `../v2/errors.ts` (the refusals both service APIs share are here: {@link SHARED_ERRORS}); the router's `{detail, error_type}` in `../router/errors.ts` and v1's
 * `error` field in `../v1/errors.ts` (one base error; codes are data, made into errors by one factory per API).
 *
 * Two families, so that callers can tell "the server said no" from "we never heard back" (retry or not):
 * - {@link ApiError}: the server answered with an error status;
 * - {@link ConnectionError}, {@link TimeoutError}, {@link AbortError}: no (complete) answer.
 * Test errors with the static `is()` guard (true only for the class it is called on and its subclasses) or by
 * `code`, never by class name or message text: a bundle built without `keepNames` renames classes.
 */
import { neutralize } from '../util/text';
import { describeSize } from '../util/bytes';

/** What every error of the core carries besides its message. */
export interface ErrorContext {
  /** `X-Svc-Request-Id` (or `X-Comfy-Request-Id`) of the response, when the server sent one. */
  requestId?: string;
  /** `METHOD URL` of the request, with no credential in it. */
  request?: string;
}

/**
 * How a failed request was tried before its error reached the caller, set by `withRetry` (retry.ts) on the error
 * it rethrows, so the words shown about it are true (never "retried" when nothing was).
 */
export interface RetryHistory {
  /** Attempts made, the first included (1: it was not retried). */
  attempts: number;
  /** Time from the first attempt to giving up, ms (on the retry loop's clock). */
  elapsedMs: number;
  /** The longest Retry-After the policy waits for, s: a longer one is not waited for. */
  maxRetryAfterS: number;
}

/** Any class of the {@link ComfyError} family (abstract included), as `this` of the static guard. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ComfyErrorClass = abstract new (...args: any[]) => ComfyError;

/**
 * Base of all core errors: a stable `code`, the request id and the request, if any. `name` is the class's own
 * name, taken once here from `new.target` (kept by a bundle built with esbuild's `keepNames`; callers never test
 * it).
 */
export class ComfyError extends Error {
  readonly code: string;
  readonly requestId: string | undefined;
  readonly request: string | undefined;
  /** How the request was tried, when the error came through `withRetry`; undefined otherwise. */
  retries: RetryHistory | undefined;

  constructor(code: string, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name || 'ComfyError';
    this.code = code;
    this.requestId = context.requestId;
    this.request = context.request;
    this.retries = undefined;
  }

  /**
   * True when `value` is an instance of the class this is called on (or of one of its subclasses):
   * `QueueFullError.is(e)` is false for a NotFoundError, `ApiError.is(e)` true for any server refusal,
   * `ComfyError.is(e)` true for any error of the core. One guard for every class (an inherited guard
   * that answers for a sibling class is a trap).
   */
  static is<T extends ComfyErrorClass>(this: T, value: unknown): value is InstanceType<T> {
    return value instanceof this;
  }
}

/** Fields of a server's refusal, whatever the API's error body looked like. */
export interface ApiErrorInit extends ErrorContext {
  /** HTTP status (>= 400). */
  status: number;
  /** The API's error code (v2 `error.code`, the router's `error_type`, …), or one made from the status. */
  code: string;
  message: string;
  details?: Record<string, unknown> | null;
  /**
   * Retry-After in seconds (integer: Job and Asset API v2, Errors, `rate_limited`), when the response had a valid one.
   */
  retryAfter?: number;
}

/** The server answered with an error status: `status`, `code`, `message`, `details`, `retryAfter` (s), `requestId`. */
export class ApiError extends ComfyError {
  readonly status: number;
  readonly details: Record<string, unknown> | null;
  /** Retry-After, s; undefined when the response had none (or an invalid one). */
  readonly retryAfter: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init.code, init.message, init);
    this.status = init.status;
    this.details = init.details ?? null;
    this.retryAfter = init.retryAfter;
  }

  /** True when this is an ApiError with one of `codes`. */
  static hasCode(value: unknown, ...codes: string[]): value is ApiError {
    return value instanceof ApiError && codes.includes(value.code);
  }
}

/** The class of an {@link ApiError} made for one code. */
export type ApiErrorClass = new (init: ApiErrorInit) => ApiError;

/** Any 404 (`not_found`, `job_not_found`, `asset_not_found`, …): unknown, not the caller's, or expired. */
export class NotFoundError extends ApiError {}
/** 401 `unauthorized`: missing or invalid API key. */
export class UnauthorizedError extends ApiError {}
/** 403 `forbidden`: authenticated but not allowed. */
export class ForbiddenError extends ApiError {}
/** 429 `rate_limited`: request-rate limit of the account; retry after `retryAfter` seconds. */
export class RateLimitedError extends ApiError {}
/** 500 `upstream_error` (and any 5xx): backing services failed; the message is generic and safe to show. */
export class UpstreamError extends ApiError {}

/** One field problem of a 422 `invalid_workflow`: node id, input name (when known) and reason. */
export interface NodeError {
  nodeId: string;
  field?: string;
  reason: string;
  classType?: string;
}

/**
 * 422 `invalid_workflow`: keeps `details.node_errors` in one shape whichever the server sent (the document's, or the
 * engine's that some servers forward), and `details.unknown_classes` when the server names the node classes it does
 * not run (the emulator does; an addition to the document's `details`).
 */
export class InvalidWorkflowError extends ApiError {
  readonly nodeErrors: NodeError[];
  /** The node classes the server says it does not run, each once, in its order; empty when it does not say. */
  readonly unknownClasses: string[];
  constructor(init: ApiErrorInit) {
    super(init);
    this.nodeErrors = parseNodeErrors(init.details?.node_errors);
    const unknown = init.details?.unknown_classes;
    this.unknownClasses = Array.isArray(unknown)
      ? [...new Set(unknown.filter((c): c is string => typeof c === 'string' && c !== ''))]
      : [];
  }
}

/**
 * The refusals every API of the service shares, by code: HTTP status and class (Job and Asset API v2, Errors; v1 and
 * v2 are two faces of one service, and v1's factory reads the same codes). Each API's own table adds its codes to
 * these (v2/errors.ts `V2_ERRORS`).
 */
export const SHARED_ERRORS = {
  invalid_workflow: { status: 422, type: InvalidWorkflowError },
  not_found: { status: 404, type: NotFoundError },
  unauthorized: { status: 401, type: UnauthorizedError },
  forbidden: { status: 403, type: ForbiddenError },
  rate_limited: { status: 429, type: RateLimitedError },
  upstream_error: { status: 500, type: UpstreamError },
} as const satisfies Record<string, { status: number; type: ApiErrorClass }>;

/**
 * Reads `details.node_errors` in either shape (Job and Asset API v2, Error envelope; some servers forward the
 * engine's own): the document's `{node: [{field, reason}]}` or the
 * engine's `{node: {errors: [{type, message, details, extra_info}], class_type}}`.
 */
export function parseNodeErrors(raw: unknown): NodeError[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const out: NodeError[] = [];
  for (const [nodeId, value] of Object.entries(raw as Record<string, unknown>)) {
    if (Array.isArray(value)) {
      for (const item of value) {
        if (item && typeof item === 'object') {
          const i = item as Record<string, unknown>;
          out.push({
            nodeId,
            field: typeof i.field === 'string' ? i.field : undefined,
            reason: typeof i.reason === 'string' ? i.reason : JSON.stringify(item),
          });
        }
      }
    } else if (value && typeof value === 'object') {
      const v = value as Record<string, unknown>;
      const classType = typeof v.class_type === 'string' ? v.class_type : undefined;
      const errors = Array.isArray(v.errors) ? v.errors : [];
      for (const item of errors) {
        if (!item || typeof item !== 'object') continue;
        const i = item as Record<string, unknown>;
        const extra = (i.extra_info ?? {}) as Record<string, unknown>;
        const field = typeof extra.input_name === 'string' ? extra.input_name : undefined;
        const parts = [i.message, i.details].filter((p) => typeof p === 'string' && p) as string[];
        out.push({ nodeId, field, classType, reason: parts.join(': ') || String(i.type ?? 'invalid') });
      }
    }
  }
  return out;
}

/** Makes the ApiError of one error response: `(status, body text, headers, context)`. Never throws. */
export type ErrorFactory = (
  status: number,
  bodyText: string,
  headers: { get(name: string): string | null },
  context: ErrorContext,
) => ApiError;

/**
 * True for a server's "not found" answer: any 404, whatever its code (servers answer `not_found`, `job_not_found`,
 * `asset_not_found`: Job and Asset API v2, Errors; read tolerantly).
 */
export function isNotFound(err: unknown): boolean {
  return ApiError.is(err) && err.status === 404;
}

/**
 * Parses a Retry-After header: an integer number of seconds, and nothing else (Job and Asset API v2, Errors:
 * `rate_limited` "includes Retry-After (integer seconds)"; public sources say the same of every code). Anything else
 * (`1.5`, `-1`, `10, 20`, an HTTP date, which could lie in the past) is undefined, so the caller falls back to its
 * normal backoff and never retries at once.
 */
export function parseRetryAfter(header: string | null | undefined): number | undefined {
  if (header == null) return undefined;
  const text = header.trim();
  if (!/^\d{1,9}$/.test(text)) return undefined;
  return Number(text);
}

/**
 * The start of a body that is not the API's error body (a proxy's HTML page, plain text), as it may stand in a
 * message: whitespace runs made one space, at most 200 characters, every control or invisible character shown
 * escaped (text.ts `neutralize`). '' when the body is blank.
 */
export function bodyExcerpt(bodyText: string): string {
  return neutralize(bodyText.replace(/\s+/g, ' ').trim().slice(0, 200));
}

/**
 * The code of an error status when the body names none: the HTTP meaning shared by every API (401
 * `unauthorized`, 403 `forbidden`, 404 `not_found`), else `http_<status>`.
 */
export function genericCodeForStatus(status: number): string {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    default:
      return `http_${status}`;
  }
}

/**
 * The transport's default {@link ErrorFactory}, for an API whose error body it does not know: an ApiError from the
 * status alone ({@link genericCodeForStatus}), with Retry-After and the request's context; the message is
 * `HTTP <status>`, or quotes a short escaped excerpt of a body that is not JSON ({@link bodyExcerpt}). A JSON body
 * is not interpreted here: each API's own factory reads its shape (v2: `errorFromResponse` in ../v2/errors.ts).
 * Never throws.
 *
 * @param status HTTP status (>= 400)
 * @param bodyText the response body as text ('' when none)
 * @param headers the response headers (for Retry-After)
 */
export function errorFromStatus(
  status: number,
  bodyText: string,
  headers: { get(name: string): string | null },
  context: ErrorContext = {},
): ApiError {
  let message = `HTTP ${status}`;
  try {
    JSON.parse(bodyText);
  } catch {
    const excerpt = bodyExcerpt(bodyText);
    if (excerpt) message = `unexpected response body: ${excerpt}`;
  }
  return new ApiError({
    status,
    code: genericCodeForStatus(status),
    message,
    details: null,
    retryAfter: parseRetryAfter(headers.get('retry-after')),
    requestId: context.requestId,
    request: context.request,
  });
}

/**
 * The request could not be sent or its answer could not be read (DNS, refused, reset, TLS, a stalled body).
 * `requestSent` false means the connection never opened (refused, host not found, connect timeout, TLS
 * verification): nothing reached the server, so a submission is definitively not made. True means the
 * server may have acted on it: for a submission the outcome is unknown. `reason` is the failure alone; `hint`, when
 * given, a guess at its cause that the message adds after it ("is the server running at …?", apt for a server of
 * one's own): a caller that knows better (a public service is up) says the cause in its own words.
 */
export class ConnectionError extends ComfyError {
  readonly requestSent: boolean;
  readonly reason: string;
  constructor(
    reason: string,
    context: ErrorContext = {},
    options?: { cause?: unknown; requestSent?: boolean; code?: string; hint?: string },
  ) {
    super(options?.code ?? 'connection_error', options?.hint ? `${reason}; ${options.hint}` : reason, context, options);
    this.requestSent = options?.requestSent ?? true;
    this.reason = reason;
  }
}

/** No answer within the per-request timeout (ms). */
export class TimeoutError extends ComfyError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, context: ErrorContext = {}) {
    super('timeout', `no answer within ${timeoutMs} ms${context.request ? ` (${context.request})` : ''}`, context);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The caller aborted (its AbortSignal fired): not a failure of the service. `requestSent` false when nothing was
 * under way (aborted before sending, or during a wait before a retry): then a submission is definitively not made.
 */
export class AbortError extends ComfyError {
  readonly requestSent: boolean;
  constructor(message = 'aborted', context: ErrorContext = {}, options: { requestSent?: boolean } = {}) {
    super('aborted', message, context);
    this.requestSent = options.requestSent ?? true;
  }
}

/** Bad input refused before any request (a file that is not JSON, a UI-format workflow, …). */
export class InputError extends ComfyError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/**
 * A response that is not the shape the contract promises (a 200 whose body is not JSON, or not a Job, …).
 * `status` is the HTTP status when there was one; `body` the parsed JSON when it parsed (for salvaging an id).
 */
export class ResponseShapeError extends ComfyError {
  readonly status: number | undefined;
  readonly body: unknown;
  constructor(
    message: string,
    context: ErrorContext = {},
    extra: { status?: number; body?: unknown; code?: string } = {},
  ) {
    super(extra.code ?? 'bad_response', message, context);
    this.status = extra.status;
    this.body = extra.body;
  }
}

/**
 * A body larger than the client reads (JSON bodies are read with a size cap: server data is untrusted):
 * `response_too_large`, naming the URL and the cap (bytes). The body is not read further; the connection is dropped.
 */
export class ResponseTooLargeError extends ResponseShapeError {
  readonly limitBytes: number;
  constructor(url: string, limitBytes: number, context: ErrorContext = {}, status?: number) {
    super(
      `the answer from ${url} is larger than ${describeSize(limitBytes)}; it was not read (a server should never send that much here)`,
      context,
      { status, code: 'response_too_large' },
    );
    this.limitBytes = limitBytes;
  }
}

/**
 * A redirect the client does not follow: a 3xx on a JSON endpoint (the API never redirects
 * them; usually a base URL that should be https or has a wrong path), a `Location` that is not an http(s) URL, a
 * loop, or too many hops. `location` is the target as it may be shown (a foreign query dropped).
 */
export class RedirectError extends ComfyError {
  readonly status: number;
  readonly location: string | undefined;
  constructor(message: string, status: number, location: string | undefined, context: ErrorContext = {}) {
    super('unexpected_redirect', message, context);
    this.status = status;
    this.location = location;
  }
}

/**
 * An error in one line for a log: `code: message` for an error of the core (the code is what a reader searches the
 * log for), the message of any other Error, else the value as text. The text is the error's own; the log writer
 * redacts secrets.
 */
export function describeError(err: unknown): string {
  if (ComfyError.is(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
