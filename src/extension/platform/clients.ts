import { FetchEngine, globalFetch, type RequestLogEntry } from '../../core/http';
import { userAgent } from '../../core/util';
import type { Connection } from '../../core';
import type { Surface } from '../../core/connection';
import type { StateStore } from '../../core/state';
import { createBackend, type V2Client } from '../../core/backends';
import type { Config } from './config';
import type { Log } from './log';
import type { ApiKeys } from './secrets';

/**
 * What the job service holds for the active connection: its job backend (the one API the connection speaks), its
 * surface, and the client of its assets where its API has them (`backend.capabilities.assets`; the same client as the
 * backend's, closed with it).
 */
export interface ExtensionConnection extends Connection {
  readonly surface: Surface;
  /** The asset operations (upload, download, delete); undefined when the API has no assets. */
  readonly assets: V2Client | undefined;
}

/**
 * Builds the job backend of the configured connection, with that origin's API key and the log wired in: the API the
 * connection's settings name (`api` of `comfyCloud.connections`) decides which backend; nothing else asks.
 */
export class Clients {
  constructor(
    private readonly config: Config,
    private readonly keys: ApiKeys,
    private readonly log: Log,
    /** Told each request's outcome (the status bar's health where the surface has no probe). */
    private readonly onRequest: (entry: RequestLogEntry) => void = () => undefined,
    /** The remembered jobs, for an API that cannot say itself what this client did to a job (BackendOptions.store). */
    private readonly store?: StateStore,
  ) {}

  /** A new connection (the job service closes its backend). @throws InputError `bad_base_url`, `bad_connection`, `unknown_connection`. */
  async create(): Promise<ExtensionConnection> {
    const { surface, api } = this.config.connection();
    const apiKey = await this.keys.get(surface.origin);
    const { backend, assets } = createBackend({
      surface,
      api,
      apiKey,
      userAgent: userAgent('vscode'),
      // The extension host's fetch: the user's http.proxy, proxyStrictSSL, PAC and certificates.
      engine: new FetchEngine(globalFetch),
      log: (entry: RequestLogEntry) => {
        this.log.request(entry);
        this.onRequest(entry);
      },
      // An unknown outcome is resolved after the user's settle window (core/jobs/unknownOutcome.ts).
      settleMs: this.config.unknownOutcomeSettleMs(),
      store: this.store,
    });
    return { backend, surface, assets };
  }
}
