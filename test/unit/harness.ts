/**
 * Helpers shared by the unit test files: an emulator per suite, plain HTTP calls with a JSON body, the job polling
 * loop, one-colour PNGs, and the in-process CLI runner. Builders of test data stay in builders.ts.
 */
import * as assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { PNG } from 'pngjs';
import { runCli, type CliIo } from '../../src/cli/cli';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator';

/** A JSON object as the tests read it, without a schema. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A lowercase UUID, as the server's ids are. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A content hash as the v2 API writes it. */
export const BLAKE3 = /^blake3:[0-9a-f]{64}$/;

/** The job statuses that end a job. */
export const TERMINAL = ['succeeded', 'canceled', 'failed', 'expired'];

/** An HTTP answer: the status, the headers, the body parsed when it is JSON (else `{}`) and the raw text. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
  text: string;
}

/** Fetches `url` (15 s timeout) and parses the body only when the content-type is JSON and the text is non-empty. */
export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('application/json');
  return { status: res.status, headers: res.headers, body: json && text !== '' ? JSON.parse(text) : {}, text };
}

/** POSTs `{ workflow }` to the emulator's /api/v2/jobs. */
export function submit(emu: Emulator, workflow: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ workflow }),
  });
}

/** Polls GET of job `id` until `predicate` holds, asserting each answer is 200 (bounded; each step is a request, never a sleep). */
export async function until(
  emu: Emulator,
  id: string,
  predicate: (job: Json) => boolean,
  headers: Record<string, string> = {},
): Promise<Json> {
  for (let i = 0; i < 5000; i++) {
    const { status, body } = await call(`${emu.baseUrl}/api/v2/jobs/${id}`, { headers });
    assert.equal(status, 200, JSON.stringify(body));
    if (predicate(body)) return body;
  }
  throw new Error(`job ${id}: the condition never held`);
}

/** Starts an emulator on a free port for one suite (before/after); the getter returns it inside tests. */
export function useEmulator(options: EmulatorOptions = {}): () => Emulator {
  let emu: Emulator | undefined;
  before(async () => {
    emu = await startEmulator({ port: 0, ...options });
  });
  after(async () => {
    await emu?.close();
  });
  return () => emu!;
}

/** A PNG of one colour (RGBA, as editors save them). */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < png.data.length; i += 4) png.data.set([...rgb, 255], i);
  return PNG.sync.write(png);
}

/** Asserts the PNG `bytes` is `width`×`height` with every pixel `rgb`. */
export function assertSolid(bytes: Buffer, width: number, height: number, rgb: [number, number, number]): void {
  const png = PNG.sync.read(bytes);
  assert.equal(png.width, width, 'width');
  assert.equal(png.height, height, 'height');
  for (let i = 0; i < png.data.length; i += 4)
    assert.deepEqual([...png.data.subarray(i, i + 3)], rgb, `pixel ${i / 4}`);
}

/** A non-TTY stream that keeps what is written to it in `text`. */
export class Buffered extends Writable {
  text = '';
  isTTY = false;
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/**
 * A Buffered stream that aborts `controller` (on the next turn) once what was written to it matches `pattern`: a
 * Ctrl-C at a chosen point of a CLI run, synchronised on the output, never on time.
 */
export function abortingWhen(pattern: RegExp, controller: AbortController): Buffered {
  const stream = new Buffered();
  const write = stream._write.bind(stream);
  stream._write = (chunk, enc, done) => {
    write(chunk, enc, done);
    if (pattern.test(stream.text) && !controller.signal.aborted) setImmediate(() => controller.abort());
  };
  return stream;
}

/** One in-process CLI run: its exit code and what it wrote. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A function that runs the CLI in-process with buffered stdout/stderr and `COMFY_CLOUD_STATE_DIR` set to `stateDir`. */
export function cliRunner(
  stateDir: string,
): (args: string[], env?: NodeJS.ProcessEnv, signal?: AbortSignal) => Promise<CliRun> {
  return async (args, env = {}, signal) => {
    const stdout = new Buffered();
    const stderr = new Buffered();
    const io: CliIo = { stdout, stderr, env: { COMFY_CLOUD_STATE_DIR: stateDir, ...env }, signal };
    const code = await runCli(args, io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  };
}

/** The requests `emu` received while `fn` ran (method and path), with what `fn` returned. */
export async function requestsDuring<T>(
  emu: Emulator,
  fn: () => Promise<T>,
): Promise<{ result: T; requests: { method: string; path: string }[] }> {
  const before = emu.requests.length;
  const result = await fn();
  return { result, requests: emu.requests.slice(before).map((r) => ({ method: r.method, path: r.path })) };
}
