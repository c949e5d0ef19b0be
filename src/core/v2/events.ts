/**
 * The job event stream, GET /api/v2/jobs/{id}/events. Rules: Job and Asset API v2, Events (the catalog of event names
 * is not shown there, rule 7; public sources give `status`, `progress`, `preview`, `output`, `log`). Parsing is
 * eventsource-parser's; this module bounds the bytes it may buffer (a line or a frame over its
 * cap, 1 MiB by default, ends the stream: server data is untrusted and memory is bounded), decodes them
 * (UTF-8, `{stream: true}` so a character split across chunks survives) and validates each event's JSON with zod.
 * Unknown event names and malformed data are skipped, never fatal.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import { ComfyError } from '../http/errors';
import { describeSize } from '../util/bytes';
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
 * What a watcher reports while a job runs, in order, in the API's own shapes (the job backend maps them into the
 * model: mapping.ts `updateOf`); never a progress that goes backwards.
 */
export type WatchUpdate =
  | { type: 'status'; status: string; queuePosition: number | null }
  | { type: 'progress'; progress: Progress }
  | { type: 'preview'; preview: Preview }
  | { type: 'output'; output: JobOutput }
  | { type: 'mode'; mode: 'stream' | 'polling'; reason?: string }
  /**
   * A read of the job failed transiently and is tried again after `delayMs` (ms). `reason` says what failed (code,
   * HTTP status); `failingSinceMs` is the clock time (ms since the epoch, from the watch's clock) of the first failure
   * of this run of failures: a UI shows "server unreachable since …, retrying in N s".
   */
  | { type: 'retrying'; delayMs: number; reason: string; failingSinceMs: number };

/**
 * Turns one SSE message into a {@link JobEvent}, or undefined when the name is unknown or the data does not
 * fit (both are ignored, per the spec README's "tolerant when reading").
 */
function toJobEvent(message: EventSourceMessage): JobEvent | undefined {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  switch (message.event) {
    case 'status': {
      const r = StatusEventSchema.safeParse(data);
      return r.success
        ? { type: 'status', status: r.data.status, queuePosition: r.data.queue_position ?? null }
        : undefined;
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

/** The error code of an event stream that sent a line or a frame over its cap (see {@link readJobEvents}). */
export const STREAM_TOO_LARGE = 'stream_too_large';

/** Default caps of {@link readJobEvents}: 1 MiB for one line and for one frame, in bytes. */
export const DEFAULT_MAX_LINE_BYTES = 1 << 20;
export const DEFAULT_MAX_FRAME_BYTES = 1 << 20;

/** Options of {@link readJobEvents}. Sizes in bytes of the raw body (UTF-8, line terminators included in frames). */
export interface ReadJobEventsOptions {
  /** Called for every chunk (keep-alive comments included), for idle timers. */
  onBytes?: () => void;
  /** Longest line, without its terminator. Default {@link DEFAULT_MAX_LINE_BYTES} (1 MiB). */
  maxLineBytes?: number;
  /** Most bytes of one frame: from the blank line ending the previous frame to the blank line that dispatches this
   * one, terminators included. Default {@link DEFAULT_MAX_FRAME_BYTES} (1 MiB). */
  maxFrameBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of the current line and frame of an event stream, so that a server cannot make the client
 * buffer without bound: eventsource-parser keeps an unterminated line and the data of an undispatched event in
 * memory, so the bytes are counted here BEFORE they are fed to it. CR, LF and CRLF end a line (the SSE grammar);
 * an empty line ends a frame (so keep-alive comments `: ping\n\n` never add up). CR and LF bytes never occur inside
 * a UTF-8 multibyte sequence, so the raw chunks are scanned with `Buffer.indexOf`, before decoding.
 */
class FrameMeter {
  /** Bytes of the current, unterminated line. */
  private line = 0;
  /** Bytes of the complete lines of the current frame, terminators included. */
  private frame = 0;
  /** The last byte seen was a CR: an LF right after it belongs to the same terminator. */
  private afterCr = false;

  constructor(
    private readonly maxLine: number,
    private readonly maxFrame: number,
  ) {}

  /** True when the last byte seen was a CR. */
  get endsWithCr(): boolean {
    return this.afterCr;
  }

  /** Accounts for `chunk`. @throws ComfyError {@link STREAM_TOO_LARGE} as soon as a cap is passed. */
  feed(chunk: Buffer): void {
    const n = chunk.length;
    let pos = 0;
    // The next LF and CR at or after `pos`; -1 once there is none left in the chunk (never searched again).
    let lf = chunk.indexOf(LF, 0);
    let cr = chunk.indexOf(CR, 0);
    while (lf !== -1 || cr !== -1) {
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      const isLf = end === lf;
      const length = end - pos;
      if (isLf && length === 0 && this.afterCr) {
        // The LF of a CRLF: the line already ended at its CR (after a blank line, it is the blank line's).
        if (this.frame > 0 && ++this.frame > this.maxFrame) this.tooLarge('frame', this.maxFrame);
      } else {
        this.line += length;
        if (this.line > this.maxLine) this.tooLarge('line', this.maxLine);
        if (this.line === 0) {
          this.frame = 0; // a blank line: the frame is dispatched
        } else {
          this.frame += this.line + 1;
          this.line = 0;
          if (this.frame > this.maxFrame) this.tooLarge('frame', this.maxFrame);
        }
      }
      this.afterCr = !isLf;
      pos = end + 1;
      if (isLf) lf = chunk.indexOf(LF, pos);
      else cr = chunk.indexOf(CR, pos);
    }
    if (pos < n) {
      this.line += n - pos;
      this.afterCr = false;
      if (this.line > this.maxLine) this.tooLarge('line', this.maxLine);
      if (this.frame + this.line > this.maxFrame) this.tooLarge('frame', this.maxFrame);
    }
  }

  private tooLarge(what: 'line' | 'frame', cap: number): never {
    throw new ComfyError(
      STREAM_TOO_LARGE,
      `the event stream sent a ${what} over ${describeSize(cap)}; ignoring the stream, polling instead`,
    );
  }
}

/**
 * Reads an event-stream body and yields its events in order. Ends when the body ends. Breaking out of the
 * loop destroys the body. Rules: Job and Asset API v2, Events; memory is bounded (a line or a frame
 * over its cap ends the stream as broken; nothing accumulates without bound).
 * @param options the caps and `onBytes`; a bare function is taken as `onBytes` (older callers).
 * @throws ComfyError with code {@link STREAM_TOO_LARGE} when a line is over `maxLineBytes` or a frame over
 *   `maxFrameBytes` (the body is destroyed; events of that chunk before the offending line are dropped too); whatever the body's stream throws (a reset connection).
 */
export async function* readJobEvents(
  body: Readable,
  options: ReadJobEventsOptions | (() => void) = {},
): AsyncGenerator<JobEvent> {
  const { onBytes, maxLineBytes, maxFrameBytes } =
    typeof options === 'function' ? ({ onBytes: options } as ReadJobEventsOptions) : options;
  const meter = new FrameMeter(maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
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
      const bytes = toBuffer(chunk);
      meter.feed(bytes);
      parser.feed(decoder.decode(bytes, { stream: true }));
      while (queue.length > 0) yield queue.shift()!;
    }
    // A CR at the very end is a whole line terminator, but the parser waits for a possible LF after it: end it.
    parser.feed(decoder.decode() + (meter.endsWithCr ? '\n' : ''));
    while (queue.length > 0) yield queue.shift()!;
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/** A body chunk as a Buffer, without copying (a stream may hand out Uint8Arrays, or strings when it has an encoding). */
function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk), 'utf8');
}
