/**
 * Shared by the emulator-v1-*.test.ts suites (the emulator's deprecated v1 surface): the API keys, the recorded
 * fixtures of test/fixtures/v1/, and small clients for its REST endpoints and its WebSocket (`ws` as the client), each
 * wait bounded by a frame, a close, or a series of requests (no sleeps).
 */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import WebSocket from 'ws';
import { type Emulator } from '../../src/emulator';
import { call as fetchAnswer, type Answer, type Json } from './harness';

export const KEY = 'v1-key-a';
export const OTHER_KEY = 'v1-key-b';
export const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'v1');
/** The prompt id written in the metadata fixture in place of the live one (same length: 36 characters). */
export const FIXTURE_PROMPT_ID = '00000000-0000-4000-8000-000000000000';
export const TERMINAL_V1 = ['success', 'completed', 'error', 'non_retryable_error', 'lost', 'cancelled'];

/** Redirects are answered, not followed (the /api/view tests read the 302 itself). */
export function call(url: string, init: RequestInit = {}): Promise<Answer> {
  return fetchAnswer(url, { ...init, redirect: 'manual' });
}

/** The weight-free sample workflow: EmptyImage → ImageInvert → SaveImage; `color` varies it. */
export function facts(color = 16711680, size = 64): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: size, height: size, batch_size: 1, color } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'fixture' } },
  };
}

export function postPrompt(emu: Emulator, body: unknown, key = KEY): Promise<Answer> {
  return call(`${emu.baseUrl}/api/prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
}

export function get(emu: Emulator, pathAndQuery: string, key = KEY): Promise<Answer> {
  return call(`${emu.baseUrl}${pathAndQuery}`, { headers: { 'x-api-key': key } });
}

/** A multipart upload built by the platform's FormData (the boundary set by the encoder, as clients must do). */
export function upload(
  emu: Emulator,
  kind: 'image' | 'mask',
  fields: Record<string, string>,
  file: { bytes: Buffer; name: string } | undefined,
  key = KEY,
): Promise<Answer> {
  const form = new FormData();
  if (file !== undefined) form.append('image', new Blob([file.bytes], { type: 'image/png' }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return call(`${emu.baseUrl}/api/upload/${kind}`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
}

/** Polls the status endpoint until a terminal value (bounded; each step is a request). @returns every value seen, in order. */
export async function statusesUntilTerminal(emu: Emulator, id: string, key = KEY): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 5000; i++) {
    const { status, body } = await get(emu, `/api/job/${id}/status`, key);
    assert.equal(status, 200, JSON.stringify(body));
    if (seen.at(-1) !== body.status) seen.push(body.status);
    if (TERMINAL_V1.includes(body.status)) return seen;
  }
  throw new Error(`job ${id} never reached a terminal status`);
}

export type Frame = { kind: 'json'; message: Json } | { kind: 'binary'; bytes: Buffer };

/** A `ws` client that keeps every frame and lets a test wait for one (on arrival, never on time). */
export class Socket {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; clean: boolean }>;
  private waiters: { test: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (e: Error) => void }[] = [];
  private ended = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      const frame: Frame = isBinary
        ? { kind: 'binary', bytes: Buffer.from(data) }
        : { kind: 'json', message: JSON.parse(data.toString()) as Json };
      this.frames.push(frame);
      for (const w of [...this.waiters]) {
        if (w.test(frame)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code) => {
        this.ended = true;
        for (const w of this.waiters) w.reject(new Error(`the socket closed (${code}) before the frame came`));
        this.waiters = [];
        resolve({ code, clean: code !== 1006 });
      });
    });
  }

  /** Opens `url`; rejects with the HTTP status of a refused upgrade. */
  static open(url: string): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const socket = new Socket(ws);
      ws.once('open', () => resolve(socket));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      });
      ws.once('error', reject);
    });
  }

  /** The first frame (already received or to come) that passes `test`. */
  waitFor(test: (f: Frame) => boolean): Promise<Frame> {
    const found = this.frames.find(test);
    if (found !== undefined) return Promise.resolve(found);
    if (this.ended) return Promise.reject(new Error('the socket is closed'));
    return new Promise((resolve, reject) => this.waiters.push({ test, resolve, reject }));
  }

  /** The first JSON message of `type` for `promptId` (already received or to come). */
  async message(type: string, promptId?: string, extra: (m: Json) => boolean = () => true): Promise<Json> {
    const f = await this.waitFor(
      (x) =>
        x.kind === 'json' &&
        x.message.type === type &&
        (promptId === undefined || x.message.data?.prompt_id === promptId) &&
        extra(x.message),
    );
    return (f as { message: Json }).message;
  }

  /** The JSON messages received for `promptId`, in order. */
  messagesOf(promptId: string): Json[] {
    return this.frames.flatMap((f) => (f.kind === 'json' && f.message.data?.prompt_id === promptId ? [f.message] : []));
  }

  binaries(): Buffer[] {
    return this.frames.flatMap((f) => (f.kind === 'binary' ? [f.bytes] : []));
  }

  close(): Promise<unknown> {
    this.ws.close();
    return this.closed;
  }
}

export function socketUrl(emu: Emulator, key = KEY, clientId: string = randomUUID()): string {
  return `${emu.v1!.wsUrl}?clientId=${clientId}&token=${encodeURIComponent(key)}`;
}

/** Submits `prompt` and waits for its execution_success on `socket`; returns the prompt id. */
export async function runOn(emu: Emulator, socket: Socket, prompt: Json, key = KEY): Promise<string> {
  const answer = await postPrompt(emu, { prompt }, key);
  assert.equal(answer.status, 200, answer.text);
  const id = answer.body.prompt_id as string;
  await socket.message('execution_success', id);
  return id;
}

/** Reads a binary frame's 4-byte big-endian fields. */
export function u32(bytes: Buffer, at: number): number {
  return bytes.readUInt32BE(at);
}
