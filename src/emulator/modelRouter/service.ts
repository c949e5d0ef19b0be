/**
 * The model router on the emulator (Model router API, all of it): served by the same
 * HTTP server under {@link ROUTER_PREFIX}, so the router's base URL is `<origin>/router` and its paths are the
 * document's (`/router/v1/models`, …). Its own request listener: router keys (not the job service's tokens), the
 * router's error body `{detail, error_type}` with `X-Svc-Error-Type`, its own request record; it reuses the
 * emulator's route table (router.ts) and fault plan (faults.ts: route kinds `router:list|get|schema|invoke|any`,
 * action `bucket=`).
 * Order per request: request id → record → route (a path that is no operation of the document: 404
 * `model_not_found`, the nearest bucket) → key (401 `unauthorized`) → faults → handler.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES, headerValue } from '../http';
import { Router, type RequestContext, type Route } from '../router';
import type { BucketAnswer, Faults } from '../faults';
import type { RecordedRequest } from '../router';
import { REQUEST_ID_HEADER } from '../server';
import {
  BUCKET_STATUS,
  RouterError,
  SPEND_HEADERS,
  ValidationFailure,
  sendRouterError,
  sendText,
  sendValidationFailure,
  type Bucket,
} from './buckets';
import {
  Catalog,
  MODEL_MAX,
  PROVIDER_MAX,
  SEGMENT_PATTERN,
  servedLimit,
  suggestionsFor,
  type CatalogEntry,
} from './catalog';
import { Invoker } from './models';
import { ifNoneMatchHits, schemaDocument } from './schemas';

/** Where the router is mounted on the emulator's origin. */
export const ROUTER_PREFIX = '/router';

/** The router key an emulator accepts by default (tests and demos only). */
export const TEST_ROUTER_KEY = 'test-router-key';

/** Committed-spend figures of a `concurrency_limit_exceeded` fault without its own, in USD cents. */
const DEFAULT_SPEND = { limit: 5000, current: 4990 };

/** Options of the router (EmulatorOptions.router). */
export interface ModelRouterOptions {
  /** Accepted router keys (`Authorization: Bearer <key>` or `X-API-Key`); default [{@link TEST_ROUTER_KEY}]. */
  keys?: string[];
  /** The router's own connection deadline, in ms (default 1000). */
  deadlineMs?: number;
  /** How long `emulator/slow` takes, in ms (default 2500). */
  slowMs?: number;
  /** Retry-After of the slow model's 504, in seconds (default 1). */
  retryAfterSeconds?: number;
  /** Serve an empty page and a short page mid-catalog (catalog.ts); default true. */
  quirkyPages?: boolean;
}

