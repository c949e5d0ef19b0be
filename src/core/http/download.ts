/**
 * Downloading content to a file, safely, resumably, and side by side with other downloads into the same folder.
 * - Streamed to a hidden partial file and given its final name only when complete (and, where the hash is known,
 *   verified): a partial file never looks complete; an existing file is never overwritten silently.
 * - The partial file is named for the CONTENT, not for the target: `.<hash of the resume key>.part`, with a small
 *   `.part.json` note naming the content. Two jobs' outputs with the same
 *   name never share one; two downloads of the same content at once never share one either: the first takes an
 *   exclusive lock on it (`proper-lockfile`), the others download into a fresh part of their own (no resume).
 * - The final name is claimed atomically: `link(part, name)` fails with EEXIST on any existing entry (a file, a
 *   directory, a symlink: nothing is ever written through a symlink), and the next free candidate `stem-1.ext`,
 *   `stem-2.ext`… is tried (no check-then-write race).
 * - A name derived from server data goes through {@link safeFileName} and {@link pathInside} (fileNames.ts).
 * - Resumable: an interrupted download keeps its `.part`; the next download of the same content asks
 *   `Range: bytes=<size>-` and appends on 206; restarts cleanly when the server ignores Range (200) or answers 416
 *   (Job and Asset API v2, GET /api/v2/assets/{id}/content; 206 and 416 not shown there, public sources).
 * - A redirect (the managed cloud's 302 to a signed URL) is followed WITHOUT credentials (the signed URL carries its
 *   own authorization),
 *   only to an http(s) URL not seen before, at most {@link MAX_REDIRECTS} times.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import contentDisposition from 'content-disposition';
import { lockfile } from '../util/lockfile';
import { AbortError, ComfyError, ConnectionError, ResponseShapeError } from './errors';
import { safeFileName } from '../util/fileNames';
import { claimInside, exists, fileExists, place, replaceInside } from './finalName';
import type { RawResponse, Transport } from './transport';
import { describeNetworkError } from './failures';
import { StreamHasher } from '../util/hash';

export { safeFileName } from '../util/fileNames';

/** Options of {@link downloadToFile} and {@link downloadIntoFolder}. */
export interface DownloadOptions {
  signal?: AbortSignal;
  /**
   * Replace an existing file (default false). {@link downloadToFile}: false refuses; {@link downloadIntoFolder}:
   * false takes the next free name, true replaces the plain name.
   */
  overwrite?: boolean;
  /**
   * Keep a partial download on failure and resume it next time (default true). `resumeKey` names the content
   * (an asset id) and names the partial file: a `.part` of other content is never appended to. Default: the URL
   * without its query.
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

/** Redirects followed at most, per request. */
const MAX_REDIRECTS = 5;

/** How old (ms) a lock on a partial file must be, without its owner refreshing it, to be taken over (a crashed owner). */
const LOCK_STALE_MS = 30_000;

/** The bytes a download buffers between the socket and the file, on each side of its counter (4 MiB). */
const STREAM_BUFFER_BYTES = 4 * 1024 * 1024;

/** The hidden partial file of content `resumeKey` in folder `dir`, its note and its lock. */
export interface PartialPaths {
  part: string;
  note: string;
  lock: string;
}

/**
 * The partial file, note and lock of the content `resumeKey` downloaded into `dir`:
 * `.<first 16 hex digits of sha256(resumeKey)>.part`, `….part.json`, `….part.lock` (named for
 * the content, so two contents never share one).
 */
export function partialPathsIn(dir: string, resumeKey: string): PartialPaths {
  const id = createHash('sha256').update(resumeKey, 'utf8').digest('hex').slice(0, 16);
  const part = path.join(dir, `.${id}.part`);
  return { part, note: `${part}.json`, lock: `${part}.lock` };
}

/** The partial file of the download of content `resumeKey` to `target`: {@link partialPathsIn} `target`'s folder. */
export function partialPaths(target: string, resumeKey: string): PartialPaths {
  return partialPathsIn(path.dirname(path.resolve(target)), resumeKey);
}

/**
 * Downloads `url` to the file `file` (a path the user chose: not sanitized).
 * @throws InputError `file_exists` when `file` exists and `overwrite` is false (checked before any request and
 *   again, atomically, at the end; the message says that `--force` replaces it); ApiError for an error status;
 *   ResponseShapeError for a bad redirect or range; ConnectionError when the body breaks off (the partial file is
 *   kept for a resume); ComfyError `hash_mismatch` when the bytes do not hash to `expectedHash` (the partial file is
 *   removed); AbortError.
 */
export async function downloadToFile(
  http: Transport,
  url: URL,
  file: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const target = path.resolve(file);
  if (!options.overwrite && (await exists(target))) throw fileExists(target, 'nothing was downloaded');
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true });
  return download(http, url, dir, options, path.basename(target), async (part) => {
    await place(part, target, Boolean(options.overwrite));
    return target;
  });
}

