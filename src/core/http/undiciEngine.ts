/**
 * The {@link HttpEngine} on undici's `request()`: the default in Node (the CLI, the tests, the benchmarks: undici
 * stays the transport of the CLI and the tests). Through an `EnvHttpProxyAgent` by default, so HTTP_PROXY,
 * HTTPS_PROXY and NO_PROXY are honoured; the body's idle timeout is undici's `bodyTimeout` (its error code
 * `UND_ERR_BODY_TIMEOUT`, which {@link isBodyIdleTimeout} recognises).
 *
 * The extension never imports this module (its bundle has no undici: esbuild.mjs swaps `defaultEngine.ts`).
 */
import { EnvHttpProxyAgent, FormData as UndiciFormData, request, type Dispatcher } from 'undici';
import type { EngineRequest, EngineResponse, HttpEngine, ResponseBody } from './engine';

/** Options of {@link UndiciEngine}. */
export interface UndiciEngineOptions {
  /** The dispatcher to send with (kept open by {@link UndiciEngine.close}); default an EnvHttpProxyAgent of its own. */
  dispatcher?: Dispatcher;
}

/** Sends the transport's requests with undici. Close it to release the connections of the agent it made. */
export class UndiciEngine implements HttpEngine {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(options: UndiciEngineOptions = {}) {
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? new EnvHttpProxyAgent();
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
