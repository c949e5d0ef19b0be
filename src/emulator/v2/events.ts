/**
 * Server-sent event streams of jobs, GET /api/v2/jobs/{id}/events (Job and Asset API v2, Events; the catalog of
 * event names, not shown there (rule 7), from public sources). Live push only: frames carry no `id`, nothing is
 * replayed; a stream gets the job's current snapshot on connect, then every event published for the job, and ends after
 * the terminal status. Keep-alive comment lines keep idle streams visibly alive.
 * A stream fault (faults.ts) cuts a stream after a number of frames: it ends, is reset, or falls silent.
 */
import type { ServerResponse } from 'node:http';
import type { StreamFault } from '../faults';

/** The event names the emulator sends (`log` is reserved and not sent). */
type EventName = 'status' | 'progress' | 'preview' | 'output';

/** One event: its name and its JSON data. */
export interface StreamEvent {
  readonly event: EventName;
  readonly data: unknown;
}

interface Subscriber {
  readonly res: ServerResponse;
  keepAlive: NodeJS.Timeout | undefined;
  /** Frames written so far. */
  frames: number;
  readonly fault: StreamFault | undefined;
}

/** One SSE frame. JSON.stringify never emits a raw newline, so the data fits one `data:` line. */
function frame(e: StreamEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The open event streams, per job. */
export class EventHub {
  private readonly streams = new Map<string, Set<Subscriber>>();
  /** Streams a `silentStream` fault silenced: they get nothing more, and end only when the emulator closes. */
  private readonly silenced = new Set<Subscriber>();

  /** @param keepAliveMs interval of the `: keep-alive` comment lines on each open stream. */
  constructor(private readonly keepAliveMs: number) {}

  /**
   * Answers `res` as an event stream of job `jobId`: writes `snapshot`, then ends at once when `ended`
   * (the job is already terminal), or stays subscribed for the events published later. With `fault`, the
   * stream is cut after `fault.afterFrames` frames (the snapshot's included).
   */
  open(
    jobId: string,
    res: ServerResponse,
    snapshot: readonly StreamEvent[],
    ended: boolean,
    fault?: StreamFault,
  ): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies in front of a companion must not buffer the stream.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const subscriber: Subscriber = { res, keepAlive: undefined, frames: 0, fault };
    let set = this.streams.get(jobId);
    if (set === undefined) this.streams.set(jobId, (set = new Set()));
    set.add(subscriber);
    res.on('close', () => this.detach(jobId, subscriber));
    if (fault !== undefined && fault.afterFrames === 0) this.cut(jobId, subscriber);
    for (const e of snapshot) this.send(jobId, subscriber, e);
    if (!this.streams.get(jobId)?.has(subscriber)) return; // cut during the snapshot
    if (ended) {
      this.detach(jobId, subscriber);
      res.end();
      return;
    }
    subscriber.keepAlive = setInterval(() => res.write(': keep-alive\n\n'), this.keepAliveMs);
  }

  /** Sends `event` to every open stream of job `jobId`. */
  publish(jobId: string, event: StreamEvent): void {
    for (const s of [...(this.streams.get(jobId) ?? [])]) this.send(jobId, s, event);
  }

  /** Ends every open stream of job `jobId` (after its terminal status, or when the job is dropped). */
  end(jobId: string): void {
    for (const s of [...(this.streams.get(jobId) ?? [])]) {
      this.detach(jobId, s);
      s.res.end();
    }
  }

  /** Ends every open stream, silenced ones too (the emulator is closing). */
  closeAll(): void {
    for (const jobId of [...this.streams.keys()]) this.end(jobId);
    for (const s of this.silenced) s.res.end();
    this.silenced.clear();
  }

  /** Writes one frame to a subscribed stream, then applies its fault once it has had its frames. */
  private send(jobId: string, subscriber: Subscriber, event: StreamEvent): void {
    if (!this.streams.get(jobId)?.has(subscriber)) return;
    subscriber.res.write(frame(event));
    subscriber.frames++;
    if (subscriber.fault !== undefined && subscriber.frames >= subscriber.fault.afterFrames)
      this.cut(jobId, subscriber);
  }

  /** Applies a stream fault: end, reset, or silence (no keep-alive, no events, no end until close). */
  private cut(jobId: string, subscriber: Subscriber): void {
    this.detach(jobId, subscriber);
    const then = subscriber.fault?.then;
    if (then === 'end') subscriber.res.end();
    else if (then === 'reset') {
      // Ends the connection after the frames already written, without ending the chunked body: the client
      // gets the frames, then a connection that broke mid-response (destroy() would drop frames not yet sent).
      const socket = subscriber.res.socket;
      if (socket !== null) socket.end();
      else subscriber.res.destroy();
    } else {
      this.silenced.add(subscriber);
      subscriber.res.once('close', () => this.silenced.delete(subscriber));
    }
  }

  private detach(jobId: string, subscriber: Subscriber): void {
    if (subscriber.keepAlive !== undefined) clearInterval(subscriber.keepAlive);
    subscriber.keepAlive = undefined;
    const set = this.streams.get(jobId);
    if (set === undefined) return;
    set.delete(subscriber);
    if (set.size === 0) this.streams.delete(jobId);
  }
}
