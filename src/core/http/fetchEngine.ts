/**
 * The {@link HttpEngine} over a WHATWG `fetch`: in the extension, the extension host's, which honours `http.proxy`,
 * `http.proxyStrictSSL`, PAC and the system's certificates (in the extension, requests go through VS Code's
 * networking). It behaves as the undici engine does, so the transport above sees no difference:
 * - `redirect: 'manual'`: a 3xx comes back as it is, with its Location (Node's fetch, which the extension host's is,
 *   returns the real response there); the transport follows it, without credentials, or refuses it. A fetch that
 *   hides it (an opaque redirect, as a browser's does) is refused with an error that says so.
 * - A streamed body (a multipart form, a Blob, a stream) is sent with `redirect: 'error'` and `window: null`
 *   instead: with any other mode, Node's fetch tees the body to be able to send it again after a redirect, and the
 *   copy keeps the whole upload in memory (nodejs/undici#4058: 1.1 GB resident for a 1 GiB upload, 120 MB without).
 *   Nothing that takes such a body redirects; a 3xx there fails the request ({@link UNEXPECTED_REDIRECT}).
 * - `accept-encoding: identity` unless the caller set one: bytes arrive as the server sent them (a Content-Length,
 *   a Range and a hash are about those bytes), as with undici's `request()`, which decodes nothing.
 * - The body is a Node `Readable` ({@link WebStreamBody}) with the idle timeout kept here: no next byte within the
 *   request's `idleTimeoutMs` while the core waits for one aborts the fetch and fails the read with a
 *   {@link BodyIdleTimeoutError}.
 * - Network failures are fetch's `TypeError('fetch failed')` with Node's error in `cause` (`cause.code` is
 *   `ECONNREFUSED`, `ENOTFOUND`…), which the transport reads to tell whether anything was sent.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { WebStreamBody } from './bodies';
import { systemClock, type Clock } from './clock';
import type { EngineRequest, EngineResponse, HttpEngine } from './engine';

/**
 * The `fetch` the engine calls: `globalThis.fetch` or one of the same shape. Called as a plain function (no `this`).
 */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/**
 * `globalThis.fetch`, looked up at each request rather than once: the extension host installs its own (the one that
 * knows the proxy settings), and a later replacement is then still the one used.
 */
export const globalFetch: FetchFunction = (input, init) => globalThis.fetch(input, init);

/** Options of {@link FetchEngine}. */
export interface FetchEngineOptions {
  /** The clock of the idle timer (a real one, or a ManualClock that is advanced by hand; not an auto-advancing one). Default the system clock. */
  clock?: Clock;
}

/** The error code of a fetch that hid a redirect (an opaque-redirect response): it cannot be followed safely. */
const OPAQUE_REDIRECT = 'ERR_OPAQUE_REDIRECT';

/** The error code of a 3xx answering a streamed body (see the module's notes): not followed, and not readable. */
const UNEXPECTED_REDIRECT = 'ERR_UNEXPECTED_REDIRECT';

/** Sends the transport's requests with `fetch`. Nothing to close: the fetch owns its connections. */
export class FetchEngine implements HttpEngine {
  private readonly clock: Clock;

  /** @param fetchFunction the fetch to send with; in the extension the host's ({@link globalFetch}) */
  constructor(
    private readonly fetchFunction: FetchFunction,
    options: FetchEngineOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Sends one request with `redirect: 'manual'` (a streamed body: `'error'`).
   * @throws fetch's network error (`TypeError` with Node's error in `cause`); the signal's abort; an Error with code
   *   {@link OPAQUE_REDIRECT} when the fetch hid a redirect, {@link UNEXPECTED_REDIRECT} when a streamed body was
   *   answered with one.
   */
  async send(request: EngineRequest): Promise<EngineResponse> {
    // Aborts the fetch when the body is given up (an idle timeout, the consumer's destroy): frees the connection.
    const ending = new AbortController();
    const headers = { 'accept-encoding': 'identity', ...request.headers };
    const init: RequestInit & { duplex?: 'half' } = {
      method: request.method,
      headers,
      signal: AbortSignal.any([request.signal, ending.signal]),
      redirect: 'manual',
    };
    const body = request.body;
    const streamed = body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body);
    if (body instanceof Readable) {
      init.body = Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>;
      init.duplex = 'half'; // a streamed request body (fetch requires saying so)
    } else if (body !== undefined) {
      init.body = body;
    }
    if (streamed) {
      // No copy of the body kept for a redirect (see the module's notes): only this pair of settings avoids it.
      init.redirect = 'error';
      init.window = null;
    }
    const fetchFunction = this.fetchFunction;
    let res: Response;
    try {
      res = await fetchFunction(request.url.href, init);
    } catch (err) {
      if (
        streamed &&
        !request.signal.aborted &&
        (err as { cause?: { message?: unknown } }).cause?.message === 'unexpected redirect'
      ) {
        throw Object.assign(
          new Error(
            'the server answered with a redirect, which is not followed for a request that sends a file or a stream',
          ),
          { code: UNEXPECTED_REDIRECT },
        );
      }
      throw err;
    }
    if (res.type === 'opaqueredirect') {
      await res.body?.cancel().catch(() => undefined);
      throw Object.assign(
        new Error(
          `the fetch in use hides redirects (an opaque redirect, as a browser's fetch gives), so the answer cannot be read; it needs a fetch that returns the 3xx itself with redirect: 'manual', as Node's does`,
        ),
        { code: OPAQUE_REDIRECT },
      );
    }
    const stream = res.body as unknown as WebReadableStream<Uint8Array> | null;
    return {
      status: res.status,
      headers: res.headers,
      body: new WebStreamBody(stream, request.idleTimeoutMs, this.clock, (err) => ending.abort(err ?? undefined)),
    };
  }

  /** The platform's FormData, the one this fetch encodes (and streams: a Blob part is read as it is sent). */
  formData(): FormData {
    return new FormData();
  }

  /** Nothing to release: the fetch's connections are its own. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
