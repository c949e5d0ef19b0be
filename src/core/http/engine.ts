/**
 * The HTTP engine under the {@link Transport}: the one place where bytes go on the wire, injected (openai-node's
 * injectable `fetch`: the core takes its transport injected), so that the core does not care which is used (undici in
 * Node, VS Code's networking in the extension):
 * - {@link UndiciEngine} (`undiciEngine.ts`): undici's `request()` through an `EnvHttpProxyAgent`; the default in
 *   Node (the CLI, the tests, the benchmarks);
 * - {@link FetchEngine} (`fetchEngine.ts`): a WHATWG `fetch`, in the extension the extension host's, which carries
 *   the user's `http.proxy`, `http.proxyStrictSSL`, PAC and the system's certificates.
 *
 * An engine sends exactly what it is given: it never follows a redirect (the transport does, without credentials)
 * and adds no credential. Everything above it (credentials only to their origin, timeouts, bounded reads, typed
 * errors) is the transport's, the same whichever engine runs.
 */
import type { Readable } from 'node:stream';

/** Response headers, read by name (case-insensitive); repeated headers joined by `, `. */
export interface HeaderReader {
  get(name: string): string | null;
}

/**
 * A response body as the core reads it: a Node `Readable` of Buffers (so downloads, the event stream and the bounded
 * JSON reads work on either engine), with undici's two helpers:
 * - `text()`: the whole body as UTF-8 (unbounded: the transport's bounded reads do not use it);
 * - `dump()`: discards the body (reads at most 128 KiB of it so the connection can be reused, then destroys it);
 *   resolves once the body is closed, whatever happened to it.
 */
export type ResponseBody = Readable & { text(): Promise<string>; dump(): Promise<void> };

/**
 * A request body: text, bytes, a stream, or a multipart form made by the same engine's {@link HttpEngine.formData}
 * (undici's FormData and the platform's are different classes, and neither engine sends the other's).
 */
export type RequestBody = string | Buffer | Readable | FormData;

/** One request as the transport hands it to an engine. */
export interface EngineRequest {
  method: string;
  url: URL;
  /** Lower-case names; sent as they are (the transport has already decided about credentials). */
  headers: Record<string, string>;
  body?: RequestBody;
  /** Aborts the request, and its body once the headers are in (the caller's signal composed with the timeout). */
  signal: AbortSignal;
  /**
   * The idle timeout of the body, ms: while the core waits for the next byte of the body, none within this time ends
   * the body with an error that {@link isBodyIdleTimeout} recognises. 0: none (an event stream, watched by its own
   * rule). Time spent while the consumer is not reading (back-pressure) does not count: a slow disk is no stall.
   */
  idleTimeoutMs: number;
}

/** A response whose headers have arrived. */
export interface EngineResponse {
  status: number;
  headers: HeaderReader;
  body: ResponseBody;
}

/** What sends the transport's requests. */
export interface HttpEngine {
  /**
   * Sends a request; resolves once the response headers arrive, whatever the status (a 3xx included: never followed).
   * @throws the platform's network error, whose `code` or `cause.code` is Node's or undici's (`ECONNREFUSED`,
   *   `ENOTFOUND`, `UND_ERR_CONNECT_TIMEOUT`, a TLS code…): the transport tells from it whether anything was sent; or
   *   the signal's abort.
   */
  send(request: EngineRequest): Promise<EngineResponse>;
  /** An empty multipart form this engine can send as a body, streamed in insertion order (a file-backed Blob from
   * `fs.openAsBlob` is read from disk as it is sent, never held whole in memory). */
  formData(): FormData;
  /** Releases the engine's pooled connections (only of what it made itself). */
  close(): Promise<void>;
}

/** The code of the error an engine ends a body with when no byte came within the idle timeout (see {@link EngineRequest}). */
export const BODY_IDLE_TIMEOUT = 'ERR_BODY_IDLE_TIMEOUT';

/** undici's code for the same (its `bodyTimeout`). */
const UNDICI_BODY_TIMEOUT = 'UND_ERR_BODY_TIMEOUT';

/** The error that ends a stalled body on an engine that keeps the idle timer itself ({@link FetchEngine}). */
export class BodyIdleTimeoutError extends Error {
  readonly code = BODY_IDLE_TIMEOUT;

  /** @param idleTimeoutMs the idle timeout that passed, ms */
  constructor(readonly idleTimeoutMs: number) {
    super(`no byte of the body within ${idleTimeoutMs} ms`);
    this.name = 'BodyIdleTimeoutError';
  }
}

/** True when `err` (or its `cause`) is a body that stalled past its idle timeout, on either engine. */
export function isBodyIdleTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return [e?.code, e?.cause?.code].some((code) => code === BODY_IDLE_TIMEOUT || code === UNDICI_BODY_TIMEOUT);
}
