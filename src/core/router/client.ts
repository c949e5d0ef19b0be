/**
 * The model router client (Model router API). vscode-free; sends
 * through the core's {@link Transport} (credentials only to the router's origin, request ids, bounded reads) and
 * retries with its `withRetry` loop under the router's own rule ({@link decideRouterRetry}).
 */
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../http/clock';
import { AbortError, ConnectionError, InputError, ResponseShapeError, TimeoutError, ComfyError } from '../http/errors';
import type { HttpEngine } from '../http/engine';
import { withRetry, type RetryPolicy } from '../http/retry';
import { Transport, type RawResponse, type RequestLogEntry } from '../http/transport';
import { DeadlineExceededError, RouterError, RouterOutcomeUnknownError, routerErrorFromResponse } from './errors';
import { checkCursor, modelPath, servedLimit } from './ids';
import type { RouterKeyStore } from './keyStore';
import { SchemaCache, weakEtagEqual } from './schemaCache';
import { ModelDetailSchema, ModelPageSchema, type ModelDetail, type ModelEntry } from './schemas';
import { ROUTER_RETRY_POLICY, decideRouterRetry, type RouterRetryInfo } from './routerRetry';
import type { InputSchemaResult, ListOptions, ModelPage, RouterRunOptions, RouterRunResult } from './calls';

/** How to reach the router and where to keep its files. */
export interface RouterClientOptions {
  /** The router base URL ({router_base_url}), optionally with a path prefix. */
  baseUrl: string;
  /** The router key, sent as `Authorization: Bearer` to the base URL's origin only. */
  apiKey?: string;
  /** What sends the requests (the transport's engine; default undici in Node). */
  engine?: HttpEngine;
  /** Time allowed until the response headers and for each next body byte, ms. Default 30 000; a model call may take longer: see {@link RouterRunOptions.timeoutMs}. */
  timeoutMs?: number;
  /** The clock of the wait for the response headers (the transport's `timeoutClock`). Default the system clock. */
  timeoutClock?: Clock;
  /** Waits before retries and before collecting a generation. Default the system clock. */
  clock?: Clock;
  log?: (entry: RequestLogEntry) => void;
  /** The folder of the input-schema cache (the CLI and the extension pass a subfolder of their state dir); none: no cache. */
  schemaCacheDir?: string;
  /** Where minted Idempotency-Keys are persisted before sending (e.g. `fileKeyStore(<state dir>/router-keys)`). */
  keyStore?: RouterKeyStore;
  /** Retry bounds of `rate_limited` / `service_unavailable`. Default {@link ROUTER_RETRY_POLICY}. */
  retryPolicy?: RetryPolicy;
  /** Collecting after a 504 `deadline_exceeded` with Retry-After: attempts in all (default 6) and the longest Retry-After waited for (s, default 120). */
  collect?: { maxAttempts?: number; maxRetryAfterS?: number };
  /** The largest model output read, bytes. Default 256 MiB (images come back as base64). */
  maxOutputBytes?: number;
  /** The largest schema document read, bytes. Default 16 MiB. */
  maxSchemaBytes?: number;
  /** Told before each wait of a retry or a collect (see {@link RouterClient.onRetry} to add listeners later). */
  onRetry?: (info: RouterRetryInfo) => void;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The model router client. Close it to release its connections. */
export class RouterClient {
  readonly transport: Transport;
  private readonly clock: Clock;
  private readonly cache: SchemaCache | undefined;
  private readonly keyStore: RouterKeyStore | undefined;
  private readonly policy: RetryPolicy;
  private readonly collectAttempts: number;
  private readonly collectMaxRetryAfterS: number;
  private readonly maxOutputBytes: number;
  private readonly maxSchemaBytes: number;
  private readonly retryListeners = new Set<(info: RouterRetryInfo) => void>();

