/**
 * The HTTP transport of the client core, on undici. One instance per configured server.
 *
 * Rules it implements:
 * - `Authorization: Bearer <key>` (jobs-assets-api-v2.md, "Authentication") is sent only to the configured
 *   origin; never to another origin, and never on a followed redirect (FACTS.md, "v2 assets").
 * - Request ids: `X-Svc-Request-Id`, or the public `X-Comfy-Request-Id` (spec README), are kept on every
 *   result, error and log line.
 * - Per-request timeout composed with the caller's AbortSignal; HTTP(S)_PROXY / NO_PROXY respected.
 * - No secret in a log line: headers are never logged, and a URL of a foreign origin (a signed URL carries
 *   its authorization in the query) is logged without its query.
 */
import { EnvHttpProxyAgent, request, type Dispatcher, type FormData } from 'undici';
import type { Readable } from 'node:stream';
import {
  AbortError,
  ApiError,
  ConnectionError,
  ResponseShapeError,
  TimeoutError,
  errorFromResponse,
  type ErrorContext,
} from './errors';
import { normalizeBaseUrl } from './surface';
import { userAgent } from './version';

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
  /** Base URL, optionally with a path prefix (a serverless deployment's `/deployment/<id>`). */
  baseUrl: string;
  /** API key sent as `Authorization: Bearer` to the base URL's origin only; none for an unauthenticated server. */
  apiKey?: string;
  /** User-Agent; default names the core and its version. */
  userAgent?: string;
  /** Time allowed until the response headers (and, for JSON, the whole body), ms. Default 30 000. */
  timeoutMs?: number;
  /** undici dispatcher; default an EnvHttpProxyAgent (honours HTTP_PROXY, HTTPS_PROXY, NO_PROXY). */
  dispatcher?: Dispatcher;
  /** Receives one entry per request. */
  log?: (entry: RequestLogEntry) => void;
}

/** Per-request options. */
export interface RequestOptions {
  /** JSON body (serialised here) or a raw body. */
  json?: unknown;
  /** A raw body: bytes, a stream, or multipart FormData (streamed by undici in insertion order). */
  body?: string | Buffer | Readable | FormData;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the transport's timeout, ms. */
  timeoutMs?: number;
  /** false: withhold credentials even from the configured origin (a followed redirect). Default true. */
  credentials?: boolean;
}

/** A response whose headers have arrived; its body is still to be read. */
export interface RawResponse {
  status: number;
  headers: { get(name: string): string | null };
  /** The URL that was requested (the origin that host-relative links in the body resolve against). */
  url: URL;
  requestId: string | undefined;
  body: Readable & { text(): Promise<string>; dump(): Promise<void> };
}

/** A parsed JSON response. */
export interface JsonResponse<T> {
  status: number;
  data: T;
  url: URL;
  requestId: string | undefined;
  headers: { get(name: string): string | null };
}

/** Anything with zod's `safeParse`, so the transport does not depend on zod's types. */
export interface Schema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } };
}

