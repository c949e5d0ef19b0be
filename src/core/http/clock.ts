/**
 * Time, injected: every wait of the core (polling, backoff, Retry-After, timeouts) goes through a
 * {@link Clock}, so tests drive time without sleeping.
 */
import { AbortError } from './errors';

/** Wall-clock time and an abortable sleep. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with {@link AbortError} as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: Date.now and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new AbortError());
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new AbortError());
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * A clock for tests: `sleep` resolves when {@link ManualClock.advance} moves time past its deadline, and the
 * durations asked for are recorded in `sleeps` (ms), so a test can assert the waits.
 */
export class ManualClock implements Clock {
  private current: number;
  private waiters: { at: number; resolve: () => void }[] = [];
  /** Every sleep asked for, in ms, in order. */
  readonly sleeps: number[] = [];
  /** When true, every sleep resolves at once (time jumps forward by its length). */
  autoAdvance: boolean;

  constructor(start = 0, options: { autoAdvance?: boolean } = {}) {
    this.current = start;
    this.autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(new AbortError());
    if (this.autoAdvance || ms <= 0) {
      this.current += Math.max(0, ms);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = { at: this.current + ms, resolve };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new AbortError());
        },
        { once: true },
      );
    });
  }

  /** Moves time forward by `ms` and wakes every sleeper whose deadline has passed. */
  advance(ms: number): void {
    this.current += ms;
    const due = this.waiters.filter((w) => w.at <= this.current);
    this.waiters = this.waiters.filter((w) => w.at > this.current);
    for (const w of due) w.resolve();
  }
}
