/**
 * The HTTP transport of the client core. One instance per configured server. It sends through an injected
 * {@link HttpEngine} (engine.ts): undici by default in Node, the extension host's `fetch` in the extension (VS Code's
 * networking); every rule below holds the same on either.
 *
 * Rules it implements:
 * - `Authorization: Bearer <key>` (Job and Asset API v2, Authentication) is sent only to the configured
 *   origin; never to another origin, and never on a followed redirect (GET /api/v2/assets/{id}/content: the signed
 *   URL of its 302 carries its own authorization).
 * - Request ids: `X-Svc-Request-Id`, or the public `X-Comfy-Request-Id` (spec README), are kept on every
 *   result, error and log line.
 * - Per-request timeout composed with the caller's AbortSignal. Proxies are the engine's: HTTP(S)_PROXY / NO_PROXY
 *   for undici, VS Code's `http.proxy` and PAC for the host's fetch.
 * - Untrusted bodies (memory and time are bounded): a JSON body is read up to a cap (32 MiB, then
 *   `response_too_large`); every body read has an idle timeout (no next byte within the timeout ends it); a 3xx on
 *   a JSON endpoint is a {@link RedirectError} saying where it pointed.
 * - A connection that never opened (refused, host not found, connect timeout, TLS verification) is a
 *   ConnectionError with `requestSent: false`: nothing was sent.
 * - No secret in a log line: headers are never logged, and a URL of a foreign origin (a signed URL carries
 *   its authorization in the query) is logged without its query.
 */
import type { Dispatcher } from 'undici';
import { defaultEngine } from './defaultEngine';
import { isBodyIdleTimeout, type HeaderReader, type HttpEngine, type RequestBody, type ResponseBody } from './engine';
import {
  AbortError,
  ApiError,
  ConnectionError,
  RedirectError,
  ResponseShapeError,
  ResponseTooLargeError,
  TimeoutError,
  errorFromStatus,
  type ErrorContext,
  type ErrorFactory,
} from './errors';
import { systemClock, type Clock } from './clock';
import { normalizeBaseUrl } from './baseUrl';
import { NOT_SENT_CODES, describeNetworkError, describeShapeProblem, networkCode, requestIdOf } from './failures';
import { userAgent } from '../util/version';

/** One line of the request log: no header, no body, no secret. */
export interface RequestLogEntry {
  method: string;
  /** The URL, redacted: a foreign origin's query is dropped. */
  url: string;
  status?: number;
  requestId?: string;
  /** Time to the response headers (or to the failure), ms. */
  durationMs: number;
  /** The error code when the request failed. */
  error?: string;
}

/** How to reach one server. */
export interface TransportOptions {
  /** Base URL, optionally with a path prefix (e.g. a gateway mounting a serverless deployment under `/deployment/<id>`). */
  baseUrl: string;
  /** API key sent as `Authorization: Bearer` to the base URL's origin only; none for an unauthenticated server. */
  apiKey?: string;
  /** User-Agent; default names the core and its version. */
  userAgent?: string;
  /** Time allowed until the response headers, and for each next byte of a body (idle timeout), ms. Default 30 000. */
  timeoutMs?: number;
  /**
   * The clock of the wait for the response headers (`timeoutMs`): its `sleep` decides when that wait is over. Default
   * the system clock. A test passes a ManualClock and advances it once the server has the request, so a timeout
   * happens when the test says, on any machine (not an auto-advancing one: every request would time out at once).
   * The idle timeout of a body is the engine's.
   */
  timeoutClock?: Clock;
  /** The largest JSON body read, bytes. Default 32 MiB ({@link DEFAULT_MAX_JSON_BYTES}). */
  maxJsonBytes?: number;
  /**
   * What sends the requests (engine.ts): `new FetchEngine(globalFetch)` in the extension. Default: the build's
   * default engine (undici in Node; see defaultEngine.ts), made for this transport and closed with it. One given here
   * is the caller's to close.
   */
  engine?: HttpEngine;
  /** For the default undici engine only: its dispatcher (default an EnvHttpProxyAgent, which honours HTTP_PROXY,
   * HTTPS_PROXY, NO_PROXY). Not used when `engine` is given. */
  dispatcher?: Dispatcher;
  /** Receives one entry per request. */
  log?: (entry: RequestLogEntry) => void;
  /**
   * Makes the ApiError of an error response from its status, body text (at most 1 MiB), headers and request
   * context: each API reads its own error body (v2: `errorFromResponse` of ../v2/errors.ts, passed by V2Client).
   * Default {@link errorFromStatus}: the status alone, whatever the body.
   */
  errorFactory?: ErrorFactory;
}