  /** @throws InputError `bad_base_url` for a base URL that is not http(s). */
  constructor(options: RouterClientOptions) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      engine: options.engine,
      timeoutMs: options.timeoutMs,
      timeoutClock: options.timeoutClock,
      log: options.log,
      errorFactory: routerErrorFromResponse,
    });
    this.clock = options.clock ?? systemClock;
    this.cache = options.schemaCacheDir !== undefined ? new SchemaCache(options.schemaCacheDir) : undefined;
    this.keyStore = options.keyStore;
    this.policy = options.retryPolicy ?? ROUTER_RETRY_POLICY;
    this.collectAttempts = options.collect?.maxAttempts ?? 6;
    this.collectMaxRetryAfterS = options.collect?.maxRetryAfterS ?? 120;
    this.maxOutputBytes = options.maxOutputBytes ?? 256 * 1024 * 1024;
    this.maxSchemaBytes = options.maxSchemaBytes ?? 16 * 1024 * 1024;
    if (options.onRetry) this.retryListeners.add(options.onRetry);
  }

  /**
   * Adds a listener told before each wait of every call of this client (a bounded retry, or collecting after a 504
   * with Retry-After): the CLI prints one stderr line per retry with it. A listener that throws is ignored.
   * @returns a function that removes the listener.
   */
  onRetry(listener: (info: RouterRetryInfo) => void): () => void {
    this.retryListeners.add(listener);
    return () => this.retryListeners.delete(listener);
  }

  private tellRetry(info: RouterRetryInfo, extra: ((info: RouterRetryInfo) => void) | undefined): void {
    for (const listener of [...this.retryListeners, ...(extra ? [extra] : [])]) {
      try {
        listener(info);
      } catch {
        // A listener's failure (a closed stream) must not change the call's outcome.
      }
    }
  }

  private retrying<T>(
    kind: 'read' | 'submit',
    request: string,
    operation: (attempt: number) => Promise<T>,
    signal: AbortSignal | undefined,
    extra?: (info: RouterRetryInfo) => void,
    attemptBase = 0,
  ): Promise<T> {
    return withRetry(kind, operation, {
      clock: this.clock,
      signal,
      policy: this.policy,
      decide: decideRouterRetry,
      onRetry: ({ error, delayMs, attempt }) =>
        this.tellRetry(
          {
            attempt: attemptBase + attempt + 1,
            delayMs,
            reason: RouterError.is(error) ? error.bucket : (error as Error).name,
            request,
          },
          extra,
        ),
    });
  }

  /**
   * One catalog page: `GET /v1/models?cursor=&limit=` (Model router API, GET /v1/models). The cursor is checked
   * before any request; `limit` is sent as given and the served size read from the answer.
   * @throws InputError `bad_cursor` / `bad_limit` before any request; RouterError (`invalid_input` for a malformed or
   *   expired cursor, `unauthorized`, `forbidden`, `service_unavailable` after bounded retries, …); ResponseShapeError.
   */
  async listModels(options: ListOptions = {}): Promise<ModelPage> {
    if (options.cursor !== undefined) checkCursor(options.cursor);
    if (options.limit !== undefined && !Number.isSafeInteger(options.limit)) {
      throw new InputError(
        'bad_limit',
        `the page size ${String(options.limit)} is not an integer; give a whole number (at most 100 are served)`,
      );
    }
    const url = this.transport.url('/v1/models');
    if (options.cursor !== undefined) url.searchParams.set('cursor', options.cursor);
    if (options.limit !== undefined) url.searchParams.set('limit', String(options.limit));
    const res = await this.retrying(
      'read',
      'GET /v1/models',
      () =>
        this.transport.json('GET', url, ModelPageSchema, {
          signal: options.signal,
          headers: { accept: 'application/json' },
        }),
      options.signal,
    );
    const page = res.data;
    return {
      body: page,
      entries: page.data,
      hasMore: page.has_more === true,
      nextCursor: typeof page.next_cursor === 'string' ? page.next_cursor : undefined,
      limit: typeof page.limit === 'number' ? page.limit : servedLimit(options.limit),
      requestId: res.requestId,
    };
  }

  /**
   * Every catalog entry, page after page, in the order served: keeps paging while `has_more`, also past a short or
   * empty page (Model router API, Resources and their fields: other fields of the list not shown there; public
   * sources: a short or empty page does not mean the end). An id served twice (the catalog may be rebuilt between
   * pages) is yielded once.
   * @param onPage told of each page (its served size, request id) before its entries are yielded
   * @throws as {@link listModels}; ResponseShapeError when a page says `has_more` without a `next_cursor`, or repeats a
   *   cursor already followed (the listing would never end).
   */
  async *models(
    options: { limit?: number; signal?: AbortSignal; onPage?: (page: ModelPage) => void } = {},
  ): AsyncGenerator<ModelEntry> {
    const seenIds = new Set<string>();
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listModels({ cursor, limit: options.limit, signal: options.signal });
      options.onPage?.(page);
      for (const entry of page.entries) {
        if (seenIds.has(entry.id)) continue;
        seenIds.add(entry.id);
        yield entry;
      }
      if (!page.hasMore) return;
      const next = page.nextCursor;
      if (next === undefined || seenCursors.has(next)) {
        throw new ResponseShapeError(
          next === undefined
            ? 'the model catalog says has_more but gives no next_cursor; the listing cannot go on'
            : 'the model catalog gave a cursor it had given before; the listing would never end',
          { requestId: page.requestId, request: 'GET /v1/models' },
        );
      }
      seenCursors.add(next);
      cursor = next;
    }
  }

  /**
   * One model's detail: `GET /v1/models/{provider}/{model}[/{variant}]` (Model router API,
   * GET /v1/models/{provider}/{model}), the entry plus an optional `input_schema_url`.
   * @throws InputError `bad_model_id` before any request; RouterError (`model_not_found` with `suggestions`,
   *   `forbidden`, `service_unavailable` after bounded retries, …); ResponseShapeError.
   */
  async getModel(
    id: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ model: ModelDetail; requestId: string | undefined }> {
    const path = modelPath(id);
    const res = await this.retrying(
      'read',
      `GET ${path}`,
      () =>
        this.transport.json('GET', path, ModelDetailSchema, {
          signal: options.signal,
          headers: { accept: 'application/json' },
        }),
      options.signal,
    );
    return { model: res.data, requestId: res.requestId };
  }

  /**
   * A model's input schema, the standalone OpenAPI document (Model router API,
   * GET /v1/models/{provider}/{model}/openapi.json), from `url` (a detail's `input_schema_url`, relative to the router
   * or absolute; credentials go only to the router's origin) or the model's `…/openapi.json`. With a cache folder it is
   * kept with its ETag and revalidated with `If-None-Match`: a 304 serves the cache (a 304 whose ETag does not weakly
   * match the cached one refetches); a network failure, a timeout or a 5xx (after bounded retries of
   * `service_unavailable`) serves the cached copy with `stale: true` and the reason. The bytes are returned exactly as
   * served.
   * @throws InputError `bad_model_id` / `bad_schema_url` before any request; RouterError (a 4xx, or a 5xx with nothing
   *   cached); ConnectionError / TimeoutError with nothing cached; ResponseTooLargeError.
   */
  async getInputSchema(id: string, options: { url?: string; signal?: AbortSignal } = {}): Promise<InputSchemaResult> {
    const path = `${modelPath(id)}/openapi.json`;
    let url: URL;
    try {
      url = options.url ? new URL(options.url, `${this.transport.baseUrl}/`) : this.transport.url(path);
    } catch {
      throw new InputError(
        'bad_schema_url',
        `the input schema URL ${JSON.stringify(options.url)} is not a URL; use the model's input_schema_url as the router gave it`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new InputError('bad_schema_url', `the input schema URL must be http(s), not ${url.protocol}`);
    const cached = this.cache ? await this.cache.get(url.href) : undefined;
    try {
      return await this.retrying(
        'read',
        `GET ${url.pathname}`,
        () => this.fetchSchema(url, cached, true, options.signal),
        options.signal,
      );
    } catch (err) {
      const staleWorthy = ConnectionError.is(err) || TimeoutError.is(err) || (RouterError.is(err) && err.status >= 500);
      if (cached && staleWorthy && !AbortError.is(err)) {
        return {
          bytes: cached.bytes,
          etag: cached.etag,
          url: url.href,
          source: 'stale',
          stale: true,
          staleReason: (err as ComfyError).message,
          storedAt: cached.storedAt,
          requestId: (err as ComfyError).requestId,
        };
      }
      throw err;
    }
  }

  private async fetchSchema(
    url: URL,
    cached: { etag: string | undefined; bytes: Buffer; storedAt: number } | undefined,
    conditional: boolean,
    signal: AbortSignal | undefined,
  ): Promise<InputSchemaResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (conditional && cached?.etag) headers['if-none-match'] = cached.etag;
    const res = await this.transport.send('GET', url, { headers, signal });
    if (res.status === 304) {
      await res.body.dump().catch(() => undefined);
      const etag = res.headers.get('etag') ?? undefined;
      if (
        !cached ||
        !conditional ||
        (etag !== undefined && cached.etag !== undefined && !weakEtagEqual(etag, cached.etag))
      ) {
        // A 304 for a copy we do not hold: ask once more without a condition.
        if (conditional) return this.fetchSchema(url, cached, false, signal);
        throw new ResponseShapeError(
          `GET ${this.transport.redact(url)} answered 304 to a request without If-None-Match`,
          { requestId: res.requestId },
          { status: 304 },
        );
      }
      return {
        bytes: cached.bytes,
        etag: cached.etag,
        url: url.href,
        source: 'not_modified',
        stale: false,
        storedAt: cached.storedAt,
        requestId: res.requestId,
      };
    }
    await this.throwUnlessOk(res, 'GET', signal);
    const bytes = await this.transport.readBytes(res, this.maxSchemaBytes, { signal });
    const etag = res.headers.get('etag') ?? undefined;
    const storedAt = this.clock.now();
    if (this.cache) await this.cache.put({ url: url.href, etag, storedAt, bytes });
    return { bytes, etag, url: url.href, source: 'fresh', stale: false, storedAt, requestId: res.requestId };
  }

  private async throwUnlessOk(res: RawResponse, method: string, signal: AbortSignal | undefined): Promise<void> {
    if (res.status >= 200 && res.status < 300) return;
    if (res.status >= 300 && res.status < 400) {
      await res.body.dump().catch(() => undefined);
      throw this.transport.redirectError(method, res);
    }
    throw await this.transport.failure(res, { signal });
  }

  /**
   * Runs a model: `POST /v1/models/{provider}/{model}[/{variant}]` with the native JSON input unchanged (the bytes
   * or text given; remove a `$schema` key first with `removeTopLevelSchemaKey`). An Idempotency-Key is always sent:
   * the given one, else one minted with `randomUUID` and saved in the key store BEFORE sending. `rate_limited` with
   * Retry-After and `service_unavailable` are retried with the same key, bounded (about 10 s); a 504
   * `deadline_exceeded` WITH Retry-After is waited out (clock) and retried with the SAME key to collect the
   * generation (at most `collect.maxAttempts` requests); every other bucket is thrown after one request. Never a new
   * key because a call timed out (Model router API, POST /v1/models/{provider}/{model}: a retry with the same key
   * collects the generation still running).
   * @returns the output as the exact bytes received, its request id and the key.
   * @throws InputError `bad_model_id` / `bad_idempotency_key` / `no_key_store` before any request; DeadlineExceededError
   *   (with `idempotencyKey`: collect later with it) when a 504 has no Retry-After or collecting ran out; RouterError
   *   (with `idempotencyKey`, `fieldErrors` for a 422, `spend` in USD cents for a 429); RouterOutcomeUnknownError (with
   *   `idempotencyKey`) when the answer never came after sending; AbortError.
   */
  async run(id: string, input: Buffer | string, options: RouterRunOptions = {}): Promise<RouterRunResult> {
    const path = modelPath(id);
    const body = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
    let key = options.idempotencyKey;
    if (key !== undefined) {
      if (!KEY_PATTERN.test(key))
        throw new InputError(
          'bad_idempotency_key',
          'an Idempotency-Key is 1 to 255 visible ASCII characters (no spaces); pass the key exactly as it was reported',
        );
    } else {
      if (!this.keyStore)
        throw new InputError(
          'no_key_store',
          'no store for Idempotency-Keys is configured: give the router client a keyStore (e.g. fileKeyStore(<state dir>)) or pass an idempotency key',
        );
      key = randomUUID();
      await this.keyStore.save({
        idempotencyKey: key,
        modelId: id,
        createdAt: this.clock.now(),
        inputBytes: body.length,
      });
    }
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': key };
    let attempts = 0;
    for (let collect = 1; ; collect++) {
      try {
        return await this.retrying(
          'submit',
          `POST ${path}`,
          async () => {
            attempts++;
            const res = await this.transport.send('POST', path, {
              body,
              headers,
              signal: options.signal,
              timeoutMs: options.timeoutMs,
            });
            await this.throwUnlessOk(res, 'POST', options.signal);
            const bytes = await this.transport.readBytes(res, this.maxOutputBytes, { signal: options.signal });
            return {
              bytes,
              status: res.status,
              contentType: res.headers.get('content-type') ?? undefined,
              requestId: res.requestId,
              idempotencyKey: key,
              attempts,
            };
          },
          options.signal,
          options.onRetry,
          attempts,
        );
      } catch (err) {
        if (RouterError.is(err)) err.idempotencyKey = key;
        if (DeadlineExceededError.is(err)) {
          const wait = err.retryAfter;
          if (wait !== undefined && wait <= this.collectMaxRetryAfterS && collect < this.collectAttempts) {
            this.tellRetry(
              { attempt: attempts + 1, delayMs: wait * 1000, reason: err.bucket, request: `POST ${path}` },
              options.onRetry,
            );
            try {
              await this.clock.sleep(wait * 1000, options.signal);
            } catch {
              throw new AbortError(
                `aborted while waiting to collect the generation; collect it later with Idempotency-Key ${key}`,
                { requestId: err.requestId },
              );
            }
            continue;
          }
          err.message +=
            wait === undefined
              ? `; the generation may still run: collect it later with Idempotency-Key ${key}`
              : `; not collected after ${collect} request(s): collect it later with Idempotency-Key ${key}`;
          throw err;
        }
        if (TimeoutError.is(err) || (ConnectionError.is(err) && err.requestSent)) {
          throw new RouterOutcomeUnknownError(
            `${err.message}; the model may have run: retry with Idempotency-Key ${key} (never a new key)`,
            key,
            { requestId: err.requestId, request: err.request },
            err,
          );
        }
        throw err;
      }
    }
  }

  /** Releases pooled connections. */
  async close(): Promise<void> {
    await this.transport.close();
  }
}
