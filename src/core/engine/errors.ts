/**
 * The errors of the v1 API (Cloud API v1 (deprecated), Errors: non-2xx statuses fail a request; a submission answer can
 * carry `error` in place of `prompt_id`; error bodies of v1 are "not shown"). Read tolerantly (spec README): the public
 * OpenAPI's `{code, message}`, the engine's `{error: {type, message, details, extra_info}, node_errors}` (public
 * sources: `POST /api/prompt` can answer an error body with `error` and `node_errors`), `{error: "text"}`, `{message}`,
 * or no JSON at all. The classes are the ones both APIs of the service share (../http/errors.ts `SHARED_ERRORS`), so
 * callers, retries and the words shown treat both APIs alike.
 */
import {
  ApiError,
  ForbiddenError,
  InvalidWorkflowError,
  NotFoundError,
  RateLimitedError,
  SHARED_ERRORS,
  UnauthorizedError,
  UpstreamError,
  bodyExcerpt,
  genericCodeForStatus,
  parseRetryAfter,
  type ApiErrorClass,
  type ApiErrorInit,
  type ErrorContext,
} from '../http/errors';

/**
 * The engine refused a prompt (Cloud API v1 (deprecated), Errors, rule 2): `code` is `invalid_workflow`, as v2's 422,
 * and `nodeErrors` hold the engine's `node_errors` in the shared {@link InvalidWorkflowError} shape (`{nodeId, field,
 * reason, classType}`), so the Problems entries and messages of v2 serve v1 unchanged. `engineType` is the engine's
 * own `error.type` (`prompt_outputs_failed_validation`, `prompt_no_outputs`, …) when it gave one. `status` is the
 * HTTP status of the answer (a 2xx when the `error` came in a success body). No job was created.
 */
export class V1PromptError extends InvalidWorkflowError {
  readonly engineType: string | undefined;
  constructor(init: ApiErrorInit & { engineType?: string }) {
    super(init);
    this.engineType = init.engineType;
  }
}

/**
 * The class of a code and status: the service's shared codes first, then by status (any 404 not found, any 5xx
 * upstream). A code only v2 names (`queue_full`, ...) keeps its `code` on the error of its status.
 */
function classFor(code: string, status: number): ApiErrorClass {
  if (Object.prototype.hasOwnProperty.call(SHARED_ERRORS, code))
    return SHARED_ERRORS[code as keyof typeof SHARED_ERRORS].type;
  if (status === 401) return UnauthorizedError;
  if (status === 403) return ForbiddenError;
  if (status === 404) return NotFoundError;
  if (status === 429) return RateLimitedError;
  if (status >= 500) return UpstreamError;
  return ApiError;
}

/** A plain object, else undefined. */
function objectOf(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** True when `node_errors` holds at least one node. */
function hasNodeErrors(v: unknown): boolean {
  const o = objectOf(v);
  return o !== undefined && Object.keys(o).length > 0;
}

/**
 * The {@link V1PromptError} of a prompt answer that carries `error` (any status), or undefined when `body` has no
 * `error`. Message: the engine's `error.message` (and `details`), or the `error` string.
 */
export function promptErrorOf(body: unknown, status: number, context: ErrorContext = {}): V1PromptError | undefined {
  const b = objectOf(body);
  if (!b || b.error === undefined || b.error === null) return undefined;
  const e = objectOf(b.error);
  const message = e
    ? [e.message, e.details].filter((p): p is string => typeof p === 'string' && p.length > 0).join(': ')
    : typeof b.error === 'string'
      ? b.error
      : '';
  return new V1PromptError({
    status,
    code: 'invalid_workflow',
    message: message || 'the engine refused the prompt',
    details: { node_errors: b.node_errors ?? {}, error: b.error },
    engineType: e && typeof e.type === 'string' ? e.type : undefined,
    requestId: context.requestId,
    request: context.request,
  });
}

/**
 * The transport's {@link import('../http/errors').ErrorFactory} for v1: a body with `error` and `node_errors`
 * (or an engine `error` object with a `type`) is a {@link V1PromptError}; otherwise the code is the body's `code`
 * (public OpenAPI `ErrorResponse`), else the status's generic code, the message the body's `message` / `error`, or a
 * short escaped excerpt of a non-JSON body; the class is the shared one for that code or status. Never throws.
 */
export function v1ErrorFromResponse(
  status: number,
  bodyText: string,
  headers: { get(name: string): string | null },
  context: ErrorContext = {},
): ApiError {
  let code = genericCodeForStatus(status);
  if (status === 429) code = 'rate_limited';
  let message = '';
  try {
    const body = objectOf(JSON.parse(bodyText));
    if (body) {
      const engineError = objectOf(body.error);
      if (hasNodeErrors(body.node_errors) || (engineError && typeof engineError.type === 'string')) {
        const refused = promptErrorOf(body, status, context);
        if (refused) return refused;
      }
      if (typeof body.code === 'string' && body.code) code = body.code;
      if (typeof body.message === 'string') message = body.message;
      else if (typeof body.error === 'string') message = body.error;
      else if (engineError && typeof engineError.message === 'string') message = engineError.message;
    }
  } catch {
    const excerpt = bodyExcerpt(bodyText);
    if (excerpt) message = `unexpected response body: ${excerpt}`;
  }
  const Class = classFor(code, status);
  return new Class({
    status,
    code,
    message: message || `HTTP ${status}`,
    details: null,
    retryAfter: parseRetryAfter(headers.get('retry-after')),
    requestId: context.requestId,
    request: context.request,
  });
}