/** Per-request options. */
export interface RequestOptions {
  /** JSON body (serialised here) or a raw body. */
  json?: unknown;
  /** A raw body: bytes, a stream, or a multipart form from {@link Transport.formData} (streamed in insertion order). */
  body?: RequestBody;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the transport's timeout for the response headers, ms. */
  timeoutMs?: number;
  /** Overrides the idle timeout of the body (the wait for each next byte), ms; 0: none (an event stream, whose
   * watcher has its own idle rule). Default: the transport's timeout. */
  idleTimeoutMs?: number;
  /** false: withhold credentials even from the configured origin (a followed redirect). Default true. */
  credentials?: boolean;
}

/** A response whose headers have arrived; its body is still to be read. */
export interface RawResponse {
  status: number;
  headers: HeaderReader;
  /** The URL that was requested (the origin that host-relative links in the body resolve against). */
  url: URL;
  requestId: string | undefined;
  /** A Node Readable on either engine (engine.ts {@link ResponseBody}). */
  body: ResponseBody;
}

/** A parsed JSON response. */
interface JsonResponse<T> {
  status: number;
  data: T;
  url: URL;
  requestId: string | undefined;
  headers: { get(name: string): string | null };
}

/** Anything with zod's `safeParse`, so the transport does not depend on zod's types. */
export interface Schema<T> {
  safeParse(value: unknown):
    | { success: true; data: T }
    | {
        success: false;
        error: { message: string; issues?: readonly { path: readonly PropertyKey[]; message: string }[] };
      };
}

/** The default cap of a JSON body, bytes (32 MiB: far above any job or listing, far below a runaway body). */
const DEFAULT_MAX_JSON_BYTES = 32 * 1024 * 1024;
/** The cap of an error body read for its envelope, bytes: an error is never that large; past it, the status alone. */
const MAX_ERROR_BYTES = 1024 * 1024;

/** HTTP transport bound to one base URL. Close it to release its connections. */
export class Transport {
  /** Normalised base URL (no trailing slash). */
  readonly baseUrl: string;
  /** The only origin credentials are sent to. */
  readonly origin: string;
  private readonly apiKey: string | undefined;
  private readonly ua: string;
  private readonly timeoutMs: number;
  private readonly timeoutClock: Clock;
  private readonly maxJsonBytes: number;
  /** What sends the requests. */
  readonly engine: HttpEngine;
  private readonly ownsEngine: boolean;
  private readonly log: ((entry: RequestLogEntry) => void) | undefined;
  private readonly errorFactory: ErrorFactory;

  /** @throws InputError `bad_base_url` for a base URL that is not http(s). */
  constructor(options: TransportOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.origin = new URL(this.baseUrl).origin;
    this.apiKey = options.apiKey || undefined;
    this.ua = options.userAgent ?? userAgent();
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.timeoutClock = options.timeoutClock ?? systemClock;
    this.maxJsonBytes = options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES;
    this.ownsEngine = !options.engine;
    this.engine = options.engine ?? defaultEngine({ dispatcher: options.dispatcher });
    this.log = options.log;
    this.errorFactory = options.errorFactory ?? errorFromStatus;
  }

