/**
 * Event-stream bounds (a line or a frame over its cap ends the stream as broken, nothing
 * accumulates without bound) and the SSE line grammar the byte counting must agree with (CR, LF and CRLF end a line;
 * a blank line ends a frame). readJobEvents is fed from in-memory streams; the watch-level tests are in watch-stream.test.ts.
 */
import * as assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { ComfyError } from '../../src/core';
import {
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  STREAM_TOO_LARGE,
  readJobEvents,
  type JobEvent,
  type ReadJobEventsOptions,
} from '../../src/core/v2/events';

/** Reads every event of `chunks`; returns them, or the error that ended the stream, and the body. */
async function readAll(
  chunks: (string | Buffer)[],
  options?: ReadJobEventsOptions | (() => void),
): Promise<{ events: JobEvent[]; error: unknown; body: Readable }> {
  const body = Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
  const events: JobEvent[] = [];
  let error: unknown;
  try {
    for await (const e of readJobEvents(body, options)) events.push(e);
  } catch (err) {
    error = err;
  }
  return { events, error, body };
}

function isTooLarge(what: 'line' | 'frame') {
  return (e: unknown): boolean =>
    ComfyError.is(e) && e.code === STREAM_TOO_LARGE && e.message.includes(`a ${what} over`);
}

const progress = (value: number, eol = '\n'): string => `event: progress${eol}data: {"value":${value}}${eol}${eol}`;

describe('event stream bounds', () => {
  it('a line over maxLineBytes ends the stream with stream_too_large and destroys the body; a line at the cap is read', async () => {
    const atCap = `data: {"value":0.5,"message":"${'x'.repeat(64 - 32)}"}`;
    assert.equal(Buffer.byteLength(atCap), 64);
    const ok = await readAll([`event: progress\n${atCap}\n\n`], { maxLineBytes: 64 });
    assert.equal(ok.error, undefined);
    assert.equal(ok.events.length, 1);

    const over = await readAll([`event: progress\n${atCap.slice(0, 40)}`, `${atCap.slice(40)}!`, '\n\n'], {
      maxLineBytes: 64,
    });
    assert.ok(isTooLarge('line')(over.error), String(over.error));
    assert.ok(over.body.destroyed, 'the body is destroyed');
  });

  it('the default caps are 1 MiB: a line of 1 MiB + 1 byte is refused with "over 1 MiB (1048576 bytes)"; a 512 KiB preview frame is read', async () => {
    assert.equal(DEFAULT_MAX_LINE_BYTES, 1 << 20);
    assert.equal(DEFAULT_MAX_FRAME_BYTES, 1 << 20);
    const big = await readAll([`data: ${'x'.repeat((1 << 20) - 6 + 1)}`]);
    assert.ok(isTooLarge('line')(big.error), String(big.error));
    assert.match((big.error as Error).message, /over 1 MiB \(1048576 bytes\); ignoring the stream, polling instead/);

    const preview = `event: preview\ndata: {"node_id":"2","content_type":"image/jpeg","data_base64":"${'A'.repeat(512 * 1024)}"}\n\n`;
    const read = await readAll([preview, progress(1)]);
    assert.equal(read.error, undefined);
    assert.deepEqual(
      read.events.map((e) => e.type),
      ['preview', 'progress'],
    );
  });

  it('a frame of many short data lines without a blank line ends the stream at maxFrameBytes (the frame cap, not the line cap)', async () => {
    const lines = Array.from({ length: 200 }, () => 'data: 0123456789\n');
    const r = await readAll(lines, { maxLineBytes: 100, maxFrameBytes: 1000 });
    assert.ok(isTooLarge('frame')(r.error), String(r.error));
    assert.ok(r.body.destroyed);
  });

  it('a blank line ends a frame: keep-alive comments and many small events never add up to the frame cap', async () => {
    const chunks: string[] = [];
    for (let i = 0; i < 2000; i++) chunks.push(': ping\n\n', progress(i / 2000));
    const r = await readAll(chunks, { maxLineBytes: 64, maxFrameBytes: 64 });
    assert.equal(r.error, undefined);
    assert.equal(r.events.length, 2000);
  });

  it('CR, LF and CRLF each end a line, and a blank line in any of them ends a frame', async () => {
    // Lines of 30 bytes under a 40-byte line cap and frames of ~50 bytes under a 64-byte frame cap: the stream is
    // over both caps only if a terminator were missed.
    for (const eol of ['\n', '\r', '\r\n']) {
      const chunks = Array.from({ length: 500 }, (_, i) => progress(Math.round((i / 500) * 1000) / 1000, eol));
      const r = await readAll(chunks, { maxLineBytes: 40, maxFrameBytes: 64 });
      assert.equal(r.error, undefined, JSON.stringify(eol));
      assert.equal(r.events.length, 500, JSON.stringify(eol));
    }
  });

  it('split at every byte (a CRLF across two chunks included), the events and the verdicts are the same', async () => {
    const text = `: ping\r\n\r\n${progress(0.25, '\r\n')}${progress(0.5, '\r')}${progress(0.75)}event: status\r\ndata: {"status":"succeeded"}\r\n\r\n`;
    const whole = await readAll([text], { maxLineBytes: 40, maxFrameBytes: 64 });
    assert.equal(whole.error, undefined);
    assert.equal(whole.events.length, 4);
    const bytes = Buffer.from(text);
    const split = await readAll(
      [...bytes].map((b) => Buffer.from([b])),
      { maxLineBytes: 40, maxFrameBytes: 64 },
    );
    assert.equal(split.error, undefined);
    assert.deepEqual(split.events, whole.events);
    // The last frame is the longest: `event: status` (13 bytes) and its data line (28 bytes), each with a CRLF: 45
    // bytes. A cap one byte short ends the stream there, after the frames before it.
    const tight = await readAll(
      [...bytes].map((b) => Buffer.from([b])),
      { maxLineBytes: 40, maxFrameBytes: 44 },
    );
    assert.ok(isTooLarge('frame')(tight.error), String(tight.error));
    assert.equal(tight.events.length, 3, 'the frames before it were read');
  });

  it('bytes are counted before parsing: an endless line stops the reading at the cap, the source is released', async () => {
    let pulled = 0;
    let released = false;
    const source = Readable.from(
      (function* () {
        try {
          yield Buffer.from('data: ');
          for (let i = 0; i < 100_000; i++) {
            pulled++;
            yield Buffer.alloc(1024, 0x78);
          }
        } finally {
          released = true;
        }
      })(),
    );
    let error: unknown;
    try {
      for await (const _ of readJobEvents(source, { maxLineBytes: 64 * 1024 })) assert.fail('no event');
    } catch (err) {
      error = err;
    }
    assert.ok(isTooLarge('line')(error), String(error));
    // 64 KiB of line, plus what the stream read ahead (its 16-object high-water mark).
    assert.ok(pulled <= 64 + 20, `pulled ${pulled} KiB`);
    assert.ok(released, 'the source was released');
  });

  it('the old positional onBytes argument is still called for every chunk', async () => {
    let calls = 0;
    const r = await readAll([progress(0.1), ': ping\n\n', progress(0.2)], () => calls++);
    assert.equal(r.events.length, 2);
    assert.equal(calls, 3);
  });
});
