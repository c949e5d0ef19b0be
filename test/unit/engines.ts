/**
 * The two HTTP engines the transport tests run over (the transport is injected, so the core does not care
 * which): the Node default (undici's `request()`), and a real `fetch` (Node's global one, which is undici's fetch, as
 * in the extension host).
 */
import { Readable } from 'node:stream';
import { FetchEngine, globalFetch, type HttpEngine } from '../../src/core/http';
import type { EngineRequest, EngineResponse, ResponseBody } from '../../src/core/http/engine';
import { UndiciEngine } from '../../src/core/http/undiciEngine';

export interface EngineCase {
  /** `undici` (the default in Node) or `fetch`. */
  name: 'undici' | 'fetch';
  /** The transport options that select the engine: none for the default. */
  options(): { engine?: HttpEngine };
  /** A new engine of this kind, the caller's to close. */
  make(): HttpEngine;
}

export const ENGINES: EngineCase[] = [
  { name: 'undici', options: () => ({}), make: () => new UndiciEngine() },
  {
    name: 'fetch',
    options: () => ({ engine: new FetchEngine(globalFetch) }),
    make: () => new FetchEngine(globalFetch),
  },
];

/**
 * An engine around another that counts the bytes the core pulled from each response body: the exact measure of "a
 * capped read does not read the whole body" (what the core took from the connection, not the machine's memory).
 * The wrapped body pulls one chunk from the engine's body only when the core asks for more (a high-water mark of 0),
 * so the count is at most what the core read plus one chunk in hand.
 */
export class CountingEngine implements HttpEngine {
  /** Bytes pulled from response bodies so far, over every request. */
  pulled = 0;

  constructor(private readonly inner: HttpEngine) {}

  async send(request: EngineRequest): Promise<EngineResponse> {
    const res = await this.inner.send(request);
    return { ...res, body: new CountingBody(res.body, (n) => (this.pulled += n)) };
  }

  formData(): FormData {
    return this.inner.formData();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A response body that pulls from `inner` on demand and reports each chunk's size to `count`. */
class CountingBody extends Readable implements ResponseBody {
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(
    private readonly inner: ResponseBody,
    private readonly count: (bytes: number) => void,
  ) {
    super({ highWaterMark: 0 });
    this.chunks = inner[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  override _read(): void {
    this.chunks.next().then(
      ({ done, value }) => {
        if (this.destroyed) return;
        if (done) {
          this.push(null);
          return;
        }
        this.count(value.length);
        this.push(value);
      },
      (err: unknown) => this.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.inner.destroyed) this.inner.destroy(err ?? undefined);
    callback(err);
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Discards the body: destroys it (and the engine's body); resolves once it is closed. */
  dump(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.once('close', () => resolve());
      this.destroy();
    });
  }
}