/** The running router, as the emulator holds it. */
export interface ModelRouter {
  /** Answers a request whose path starts with {@link ROUTER_PREFIX}. */
  listener(req: IncomingMessage, res: ServerResponse): void;
  /** Every router request received, in order. */
  readonly requests: RecordedRequest[];
  /** The catalog in its served order. */
  readonly entries: readonly CatalogEntry[];
  /** Changes the openapi.json of `id` (`provider/model[/variant]`): a new revision, a new ETag. */
  bumpSchema(id: string): void;
  sweep(): void;
  close(): void;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function checkSegment(name: string, value: string, max: number): void {
  if (value.length > max || !SEGMENT_PATTERN.test(value)) {
    throw new RouterError(
      'invalid_input',
      `the ${name} segment ${JSON.stringify(value.slice(0, 80))} is malformed: lowercase, pattern ^[a-z0-9]+([._-][a-z0-9]+)*$, at most ${max} characters`,
    );
  }
}

/** Reads the request body with the emulator's cap. @throws RouterError `invalid_input` when larger. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  if (size > MAX_BODY_BYTES)
    throw new RouterError(
      'invalid_input',
      `the request body is ${size} bytes; the emulator reads at most ${MAX_BODY_BYTES}`,
    );
  return Buffer.concat(chunks);
}

/**
 * The model router over `faults`, with `now` the emulator's clock and `log` receiving one line per request
 * (method, path, status, duration, request id; never headers: they carry the key).
 * @throws TypeError for an invalid option.
 */
export function createModelRouter(
  options: ModelRouterOptions,
  faults: Faults,
  now: () => number,
  log?: (line: string) => void,
): ModelRouter {
  const keys = options.keys ?? [TEST_ROUTER_KEY];
  if (keys.some((k) => typeof k !== 'string' || k === '')) throw new TypeError('router keys must be non-empty strings');
  const known = keys.map(digest);
  const timing = {
    deadlineMs: options.deadlineMs ?? 1000,
    slowMs: options.slowMs ?? 2500,
    retryAfterSeconds: options.retryAfterSeconds ?? 1,
  };
  for (const [name, v] of Object.entries(timing))
    if (!Number.isInteger(v) || v < 0) throw new TypeError(`router ${name} must be a non-negative integer; got ${v}`);
  const catalog = new Catalog(options.quirkyPages ?? true);
  const invoker = new Invoker(timing, now);
  const revisions = new Map<string, number>();
  const requests: RecordedRequest[] = [];

  const ownerOf = (req: IncomingMessage): string => {
    const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(headerValue(req, 'authorization') ?? '')?.[1];
    const presented = bearer ?? headerValue(req, 'x-api-key');
    if (presented !== undefined) {
      const d = digest(presented);
      const index = known.findIndex((k) => timingSafeEqual(k, d));
      if (index >= 0) return `router-key-${index}`;
    }
    throw new RouterError(
      'unauthorized',
      presented === undefined
        ? 'missing credentials: send Authorization: Bearer <router key>'
        : 'the router key is not valid',
      {
        headers: { 'www-authenticate': 'Bearer' },
      },
    );
  };

  /** The catalog entry of the path's model, or 404 `model_not_found` with suggestions. */
  const entryOf = (params: Readonly<Record<string, string>>): CatalogEntry => {
    checkSegment('provider', params.provider, PROVIDER_MAX);
    checkSegment('model', params.model, MODEL_MAX);
    if (params.variant !== undefined) checkSegment('variant', params.variant, MODEL_MAX);
    const entry = catalog.get(params.provider, params.model);
    const id = [params.provider, params.model, params.variant].filter((s) => s !== undefined).join('/');
    if (entry === undefined || (params.variant !== undefined && !(entry.variants ?? []).includes(params.variant)))
      throw modelNotFound(id);
    return entry;
  };

  const modelNotFound = (id: string, detail?: string): RouterError => {
    const suggestions = suggestionsFor(catalog.entries, id);
    // The document says `detail` carries the suggestions; they are in its text and, for machines, in `suggestions`.
    return new RouterError(
      'model_not_found',
      detail ?? `no runnable model ${JSON.stringify(id)}; did you mean: ${suggestions.join(', ')}?`,
      { extra: { suggestions } },
    );
  };

  const idOf = (params: Readonly<Record<string, string>>): string =>
    [params.provider, params.model, params.variant].filter((s) => s !== undefined).join('/');

  const baseOf = (req: IncomingMessage): string => `http://${headerValue(req, 'host') ?? 'localhost'}${ROUTER_PREFIX}`;

  const list: Route = {
    method: 'GET',
    pattern: '/v1/models',
    name: 'routerListModels',
    handler: (_req, res, ctx) => {
      const limit = servedLimit(ctx.query.get('limit'));
      const page = catalog.page(ctx.query.get('cursor'), limit);
      sendText(res, 200, JSON.stringify({ ...page, data: page.data.map(publicEntry) }), {
        'cache-control': 'no-store',
      });
    },
  };

  const detail = (pattern: string): Route => ({
    method: 'GET',
    pattern,
    name: 'routerGetModel',
    handler: (req, res, ctx) => {
      const entry = entryOf(ctx.params);
      const id = idOf(ctx.params);
      const body = JSON.stringify({
        ...publicEntry(entry),
        ...(ctx.params.variant !== undefined ? { variant: ctx.params.variant } : {}),
        input_schema_url: `${baseOf(req)}/v1/models/${id}/openapi.json`,
      });
      const etag = `W/"${createHash('sha256')
        .update(body)
        .update(String(revisions.get(id) ?? 0))
        .digest('hex')
        .slice(0, 24)}"`;
      answerCached(req, res, body, etag, 'private, max-age=60');
    },
  });

  const schema = (pattern: string): Route => ({
    method: 'GET',
    pattern,
    name: 'routerGetSchema',
    handler: (req, res, ctx) => {
      entryOf(ctx.params);
      const doc = schemaDocument(
        ctx.params.provider,
        ctx.params.model,
        ctx.params.variant,
        revisions.get(idOf(ctx.params)) ?? 0,
      );
      answerCached(req, res, doc.text, doc.etag, 'private, max-age=300');
    },
  });

  const invoke = (pattern: string): Route => ({
    method: 'POST',
    pattern,
    name: 'routerInvoke',
    handler: async (req, res, ctx) => {
      entryOf(ctx.params);
      const body = await readBody(req);
      const key = headerValue(req, 'idempotency-key');
      const outcome = await invoker.invoke(
        ctx.owner,
        ctx.params.provider,
        ctx.params.model,
        ctx.params.variant,
        body,
        key,
      );
      if (outcome === 'deadline') {
        const collectable = ctx.params.variant !== 'no-retry';
        throw new RouterError(
          'deadline_exceeded',
          `the router stopped holding the connection after ${timing.deadlineMs} ms; the generation is still running${key === undefined ? ' (no Idempotency-Key was sent: it cannot be collected)' : collectable ? `: retry with the same Idempotency-Key to collect it` : ''}`,
          {
            headers: collectable && key !== undefined ? { 'retry-after': String(timing.retryAfterSeconds) } : {},
          },
        );
      }
      if (outcome.kind === 'error') throw outcome.error;
      sendText(res, 200, outcome.text, { 'cache-control': 'no-store' });
    },
  });

  const routes = new Router([
    list,
    schema('/v1/models/{provider}/{model}/openapi.json'),
    schema('/v1/models/{provider}/{model}/{variant}/openapi.json'),
    detail('/v1/models/{provider}/{model}'),
    detail('/v1/models/{provider}/{model}/{variant}'),
    invoke('/v1/models/{provider}/{model}'),
    invoke('/v1/models/{provider}/{model}/{variant}'),
  ]);

  /** 200 with `body` and `etag`, or a bodyless 304 with the same headers when If-None-Match hits (weak comparison). */
  function answerCached(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    etag: string,
    cacheControl: string,
  ): void {
    const headers = { etag, 'cache-control': cacheControl };
    if (ifNoneMatchHits(headerValue(req, 'if-none-match'), etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    sendText(res, 200, body, headers);
  }

  /** The error a `bucket` fault answers. */
  function bucketError(answer: BucketAnswer, ctx: RequestContext): RouterError {
    const origin = `fault injected by the emulator's plan, rule ${answer.rule}`;
    const headers: Record<string, string> = {};
    const retryAfter = answer.retryAfter ?? (answer.bucket === 'rate_limited' ? 1 : undefined);
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    if (answer.bucket === 'concurrency_limit_exceeded' && answer.spendCents !== null) {
      const spend = answer.spendCents ?? DEFAULT_SPEND;
      headers[SPEND_HEADERS.limit] = String(spend.limit);
      headers[SPEND_HEADERS.current] = String(spend.current);
      headers[SPEND_HEADERS.remaining] = String(Math.max(0, spend.limit - spend.current));
    }
    const status =
      answer.status ?? (Object.hasOwn(BUCKET_STATUS, answer.bucket) ? BUCKET_STATUS[answer.bucket as Bucket] : 500);
    if (answer.bucket === 'model_not_found' && answer.status === undefined) {
      const id = ctx.params.provider !== undefined ? idOf(ctx.params) : 'unknown/model';
      const e = modelNotFound(id, answer.message);
      return new RouterError(e.bucket, `${e.detail} (${origin})`, { extra: e.extra });
    }
    return new RouterError(answer.bucket, answer.message ?? `${answer.bucket.replace(/_/g, ' ')} (${origin})`, {
      status,
      headers,
    });
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    record: RecordedRequest,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const target = (req.url ?? '/').slice(ROUTER_PREFIX.length) || '/';
    const queryAt = target.indexOf('?');
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    const match = routes.match(method, path);
    if (match.kind !== 'route') {
      // Not a route of the document: a plain 404 in the router's shape, its bucket the nearest one.
      throw new RouterError('model_not_found', `no router operation at ${method} ${ROUTER_PREFIX}${path}`, {
        extra: { suggestions: [] },
      });
    }
    const owner = ownerOf(req);
    const ctx: RequestContext = {
      requestId,
      method,
      path: target,
      route: match.route.name,
      owner,
      params: match.params,
      query: new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1)),
      record,
    };
    const fault = faults.before(ctx);
    if (fault?.kind === 'reset') {
      res.destroy();
      return;
    }
    if (fault?.kind === 'status') {
      // A status rule on a router route: its code becomes the bucket (a non-router code tests a client's fallback).
      throw new RouterError(fault.answer.code, fault.answer.message, {
        status: fault.answer.status,
        headers: fault.answer.retryAfter === undefined ? {} : { 'retry-after': String(fault.answer.retryAfter) },
      });
    }
    if (fault?.kind === 'bucket') throw bucketError(fault.answer, ctx);
    if (fault?.kind === 'delay') {
      try {
        await faults.sleep(fault.ms);
      } catch {
        res.destroy();
        return;
      }
    }
    await match.route.handler(req, res, ctx);
  }

  return {
    requests,
    entries: catalog.entries,
    listener(req, res) {
      const requestId = randomUUID();
      res.setHeader(REQUEST_ID_HEADER, requestId);
      if (log !== undefined) {
        const started = Date.now();
        res.once('close', () =>
          log(
            `router ${req.method ?? 'GET'} ${req.url ?? '/'} → ${res.statusCode} ${Date.now() - started} ms request-id ${requestId}`,
          ),
        );
      }
      const record: RecordedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: { ...req.headers },
      };
      requests.push(record);
      handle(req, res, requestId, record).catch((e: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (e instanceof ValidationFailure) sendValidationFailure(res, e);
        else if (e instanceof RouterError) sendRouterError(res, e);
        else
          sendRouterError(
            res,
            new RouterError('internal_error', `the router failed unexpectedly; request id ${requestId}`),
          );
      });
    },
    bumpSchema(id) {
      revisions.set(id, (revisions.get(id) ?? 0) + 1);
    },
    sweep: () => invoker.sweep(),
    close: () => invoker.close(),
  };
}

/** An entry as the catalog serves it (without the emulator-only `variants`). */
function publicEntry(entry: CatalogEntry): Record<string, unknown> {
  const { variants: _variants, ...rest } = entry;
  return rest;
}
