/**
 * The page's side of the layout worker: sends layout requests, reads the answers, and keeps the rule that an older
 * layout never replaces a newer one.
 *
 * Rules it keeps:
 * - One request in the worker at a time; while it works, a newer request of the same requester (a graph view)
 *   replaces the one waiting (two quick edits: the layout of the first is dropped unsent).
 * - Every request carries a sequence number, sent back with the answer. An answer that is not the one awaited is
 *   ignored, and an awaited answer that a newer request of its requester has overtaken resolves `undefined` (the
 *   caller draws nothing for it): an older layout never replaces a newer one, whatever order messages cross in.
 * - No worker (none in the environment, the page's CSP refuses it, or it failed): the same layout on the page's
 *   thread (`fallback`), answers unchanged.
 */
import { layoutPositions, type LayoutInput } from './layout';
import { parseLayoutResponse, type LayoutRequest } from './layoutProtocol';
import { LAYOUT_WORKER_SOURCE } from './layoutWorkerSource';

/** What the client needs of a worker (a DOM `Worker`, or a stand-in in a test). */
export interface LayoutWorkerLike {
  postMessage(message: LayoutRequest): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  terminate(): void;
}

interface Job {
  seq: number;
  key: object;
  input: LayoutInput;
  resolve(positions: number[] | undefined): void;
  reject(error: Error): void;
}

/** Sends layouts to a worker (see the module comment). */
export class LayoutClient {
  private worker: LayoutWorkerLike | null | undefined;
  private seq = 0;
  private inFlight: Job | undefined;
  private readonly waiting: Job[] = [];
  private readonly latest = new WeakMap<object, number>();

  /**
   * @param start starts the worker, at the first request (null, or a throw: no worker, every layout on this thread).
   * @param fallback the layout on this thread (by default layoutPositions, what the worker runs).
   */
  constructor(
    private readonly start: () => LayoutWorkerLike | null,
    private readonly fallback: (input: LayoutInput) => number[] = layoutPositions,
  ) {}

  /**
   * Lays out `input` for `key` (the requester: each graph view its own). Resolves the positions (layoutPositions'
   * shape), or undefined when a newer request of `key` overtook this one; rejects when the layout threw.
   */
  layout(input: LayoutInput, key: object): Promise<number[] | undefined> {
    const seq = ++this.seq;
    this.latest.set(key, seq);
    return new Promise((resolve, reject) => {
      for (let i = this.waiting.length - 1; i >= 0; i--)
        if (this.waiting[i]!.key === key) this.waiting.splice(i, 1)[0]!.resolve(undefined);
      this.waiting.push({ seq, key, input, resolve, reject });
      this.pump();
    });
  }

  /**
   * Starts the worker now, if it is not running: a page starts it as its graph view is made, so the worker's start
   * (its thread, reading its script) overlaps the wait for the first graph instead of delaying its layout.
   */
  warm(): void {
    this.started();
  }

  /** True when `seq` is the newest request `key` made (what an answer must be to be drawn). */
  isLatest(key: object, seq: number): boolean {
    return this.latest.get(key) === seq;
  }

  private pump(): void {
    if (this.inFlight) return;
    const job = this.waiting.shift();
    if (!job) return;
    const worker = this.started();
    if (!worker) {
      // No worker: this thread, after the caller's turn (the answer still comes later, as from a worker).
      this.inFlight = job;
      queueMicrotask(() => this.runHere(job));
      return;
    }
    this.inFlight = job;
    worker.postMessage({ type: 'layout', seq: job.seq, input: job.input });
  }

  private started(): LayoutWorkerLike | null {
    if (this.worker !== undefined) return this.worker;
    try {
      this.worker = this.start();
    } catch {
      this.worker = null;
    }
    if (this.worker) {
      this.worker.onmessage = (event) => this.receive(event.data);
      this.worker.onerror = () => {
        this.worker?.terminate();
        this.worker = null;
        this.failOver();
      };
    }
    return this.worker;
  }

  private receive(data: unknown): void {
    const answer = parseLayoutResponse(data);
    const job = this.inFlight;
    // Not the answer awaited (an older request's, or not an answer at all): ignored.
    if (!answer || !job || answer.seq !== job.seq) return;
    this.inFlight = undefined;
    if (answer.type === 'layout') this.settle(job, answer.positions);
    else job.reject(new Error(answer.message));
    this.pump();
  }

  private runHere(job: Job): void {
    if (this.inFlight !== job) return;
    this.inFlight = undefined;
    try {
      // Overtaken while it waited: not laid out at all.
      if (!this.isLatest(job.key, job.seq)) job.resolve(undefined);
      else this.settle(job, this.fallback(job.input));
    } catch (e) {
      job.reject(e instanceof Error ? e : new Error(String(e)));
    }
    this.pump();
  }

  private settle(job: Job, positions: number[]): void {
    job.resolve(this.isLatest(job.key, job.seq) ? positions : undefined);
  }

  /** The worker is gone: the request it held goes back first in line, to run on this thread. */
  private failOver(): void {
    const job = this.inFlight;
    this.inFlight = undefined;
    if (job) this.waiting.unshift(job);
    this.pump();
  }
}

/** A DOM worker started from the bundled layout worker's text (a Blob URL), or null when this page cannot start one. */
function startBundledWorker(): LayoutWorkerLike | null {
  type DomWorker = LayoutWorkerLike & {
    addEventListener(type: string, listener: () => void, options: { once: boolean }): void;
  };
  const WorkerClass = (globalThis as { Worker?: new (url: string) => DomWorker }).Worker;
  if (LAYOUT_WORKER_SOURCE === undefined || WorkerClass === undefined || typeof URL.createObjectURL !== 'function')
    return null;
  const url = URL.createObjectURL(new Blob([LAYOUT_WORKER_SOURCE], { type: 'text/javascript' }));
  const revoke = () => URL.revokeObjectURL(url);
  try {
    // The DOM's Worker has the members LayoutWorkerLike names (its event types are wider).
    const worker = new WorkerClass(url);
    // Let go of the script's Blob once the worker has surely read it: at its first answer, or when it failed.
    worker.addEventListener('message', revoke, { once: true });
    worker.addEventListener('error', revoke, { once: true });
    return worker;
  } catch (e) {
    revoke();
    throw e;
  }
}

let shared: LayoutClient | null | undefined;
let workerEnabled = true;

/**
 * The page's layout client, shared by its graph views (one worker per page, warm after its first layout), or null
 * when layouts run on the page's thread: no Worker in this environment, no bundled worker, or turned off by
 * {@link setLayoutWorkerEnabled}.
 */
export function layoutClient(): LayoutClient | null {
  if (!workerEnabled) return null;
  if (shared === undefined)
    shared =
      LAYOUT_WORKER_SOURCE !== undefined && typeof (globalThis as { Worker?: unknown }).Worker === 'function'
        ? new LayoutClient(startBundledWorker)
        : null;
  return shared;
}

/** Turns the layout worker off (layouts on the page's thread, as without a Worker) or on again: for the benchmark. */
export function setLayoutWorkerEnabled(enabled: boolean): void {
  workerEnabled = enabled;
}
