/**
 * The route table: method + path pattern → handler. Patterns are `/`-separated segments; a `{name}` segment
 * captures one percent-decoded path segment as a parameter. Paths are matched without the mount prefix.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Auth } from './auth';
import type { BeforeFault, FaultRequest } from './faults';

/** One request as received (for tests: "no request was sent", "no credential was sent"). */
export interface RecordedRequest {
  method: string;
  /** The request target as sent: path and query string, mount prefix included. */
  path: string;
  /** As Node parsed them: lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  /** POST /api/v2/assets: the names of the multipart parts, in the order they came on the wire. */
  parts?: string[];
}

/** What a handler gets besides the request and response. It is also the {@link FaultRequest} of the request. */
export interface RequestContext extends FaultRequest {
  /** The `{name}` segments of the route's pattern, decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The request as recorded (a handler may add what it saw, e.g. the multipart part names). */
  readonly record: RecordedRequest;
}

/**
 * Answers one operation. Throws EmulatorError for a refusal (answered with the envelope); any other throw is
 * answered 500 `upstream_error`.
 */
export type Handler = (req: IncomingMessage, res: ServerResponse, context: RequestContext) => Promise<void> | void;

/** One entry of the route table. */
export interface Route {
  readonly method: string;
  /** E.g. `/api/v2/jobs/{id}/cancel`. */
  readonly pattern: string;
  /** Stable name for logs and fault rules, e.g. `cancelJob`. */
  readonly name: string;
  readonly handler: Handler;
  /**
   * This route's own authentication, in place of the listener's (the v1 surface: `X-API-Key` rather than a
   * bearer token, Cloud API v1 (deprecated), Authentication). Default: the listener's.
   */
  readonly auth?: Auth;
  /**
   * How this route's refusals and injected faults are written: `envelope` (default) `{"error": {code, message,
   * details?}}`; `flat` `{code, message, details?}` (the v1 surface's ErrorResponse, reference/openapi-cloud-v1.yaml).
   */
  readonly errorBody?: 'envelope' | 'flat';
  /**
   * Called when an injected `status` or `reset` answers in place of the handler, before that answer: the route
   * applies what the failure leaves behind (a submission that reached submission claims its Idempotency-Key). A throw
   * (EmulatorError) is answered instead of the fault. Default: nothing is left behind.
   */
  readonly faulted?: (
    req: IncomingMessage,
    context: RequestContext,
    fault: Extract<BeforeFault, { kind: 'status' | 'reset' }>,
  ) => void;
}

/** The outcome of matching a request: the route and its parameters, or the methods the path does allow. */
type RouteMatch =
  | { readonly kind: 'route'; readonly route: Route; readonly params: Record<string, string> }
  | { readonly kind: 'method'; readonly allowed: string[] }
  | { readonly kind: 'none' };

function split(path: string): string[] {
  return path.split('/').slice(1);
}

/** Matches requests against a fixed list of routes. */
export class Router {
  private readonly routes: { route: Route; segments: string[] }[];

  constructor(routes: readonly Route[]) {
    this.routes = routes.map((route) => ({ route, segments: split(route.pattern) }));
  }

  /** The route for `method` and `path` (no query string). */
  match(method: string, path: string): RouteMatch {
    const segments = split(path);
    const allowed: string[] = [];
    for (const { route, segments: pattern } of this.routes) {
      const params = matchSegments(pattern, segments);
      if (params === undefined) continue;
      if (route.method === method) return { kind: 'route', route, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method', allowed } : { kind: 'none' };
  }
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith('{') && p.endsWith('}')) {
      let value: string;
      try {
        value = decodeURIComponent(segments[i]);
      } catch {
        return undefined;
      }
      if (value === '') return undefined;
      params[p.slice(1, -1)] = value;
    } else if (p !== segments[i]) {
      return undefined;
    }
  }
  return params;
}
