/**
 * Shared by the emulator-*.test.ts suites of the v2 job surface (emulator-jobs, -validation, -streams, -serving):
 * the weight-free sample workflow, a chain of nodes, a submit, an event-stream reader (no sleeps: it reads until a
 * frame or the end) and PNG checks.
 */
import * as assert from 'node:assert/strict';
import { PNG } from 'pngjs';
import { type Emulator } from '../../src/emulator';
import { call, type Answer, type Json } from './harness';

/** The weight-free sample workflow: EmptyImage (red) → ImageInvert → SaveImage: one 64×64 cyan PNG. */
export function sample(overrides: { width?: number; prefix?: string; batch?: number } = {}): Json {
  return {
    '1': {
      class_type: 'EmptyImage',
      inputs: { width: overrides.width ?? 64, height: 64, batch_size: overrides.batch ?? 1, color: 16711680 },
    },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: overrides.prefix ?? 'fixture' } },
  };
}

/** EmptyImage 1×1 → `length` ImageInverts in a row → PreviewImage: a job of `length + 2` nodes. */
export function chain(length: number): Json {
  const workflow: Json = {
    '0': { class_type: 'EmptyImage', inputs: { width: 1, height: 1, batch_size: 1, color: 0 } },
  };
  for (let i = 1; i <= length; i++)
    workflow[String(i)] = { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] } };
  workflow.out = { class_type: 'PreviewImage', inputs: { images: [String(length), 0] } };
  return workflow;
}

export function submit(emu: Emulator, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A link of the emulator as a URL: host-relative links resolve against the origin. */
export function resolve(emu: Emulator, link: string): string {
  return new URL(link, emu.origin).toString();
}

export interface SseEvent {
  event: string;
  data: Json;
}

export interface Stream {
  events: SseEvent[];
  comments: string[];
  /** True when the server ended the stream. */
  ended: boolean;
}

/** Reads an event stream until the server ends it, or until `stop` holds (then the reader is canceled). */
export async function readStream(res: Response, stop?: (s: Stream) => boolean): Promise<Stream> {
  const out: Stream = { events: [], comments: [], ended: false };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      out.ended = true;
      return out;
    }
    buffer += decoder.decode(value, { stream: true });
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at).split('\n');
      buffer = buffer.slice(at + 2);
      const event = block.find((l) => l.startsWith('event: '))?.slice(7);
      const data = block.find((l) => l.startsWith('data: '))?.slice(6);
      for (const l of block) if (l.startsWith(':')) out.comments.push(l);
      if (event !== undefined && data !== undefined) out.events.push({ event, data: JSON.parse(data) });
    }
    if (stop?.(out)) {
      await reader.cancel();
      return out;
    }
  }
}

export function openEvents(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: AbortSignal.timeout(15_000) });
}

/** Asserts every pixel of a PNG is `rgb`. */
export function assertSolid(png: PNG, width: number, height: number, rgb: [number, number, number]): void {
  assert.equal(png.width, width);
  assert.equal(png.height, height);
  for (let i = 0; i < png.data.length; i += 4) {
    if (png.data[i] !== rgb[0] || png.data[i + 1] !== rgb[1] || png.data[i + 2] !== rgb[2]) {
      assert.fail(`pixel ${i / 4} is ${[...png.data.subarray(i, i + 3)]}, expected ${rgb}`);
    }
  }
}

export async function fetchPng(url: string, headers: Record<string, string> = {}): Promise<PNG> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.equal(res.headers.get('content-length'), String(bytes.length));
  return PNG.sync.read(bytes);
}
