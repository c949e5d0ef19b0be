/**
 * The job event stream, GET /api/v2/jobs/{id}/events. Rules: jobs-assets-api-v2.md, "Events"; FACTS.md event
 * catalog. Parsing is eventsource-parser's; this module only decodes bytes (UTF-8, `{stream: true}` so a
 * character split across chunks survives) and validates each event's JSON.
 * Unknown event names and malformed data are skipped, never fatal.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import {
  OutputSchema,
  PreviewEventSchema,
  ProgressSchema,
  StatusEventSchema,
  type JobOutput,
  type Preview,
  type Progress,
} from './schemas';

/** One event of the stream that the client understands. */
export type JobEvent =
  | { type: 'status'; status: string; queuePosition: number | null }
  | { type: 'progress'; progress: Progress }
  | { type: 'preview'; preview: Preview }
  | { type: 'output'; output: JobOutput };

/**
 * Turns one SSE message into a {@link JobEvent}, or undefined when the name is unknown or the data does not
 * fit (both are ignored, per the spec README's "tolerant when reading").
 */
export function toJobEvent(message: EventSourceMessage): JobEvent | undefined {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  switch (message.event) {
    case 'status': {
      const r = StatusEventSchema.safeParse(data);
      return r.success ? { type: 'status', status: r.data.status, queuePosition: r.data.queue_position ?? null } : undefined;
    }
    case 'progress': {
      const r = ProgressSchema.safeParse(data);
      return r.success ? { type: 'progress', progress: r.data } : undefined;
    }
    case 'preview': {
      const r = PreviewEventSchema.safeParse(data);
      return r.success ? { type: 'preview', preview: r.data } : undefined;
    }
    case 'output': {
      const r = OutputSchema.safeParse(data);
      return r.success ? { type: 'output', output: r.data } : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Reads an event-stream body and yields its events in order. Ends when the body ends. Breaking out of the
 * loop destroys the body. `onBytes` is called for every chunk (keep-alive comments included), for idle timers.
 * @throws whatever the body's stream throws (a reset connection).
 */
export async function* readJobEvents(body: Readable, onBytes?: () => void): AsyncGenerator<JobEvent> {
  const queue: JobEvent[] = [];
  const parser = createParser({
    onEvent(message) {
      const event = toJobEvent(message);
      if (event) queue.push(event);
    },
  });
  const decoder = new TextDecoder('utf-8');
  try {
    for await (const chunk of body) {
      onBytes?.();
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      while (queue.length > 0) yield queue.shift()!;
    }
    parser.feed(decoder.decode());
    while (queue.length > 0) yield queue.shift()!;
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
