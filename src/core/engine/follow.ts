/**
 * Following a job on the engine's WebSocket, shared by the APIs that speak it (the deprecated v1; a ComfyUI server's
 * native API): one connection at a time, its messages handed to a tracker (tracker.ts), and when it closes or fails it
 * is reopened after {@link reconnectDelay} (bounded, jittered; after {@link QUICK_RECONNECTS} quick tries at least
 * 6 s), at most `maxReconnects` times in a row; then, or after a refusal of the handshake (a 4xx other than 429), the
 * watch's reads carry on alone. Cloud API v1 (deprecated), Events; ComfyUI server API (observed), Following a job.
 */
import type { Clock } from '../http/clock';
import { ApiError } from '../http/errors';
import { DEFAULT_RETRY_POLICY, backoff } from '../http/retry';
import type { EngineMessage, EngineSocket } from './socket';

/** Reconnects tried quickly (under 6 s) before the delay grows. */
export const QUICK_RECONNECTS = 3;
/** The shortest delay after the quick reconnects, ms: at least 6 s, so a socket that keeps failing costs little. */
export const SLOW_RECONNECT_MIN_MS = 6_000;
/** The longest delay between reconnects, ms. */
export const MAX_RECONNECT_DELAY_MS = 60_000;

/**
 * The wait before reconnect number `attempt` (1-based), ms: full-jitter exponential backoff (retry.ts `backoff`) from
 * 500 ms for the first {@link QUICK_RECONNECTS} (at most 2 s), then at least {@link SLOW_RECONNECT_MIN_MS} plus a
 * jittered exponential part, never more than {@link MAX_RECONNECT_DELAY_MS}: never a tight loop.
 * @param random source of jitter in [0, 1)
 */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  if (attempt <= QUICK_RECONNECTS)
    return backoff(attempt, { ...DEFAULT_RETRY_POLICY, baseDelayMs: 500, maxDelayMs: 2_000, random });
  const extra = backoff(attempt - QUICK_RECONNECTS, {
    ...DEFAULT_RETRY_POLICY,
    baseDelayMs: 3_000,
    maxDelayMs: MAX_RECONNECT_DELAY_MS - SLOW_RECONNECT_MIN_MS,
    random,
  });
  return SLOW_RECONNECT_MIN_MS + extra;
}

/** A refusal of the handshake that reconnecting will not change: a 4xx other than 429. */
function isRefusal(err: unknown): boolean {
  return ApiError.is(err) && err.status >= 400 && err.status < 500 && err.status !== 429;
}

/** A failure as a short reason for a person. */
export function reasonOf(err: unknown): string {
  if (ApiError.is(err)) return `${err.code} (HTTP ${err.status})`;
  return err instanceof Error ? err.message : String(err);
}

/** What {@link followSocket} follows, and whom it tells. Times in ms. */
export interface SocketFollowOptions {
  /** An open socket to listen on first (opened before the prompt was posted); the follow owns it and closes it. */
  socket?: EngineSocket;
  /** false: no socket (a given one is closed). Default true. */
  useSocket?: boolean;
  /** Opens a new connection (the API's client). */
  connect(stop: AbortSignal): Promise<EngineSocket>;
  clock: Clock;
  /** Source of jitter in [0, 1) for reconnects. */
  random: () => number;
  /** Reconnects in a row (without a connection that lived a minute) before giving up the socket. */
  maxReconnects: number;
  /** Aborted when the watch ends: the follow closes its socket and returns. */
  stop: AbortSignal;
  /** Receives each message of the current connection, and is told of a new connection. */
  tracker: { newConnection(): void; handle(m: EngineMessage): void };
  /** Told whether the job is followed on the stream or by the reads alone (and why). */
  mode(mode: 'stream' | 'polling', reason?: string): void;
  /** Told when a connection opens (true) and ends (false): the reads may slow down while one is open. */
  healthy(open: boolean): void;
  /** Told when a connection ended: what it missed should be read now. */
  missed(): void;
}

/** Follows the socket until `stop` aborts or the socket is given up (this module's header). Never throws. */
export async function followSocket(o: SocketFollowOptions): Promise<void> {
  let socket = o.socket;
  if (o.useSocket === false) {
    socket?.close();
    o.mode('polling', 'the WebSocket is not used');
    return;
  }
  let failures = 0;
  while (!o.stop.aborted) {
    if (failures > 0) {
      if (failures > o.maxReconnects) {
        o.mode('polling', `the WebSocket failed ${failures} times in a row; following the job by polling`);
        return;
      }
      try {
        await o.clock.sleep(reconnectDelay(failures, o.random), o.stop);
      } catch {
        return;
      }
    }
    try {
      socket ??= await o.connect(o.stop);
    } catch (err) {
      if (o.stop.aborted) return;
      if (isRefusal(err)) {
        o.mode('polling', `the WebSocket was refused (${reasonOf(err)}); following the job by polling`);
        return;
      }
      failures++;
      o.mode('polling', `the WebSocket could not be opened (${reasonOf(err)})`);
      continue;
    }
    const opened = o.clock.now();
    const current = socket;
    o.tracker.newConnection();
    o.healthy(true);
    o.mode('stream');
    const reason = await new Promise<string>((resolve) => {
      const onStop = (): void => resolve('stopped');
      o.stop.addEventListener('abort', onStop, { once: true });
      current.listen((m) => {
        try {
          o.tracker.handle(m);
        } catch {
          // Odd data never crashes the watch (the listener runs inside the socket's event handler).
        }
      });
      current.onClose((why) => {
        o.stop.removeEventListener('abort', onStop);
        resolve(why);
      });
    });
    o.healthy(false);
    current.close();
    socket = undefined;
    if (o.stop.aborted) return;
    // A connection that lived a minute was no failure of a tight loop: the count starts again.
    failures = o.clock.now() - opened >= 60_000 ? 1 : failures + 1;
    o.mode('polling', reason);
    o.missed(); // whatever the socket missed: read the job now
  }
}
