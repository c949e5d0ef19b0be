/**
 * Server-sent event streams of jobs, GET /api/v2/jobs/{id}/events (jobs-assets-api-v2.md "Events";
 * FACTS.md event catalog). Live push only: frames carry no `id`, nothing is replayed; a stream gets the
 * job's current snapshot on connect, then every event published for the job, and ends after the terminal
 * status. Keep-alive comment lines keep idle streams visibly alive.
 */
import type { ServerResponse } from 'node:http';

/** The event names the emulator sends (`log` is reserved and not sent). */
export type EventName = 'status' | 'progress' | 'preview' | 'output';

/** One event: its name and its JSON data. */
export interface StreamEvent {
  readonly event: EventName;
  readonly data: unknown;
}

interface Subscriber {
  readonly res: ServerResponse;
  readonly keepAlive: NodeJS.Timeout;
}

/** One SSE frame. JSON.stringify never emits a raw newline, so the data fits one `data:` line. */
function frame(e: StreamEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The open event streams, per job. */
export class EventHub {
  private readonly streams = new Map<string, Set<Subscriber>>();

  /** @param keepAliveMs interval of the `: keep-alive` comment lines on each open stream. */
  constructor(private readonly keepAliveMs: number) {}

  /**
   * Answers `res` as an event stream of job `jobId`: writes `snapshot`, then ends at once when `ended`
   * (the job is already terminal), or stays subscribed for the events published later.
   */
  open(jobId: string, res: ServerResponse, snapshot: readonly StreamEvent[], ended: boolean): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies in front of a companion must not buffer the stream.
      'x-accel-buffering': 'no',
    });
    res.write(snapshot.map(frame).join(''));
    if (ended) {
      res.end();
      return;
    }
    const subscriber: Subscriber = {
      res,
      keepAlive: setInterval(() => res.write(': keep-alive\n\n'), this.keepAliveMs),
    };
    let set = this.streams.get(jobId);
    if (set === undefined) this.streams.set(jobId, (set = new Set()));
    set.add(subscriber);
    res.on('close', () => this.detach(jobId, subscriber));
  }

  /** Sends `event` to every open stream of job `jobId`. */
  publish(jobId: string, event: StreamEvent): void {
    const set = this.streams.get(jobId);
    if (set === undefined) return;
    const text = frame(event);
    for (const s of set) s.res.write(text);
  }

  /** Ends every open stream of job `jobId` (after its terminal status, or when the job is dropped). */
  end(jobId: string): void {
    for (const s of this.streams.get(jobId) ?? []) {
      this.detach(jobId, s);
      s.res.end();
    }
  }

  /** Ends every open stream (the emulator is closing). */
  closeAll(): void {
    for (const jobId of [...this.streams.keys()]) this.end(jobId);
  }

  private detach(jobId: string, subscriber: Subscriber): void {
    clearInterval(subscriber.keepAlive);
    const set = this.streams.get(jobId);
    if (set === undefined) return;
    set.delete(subscriber);
    if (set.size === 0) this.streams.delete(jobId);
  }
}
