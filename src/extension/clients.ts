import { V2Client, FetchEngine, globalFetch, userAgent, type RequestLogEntry, type Surface, type V1JobBackend } from '../core';
import type { Config } from './config';
import type { Log } from './log';
import type { ApiKeys } from './secrets';

/**
 * The v1 client core (issue 12), required at the first v1 connection: the production build maps it to
 * `dist/lib/core-v1.js` (esbuild.mjs, LAZY_CORE.v1: the WebSocket library with it), never loaded at activation.
 */
function loadV1(): typeof import('../core/v1') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../core/v1') as typeof import('../core/v1');
}

/**
 * Builds a core client for the configured server, with that origin's API key and the log wired in; for a connection
 * that speaks the deprecated v1 API (issue 12), its v1 backend too (`X-API-Key` and the WebSocket's `token`).
 */
export class Clients {
  constructor(
    private readonly config: Config,
    private readonly keys: ApiKeys,
    private readonly log: Log,
    /** Told each request's outcome (the status bar's health where the surface has no probe). */
    private readonly onRequest: (entry: RequestLogEntry) => void = () => undefined,
  ) {}

  /** A new client (close it when done). @throws InputError `bad_base_url`, `bad_connection`, `unknown_connection`. */
  async create(): Promise<{ client: V2Client; surface: Surface; v1?: V1JobBackend }> {
    const { surface, api } = this.config.connection();
    const apiKey = await this.keys.get(surface.origin);
    const common = {
      baseUrl: surface.baseUrl,
      apiKey,
      userAgent: userAgent('vscode'),
      // The extension host's fetch: the user's http.proxy, proxyStrictSSL, PAC and certificates (issue 8).
      engine: new FetchEngine(globalFetch),
      log: (entry: RequestLogEntry) => {
        this.log.request(entry);
        this.onRequest(entry);
      },
    };
    const client = new V2Client(common);
    if (api !== 'v1') return { client, surface };
    const { V1Client, v1JobBackend } = loadV1();
    return { client, surface, v1: v1JobBackend(new V1Client(common)) };
  }
}
