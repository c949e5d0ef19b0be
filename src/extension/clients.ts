import { ComfyClient, FetchEngine, globalFetch, userAgent, type RequestLogEntry, type Surface, type V1JobBackend } from '../core';
import { V1Client, v1JobBackend } from '../core/v1';
import type { Config } from './config';
import type { Log } from './log';
import type { ApiKeys } from './secrets';

/**
 * Builds a core client for the configured server, with that origin's API key and the log wired in; for a connection
 * that speaks the deprecated v1 API, its v1 backend too (`X-API-Key` and the WebSocket's `token`).
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
  async create(): Promise<{ client: ComfyClient; surface: Surface; v1?: V1JobBackend }> {
    const { surface, api } = this.config.connection();
    const apiKey = await this.keys.get(surface.origin);
    const common = {
      baseUrl: surface.baseUrl,
      apiKey,
      userAgent: userAgent('vscode'),
      // The extension host's fetch: the user's http.proxy, proxyStrictSSL, PAC and certificates.
      engine: new FetchEngine(globalFetch),
      log: (entry: RequestLogEntry) => {
        this.log.request(entry);
        this.onRequest(entry);
      },
    };
    const client = new ComfyClient(common);
    if (api !== 'v1') return { client, surface };
    return { client, surface, v1: v1JobBackend(new V1Client(common)) };
  }
}
