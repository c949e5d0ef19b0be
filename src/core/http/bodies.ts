/**
 * A WHATWG response body (a web `ReadableStream`) as the Node `Readable` the core reads ({@link ResponseBody}), with
 * the idle timeout that undici's `bodyTimeout` gives the other engine (every body read has an idle timeout, so a
 * stalled server cannot hold a read forever; on `fetch` the core keeps that timer itself).
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream, ReadableStreamDefaultReader } from 'node:stream/web';
import type { Clock } from './clock';
import { BodyIdleTimeoutError, type ResponseBody } from './engine';

/** How much {@link WebStreamBody.dump} reads at most before it destroys the body instead, bytes (undici's figure). */
const DUMP_LIMIT_BYTES = 128 * 1024;

/**
 * A web stream read as a Node `Readable` of Buffers, pulled chunk by chunk as the consumer asks for more.
 *
 * The idle timeout: while a read is outstanding (the consumer asked for bytes and none came yet), no chunk within
 * `idleTimeoutMs` destroys the body with a {@link BodyIdleTimeoutError} and calls `onEnd` with it (which aborts the
 * fetch, freeing the connection). Time while the consumer is not asking (back-pressure from a slow disk, a paused
 * reader) does not count, as with undici, whose body timer does not fire while paused. One sleep of the injected
 * clock covers a whole idle period, however many chunks arrive within it: each chunk only moves the start of the wait
 * forward, and the sleeper, waking, waits out the remainder (so a timer is never reset right before it is checked).
 */
export class WebStreamBody extends Readable implements ResponseBody {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  /** When the outstanding read began (clock ms); undefined while no read is outstanding. */
  private waitingSince: number | undefined;
  private watching = false;
  private readonly stopWatching = new AbortController();

  /**
   * @param stream the body; null: an empty one (a HEAD, a 204)
   * @param idleTimeoutMs 0: no idle timeout
   * @param onEnd called once when the body is destroyed before its end (an error, a timeout, the consumer's
   *   `destroy()`), with the error if any: the engine aborts the request there
   */
  constructor(
    stream: WebReadableStream<Uint8Array> | null,
    private readonly idleTimeoutMs: number,
    private readonly clock: Clock,
    private readonly onEnd: (err: Error | null) => void = () => undefined,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.reader = stream?.getReader();
  }

  override _read(): void {
    const reader = this.reader;
    if (!reader) {
      this.push(null);
      return;
    }
    if (this.idleTimeoutMs > 0) {
      this.waitingSince = this.clock.now();
      if (!this.watching) this.watch();
    }
    reader.read().then(
      ({ done, value }) => {
        this.waitingSince = undefined;
        if (this.destroyed) return;
        if (done) this.push(null);
        else if (value.byteLength === 0)
          this._read(); // nothing to push: ask again
        else this.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      },
      (err: unknown) => {
        this.waitingSince = undefined;
        this.destroy(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.stopWatching.abort();
    if (!this.readableEnded) {
      this.onEnd(err);
      this.reader?.cancel(err ?? undefined).catch(() => undefined);
    }
    callback(err);
  }

  /** The whole body as UTF-8 text (unbounded: for bodies known to be small). */
  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Discards the body: reads at most 128 KiB, then destroys it; resolves once it is closed, whatever happened. */
  dump(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let left = DUMP_LIMIT_BYTES;
      this.once('close', () => resolve());
      this.on('error', () => undefined);
      this.on('data', (chunk: Buffer) => {
        left -= chunk.length;
        if (left <= 0) this.destroy();
      });
      this.resume();
    });
  }

  /** Sleeps through idle periods while a read is outstanding; destroys the body when one passes with no chunk. */
  private watch(): void {
    this.watching = true;
    const loop = async (): Promise<void> => {
      try {
        for (;;) {
          const since = this.waitingSince;
          if (since === undefined || this.destroyed) return;
          const remaining = since + this.idleTimeoutMs - this.clock.now();
          if (remaining <= 0) {
            this.destroy(new BodyIdleTimeoutError(this.idleTimeoutMs));
            return;
          }
          await this.clock.sleep(remaining, this.stopWatching.signal);
        }
      } catch {
        // stopped: the body is closed
      } finally {
        this.watching = false;
      }
    };
    void loop();
  }
}
