/**
 * Downloading content to a file: streamed to a temporary file beside the target and moved into place only
 * when complete, so a partial file never looks complete; an existing file is never overwritten silently.
 * A redirect (the managed cloud's 302 to a signed URL, jobs-assets-api-v2.md "GET /api/v2/assets/{id}/content")
 * is followed WITHOUT credentials (FACTS.md, "v2 assets").
 */
import { createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { AbortError, ComfyError, ConnectionError, InputError, ResponseShapeError } from './errors';
import type { Transport } from './http';
import { describeNetworkError } from './http';

/** Options of {@link downloadToFile}. */
export interface DownloadOptions {
  signal?: AbortSignal;
  /** Replace an existing file (default false: refuse). */
  overwrite?: boolean;
  /** Called as bytes arrive: bytes so far, total bytes when known. */
  onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
}

/** A finished download. */
export interface DownloadResult {
  path: string;
  bytes: number;
  contentType: string | undefined;
  requestId: string | undefined;
}

const MAX_REDIRECTS = 5;

/**
 * Downloads `url` to `file`.
 * @throws InputError `file_exists` when `file` exists and `overwrite` is false (checked before any request and
 *   again, atomically, at the end); ApiError for an error status; ConnectionError when the body breaks off;
 *   AbortError. On any failure the temporary file is removed and `file` is untouched.
 */
export async function downloadToFile(http: Transport, url: URL, file: string, options: DownloadOptions = {}): Promise<DownloadResult> {
  const target = path.resolve(file);
  if (!options.overwrite && (await exists(target))) {
    throw new InputError('file_exists', `${target} already exists; choose another path or remove it first (nothing was downloaded).`);
  }
  await fs.mkdir(path.dirname(target), { recursive: true });

  let current = url;
  let res = await http.send('GET', current, { signal: options.signal });
  for (let hops = 0; res.status >= 300 && res.status < 400; hops++) {
    const location = res.headers.get('location');
    await res.body.dump();
    if (!location || hops >= MAX_REDIRECTS) {
      throw new ResponseShapeError(`${http.redact(current)} redirected ${location ? 'too many times' : 'without a Location'}`, { requestId: res.requestId });
    }
    current = new URL(location, current);
    // A signed URL carries its own authorization: no credential is sent on a followed redirect.
    res = await http.send('GET', current, { signal: options.signal, credentials: false });
  }
  if (res.status !== 200) throw await http.failure(res);

  const total = Number(res.headers.get('content-length') ?? NaN);
  const totalBytes = Number.isFinite(total) ? total : undefined;
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(4).toString('hex')}.part`);
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      options.onProgress?.(received, totalBytes);
      done(null, chunk);
    },
  });
  try {
    await pipeline(res.body, counter, createWriteStream(temp, { flags: 'wx' }), { signal: options.signal });
    if (totalBytes !== undefined && received !== totalBytes) {
      throw new ConnectionError(`the download from ${http.redact(current)} ended after ${received} of ${totalBytes} bytes`, { requestId: res.requestId });
    }
    if (options.overwrite) {
      await fs.rename(temp, target);
    } else {
      // link() fails if the target appeared meanwhile: the no-overwrite check is atomic.
      await fs.link(temp, target).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EEXIST') throw new InputError('file_exists', `${target} appeared while downloading; it was left as it is.`);
        throw err;
      });
      await fs.rm(temp, { force: true });
    }
  } catch (err) {
    await fs.rm(temp, { force: true });
    if (ComfyError.is(err)) throw err;
    if (options.signal?.aborted) throw new AbortError('download aborted', { requestId: res.requestId });
    throw new ConnectionError(`the download from ${http.redact(current)} failed: ${describeNetworkError(err)}`, { requestId: res.requestId }, { cause: err });
  }
  return { path: target, bytes: received, contentType: res.headers.get('content-type') ?? undefined, requestId: res.requestId };
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
