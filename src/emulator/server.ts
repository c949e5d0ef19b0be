/**
 * The HTTP front of the emulator on node:http: request ids, the request record, the mount prefix,
 * authentication, the fault hook, routing and the error envelope (Job and Asset API v2, Errors: every
 * operation can answer 500 `upstream_error` with a generic message).
 * Order per request: control endpoint (outside everything, when enabled) → request id → record → deployment host
 * (404 for a Host naming no deployment, when serving deployments on hosts of their own) → mount prefix (404 outside it) → auth (401; the matched route's own when it has one, see {@link Route.auth}) → route (404) →
 * faults (faults.ts, "before the handler") → handler. Refusals take the matched route's {@link Route.errorBody} shape.
 * The same listener serves the signed origin, with its own router, auth and record.
 */
import { randomUUID } from 'node:crypto';
import type * as http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Auth } from './auth';
import { EmulatorError } from './errors';
import type { FaultAnswer, Faults } from './faults';
import { sendError, sendFaultAnswer, sendJson } from './http';
import type { RecordedRequest, RequestContext, Route, Router } from './router';

/** Answers the control endpoint (`/__emulator/…`); see control.ts. */
export type ControlHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

/** What the request listener needs. */
interface ServerOptions {
  /** `''` or a prefix like `/deployment/dep-1` (no trailing slash): only paths under it are served. */
  readonly mountPrefix: string;
  /** A domain like `localhost`: only requests whose Host is `<deployment id>.<domain>` (any port) are served. */
  readonly deploymentDomain?: string;
  readonly auth: Auth;
  readonly faults: Faults;
  readonly router: Router;
  /** Every request is appended here on arrival (control requests are not). */
  readonly requests: RecordedRequest[];
  readonly log?: (line: string) => void;
  /** Serves `/__emulator/…` at the origin root, outside the mount prefix and outside auth; none: 404 there. */
  readonly control?: ControlHandler;
}

/** The header every response carries (the document's name; `X-Comfy-Request-Id` in public). */
export const REQUEST_ID_HEADER = 'X-Svc-Request-Id';

/** Where the control endpoint lives. */
const CONTROL_PREFIX = '/__emulator/';

/** GET /api/v2/health → `{status: 'ok'}` (the self-hosted companion's health check; not in the v2 contract). */
export const healthRoute: Route = {
  method: 'GET',
  pattern: '/api/v2/health',
  name: 'health',
  handler: (_req, res) => sendJson(res, 200, { status: 'ok' }),
};

/**
 * Answers a refusal in a route's {@link Route.errorBody} shape: the envelope, or `flat` `{code, message, details?}`
 * (the v1 surface's ErrorResponse, reference/openapi-cloud-v1.yaml).
 */
function sendRefusal(res: ServerResponse, error: EmulatorError, route: Route | undefined): void {
  if (route?.errorBody !== 'flat') return sendError(res, error);
  sendJson(res, error.status, error.toEnvelope().error, error.headers);
}

/** Answers an injected fault's error in the route's shape (see {@link sendRefusal}). */
function sendFault(res: ServerResponse, answer: FaultAnswer, route: Route): void {
  if (route.errorBody !== 'flat') return sendFaultAnswer(res, answer);
  sendJson(
    res,
    answer.status,
    { code: answer.code, message: answer.message },
    answer.retryAfter === undefined ? {} : { 'retry-after': String(answer.retryAfter) },
  );
}

