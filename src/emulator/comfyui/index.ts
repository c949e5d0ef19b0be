/**
 * A ComfyUI server's native API (ComfyUI server API (observed)) on the emulator's origin, under the prefix
 * {@link COMFYUI_PREFIX} (the origin's `/api/...` and `/ws` are the cloud v1 API's): every route bare and under
 * `/api` (`/comfyui/prompt` and `/comfyui/api/prompt`), the WebSocket at `/comfyui/ws?clientId=`, no authentication,
 * over the emulator's job engine (its prompts are jobs of the shared store; holds and the scheduler apply). Unknown
 * routes answer 404 `404: Not Found` in plain text. See routes.ts (REST), socket.ts (the WebSocket), messages.ts (its
 * messages and the history), state.ts (what it keeps, in memory only).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ANONYMOUS_OWNER } from '../auth';
import { Router, type RecordedRequest, type RequestContext } from '../router';
import type { AssetStore } from '../v2/assets';
import type { TappedEventHub } from '../v1';
import type { JobStore } from '../v2/jobs';
import type { JobRunner } from '../v2/runner';
import { ComfyMessages, statusMessage } from './messages';
import { Answered, comfyRoutes, sendText } from './routes';
import { ComfySockets } from './socket';
import { ComfyState } from './state';

/** Where the ComfyUI server is mounted on the emulator's origin. */
export const COMFYUI_PREFIX = '/comfyui';

/** Options of the ComfyUI surface (`EmulatorOptions.comfyui`); none yet, every behaviour is the recorded one. */
export type ComfyUiOptions = Record<string, never>;

/** What a test can see of a running ComfyUI surface (`Emulator.comfyui`). */
export interface ComfyUiHandle {
  /** `<origin>/comfyui`: what a client is configured with (`--base-url`). */
  readonly url: string;
  /** `ws://host:port/comfyui/ws` (add `?clientId=<id>`). */
  readonly wsUrl: string;
  /** Every request the surface received, in order (WebSocket upgrades included). */
  readonly requests: readonly RecordedRequest[];
  /** How many WebSockets are open. */
  openSockets(): number;
}

/** What the surface needs from the emulator. */
interface ComfyUiDeps {
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  readonly runner: JobRunner;
  /** The engine's hub: the surface adds itself to its tap, after what is tapped already (v1). */
  readonly hub: TappedEventHub;
  readonly now: () => number;
  readonly log?: (line: string) => void;
}

/** A built ComfyUI surface. */
export interface ComfyUiSurface {
  /** Whether a request target is the surface's (its prefix). */
  owns(target: string): boolean;
  /** The request listener for targets it {@link owns}. */
  listener(req: IncomingMessage, res: ServerResponse): void;
  /** The server's `upgrade` listener part: false when the request is not for its WebSocket. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** The Emulator's fields, once the origin is known: `comfyuiUrl` and the handle. */
  handle(origin: string): { comfyuiUrl: string; comfyui: ComfyUiHandle };
  /** Closes every WebSocket and refuses new ones. */
  close(): void;
}

/** The path below the prefix and the optional `/api`, or undefined when `path` is not the surface's. */
function routePath(path: string): string | undefined {
  if (path !== COMFYUI_PREFIX && !path.startsWith(`${COMFYUI_PREFIX}/`)) return undefined;
  const below = path.slice(COMFYUI_PREFIX.length) || '/';
  // Every route is served bare and under /api (ComfyUI server API (observed), Routes).
  return below === '/api' ? '/' : below.startsWith('/api/') ? below.slice(4) : below;
}

/** Builds the ComfyUI surface. */
export function createComfyUiSurface(deps: ComfyUiDeps): ComfyUiSurface {
  const owner = ANONYMOUS_OWNER;
  const state = new ComfyState();
  const requests: RecordedRequest[] = [];
  const sockets = new ComfySockets([`${COMFYUI_PREFIX}/ws`, `${COMFYUI_PREFIX}/api/ws`], () => statusMessage(state));
  const messages = new ComfyMessages({ state, sockets, owner, now: deps.now });
  const router = new Router(comfyRoutes({ state, jobs: deps.jobs, assets: deps.assets, runner: deps.runner, owner }));

  const tapped = deps.hub.tap;
  deps.hub.tap = (jobId, event) => {
    tapped?.(jobId, event);
    // A failure here is a bug of this surface: logged, never turned into a failure of the job that published.
    try {
      messages.handle(jobId, event);
    } catch (e) {
      deps.log?.(`ComfyUI messages of job ${jobId} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const record: RecordedRequest = { method, path: target, headers: { ...req.headers } };
    requests.push(record);
    const url = new URL(target, 'http://emulator');
    const path = routePath(url.pathname) ?? '/';
    const match = router.match(method, path);
    if (match.kind === 'none') return sendText(res, 404, '404: Not Found');
    if (match.kind === 'method') return sendText(res, 405, '405: Method Not Allowed');
    const context: RequestContext = {
      requestId: randomUUID(),
      method,
      path: `${path}${url.search}`,
      route: match.route.name,
      owner,
      params: match.params,
      query: url.searchParams,
      record,
    };
    const fail = (e: unknown): void => {
      if (res.headersSent) return void res.destroy();
      if (e instanceof Answered) return e.send(res);
      deps.log?.(`ComfyUI ${method} ${target} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      sendText(res, 500, '500 Internal Server Error\n\nServer got itself in trouble');
    };
    try {
      Promise.resolve(match.route.handler(req, res, context)).catch(fail);
    } catch (e) {
      fail(e);
    }
  };

  return {
    owns: (target) => routePath(target.split('?')[0]) !== undefined,
    listener,
    handleUpgrade: (req, socket, head) => {
      const handled = sockets.handleUpgrade(req, socket, head);
      if (handled) requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: { ...req.headers } });
      return handled;
    },
    handle: (origin) => ({
      comfyuiUrl: `${origin}${COMFYUI_PREFIX}`,
      comfyui: {
        url: `${origin}${COMFYUI_PREFIX}`,
        wsUrl: `${origin.replace(/^http/, 'ws')}${COMFYUI_PREFIX}/ws`,
        requests,
        openSockets: () => sockets.openCount(),
      },
    }),
    close: () => sockets.close(),
  };
}