/**
 * Downloads `url` into the folder `dir` under a name derived from server data. `name` picks the raw name (given
 * the response's Content-Disposition filename, `filename*` first, when there is one); it goes through
 * {@link safeFileName} whatever it is, and each candidate through {@link pathInside} (server names are untrusted).
 * Without `overwrite` the first free name is claimed atomically (`name`, `stem-1.ext`, …: never overwrites, never
 * races another download); with it, the plain name is replaced (the entry itself, never through a symlink).
 * @returns the result; `path` is in `dir` as given (`path.resolve(dir)`), the folder being checked after realpath.
 * @throws InputError `unsafe_path` when a name would land outside the folder; otherwise as {@link downloadToFile}.
 */
export async function downloadIntoFolder(
  http: Transport,
  url: URL,
  dir: string,
  name: (contentDispositionFileName: string | undefined) => string | null | undefined,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const shown = path.resolve(dir);
  await fs.mkdir(shown, { recursive: true });
  const real = await fs.realpath(shown);
  return download(http, url, real, options, undefined, async (part, res) => {
    const wanted = safeFileName(name(fileNameOf(res)));
    const chosen = options.overwrite ? await replaceInside(part, real, wanted) : await claimInside(part, real, wanted);
    return path.join(shown, chosen);
  });
}

/** The Content-Disposition filename of a response (`filename*` wins, as the package decodes it); undefined when none or unreadable. */
function fileNameOf(res: RawResponse): string | undefined {
  const header = res.headers.get('content-disposition');
  if (!header) return undefined;
  try {
    const value = contentDisposition.parse(header).parameters.filename;
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined; // a malformed header or a charset the package does not decode: no name from it
  }
}

/**
 * The shared body of the downloads: fetches `url` into a partial file in `dir`, verifies it, then lets `settle` give
 * it its final name (it links or renames the part; the part is removed afterwards).
 */