/** The deployment id a Host header names under `domain` (`dep-1.localhost:8190` → `dep-1`), or undefined. */
function deploymentOfHost(host: string | undefined, domain: string): string | undefined {
  const name = (host ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (!name.endsWith(`.${domain}`)) return undefined;
  const id = name.slice(0, -domain.length - 1);
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(id) ? id : undefined;
}

/** The path without the mount prefix, or undefined when the path is outside it. */
function stripPrefix(path: string, prefix: string): string | undefined {
  if (prefix === '') return path;
  if (path === prefix) return '/';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : undefined;
}

/** The `(req, res)` listener of the emulator's server. */
export function createRequestListener(options: ServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const requestId = randomUUID();
    const started = Date.now();
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    res.setHeader(REQUEST_ID_HEADER, requestId);
    if (options.log) {
      const log = options.log;
      // Never the headers: they carry the bearer token.
      res.once('close', () =>
        log(`${method} ${target} → ${res.statusCode} ${Date.now() - started} ms request-id ${requestId}`),
      );
    }
    // Set once the request matched a route: its refusals then take the route's shape.
    const matched: { route?: Route } = {};
    const fail = (e: unknown): void => {
      if (e instanceof EmulatorError) {
        if (res.headersSent) res.destroy();
        else sendRefusal(res, e, matched.route);
        return;
      }
      options.log?.(
        `unexpected failure, request-id ${requestId}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`,
      );
      if (res.headersSent) res.destroy();
      else
        sendRefusal(
          res,
          new EmulatorError('upstream_error', `the service failed unexpectedly; request id ${requestId}`),
          matched.route,
        );
    };
    if (options.control !== undefined && target.startsWith(CONTROL_PREFIX)) {
      options.control(req, res, target.split('?')[0]).catch(fail);
      return;
    }
    const record: RecordedRequest = { method, path: target, headers: { ...req.headers } };
    options.requests.push(record);
    handle(options, req, res, { requestId, method, target, record }, matched).catch(fail);
  };
}

async function handle(
  options: ServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
  at: { requestId: string; method: string; target: string; record: RecordedRequest },
  matched: { route?: Route },
): Promise<void> {
  const { method, target } = at;
  const queryAt = target.indexOf('?');
  const rawPath = queryAt < 0 ? target : target.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1));
  if (
    options.deploymentDomain !== undefined &&
    deploymentOfHost(req.headers.host, options.deploymentDomain) === undefined
  ) {
    // As the public gateway: a host that names no deployment serves nothing.
    throw new EmulatorError(
      'not_found',
      `no deployment at host ${JSON.stringify(req.headers.host ?? '')}: deployments are served at <id>.${options.deploymentDomain}`,
    );
  }
  const path = stripPrefix(rawPath, options.mountPrefix);
  if (path === undefined)
    throw new EmulatorError(
      'not_found',
      `nothing is served at ${rawPath}: this service is mounted at ${options.mountPrefix}`,
    );
  const match = options.router.match(method, path);
  // A route may carry its own authentication (the v1 surface's X-API-Key); unmatched paths take the listener's.
  if (match.kind === 'route') matched.route = match.route;
  const owner = (matched.route?.auth ?? options.auth).ownerOf(req.headers);
  if (match.kind === 'none') throw new EmulatorError('not_found', `no operation at ${method} ${rawPath}`);
  if (match.kind === 'method') {
    // 404 rather than 405: every code the emulator answers with is one of the document's.
    throw new EmulatorError('not_found', `no operation at ${method} ${rawPath} (allowed: ${match.allowed.join(', ')})`);
  }
  const context: RequestContext = {
    requestId: at.requestId,
    method,
    path: queryAt < 0 ? path : `${path}${target.slice(queryAt)}`,
    route: match.route.name,
    owner,
    params: match.params,
    query,
    record: at.record,
  };
  const fault = options.faults.before(context);
  // What the failure leaves behind (a claimed Idempotency-Key), or the refusal that comes first (a reused key).
  if (fault?.kind === 'reset' || fault?.kind === 'status') match.route.faulted?.(req, context, fault);
  if (fault?.kind === 'reset') {
    res.destroy();
    return;
  }
  if (fault?.kind === 'status') {
    sendFault(res, fault.answer, match.route);
    return;
  }
  if (fault?.kind === 'delay') {
    try {
      await options.faults.sleep(fault.ms);
    } catch {
      res.destroy(); // the emulator is closing
      return;
    }
  }
  await match.route.handler(req, res, context);
}

/** The origin clients use for a bound address: a wildcard address is reached through loopback. */
export function originOf(address: AddressInfo): string {
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Listens on `port` of `host`; resolves once bound. */
export function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Closes `server` and its connections. */
export function stop(server: http.Server): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return stopped;
}
