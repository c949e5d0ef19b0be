/**
 * Shared by the watch-*.test.ts suites (watching a job with a scripted server and an injected clock, no sleeps): the
 * scripted server, SSE and error answers, and the clocks that step only once every task of the watch is asleep.
 */
import type { ServerResponse } from 'node:http';
import { ManualClock } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { type WatchUpdate } from '../../src/core/v2/events';
import { startServer, type TestServer } from './httpServer';

export interface Script {
  /** Statuses GET answers in turn (the last repeats). */
  gets: Record<string, unknown>[];
  /** What the events endpoint does. */
  events: (res: ServerResponse) => void;
}

/**
 * A scripted server and a client on a manual clock. With `autoAdvance` every sleep returns at once (time jumps);
 * without it, polls wait until the stream wakes the watcher or the test advances time, so the order of stream
 * and polls is deterministic.
 */
export async function scripted(
  script: Script,
  autoAdvance = true,
): Promise<{ server: TestServer; client: V2Client; clock: ManualClock }> {
  let i = 0;
  const server = await startServer((req, res) => {
    if (req.url?.endsWith('/events')) return script.events(res);
    const body = script.gets[Math.min(i++, script.gets.length - 1)];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  const clock = new ManualClock(0, { autoAdvance });
  return { server, client: new V2Client({ baseUrl: server.origin, clock }), clock };
}

export function refuse(status: number, code: string) {
  return (res: ServerResponse): void => {
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: { code, message: code } }));
  };
}

export function sse(frames: string[], end = true) {
  return (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const f of frames) res.write(f);
    if (end) res.end();
  };
}

/**
 * A manual clock that knows how many sleeps are pending, so that a test advances time only once every task of the
 * watch (the poll loop, the stream's idle watchdog) is asleep: event-driven steps, no sleeps as synchronisation.
 */
export class SteppedClock extends ManualClock {
  private readonly pending = new Map<object, number>();
  private readonly asleepWaiters: { n: number; resolve: () => void }[] = [];

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const promise = super.sleep(ms, signal);
    if (ms <= 0 || this.autoAdvance) return promise;
    const token = {};
    this.pending.set(token, this.now() + ms);
    const done = (): void => {
      if (this.pending.delete(token)) this.check();
    };
    promise.then(done, done);
    this.check();
    return promise;
  }

  override advance(ms: number): void {
    super.advance(ms);
    // The woken sleeps stop counting at once (their promises settle a microtask later).
    for (const [token, at] of this.pending) if (at <= this.now()) this.pending.delete(token);
  }

  /** Resolves once exactly `n` sleeps are pending. */
  asleep(n: number): Promise<void> {
    return new Promise((resolve) => {
      this.asleepWaiters.push({ n, resolve });
      this.check();
    });
  }

  private check(): void {
    for (const w of [...this.asleepWaiters]) {
      if (this.pending.size === w.n) {
        this.asleepWaiters.splice(this.asleepWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
}

/** A clock whose every sleep jumps time forward (autoAdvance), then runs `hook` with the new time before it returns. */
export class HookedClock extends ManualClock {
  constructor(private readonly hook: (now: number) => Promise<void> | void) {
    super(0, { autoAdvance: true });
  }
  override async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await super.sleep(ms, signal);
    await this.hook(this.now());
  }
}

/** Answers the error envelope of `code` with HTTP `status` (and Retry-After when given). */
export function answerError(
  res: ServerResponse,
  status: number,
  code: string,
  message = code,
  retryAfter?: number,
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
  });
  res.end(JSON.stringify({ error: { code, message } }));
}

export function answerJob(res: ServerResponse, body: Record<string, unknown>): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

/** The `retrying` updates of a watch. */
export function retries(updates: WatchUpdate[]): Extract<WatchUpdate, { type: 'retrying' }>[] {
  return updates.filter((u): u is Extract<WatchUpdate, { type: 'retrying' }> => u.type === 'retrying');
}

/**
 * Writes `chunk` to `res` until `limit` bytes are sent or the client goes away (backpressure obeyed); resolves with
 * the bytes sent and whether the client left first.
 */
export async function pushUntilGone(
  res: ServerResponse,
  chunk: Buffer,
  limit: number,
): Promise<{ sent: number; gone: boolean }> {
  let gone = false;
  const left = new Promise<void>((resolve) =>
    res.once('close', () => {
      gone = !res.writableFinished;
      resolve();
    }),
  );
  let sent = 0;
  while (!res.destroyed && sent < limit) {
    const flushed = res.write(chunk);
    sent += chunk.length;
    if (!flushed) await Promise.race([new Promise<void>((resolve) => res.once('drain', resolve)), left]);
  }
  if (!res.destroyed) res.end();
  await left;
  return { sent, gone };
}