function headerGetter(raw: Record<string, string | string[] | undefined>): { get(name: string): string | null } {
  return {
    get(name: string): string | null {
      const v = raw[name.toLowerCase()];
      if (v === undefined) return null;
      return Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** Reads the request id from response headers: the documents' name first, then the public one. */
export function requestIdOf(headers: { get(name: string): string | null }): string | undefined {
  return headers.get('x-svc-request-id') ?? headers.get('x-comfy-request-id') ?? undefined;
}

/** HTTP transport bound to one base URL. Close it to release its connections. */
export class Transport {
  /** Normalised base URL (no trailing slash). */
  readonly baseUrl: string;
  /** The only origin credentials are sent to. */
  readonly origin: string;
  private readonly apiKey: string | undefined;
  private readonly ua: string;
  private readonly timeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly log: ((entry: RequestLogEntry) => void) | undefined;

  /** @throws InputError `bad_base_url` for a base URL that is not http(s). */
  constructor(options: TransportOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.origin = new URL(this.baseUrl).origin;
    this.apiKey = options.apiKey || undefined;
    this.ua = options.userAgent ?? userAgent();
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? new EnvHttpProxyAgent();
    this.log = options.log;
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
    const timer = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
    const handle = setTimeout(() => timer.abort(), timeoutMs);
    const started = Date.now();
    const context: ErrorContext = { request: `${method} ${this.redact(url)}` };
    try {
      const res = await request(url, { method: method as Dispatcher.HttpMethod, headers, body, signal, dispatcher: this.dispatcher });
      const h = headerGetter(res.headers);
      const requestId = requestIdOf(h);
      this.log?.({ method, url: this.redact(url), status: res.statusCode, requestId, durationMs: Date.now() - started });
      return { status: res.statusCode, headers: h, url, requestId, body: res.body as RawResponse['body'] };
    } catch (err) {
      const failure = options.signal?.aborted
        ? new AbortError('aborted', context)
        : timer.signal.aborted
          ? new TimeoutError(timeoutMs, context)
          : new ConnectionError(`could not reach ${this.redact(url)}: ${describeNetworkError(err)}`, context, { cause: err });
      this.log?.({ method, url: this.redact(url), durationMs: Date.now() - started, error: failure.code });
      throw failure;
    } finally {
      clearTimeout(handle);
    }
  }

  /**
   * Sends a request and parses a JSON answer with `schema`. An error status becomes the typed {@link ApiError}
   * of its code; a 2xx whose body does not fit the schema becomes a ResponseShapeError.
   * @param expect the success statuses (default any 2xx)
   */
  async json<T>(method: string, target: URL | string, schema: Schema<T>, options: RequestOptions & { expect?: number[] } = {}): Promise<JsonResponse<T>> {
    const res = await this.send(method, target, options);
    const text = await this.readText(res, options);
    const ok = options.expect ? options.expect.includes(res.status) : res.status >= 200 && res.status < 300;
    if (!ok) throw this.errorOf(res, text);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ResponseShapeError(`${method} ${this.redact(res.url)} answered ${res.status} with a body that is not JSON`, { requestId: res.requestId });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new ResponseShapeError(`${method} ${this.redact(res.url)} answered ${res.status} with an unexpected shape: ${parsed.error.message}`, { requestId: res.requestId });
    }
    return { status: res.status, data: parsed.data, url: res.url, requestId: res.requestId, headers: res.headers };
  }

  /** Reads a non-2xx response's body and returns its typed error (consumes the body). */
  async failure(res: RawResponse, options: RequestOptions = {}): Promise<ApiError> {
    return this.errorOf(res, await this.readText(res, options).catch(() => ''));
  }

  private errorOf(res: RawResponse, text: string): ApiError {
    return errorFromResponse(res.status, text, res.headers, { requestId: res.requestId, request: `${this.redact(res.url)}` });
  }

  /** Reads the whole body as text within the request's timeout. */
  private async readText(res: RawResponse, options: RequestOptions): Promise<string> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    let handle: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      handle = setTimeout(() => {
        res.body.destroy();
        reject(new TimeoutError(timeoutMs, { requestId: res.requestId, request: this.redact(res.url) }));
      }, timeoutMs);
    });
    try {
      return await Promise.race([res.body.text(), timeout]);
    } catch (err) {
      if (err instanceof TimeoutError) throw err;
      if (options.signal?.aborted) throw new AbortError('aborted', { requestId: res.requestId });
      throw new ConnectionError(`the answer from ${this.redact(res.url)} broke off: ${describeNetworkError(err)}`, { requestId: res.requestId }, { cause: err });
    } finally {
      clearTimeout(handle);
    }
  }

  /** Releases pooled connections (only of a dispatcher this transport made). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** A short description of a network failure from undici/Node error codes. */
export function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.cause?.code ?? e?.code;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused (is the server running?)';
    case 'ECONNRESET': case 'UND_ERR_SOCKET': return 'the connection was reset';
    case 'ENOTFOUND': return 'host not found';
    case 'UND_ERR_CONNECT_TIMEOUT': return 'connect timed out';
    default: return e?.cause?.message ?? e?.message ?? String(err);
  }
}
