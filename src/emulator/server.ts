/**
 * The HTTP front of the emulator on node:http: request ids, the request record, the mount prefix,
 * authentication, the fault hook, routing and the error envelope (jobs-assets-api-v2.md "Errors": every
 * operation can answer 500 `upstream_error` with a generic message).
 * Order per request: request id → record → mount prefix (404 outside it) → auth (401) → route (404) →
 * faults → handler.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Auth } from './auth';
import { EmulatorError } from './errors';
import type { Faults } from './faults';
import { sendError, sendJson } from './http';
import type { Route, Router } from './router';

/** One request as received (for tests: "no request was sent", "no credential was sent"). */
export interface RecordedRequest {
  method: string;
  /** The request target as sent: path and query string, mount prefix included. */
  path: string;
  /** As Node parsed them: lower-case names. */
  headers: Record<string, string | string[] | undefined>;
}

/** What the request listener needs. */
export interface ServerOptions {
  /** `''` or a prefix like `/deployment/dep-1` (no trailing slash): only paths under it are served. */
  readonly mountPrefix: string;
  readonly auth: Auth;
  readonly faults: Faults;
  readonly router: Router;
  /** Every request is appended here on arrival. */
  readonly requests: RecordedRequest[];
  readonly log?: (line: string) => void;
}

/** The header every response carries (the document's name; `X-Comfy-Request-Id` in public). */
export const REQUEST_ID_HEADER = 'X-Svc-Request-Id';

/** GET /api/v2/health → `{status: 'ok'}` (the self-hosted companion's health check, FACTS.md). */
export const healthRoute: Route = {
  method: 'GET',
  pattern: '/api/v2/health',
  name: 'health',
  handler: (_req, res) => sendJson(res, 200, { status: 'ok' }),
};

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
    options.requests.push({ method, path: target, headers: { ...req.headers } });
    if (options.log) {
      const log = options.log;
      // Never the headers: they carry the bearer token.
      res.once('close', () => log(`${method} ${target} → ${res.statusCode} ${Date.now() - started} ms request-id ${requestId}`));
    }
    handle(options, req, res, requestId, method, target).catch((e: unknown) => {
      if (e instanceof EmulatorError) {
        if (res.headersSent) res.destroy();
        else sendError(res, e);
        return;
      }
      options.log?.(`unexpected failure, request-id ${requestId}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (res.headersSent) res.destroy();
      else sendError(res, new EmulatorError('upstream_error', `the service failed unexpectedly; request id ${requestId}`));
    });
  };
}

async function handle(options: ServerOptions, req: IncomingMessage, res: ServerResponse, requestId: string, method: string, target: string): Promise<void> {
  const queryAt = target.indexOf('?');
  const rawPath = queryAt < 0 ? target : target.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1));
  const path = stripPrefix(rawPath, options.mountPrefix);
  if (path === undefined) throw new EmulatorError('not_found', `nothing is served at ${rawPath}: this service is mounted at ${options.mountPrefix}`);
  const owner = options.auth.ownerOf(req.headers.authorization);
  const match = options.router.match(method, path);
  if (match.kind === 'none') throw new EmulatorError('not_found', `no operation at ${method} ${rawPath}`);
  if (match.kind === 'method') {
    // 404 rather than 405: every code the emulator answers with is one of the document's.
    throw new EmulatorError('not_found', `no operation at ${method} ${rawPath} (allowed: ${match.allowed.join(', ')})`);
  }
  const fault = options.faults.before({ method, path, route: match.route.name, owner });
  if (fault?.kind === 'drop') {
    res.destroy();
    return;
  }
  if (fault?.kind === 'error') throw fault.error;
  await match.route.handler(req, res, { requestId, owner, params: match.params, query });
}
