/**
 * The errors of the v2 Job and Asset API: its code table, one class per code, and the factory that reads its error
 * envelope `{"error": {code, message, details}}`. Rules: Job and Asset API v2, Error envelope and Errors; codes
 * servers send beyond that table, from public sources (404 variants such as `job_not_found`, 429 `too_many_streams`,
 * 501 `not_implemented`, 409 `asset_in_use`).
 *
 * Codes are data: {@link V2_ERRORS} is the one table (code → HTTP status and class), read by the client's factory,
 * the emulator (which answers with the same statuses) and the tests. The shared base ({@link ApiError}, the
 * connection errors, the generic factory) and the refusals every API of the service shares (not found, unauthorized,
 * forbidden, rate limited, upstream, invalid workflow: {@link SHARED_ERRORS}) are in `../http/errors.ts`.
 */
import {
  ApiError,
  NotFoundError,
  SHARED_ERRORS,
  UpstreamError,
  bodyExcerpt,
  parseRetryAfter,
  type ApiErrorClass,
  type ErrorContext,
} from '../http/errors';

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
/** 429 `deployment_not_ready`: the serverless deployment is starting; retry after `retryAfter`. */
export class DeploymentNotReadyError extends ApiError {}
/** 422 `deployment_stopped`: terminal until an operator restarts the deployment. */
export class DeploymentStoppedError extends ApiError {}
/** 429 `too_many_streams`: too many event streams open; poll instead (not in the document; public sources). */
export class TooManyStreamsError extends ApiError {}
/** 501 `not_implemented`: this surface does not stream events; poll (not in the document; public sources). */
export class NotImplementedError extends ApiError {}
/** 409 `asset_in_use`: the asset is referenced by a job and cannot be deleted yet. */
export class AssetInUseError extends ApiError {}

/** The class made for one code. */
type V2ErrorClass = ApiErrorClass;

/**
 * THE table of v2 error codes: each code's HTTP status and class. Job and Asset API v2, Errors, plus the codes public
 * sources add (`too_many_streams`, `not_implemented`, `asset_in_use`).
 */
export const V2_ERRORS = {
  invalid_workflow: SHARED_ERRORS.invalid_workflow,
  workflow_format_ui: { status: 422, type: WorkflowFormatUiError },
  missing_asset: { status: 422, type: MissingAssetError },
  idempotency_key_reuse: { status: 422, type: IdempotencyKeyReuseError },
  hash_mismatch: { status: 409, type: HashMismatchError },
  blob_not_found: { status: 404, type: BlobNotFoundError },
  queue_full: { status: 429, type: QueueFullError },
  insufficient_credits: { status: 402, type: InsufficientCreditsError },
  not_found: SHARED_ERRORS.not_found,
  unauthorized: SHARED_ERRORS.unauthorized,
  forbidden: SHARED_ERRORS.forbidden,
  rate_limited: SHARED_ERRORS.rate_limited,
  upstream_error: SHARED_ERRORS.upstream_error,
  deployment_not_ready: { status: 429, type: DeploymentNotReadyError },
  deployment_stopped: { status: 422, type: DeploymentStoppedError },
  too_many_streams: { status: 429, type: TooManyStreamsError },
  not_implemented: { status: 501, type: NotImplementedError },
  asset_in_use: { status: 409, type: AssetInUseError },
} as const satisfies Record<string, { status: number; type: V2ErrorClass }>;

/** A code of the v2 table. */
type V2ErrorCode = keyof typeof V2_ERRORS;

/** Every error code of the table. */
export const API_ERROR_CODES = Object.keys(V2_ERRORS) as V2ErrorCode[];

/** The HTTP status of every v2 code (a view of {@link V2_ERRORS}): what the emulator answers with. */
export const ERROR_STATUS = Object.fromEntries(API_ERROR_CODES.map((code) => [code, V2_ERRORS[code].status])) as {
  readonly [K in V2ErrorCode]: (typeof V2_ERRORS)[K]['status'];
};

/** The code to assume when the body names none: the document's code for that HTTP status. */
function codeForStatus(status: number): string {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 402:
      return 'insufficient_credits';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 429:
      return 'rate_limited';
    case 501:
      return 'not_implemented';
    default:
      return status >= 500 ? 'upstream_error' : `http_${status}`;
  }
}

/** True for a code of the table (an own key: `toString` or `__proto__` from a server is no code of ours). */
function isV2Code(code: string): code is V2ErrorCode {
  return Object.prototype.hasOwnProperty.call(V2_ERRORS, code);
}

/** The class for a code and status. Any 404 is a NotFoundError whatever its code (servers also answer
 * `job_not_found`, `asset_not_found`); any 5xx
 * without a known code is an UpstreamError. */
function classFor(code: string, status: number): V2ErrorClass {
  if (isV2Code(code)) return V2_ERRORS[code].type;
  if (status === 404) return NotFoundError;
  if (status >= 500) return UpstreamError;
  return ApiError;
}

/**
 * Builds the typed error of a v2 error response (openai-node's `APIError.generate`): the class of its
 * `error.code` in {@link V2_ERRORS}. Never throws: a non-JSON or malformed body still gives a typed error, with the
 * status's code and a message that quotes a short escaped excerpt of the body. It is the `errorFactory` of the
 * transport of a `V2Client` (http/transport.ts).
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
    const excerpt = bodyExcerpt(bodyText);
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
