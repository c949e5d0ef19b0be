/**
 * Downloading content to a file, safely and resumably.
 * - Streamed to a hidden `.<name>.part` file beside the target and moved into place only when complete (and,
 *   where the hash is known, verified): a partial file never looks complete; an existing file is never
 *   overwritten silently.
 * - Resumable: an interrupted download keeps its `.part` (with a small `.part.json` naming what it is a part
 *   of); the next download of the same content asks `Range: bytes=<size>-` and appends on 206; restarts cleanly
 *   when the server ignores Range (200) or answers 416 (jobs-assets-api-v2.md "GET /api/v2/assets/{id}/content";
 *   FACTS.md "v2 assets").
 * - A redirect (the managed cloud's 302 to a signed URL) is followed WITHOUT credentials.
 */
import { createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { AbortError, ComfyError, ConnectionError, InputError, ResponseShapeError } from './errors';
import type { RawResponse, Transport } from './http';
import { describeNetworkError } from './http';
import { hashFile } from './hash';

/** Options of {@link downloadToFile}. */
export interface DownloadOptions {
  signal?: AbortSignal;
  /** Replace an existing file (default false: refuse). */
  overwrite?: boolean;
  /**
   * Keep a partial download on failure and resume it next time (default true). `resumeKey` names the content
   * (an asset id); a `.part` left by other content is discarded, never appended to.
   */
  resume?: boolean;
  resumeKey?: string;
  /** `blake3:<hex>`: the finished file must hash to this, else it is discarded. */
  expectedHash?: string | null;
  /** Called as bytes arrive: bytes on disk so far, total bytes when known. */
  onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
}

/** A finished download. */
export interface DownloadResult {
  path: string;
  /** Size of the file, bytes. */
  bytes: number;
  /** Bytes that came over the network this time (less than `bytes` after a resume). */
  transferredBytes: number;
  /** Where it resumed from (0: from the start). */
  resumedFrom: number;
  contentType: string | undefined;
  requestId: string | undefined;
}

const MAX_REDIRECTS = 5;

/** The hidden partial file and its note, beside `target`. */
export function partialPaths(target: string): { part: string; note: string } {
  const part = path.join(path.dirname(target), `.${path.basename(target)}.part`);
  return { part, note: `${part}.json` };
}

/**
 * Downloads `url` to `file`.
 * @throws InputError `file_exists` when `file` exists and `overwrite` is false (checked before any request and
 *   again, atomically, at the end); ApiError for an error status; ConnectionError when the body breaks off (the
 *   partial file is kept for a resume); ComfyError `hash_mismatch` when the bytes do not hash to `expectedHash`
 *   (the partial file is removed); AbortError.
 */
export async function downloadToFile(http: Transport, url: URL, file: string, options: DownloadOptions = {}): Promise<DownloadResult> {
  const target = path.resolve(file);
  const resume = options.resume ?? true;
  if (!options.overwrite && (await exists(target))) {
    throw new InputError('file_exists', `${target} already exists; choose another path or remove it first (nothing was downloaded).`);
  }
  await fs.mkdir(path.dirname(target), { recursive: true });
  const { part, note } = partialPaths(target);
  const key = options.resumeKey ?? `${url.origin}${url.pathname}`;

  let offset = 0;
  if (resume && (await readNote(note)) === key) offset = await sizeOf(part);
  if (offset === 0) await discard(part, note);

  let { res, final } = await get(http, url, offset, options.signal);
  if (res.status === 416) {
    // The part is not a prefix the server can continue (content changed or already whole): start over.
    await res.body.dump();
    await discard(part, note);
    offset = 0;
    ({ res, final } = await get(http, url, 0, options.signal));
  }
  if (res.status === 206) {
    const start = /^bytes (\d+)-/.exec(res.headers.get('content-range') ?? '')?.[1];
    if (Number(start) !== offset) {
      await res.body.dump();
      throw new ResponseShapeError(`${http.redact(final)} answered a range that starts at ${start ?? '?'} instead of ${offset}`, { requestId: res.requestId });
    }
  } else if (res.status === 200) {
    offset = 0; // the server ignored Range: the body is the whole content
  } else {
    throw await http.failure(res);
  }

  const total = totalOf(res, offset);
  let received = offset;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      options.onProgress?.(received, total);
      done(null, chunk);
    },
  });
  // Read the body at once, before any other wait, and END the counter when the body breaks off instead of
  // destroying it: every byte that reached us is written to the part (a destroyed stream drops what it buffered,
  // so a body cut early would otherwise leave nothing to resume from).
  let broken: unknown;
  res.body.on('error', (err) => {
    if (broken !== undefined) return;
    broken = err;
    counter.end();
  });
  res.body.pipe(counter);
  try {
    await fs.writeFile(note, JSON.stringify({ key }));
  } catch (err) {
    res.body.destroy();
    throw err;
  }
  const out = createWriteStream(part, { flags: offset > 0 ? 'a' : 'w' });
  try {
    await pipeline(counter, out, { signal: options.signal });
  } catch (err) {
    broken ??= err;
    res.body.destroy();
  }
  // Settle the part before answering: a caller that retries at once must not find it still being written.
  if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
  if (broken !== undefined) {
    if (!resume) await discard(part, note);
    if (options.signal?.aborted) throw new AbortError('download aborted', { requestId: res.requestId });
    throw new ConnectionError(`the download from ${http.redact(final)} broke off after ${received} bytes${resume ? ' (run it again to resume)' : ''}: ${describeNetworkError(broken)}`, { requestId: res.requestId }, { cause: broken });
  }
  if (total !== undefined && received !== total) {
    if (!resume) await discard(part, note);
    throw new ConnectionError(`the download from ${http.redact(final)} ended after ${received} of ${total} bytes${resume ? ' (run it again to resume)' : ''}`, { requestId: res.requestId });
  }
  if (options.expectedHash) {
    const actual = await hashFile(part, { signal: options.signal });
    if (actual !== options.expectedHash) {
      await discard(part, note);
      throw new ComfyError('hash_mismatch', `the downloaded bytes hash to ${actual}, not ${options.expectedHash}; the file was discarded`, { requestId: res.requestId });
    }
  }
  await place(part, target, Boolean(options.overwrite));
  await fs.rm(note, { force: true });
  return { path: target, bytes: received, transferredBytes: received - offset, resumedFrom: offset, contentType: res.headers.get('content-type') ?? undefined, requestId: res.requestId };
}

