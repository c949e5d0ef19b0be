/**
 * A FIFO queue that runs at most `concurrency` items at once. Starting is deferred to the next turn of the
 * event loop, so a submission's answer shows its job `queued` (a 201 means "durably recorded and queued").
 */

/** What the scheduler is told to do with an item. */
interface SchedulerCallbacks<T> {
  /** Runs `item`; it counts against the concurrency until the promise settles. */
  start(item: T): Promise<void>;
  /** The queue changed (an item was added, started or removed); `queue[0]` starts next. */
  queueChanged(queue: readonly T[]): void;
}

/** FIFO with bounded concurrency. */
export class Scheduler<T> {
  private readonly queue: T[] = [];
  private readonly running = new Set<Promise<void>>();
  private pumpHandle: NodeJS.Immediate | undefined;
  private closed = false;

  constructor(
    private readonly concurrency: number,
    private readonly callbacks: SchedulerCallbacks<T>,
  ) {}

  /** Appends `item` to the queue. */
  enqueue(item: T): void {
    if (this.closed) return;
    this.queue.push(item);
    this.callbacks.queueChanged(this.queue);
    this.schedulePump();
  }

  /** Takes `item` out of the queue; false when it was not queued (already started, or never queued). */
  remove(item: T): boolean {
    const index = this.queue.indexOf(item);
    if (index < 0) return false;
    this.queue.splice(index, 1);
    this.callbacks.queueChanged(this.queue);
    return true;
  }

  /** Stops starting items, empties the queue and waits for the running ones to settle (abort them first). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.pumpHandle !== undefined) clearImmediate(this.pumpHandle);
    this.queue.length = 0;
    await Promise.allSettled([...this.running]);
  }

  private schedulePump(): void {
    if (this.pumpHandle !== undefined || this.closed) return;
    this.pumpHandle = setImmediate(() => {
      this.pumpHandle = undefined;
      this.pump();
    });
  }

  private pump(): void {
    let started = false;
    while (!this.closed && this.running.size < this.concurrency && this.queue.length > 0) {
      const item = this.queue.shift()!;
      started = true;
      const run: Promise<void> = this.callbacks
        .start(item)
        .catch(() => undefined) // the runner reports its own failures; a rejection must not stop the queue
        .finally(() => {
          this.running.delete(run);
          this.schedulePump();
        });
      this.running.add(run);
    }
    if (started) this.callbacks.queueChanged(this.queue);
  }
}