async function download(
  http: Transport,
  url: URL,
  dir: string,
  options: DownloadOptions,
  targetName: string | undefined,
  settle: (part: string, res: RawResponse) => Promise<string>,
): Promise<DownloadResult> {
  const key = options.resumeKey ?? `${url.origin}${url.pathname}`;
  const claim = await claimPart(dir, key);
  const resume = (options.resume ?? true) && claim.shared;
  const { part, note } = claim;
  let hasher: StreamHasher | undefined;
  try {
    let offset = 0;
    if (resume && (await readNote(note)) === key) offset = await sizeOf(part);

    let { res, final } = await get(http, url, offset, options.signal);
    if (res.status === 416) {
      // The part is not a prefix the server can continue (content changed or already whole): start over.
      await res.body.dump();
      offset = 0;
      ({ res, final } = await get(http, url, 0, options.signal));
    }
    if (res.status === 206) {
      const start = /^bytes (\d+)-/.exec(res.headers.get('content-range') ?? '')?.[1];
      if (Number(start) !== offset) {
        await res.body.dump();
        throw new ResponseShapeError(
          `${http.redact(final)} answered a range that starts at ${start ?? '?'} instead of ${offset}`,
          { requestId: res.requestId },
        );
      }
    } else if (res.status === 200) {
      offset = 0; // the server ignored Range: the body is the whole content
    } else {
      throw await http.failure(res);
    }

    const total = totalOf(res, offset);
    let received = offset;
    // Verified while it streams (no second pass over the file): the worker first hashes what a resumed part
    // already holds (exactly `offset` bytes, read before anything is appended), then every chunk as it passes.
    hasher = options.expectedHash
      ? new StreamHasher(offset > 0 ? { file: part, bytes: offset } : undefined)
      : undefined;
    const verifying = hasher;
    const counter = new Transform({
      // Room for a few network chunks on each side: the socket is read on while the file writes (see openPart).
      highWaterMark: STREAM_BUFFER_BYTES,
      transform(chunk: Buffer, _enc, done) {
        received += chunk.length;
        options.onProgress?.(received, total);
        if (!verifying) return done(null, chunk);
        verifying.update(chunk).then(() => done(null, chunk), done);
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
    let out: ReturnType<typeof createWriteStream>;
    try {
      out = await openPart(
        part,
        note,
        offset,
        resume ? { key, ...(targetName !== undefined ? { target: targetName } : {}) } : undefined,
      );
    } catch (err) {
      res.body.destroy();
      throw err;
    }
    try {
      await pipeline(counter, out, { signal: options.signal });
    } catch (err) {
      broken ??= err;
      res.body.destroy();
    }
    // Settle the part before answering: a caller that retries at once must not find it still being written.
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
    if (broken !== undefined) {
      if (options.signal?.aborted) throw new AbortError('download aborted', { requestId: res.requestId });
      throw new ConnectionError(
        `the download from ${http.redact(final)} broke off after ${received} bytes${resume ? ' (run it again to resume)' : ''}: ${describeNetworkError(broken)}`,
        { requestId: res.requestId },
        { cause: broken },
      );
    }
    if (total !== undefined && received !== total) {
      throw new ConnectionError(
        `the download from ${http.redact(final)} ended after ${received} of ${total} bytes${resume ? ' (run it again to resume)' : ''}`,
        { requestId: res.requestId },
      );
    }
    if (options.expectedHash && hasher) {
      const actual = await hasher.digest();
      if (actual !== options.expectedHash) {
        await discard(part, note);
        throw new ComfyError(
          'hash_mismatch',
          `the downloaded bytes hash to ${actual}, not ${options.expectedHash}; the file was discarded`,
          { requestId: res.requestId },
        );
      }
    }
    if (claim.compromised()) {
      // Our lock was taken over (this process stalled for longer than the stale time): another download may have
      // written into the part, so its bytes are not trusted. Rare; running again is safe.
      throw new ComfyError(
        'download_interrupted',
        `another download took over the partial file ${part} while this one stalled; run it again`,
        { requestId: res.requestId },
      );
    }
    const written = await settle(part, res);
    await discard(part, note);
    return {
      path: written,
      bytes: received,
      transferredBytes: received - offset,
      resumedFrom: offset,
      contentType: res.headers.get('content-type') ?? undefined,
      requestId: res.requestId,
    };
  } catch (err) {
    // A part nobody can resume (not ours to keep, or resume off) goes; a shared one stays for the next run.
    if (!resume && !claim.compromised()) await discard(part, note);
    throw err;
  } finally {
    hasher?.abort();
    await claim.release();
  }
}

/** A partial file this download may write: the shared one of its content (locked) or a fresh one of its own. */
interface PartClaim {
  part: string;
  note: string;
  /** True: the content's own part, resumable; false: a part unique to this download, removed when it fails. */
  shared: boolean;
  /** True when the lock on the shared part was lost. */
  compromised(): boolean;
  release(): Promise<void>;
}

/**
 * Locks the partial file of `key` in `dir`; when another download holds it, a fresh part unique to this download
 * (`.<hash>-<random>.part`) instead of failing (two downloads never share a partial file).
 */
async function claimPart(dir: string, key: string): Promise<PartClaim> {
  const { part, note, lock } = partialPathsIn(dir, key);
  let lost = false;
  try {
    const unlock = await lockfile().lock(part, {
      realpath: false,
      lockfilePath: lock,
      stale: LOCK_STALE_MS,
      retries: 0,
      onCompromised: () => {
        lost = true;
      },
    });
    return {
      part,
      note,
      shared: true,
      compromised: () => lost,
      release: () => (lost ? Promise.resolve() : unlock().catch(() => undefined)),
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
  }
  const own = `${part.slice(0, -'.part'.length)}-${randomBytes(6).toString('hex')}.part`;
  return { part: own, note: `${own}.json`, shared: false, compromised: () => false, release: () => Promise.resolve() };
}

/**
 * Opens the part for writing: appended to from `offset` (never through a symlink where the platform can refuse
 * one), or created afresh (`wx`: an entry that reappeared is an error, not a target) with its note when `noteBody`
 * is given.
 */
async function openPart(
  part: string,
  note: string,
  offset: number,
  noteBody: Record<string, string> | undefined,
): Promise<ReturnType<typeof createWriteStream>> {
  if (offset === 0) {
    await discard(part, note);
    if (noteBody) await fs.writeFile(note, JSON.stringify(noteBody), { flag: 'wx' });
  }
  const flags = offset > 0 ? fsConstants.O_WRONLY | fsConstants.O_APPEND | (fsConstants.O_NOFOLLOW ?? 0) : 'wx';
  const handle = await fs.open(part, flags);
  // A buffer of a few MiB, not the default 16 KiB: with 16 KiB every network chunk waited for the write before it
  // (a round trip to the thread pool each), so the socket and the disk took turns instead of working together; the
  // chunks gathered meanwhile go in one writev.
  return createWriteStream('', { fd: handle, autoClose: true, highWaterMark: STREAM_BUFFER_BYTES });
}

/** GET with an optional Range, following redirects without credentials (a signed URL carries its own). */
async function get(
  http: Transport,
  url: URL,
  offset: number,
  signal?: AbortSignal,
): Promise<{ res: RawResponse; final: URL }> {
  const headers: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-` } : {};
  let current = url;
  const seen = new Set<string>([url.href]);
  let res = await http.send('GET', current, { signal, headers });
  for (let hops = 0; res.status >= 300 && res.status < 400; hops++) {
    const location = res.headers.get('location');
    await res.body.dump();
    const context = { requestId: res.requestId, request: `GET ${http.redact(current)}` };
    if (!location)
      throw new ResponseShapeError(`${http.redact(current)} redirected (${res.status}) without a Location`, context);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new ResponseShapeError(
        `${http.redact(current)} redirected to a Location that is not a URL: ${excerpt(location.split(/[?#]/)[0])}`,
        context,
      );
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new ResponseShapeError(
        `${http.redact(current)} redirected to a ${next.protocol} URL, which is not followed (only http and https): ${describeUrl(http, next)}`,
        context,
      );
    }
    if (seen.has(next.href)) {
      throw new ResponseShapeError(
        `${http.redact(current)} redirected in a loop, back to ${describeUrl(http, next)}`,
        context,
      );
    }
    if (hops + 1 > MAX_REDIRECTS) {
      throw new ResponseShapeError(
        `${http.redact(current)} redirected too many times (more than ${MAX_REDIRECTS}), last to ${describeUrl(http, next)}`,
        context,
      );
    }
    seen.add(next.href);
    current = next;
    res = await http.send('GET', current, { signal, headers, credentials: false });
  }
  return { res, final: current };
}

/** A URL as a message may show it: redacted by the transport (no signature) for http(s), else scheme and path only. */
function describeUrl(http: Transport, url: URL): string {
  return url.protocol === 'http:' || url.protocol === 'https:'
    ? http.redact(url)
    : excerpt(`${url.protocol}${url.pathname}`);
}

/** A server string for a message: quoted with control characters escaped, at most 120 characters. */
function excerpt(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

/** The whole content's size: from Content-Range on a 206, Content-Length (+ offset) otherwise; undefined when unknown. */
function totalOf(res: RawResponse, offset: number): number | undefined {
  const range = /\/(\d+)\s*$/.exec(res.headers.get('content-range') ?? '');
  if (res.status === 206 && range) return Number(range[1]);
  const length = Number(res.headers.get('content-length') ?? NaN);
  return Number.isFinite(length) ? length + (res.status === 206 ? offset : 0) : undefined;
}

async function readNote(note: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await fs.readFile(note, 'utf8')) as { key?: string }).key;
  } catch {
    return undefined;
  }
}

/** Size of a regular file; 0 for anything else (missing, a symlink, a folder): nothing to resume from. */
async function sizeOf(file: string): Promise<number> {
  try {
    const stat = await fs.lstat(file);
    return stat.isFile() ? stat.size : 0;
  } catch {
    return 0;
  }
}

async function discard(part: string, note: string): Promise<void> {
  await fs.rm(part, { force: true });
  await fs.rm(note, { force: true });
}