/** GET with an optional Range, following redirects without credentials (a signed URL carries its own). */
async function get(http: Transport, url: URL, offset: number, signal?: AbortSignal): Promise<{ res: RawResponse; final: URL }> {
  const headers: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-` } : {};
  let current = url;
  let res = await http.send('GET', current, { signal, headers });
  for (let hops = 0; res.status >= 300 && res.status < 400; hops++) {
    const location = res.headers.get('location');
    await res.body.dump();
    if (!location || hops >= MAX_REDIRECTS) {
      throw new ResponseShapeError(`${http.redact(current)} redirected ${location ? 'too many times' : 'without a Location'}`, { requestId: res.requestId });
    }
    current = new URL(location, current);
    res = await http.send('GET', current, { signal, headers, credentials: false });
  }
  return { res, final: current };
}

/** The whole content's size: from Content-Range on a 206, Content-Length (+ offset) otherwise; undefined when unknown. */
function totalOf(res: RawResponse, offset: number): number | undefined {
  const range = /\/(\d+)\s*$/.exec(res.headers.get('content-range') ?? '');
  if (res.status === 206 && range) return Number(range[1]);
  const length = Number(res.headers.get('content-length') ?? NaN);
  return Number.isFinite(length) ? length + (res.status === 206 ? offset : 0) : undefined;
}

/** Moves the finished part into place; without `overwrite`, link() fails if the target appeared meanwhile. */
async function place(part: string, target: string, overwrite: boolean): Promise<void> {
  if (overwrite) {
    await fs.rename(part, target);
    return;
  }
  try {
    await fs.link(part, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new InputError('file_exists', `${target} appeared while downloading; it was left as it is (the download is kept in ${part}).`);
    throw err;
  }
  await fs.rm(part, { force: true });
}

async function readNote(note: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await fs.readFile(note, 'utf8')) as { key?: string }).key;
  } catch {
    return undefined;
  }
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch {
    return 0;
  }
}

async function discard(part: string, note: string): Promise<void> {
  await fs.rm(part, { force: true });
  await fs.rm(note, { force: true });
}

/**
 * A file name for a server-given name: its base name only (no directory can be escaped), unsafe characters
 * replaced; `fallback` when nothing is left.
 */
export function safeFileName(name: string | null | undefined, fallback: string): string {
  const base = path.basename(String(name ?? '').replace(/\\/g, '/'));
  // Control characters and the characters Windows forbids become '_'; leading dots go (no hidden files).
  const cleaned = [...base].map((ch) => (ch.charCodeAt(0) < 32 || '<>:"|?*'.includes(ch) ? '_' : ch)).join('').replace(/^\.+/, '').trim();
  return cleaned || fallback;
}

/** `dir/name`, or `dir/stem-1.ext`, `-2`… when taken: a free path, so a download never overwrites. */
export async function freePath(dir: string, name: string, taken: Set<string> = new Set()): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let i = 0; ; i++) {
    const candidate = path.join(dir, i === 0 ? name : `${stem}-${i}${ext}`);
    if (!taken.has(candidate) && !(await exists(candidate))) return candidate;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}
