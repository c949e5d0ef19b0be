/**
 * Typed errors of the client core. Rules: jobs-assets-api-v2.md, "Error envelope" and "Errors";
 * FACTS.md ("v2 jobs": 404 variants, 429 `too_many_streams`, 501 `not_implemented`).
 *
 * Two families, so that callers can tell "the server said no" from "we never heard back":
 * - {@link ApiError} and its subclasses: the server answered with an error status (one subclass per code);
 * - {@link ConnectionError}, {@link TimeoutError}, {@link AbortError}: no (complete) answer.
 * Test errors with the static `is()` guards or by `code`, never by class name (minification renames).
 */

/** A byte count for a message: `16 MiB (16777216 bytes)`, `512 bytes`. */
export function describeSize(bytes: number): string {
  const units: [number, string][] = [[1024 ** 3, 'GiB'], [1024 ** 2, 'MiB'], [1024, 'KiB']];
  for (const [unit, name] of units) {
    if (bytes >= unit) return `${Number((bytes / unit).toFixed(1))} ${name} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}

/**
 * The HTTP status of every error code: the v2 document's table ("Errors"), plus the codes FACTS.md adds
 * (`too_many_streams`, `not_implemented`, `asset_in_use`). One table for the client, the emulator and the tests.
 */
export const ERROR_STATUS = {
  invalid_workflow: 422,
  workflow_format_ui: 422,
  missing_asset: 422,
  idempotency_key_reuse: 422,
  hash_mismatch: 409,
  blob_not_found: 404,
  queue_full: 429,
  insufficient_credits: 402,
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  rate_limited: 429,
  upstream_error: 500,
  deployment_not_ready: 429,
  deployment_stopped: 422,
  too_many_streams: 429,
  not_implemented: 501,
  asset_in_use: 409,
} as const;

/** Every error code of the table. */
export const API_ERROR_CODES = Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[];

/** A known error code, or any other string a server sends (kept verbatim). */
export type ApiErrorCode = keyof typeof ERROR_STATUS | (string & {});

/** One field problem of a 422 `invalid_workflow`: node id, input name (when known) and reason. */
export interface NodeError {
  nodeId: string;
  field?: string;
  reason: string;
  classType?: string;
}

/** What every error of the core carries besides its message. */
export interface ErrorContext {
  /** `X-Svc-Request-Id` (or `X-Comfy-Request-Id`) of the response, when the server sent one. */
  requestId?: string;
  /** `METHOD URL` of the request, with no credential in it. */
  request?: string;
}

/** Base of all core errors: a stable `code` and the request id, if any. */
export class ComfyError extends Error {
  readonly code: string;
  readonly requestId: string | undefined;
  readonly request: string | undefined;

  constructor(code: string, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ComfyError';
    this.code = code;
    this.requestId = context.requestId;
    this.request = context.request;
  }

  static is(value: unknown): value is ComfyError {
    return value instanceof ComfyError;
  }
}

/** Fields of an error envelope answer (the document's "Error envelope"). */
export interface ApiErrorInit extends ErrorContext {
  status: number;
  code: ApiErrorCode;
  message: string;
  details?: Record<string, unknown> | null;
  /** Retry-After in seconds (integer, FACTS.md), when the response had a valid one. */
  retryAfter?: number;
}

/** The server answered with an error status. `code` is the envelope's `error.code`. */
export class ApiError extends ComfyError {
  readonly status: number;
  override readonly code: ApiErrorCode;
  readonly details: Record<string, unknown> | null;
  readonly retryAfter: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init.code, init.message, init);
    this.name = 'ApiError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? null;
    this.retryAfter = init.retryAfter;
  }

  static override is(value: unknown): value is ApiError {
    return value instanceof ApiError;
  }

  /** True when this is an ApiError with one of `codes`. */
  static hasCode(value: unknown, ...codes: ApiErrorCode[]): value is ApiError {
    return value instanceof ApiError && codes.includes(value.code);
  }
}

/** 422 `invalid_workflow`: keeps `details.node_errors` in one shape whichever the server sent (FACTS.md). */
export class InvalidWorkflowError extends ApiError {
  readonly nodeErrors: NodeError[];
  constructor(init: ApiErrorInit) {
    super(init);
    this.name = 'InvalidWorkflowError';
    this.nodeErrors = parseNodeErrors(init.details?.node_errors);
  }
}
/** 422 `workflow_format_ui`: a UI-format export was submitted; export in API format. */
export class WorkflowFormatUiError extends ApiError {}
/** 422 `missing_asset`: a `core/ASSET` reference names an asset that is missing or not the caller's. */
export class MissingAssetError extends ApiError {}
/** 422 `idempotency_key_reuse`: the Idempotency-Key was presented before; the job was not re-executed. */
export class IdempotencyKeyReuseError extends ApiError {}
/** 409 `hash_mismatch`: the uploaded bytes do not hash to `expected_hash`. */
export class HashMismatchError extends ApiError {}
/** 404 `blob_not_found`: no blob with that hash can be minted from. */
export class BlobNotFoundError extends ApiError {}
/** 429 `queue_full`: the queue is at capacity; retry after `retryAfter` seconds. */
export class QueueFullError extends ApiError {}
/** 402 `insufficient_credits`: the account is out of credits. */
export class InsufficientCreditsError extends ApiError {}
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
/** 429 `deployment_not_ready`: the serverless deployment is starting; retry after `retryAfter`. */
export class DeploymentNotReadyError extends ApiError {}
/** 422 `deployment_stopped`: terminal until an operator restarts the deployment. */
export class DeploymentStoppedError extends ApiError {}
/** 429 `too_many_streams`: too many event streams open; poll instead (FACTS.md). */
export class TooManyStreamsError extends ApiError {}
/** 501 `not_implemented`: this surface does not stream events; poll (FACTS.md). */
export class NotImplementedError extends ApiError {}
/** 409 `asset_in_use`: the asset is referenced by a job and cannot be deleted yet. */
export class AssetInUseError extends ApiError {}

const BY_CODE: Record<string, new (init: ApiErrorInit) => ApiError> = {
  invalid_workflow: InvalidWorkflowError,
  workflow_format_ui: WorkflowFormatUiError,
  missing_asset: MissingAssetError,
  idempotency_key_reuse: IdempotencyKeyReuseError,
  hash_mismatch: HashMismatchError,
  blob_not_found: BlobNotFoundError,
  queue_full: QueueFullError,
  insufficient_credits: InsufficientCreditsError,
  not_found: NotFoundError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  rate_limited: RateLimitedError,
  upstream_error: UpstreamError,
  deployment_not_ready: DeploymentNotReadyError,
  deployment_stopped: DeploymentStoppedError,
  too_many_streams: TooManyStreamsError,
  not_implemented: NotImplementedError,
  asset_in_use: AssetInUseError,
};

/** The code to assume when the body has none: the document's code for that HTTP status. */
function codeForStatus(status: number): ApiErrorCode {
  switch (status) {
    case 401: return 'unauthorized';
    case 402: return 'insufficient_credits';
    case 403: return 'forbidden';
    case 404: return 'not_found';
    case 429: return 'rate_limited';
    case 501: return 'not_implemented';
    default: return status >= 500 ? 'upstream_error' : `http_${status}`;
  }
}

/** The class for a code and status. Any 404 is a NotFoundError whatever its code (FACTS.md); any 5xx
 * without a known code is an UpstreamError. */
function classFor(code: string, status: number): new (init: ApiErrorInit) => ApiError {
  const known = BY_CODE[code];
  if (known) return known;
  if (status === 404) return NotFoundError;
  if (status >= 500) return UpstreamError;
  return ApiError;
}

/**
 * What a person can do about an error code, in words shared by the CLI and the extension (the codes of
 * jobs-assets-api-v2.md "Errors" and FACTS.md). Terminal codes say why retrying will not help. Undefined for codes
 * whose message says enough, and for `unauthorized`, whose remedy each shell names in its own terms.
 */
export function whatToDo(code: string): string | undefined {
  return ADVICE[code];
}

const ADVICE: Record<string, string> = {
  idempotency_key_reuse:
    'this Idempotency-Key was presented before, so the server did not run the workflow again; a job may already exist for it: check your jobs before submitting again (a new submission gets a new key)',
  deployment_stopped: 'the deployment is stopped, and retrying cannot succeed until its operator starts it again; use another deployment or base URL meanwhile',
  insufficient_credits: 'the account is out of credits; add credits to it, then submit again (nothing was run)',
  deployment_not_ready: 'the deployment is still starting; it was retried after each Retry-After until the retry budget ran out: try again in a minute',
  queue_full: 'the queue is full; it was retried after each Retry-After until the retry budget ran out: try again later',
  rate_limited: 'too many requests for this account; wait for the Retry-After time before trying again',
  forbidden: 'the API key is valid but not allowed to do this; use a key of the account that owns the job or asset',
  missing_asset: 'a core/ASSET input names an asset that is unknown, expired or not yours; upload the file again and use the new asset id',
  asset_in_use:
    'the server still holds this asset (e.g. a queued or running job uses it); delete it once the job using it has finished, or cancel that job first',
  upstream_error: 'the service failed unexpectedly; try again shortly',
};

/**
 * Parses a Retry-After header: an integer number of seconds, and nothing else (jobs-assets-api-v2.md "Errors":
 * `rate_limited` "includes Retry-After (integer seconds)"; FACTS.md). Anything else (`1.5`, `-1`, `10, 20`, an HTTP
 * date, which could lie in the past) is undefined, so the caller falls back to its normal backoff and never
 * retries at once.
 */
export function parseRetryAfter(header: string | null | undefined): number | undefined {
  if (header == null) return undefined;
  const text = header.trim();
  if (!/^\d{1,9}$/.test(text)) return undefined;
  return Number(text);
}

/**
 * Builds the typed error for an error response (openai-node's `APIError.generate`). Never throws: a
 * non-JSON or malformed body still gives a typed error, with the status's code and a message that
 * quotes the start of the body.
 *
 * @param status HTTP status (>= 400)
 * @param bodyText the response body as text ('' when none)
 * @param headers the response headers (for Retry-After)
 */
export function errorFromResponse(
  status: number,
  bodyText: string,
  headers: { get(name: string): string | null },
  context: ErrorContext = {},
): ApiError {
  let code: string = codeForStatus(status);
  let message = '';
  let details: Record<string, unknown> | null = null;
  try {
    const body: unknown = JSON.parse(bodyText);
    const error = (body as { error?: unknown } | null)?.error;
    if (error && typeof error === 'object') {
      const e = error as Record<string, unknown>;
      if (typeof e.code === 'string' && e.code) code = e.code;
      if (typeof e.message === 'string') message = e.message;
      if (e.details && typeof e.details === 'object' && !Array.isArray(e.details)) {
        details = e.details as Record<string, unknown>;
      }
    } else if (typeof error === 'string') {
      message = error;
    }
  } catch {
    // Not JSON: a proxy's HTML page or plain text. Keep a short excerpt, never the whole page.
    const excerpt = bodyText.replace(/\s+/g, ' ').trim().slice(0, 200);
    if (excerpt) message = `unexpected response body: ${excerpt}`;
  }
  if (!message) message = `HTTP ${status}`;
  const Class = classFor(code, status);
  return new Class({
    status,
    code,
    message,
    details,
    retryAfter: parseRetryAfter(headers.get('retry-after')),
    requestId: context.requestId,
    request: context.request,
  });
}

/**
 * Reads `details.node_errors` in either shape (FACTS.md): the document's `{node: [{field, reason}]}` or the
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

/**
 * The request could not be sent or its answer could not be read (DNS, refused, reset, TLS, a stalled body).
 * `requestSent` false means the connection never opened (refused, host not found, connect timeout, TLS
 * verification): nothing reached the server, so a submission is definitively not made (issue 7). True means the
 * server may have acted on it: for a submission the outcome is unknown.
 */
export class ConnectionError extends ComfyError {
  readonly requestSent: boolean;
  constructor(message: string, context: ErrorContext = {}, options?: { cause?: unknown; requestSent?: boolean; code?: string }) {
    super(options?.code ?? 'connection_error', message, context, options);
    this.name = 'ConnectionError';
    this.requestSent = options?.requestSent ?? true;
  }
  static override is(value: unknown): value is ConnectionError {
    return value instanceof ConnectionError;
  }
}

/** No answer within the per-request timeout (ms). */
export class TimeoutError extends ComfyError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, context: ErrorContext = {}) {
    super('timeout', `no answer within ${timeoutMs} ms${context.request ? ` (${context.request})` : ''}`, context);
    this.name = 'TimeoutError';
    this.timeoutMs = timeoutMs;
  }
  static override is(value: unknown): value is TimeoutError {
    return value instanceof TimeoutError;
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
    this.name = 'AbortError';
    this.requestSent = options.requestSent ?? true;
  }
  static override is(value: unknown): value is AbortError {
    return value instanceof AbortError;
  }
}

/** Bad input refused before any request (a file that is not JSON, a UI-format workflow, …). */
export class InputError extends ComfyError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'InputError';
  }
  static override is(value: unknown): value is InputError {
    return value instanceof InputError;
  }
}

/**
 * A response that is not the shape the contract promises (a 200 whose body is not JSON, or not a Job, …).
 * `status` is the HTTP status when there was one; `body` the parsed JSON when it parsed (for salvaging an id).
 */
export class ResponseShapeError extends ComfyError {
  readonly status: number | undefined;
  readonly body: unknown;
  constructor(message: string, context: ErrorContext = {}, extra: { status?: number; body?: unknown; code?: string } = {}) {
    super(extra.code ?? 'bad_response', message, context);
    this.name = 'ResponseShapeError';
    this.status = extra.status;
    this.body = extra.body;
  }
  static override is(value: unknown): value is ResponseShapeError {
    return value instanceof ResponseShapeError;
  }
}

/**
 * A body larger than the client reads (issue 7: "JSON bodies are read with a size cap"): `response_too_large`,
 * naming the URL and the cap (bytes). The body is not read further; the connection is dropped.
 */
export class ResponseTooLargeError extends ResponseShapeError {
  readonly limitBytes: number;
  constructor(url: string, limitBytes: number, context: ErrorContext = {}, status?: number) {
    super(`the answer from ${url} is larger than ${describeSize(limitBytes)}; it was not read (a server should never send that much here)`, context, { status, code: 'response_too_large' });
    this.name = 'ResponseTooLargeError';
    this.limitBytes = limitBytes;
  }
}

/**
 * A redirect the client does not follow (issue 7 "Redirects"): a 3xx on a JSON endpoint (the API never redirects
 * them; usually a base URL that should be https or has a wrong path), a `Location` that is not an http(s) URL, a
 * loop, or too many hops. `location` is the target as it may be shown (a foreign query dropped).
 */
export class RedirectError extends ComfyError {
  readonly status: number;
  readonly location: string | undefined;
  constructor(message: string, status: number, location: string | undefined, context: ErrorContext = {}) {
    super('unexpected_redirect', message, context);
    this.name = 'RedirectError';
    this.status = status;
    this.location = location;
  }
  static override is(value: unknown): value is RedirectError {
    return value instanceof RedirectError;
  }
}

