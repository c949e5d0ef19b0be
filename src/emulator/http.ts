/** Small HTTP helpers of the emulator's routes: JSON answers, the error envelope, JSON request bodies, fault answers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EmulatorError, type ErrorCode } from './errors';
import type { FaultAnswer } from './faults';

/** Largest request body read, in bytes. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Answers `status` with `body` as JSON. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Answers with the error envelope of `error` and its status. */
export function sendError(res: ServerResponse, error: EmulatorError): void {
  sendJson(res, error.status, error.toEnvelope(), error.headers);
}

/** The single value of a request header (Node joins repeated unknown headers with ", "); undefined when absent or blank. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const raw = req.headers[name.toLowerCase()];
  const value = (Array.isArray(raw) ? raw.join(', ') : raw)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Reads the request body as JSON.
 * @param refusal the code of the refusal (default `invalid_workflow`, the submission's; `invalid_upload` for
 *   POST /api/v2/assets/from-hash).
 * @param options `optional`: an empty body is `undefined` (the control endpoint's release), not a refusal.
 * @throws EmulatorError 422 `refusal` when it is empty (unless optional), larger than {@link MAX_BODY_BYTES}, or not JSON.
 */
export async function readJson(
  req: IncomingMessage,
  refusal: ErrorCode = 'invalid_workflow',
  options: { optional?: boolean } = {},
): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Keep draining past the limit, so the client gets the 422 rather than a reset connection.
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  if (size > MAX_BODY_BYTES)
    throw new EmulatorError(refusal, `the request body is ${size} bytes; the emulator reads at most ${MAX_BODY_BYTES}`);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') {
    if (options.optional) return undefined;
    throw new EmulatorError(
      refusal,
      refusal === 'invalid_workflow'
        ? 'the request body is empty: send a JSON object {"workflow": {…}}'
        : 'the request body is empty: send a JSON object',
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new EmulatorError(refusal, `the request body is not JSON: ${(e as Error).message}`);
  }
}

/** Answers an injected fault's error: its status, the envelope of its code, Retry-After (seconds) when set. */
export function sendFaultAnswer(res: ServerResponse, answer: FaultAnswer): void {
  sendJson(
    res,
    answer.status,
    { error: { code: answer.code, message: answer.message } },
    answer.retryAfter === undefined ? {} : { 'retry-after': String(answer.retryAfter) },
  );
}
