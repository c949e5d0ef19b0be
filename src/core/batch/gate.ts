/**
 * The one gate every job of a batch goes through: at most `concurrency` jobs in flight, and one shared pause when the
 * server says it is busy (Job and Asset API v2, Errors: 429 `queue_full` and `rate_limited` carry Retry-After), so a
 * busy server slows the whole batch, not each job alone (N jobs each waiting out their own Retry-After and retrying
 * at once would hit it N times again).
 *
 * Rules:
 * - never more than `concurrency` tasks run at once; waiting tasks start in the order they asked;
 * - {@link BatchGate.pause} holds every task not yet started (and every retry that calls {@link BatchGate.open})
 *   until the latest deadline asked for: the longest pause wins, a later, shorter one never shortens it, and pauses
 *   asked at once do not add up (http/retry.ts {@link RetryPause});
 * - time goes through the injected clock only (tests drive it without sleeping).
 */
import type { Clock } from '../http/clock';
import { AbortError } from '../http/errors';
import { RetryPause } from '../http/retry';

/** Concurrency limit and shared pause of a batch; see the rules above. */
export class BatchGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** The server's pause, shared by every task of the batch. */
  private readonly pauses: RetryPause;

  /**
   * @param concurrency tasks in flight at once, a whole number ≥ 1.
   * @throws RangeError for another concurrency.
   */
  constructor(
    readonly concurrency: number,
    clock: Clock,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be a whole number of at least 1 (got ${concurrency})`);
    this.pauses = new RetryPause(clock);
  }

  /** Tasks running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Holds everything not yet started until `ms` from now (ms; Retry-After × 1000), unless a later pause stands. */
  pause(ms: number): void {
    this.pauses.extend(ms);
  }

  /**
   * Resolves once no pause stands (at once when none does); a pause asked meanwhile is waited out too.
   * @throws AbortError when `signal` aborts.
   */
  open(signal?: AbortSignal): Promise<void> {
    return this.pauses.wait(signal);
  }

  /**
   * Runs `task` in a slot once one is free and no pause stands; the slot is freed when it settles.
   * @returns what `task` returns. @throws what `task` throws; AbortError when `signal` aborts while waiting.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.slot(signal);
    try {
      await this.open(signal);
      return await task();
    } finally {
      this.release();
    }
  }

  private async slot(signal?: AbortSignal): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return;
    }
    // An AbortError, not the signal's reason: callers (runBatch, the CLI's exit 130) tell an abort by its type.
    if (signal?.aborted) throw new AbortError();
    await new Promise<void>((resolve, reject) => {
      const entry = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new AbortError());
      };
      this.waiting.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes to the next waiter as it is (`running` unchanged), else it is freed.
    if (next) next();
    else this.running--;
  }
}
