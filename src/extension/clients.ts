import { ComfyClient, FetchEngine, globalFetch, userAgent, type RequestLogEntry, type Surface } from '../core';
import type { Config } from './config';
import type { Log } from './log';
import type { ApiKeys } from './secrets';

/** Builds a core client for the configured server, with that origin's API key and the log wired in. */
export class Clients {
  constructor(
    private readonly config: Config,
    private readonly keys: ApiKeys,
    private readonly log: Log,
    /** Told each request's outcome (the status bar's health where the surface has no probe). */
    private readonly onRequest: (entry: RequestLogEntry) => void = () => undefined,
  ) {}

  /** A new client (close it when done). @throws InputError `bad_base_url`. */
  async create(): Promise<{ client: ComfyClient; surface: Surface }> {
    const surface = this.config.surface();
    const apiKey = await this.keys.get(surface.origin);
    const client = new ComfyClient({
      baseUrl: surface.baseUrl,
      apiKey,
      userAgent: userAgent('vscode'),
      // The extension host's fetch: the user's http.proxy, proxyStrictSSL, PAC and certificates (issue 8).
      engine: new FetchEngine(globalFetch),
      log: (entry) => {
        this.log.request(entry);
        this.onRequest(entry);
      },
    });
    return { client, surface };
  }
}
