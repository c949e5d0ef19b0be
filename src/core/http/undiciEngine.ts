/**
 * The {@link HttpEngine} on undici's `request()`: the default in Node (the CLI, the tests, the benchmarks: undici
 * stays the transport of the CLI and the tests). Through an `EnvHttpProxyAgent` by default, so HTTP_PROXY,
 * HTTPS_PROXY and NO_PROXY are honoured; the body's idle timeout is undici's `bodyTimeout` (its error code
 * `UND_ERR_BODY_TIMEOUT`, which {@link isBodyIdleTimeout} recognises).
 *
 * The extension never imports this module (its bundle has no undici: esbuild.mjs swaps `defaultEngine.ts`).
 */
import * as dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { EnvHttpProxyAgent, FormData as UndiciFormData, request, type Dispatcher } from 'undici';
import type { EngineRequest, EngineResponse, HttpEngine, ResponseBody } from './engine';

/** The loopback address a `localhost` name resolves to (the emulator listens on 127.0.0.1 by default). */
const LOOPBACK_V4 = '127.0.0.1';

/**
 * The host lookup of the engine's own agent: `localhost` and every name under `.localhost` are the loopback address,
 * answered here and never asked of the DNS (RFC 6761, Special-Use Domain Names, section 6.3: resolution libraries
 * "SHOULD always return the IP loopback address" for them; the C library does not always do so). This is what lets a
 * serverless deployment served by the local emulator on a host of its own (`http://<id>.localhost:<port>`) be reached
 * by its id. Any other name goes to `dns.lookup`.
 */
export const localhostLookup: LookupFunction = (hostname, options, callback) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name !== 'localhost' && !name.endsWith('.localhost')) {
    dns.lookup(
      hostname,
      options,
      callback as (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
    );
    return;
  }
  // net.connect asks for every address (`all`) when it may try several families (autoSelectFamily).
  if ((options as dns.LookupAllOptions).all)
    (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, [{ address: LOOPBACK_V4, family: 4 }]);
  else callback(null, LOOPBACK_V4, 4);
};

/** Options of {@link UndiciEngine}. */
export interface UndiciEngineOptions {
  /**
   * The dispatcher to send with (kept open by {@link UndiciEngine.close}); default an EnvHttpProxyAgent of its own,
   * whose host lookup is {@link localhostLookup}.
   */
  dispatcher?: Dispatcher;
}

/** Sends the transport's requests with undici. Close it to release the connections of the agent it made. */
export class UndiciEngine implements HttpEngine {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(options: UndiciEngineOptions = {}) {
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? new EnvHttpProxyAgent({ connect: { lookup: localhostLookup } });
  }

  /**
   * Sends one request (undici follows no redirect unless told to).
   * @throws undici's network errors (Node's in `cause` or as they are); the signal's abort.
   */
  async send(req: EngineRequest): Promise<EngineResponse> {
    const res = await request(req.url, {
      method: req.method as Dispatcher.HttpMethod,
      headers: req.headers,
      // A FormData here is undici's own (from formData()): the platform's is a different class undici cannot encode.
      body: req.body as Dispatcher.DispatchOptions['body'],
      signal: req.signal,
      dispatcher: this.dispatcher,
      // bodyTimeout: undici's idle timer, reset by every chunk received: a stalled body ends (time is bounded).
      bodyTimeout: req.idleTimeoutMs,
    });
    return { status: res.statusCode, headers: headerReader(res.headers), body: res.body as unknown as ResponseBody };
  }

  /** undici's FormData, which `request()` encodes and streams (a Blob part is read from disk as it is sent). */
  formData(): FormData {
    return new UndiciFormData() as unknown as FormData;
  }

  /** Closes the dispatcher if this engine made it. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

function headerReader(raw: Record<string, string | string[] | undefined>): { get(name: string): string | null } {
  return {
    get(name: string): string | null {
      const v = raw[name.toLowerCase()];
      if (v === undefined) return null;
      return Array.isArray(v) ? v.join(', ') : v;
    },
  };
}
