/**
 * How the transport names what went wrong below the HTTP status: the code of a network failure and whether it means
 * nothing was sent (a connection that never opened), a one-line description of that failure, the first field at fault
 * of a body that failed its schema, and the request id a response carries (`X-Svc-Request-Id`, or the public
 * `X-Comfy-Request-Id`).
 */
import { BODY_IDLE_TIMEOUT } from './engine';

/** Network error codes that mean the connection never opened, so nothing of the request reached the server. */
export const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The error code of a network failure (undici and fetch wrap Node's in `cause`). */
export function networkCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return e?.cause?.code ?? e?.code;
}

/** A schema failure in one line naming the first field at fault: `field "outputs[0].id": expected string`. */
export function describeShapeProblem(error: {
  message: string;
  issues?: readonly { path: readonly PropertyKey[]; message: string }[];
}): string {
  const issue = error.issues?.[0];
  if (!issue) return error.message.split('\n')[0];
  const field = issue.path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
    '',
  );
  const more = (error.issues?.length ?? 1) > 1 ? ` (and ${error.issues!.length - 1} more)` : '';
  return `${field ? `field "${field}"` : 'the body'}: ${issue.message.split('\n')[0]}${more}`;
}

/** Reads the request id from response headers: the documents' name first, then the public one. */
export function requestIdOf(headers: { get(name: string): string | null }): string | undefined {
  return headers.get('x-svc-request-id') ?? headers.get('x-comfy-request-id') ?? undefined;
}

/** A short description of a network failure from Node/undici error codes (as either engine reports them). */
export function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.cause?.code ?? e?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timed out';
    case 'UND_ERR_BODY_TIMEOUT':
    case BODY_IDLE_TIMEOUT:
      return 'the server stopped sending (no byte within the timeout)';
    default:
      return e?.cause?.message ?? e?.message ?? String(err);
  }
}