  /** The URL of an API path under the base URL (keeps the base's path prefix): `url('/api/v2/jobs')`. */
  url(path: string): URL {
    return new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`));
  }

  /** True when `url` is on the configured origin, the only one that gets credentials. */
  isOwnOrigin(url: URL): boolean {
    return url.origin === this.origin;
  }

  /** The URL as it may appear in a log or message: a foreign origin's query (a signature) is dropped. */
  redact(url: URL): string {
    return this.isOwnOrigin(url) ? url.href : `${url.origin}${url.pathname}`;
  }

  /**
   * Sends a request and returns once the response headers arrive (any status); the caller reads or dumps
   * the body. The timeout covers only the wait for the headers.
   * @throws AbortError when `signal` aborts; TimeoutError; ConnectionError when no answer could be had.
   */
  async send(method: string, target: URL | string, options: RequestOptions = {}): Promise<RawResponse> {
    const url = typeof target === 'string' ? this.url(target) : target;
    const headers: Record<string, string> = { 'user-agent': this.ua, ...options.headers };
    if (this.apiKey && options.credentials !== false && this.isOwnOrigin(url)) {
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const context: ErrorContext = { request: `${method} ${this.redact(url)}` };
    if (options.signal?.aborted) throw new AbortError('aborted before sending', context, { requestSent: false });
    const timer = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
    const timing = new AbortController();
    void this.timeoutClock.sleep(timeoutMs, timing.signal).then(
      () => timer.abort(),
      () => undefined,
    );
    const started = Date.now();
    try {
      // The idle timeout of the body: no next byte within it ends a stalled body (memory and time are bounded).
      const res = await this.engine.send({
        method,
        url,
        headers,
        body,
        signal,
        idleTimeoutMs: options.idleTimeoutMs ?? this.timeoutMs,
      });
      const requestId = requestIdOf(res.headers);
      this.log?.({ method, url: this.redact(url), status: res.status, requestId, durationMs: Date.now() - started });
      return { status: res.status, headers: res.headers, url, requestId, body: res.body };
    } catch (err) {
      const code = networkCode(err);
      const failure = options.signal?.aborted
        ? new AbortError('aborted', context)
        : timer.signal.aborted
          ? new TimeoutError(timeoutMs, context)
          : code !== undefined && NOT_SENT_CODES.has(code)
            ? new ConnectionError(`nothing was sent: ${describeNetworkError(err)} at ${url.origin}`, context, {
                cause: err,
                requestSent: false,
                code: code === 'ECONNREFUSED' ? 'connection_refused' : 'connection_failed',
                hint: `is the server running at ${this.baseUrl}?`,
              })
            : new ConnectionError(`could not reach ${this.redact(url)}: ${describeNetworkError(err)}`, context, {
                cause: err,
              });
      this.log?.({ method, url: this.redact(url), durationMs: Date.now() - started, error: failure.code });
      throw failure;
    } finally {
      timing.abort();
    }
  }

  /**
   * Sends a request and parses a JSON answer with `schema`. An error status becomes the typed {@link ApiError}
   * of its code; a 2xx whose body does not fit the schema becomes a ResponseShapeError.
   * @param expect the success statuses (default any 2xx)
   */
  async json<T>(
    method: string,
    target: URL | string,
    schema: Schema<T>,
    options: RequestOptions & { expect?: number[] } = {},
  ): Promise<JsonResponse<T>> {
    const res = await this.send(method, target, options);
    return this.parse(method, res, schema, options);
  }

  /**
   * Reads a response (from {@link send}) as JSON of `schema`: a 3xx is a {@link RedirectError} (JSON endpoints are
   * never redirected), another non-success status its typed {@link ApiError}, a body over `maxJsonBytes` a
   * {@link ResponseTooLargeError}, a success whose body does not fit a {@link ResponseShapeError} naming the field
   * (with the status and the parsed body, so a caller can salvage what it needs).
   */
  async parse<T>(
    method: string,
    res: RawResponse,
    schema: Schema<T>,
    options: RequestOptions & { expect?: number[] } = {},
  ): Promise<JsonResponse<T>> {
    if (res.status >= 300 && res.status < 400) {
      await res.body.dump().catch(() => undefined);
      throw this.redirectError(method, res);
    }
    const ok = options.expect ? options.expect.includes(res.status) : res.status >= 200 && res.status < 300;
    if (!ok) throw await this.failure(res, options);
    const text = await this.readText(res, this.maxJsonBytes, options);
    const where = `${method} ${this.redact(res.url)}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ResponseShapeError(
        `${where} answered ${res.status} with a body that is not JSON`,
        { requestId: res.requestId, request: where },
        { status: res.status },
      );
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new ResponseShapeError(
        `${where} answered ${res.status} with a body the client cannot use: ${describeShapeProblem(parsed.error)}`,
        { requestId: res.requestId, request: where },
        { status: res.status, body: value },
      );
    }
    return { status: res.status, data: parsed.data, url: res.url, requestId: res.requestId, headers: res.headers };
  }

  /** The error for a 3xx that is not followed: where it pointed, or that its Location is not an http(s) URL. */
  redirectError(method: string, res: RawResponse): RedirectError {
    const raw = res.headers.get('location');
    const where = `${method} ${this.redact(res.url)}`;
    const context = { requestId: res.requestId, request: where };
    if (!raw)
      return new RedirectError(
        `${where} answered ${res.status}, a redirect without a Location`,
        res.status,
        undefined,
        context,
      );
    let target: URL | undefined;
    try {
      target = new URL(raw, res.url);
    } catch {
      target = undefined;
    }
    if (!target || (target.protocol !== 'http:' && target.protocol !== 'https:')) {
      const shown = JSON.stringify(raw.length > 100 ? `${raw.slice(0, 100)}…` : raw);
      return new RedirectError(
        `${where} answered ${res.status}, a redirect to ${shown}, which is not an http(s) URL; it was not followed`,
        res.status,
        shown,
        context,
      );
    }
    const shown = this.redact(target);
    return new RedirectError(
      `${where} answered ${res.status}, a redirect to ${shown}; the API does not redirect its JSON requests, so it was not followed: if that address is right, set the base URL to it (credentials are sent only to the base URL)`,
      res.status,
      shown,
      context,
    );
  }

  /** Reads a non-2xx response's body (at most 1 MiB) and returns its typed error (consumes the body). */
  async failure(res: RawResponse, options: RequestOptions = {}): Promise<ApiError> {
    const text = await this.readText(res, MAX_ERROR_BYTES, options).catch(() => '');
    return this.errorOf(res, text);
  }

  private errorOf(res: RawResponse, text: string): ApiError {
    return this.errorFactory(res.status, text, res.headers, {
      requestId: res.requestId,
      request: `${this.redact(res.url)}`,
    });
  }

  /**
   * Reads the whole body as UTF-8 text, at most `limit` bytes: past it, the body is destroyed and a
   * {@link ResponseTooLargeError} thrown; nothing accumulates without bound. The idle timeout is the transport's
   * (set on the request), so a stalled body ends as a ConnectionError.
   */
  private async readText(res: RawResponse, limit: number, options: RequestOptions): Promise<string> {
    return (await this.readBytes(res, limit, options)).toString('utf8');
  }

  /**
   * Reads the whole body as the exact bytes received, at most `limit` bytes (past it the body is destroyed and a
   * {@link ResponseTooLargeError} thrown), with the same idle timeout and abort handling as a JSON body. For a body
   * returned unchanged (the model router's native output: Model router API, What the service does, "forwarded
   * unchanged").
   * @throws ResponseTooLargeError; ConnectionError when the body stalls or breaks off; AbortError when `signal` aborts.
   */
  async readBytes(res: RawResponse, limit: number, options: RequestOptions = {}): Promise<Buffer> {
    const declared = Number(res.headers.get('content-length') ?? NaN);
    const context = { requestId: res.requestId, request: this.redact(res.url) };
    if (Number.isFinite(declared) && declared > limit) {
      res.body.destroy();
      throw new ResponseTooLargeError(this.redact(res.url), limit, context, res.status);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > limit) {
          res.body.destroy();
          throw new ResponseTooLargeError(this.redact(res.url), limit, context, res.status);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof ResponseTooLargeError) throw err;
      if (options.signal?.aborted) throw new AbortError('aborted', context);
      const stalled = isBodyIdleTimeout(err);
      throw new ConnectionError(
        stalled
          ? `the answer from ${this.redact(res.url)} stalled: no byte for ${options.idleTimeoutMs ?? this.timeoutMs} ms`
          : `the answer from ${this.redact(res.url)} broke off: ${describeNetworkError(err)}`,
        context,
        { cause: err },
      );
    }
    return Buffer.concat(chunks, size);
  }

  /**
   * An empty multipart form that this transport's engine can send as a `body` (undici's FormData and the platform's
   * are not interchangeable): append the metadata parts, then a file-backed Blob (`fs.openAsBlob`), streamed from disk.
   */
  formData(): FormData {
    return this.engine.formData();
  }

  /** Releases pooled connections (only of an engine this transport made). */
  async close(): Promise<void> {
    if (this.ownsEngine) await this.engine.close();
  }
}
