/**
 * The emulator's refusals: one error type carrying a contract code, answered as the error envelope
 * (jobs-assets-api-v2.md, "Error envelope" and "Errors").
 */

/** HTTP status of every code the emulator answers with (the document's table, plus FACTS.md's additions). */
export const STATUS_OF_CODE = {
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
  // Not in the document's table: the document gives 416 for an unsatisfiable Range but no code.
  range_not_satisfiable: 416,
  // Not in the document's table: FACTS.md gives 422 for an upload whose file part comes first, but no code.
  invalid_upload: 422,
} as const;

/** A code the emulator can answer with. */
export type ErrorCode = keyof typeof STATUS_OF_CODE;

/** One problem of one node input, the document's `details.node_errors` item shape. */
export interface FieldProblem {
  field: string;
  reason: string;
}

/** `details.node_errors` of a 422 `invalid_workflow`: node id → its problems (the document's shape). */
export type NodeErrors = Record<string, FieldProblem[]>;

/**
 * A refusal the server answers with the error envelope `{"error": {code, message, details?}}` and the status
 * of its code. `headers` are added to the response (e.g. `Retry-After`, `WWW-Authenticate`).
 */
export class EmulatorError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'EmulatorError';
    this.code = code;
    this.status = STATUS_OF_CODE[code];
    this.details = details;
    this.headers = headers;
  }

  /** The envelope body of this error. */
  toEnvelope(): { error: { code: string; message: string; details?: Record<string, unknown> } } {
    return { error: { code: this.code, message: this.message, ...(this.details !== undefined ? { details: this.details } : {}) } };
  }
}

/** 404 `not_found` for a job or asset that is unknown, not the caller's, or past retention (indistinguishable). */
export function notFound(what: 'job' | 'asset', id: string): EmulatorError {
  return new EmulatorError('not_found', `no ${what} with id ${JSON.stringify(id)}`);
}
