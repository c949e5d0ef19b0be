/**
 * The emulator's refusals: one error type carrying a contract code, answered as the error envelope
 * (Job and Asset API v2, Error envelope and Errors), with the status of the core's code table.
 */
import { ERROR_STATUS } from '../core/v2/errors';

/**
 * Codes the emulator answers with that the v2 table has not: statuses the documents give without a code. Typed so
 * that none can shadow (or misspell as a copy of) a code of the core's table.
 */
const EMULATOR_ONLY_STATUS = {
  // The document gives 416 for an unsatisfiable Range but no code.
  range_not_satisfiable: 416,
  // Public sources give 422 for an upload whose file part comes first, but no code (this one is ours).
  invalid_upload: 422,
  // The self-hosted companion answers 503 with this code when its engine is down (public sources; not in the documents).
  upstream_unreachable: 503,
} as const satisfies Record<string, number> & { readonly [K in keyof typeof ERROR_STATUS]?: never };

/**
 * HTTP status of every code the emulator answers with: the core's v2 table (core/v2/errors.ts, the one table the
 * client reads too) plus {@link EMULATOR_ONLY_STATUS}.
 */
export const STATUS_OF_CODE: Readonly<Record<ErrorCode, number>> = { ...ERROR_STATUS, ...EMULATOR_ONLY_STATUS };

/** A code the emulator can answer with: one of the core's table or an emulator-only one; a typo does not compile. */
export type ErrorCode = keyof typeof ERROR_STATUS | keyof typeof EMULATOR_ONLY_STATUS;

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

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'EmulatorError';
    this.code = code;
    this.status = STATUS_OF_CODE[code];
    this.details = details;
    this.headers = headers;
  }

  /** The envelope body of this error. */
  toEnvelope(): { error: { code: string; message: string; details?: Record<string, unknown> } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details !== undefined ? { details: this.details } : {}),
      },
    };
  }
}

/** 404 `not_found` for a job or asset that is unknown, not the caller's, or past retention (indistinguishable). */
export function notFound(what: 'job' | 'asset', id: string): EmulatorError {
  return new EmulatorError('not_found', `no ${what} with id ${JSON.stringify(id)}`);
}
