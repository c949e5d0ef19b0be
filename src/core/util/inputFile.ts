/**
 * Reading a workflow (or any JSON input) file before any request: the same rules for the CLI and the extension
 * (one module, so both refuse the same files). A file is read only if it is a regular file of sane size, and only if it
 * is UTF-8: a Latin-1 or UTF-16 file is refused instead of being submitted with replacement characters.
 */
import { constants as fsConstants, promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { InputError } from '../http/errors';
import { describeSize } from './bytes';
import { assertApiWorkflow, withoutSchemaKey, type ApiWorkflow } from './workflow';

/** Default bound of a workflow file, in bytes (16 MiB): a large API-format graph is a few hundred KiB. */
export const MAX_WORKFLOW_BYTES = 16 * 1024 * 1024;

/** Options of {@link readInputFile}. */
export interface ReadInputOptions {
  /** Largest accepted file, in bytes; default {@link MAX_WORKFLOW_BYTES}. */
  maxBytes?: number;
}

/**
 * The refusal of a file larger than `maxBytes`, naming both sizes (`atLeast`: the size is a lower bound, the file
 * was still growing): InputError `too_large`. Exported so that the extension (which reads through `vscode.workspace.fs`) refuses with the same words.
 */
export function tooLargeError(name: string, size: number, maxBytes: number, atLeast = false): InputError {
  return new InputError(
    'too_large',
    `${name} is too large: ${atLeast ? 'more than ' : ''}${describeSize(size)}, above the bound of ${describeSize(maxBytes)} for this file; is it the right file?`,
  );
}

/** The refusal of something that is not a regular file (`kind`: "a directory", "a FIFO", …): InputError `not_a_file`. */
export function notAFileError(name: string, kind: string): InputError {
  return new InputError(
    'not_a_file',
    `${name} is not a regular file (it is ${kind}); give the path of a workflow JSON file.`,
  );
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * True when `bytes` look like UTF-16: a UTF-16 BOM (FE FF or FF FE, which also starts UTF-32 LE), or, without one, the
 * NUL pattern of UTF-16 text that is mostly ASCII (many NULs at even offsets and almost none at odd ones, or the
 * reverse). UTF-8 JSON never has a raw NUL, so this cannot refuse a valid workflow.
 */
function looksLikeUtf16(bytes: Uint8Array): boolean {
  if (bytes.length >= 2 && ((bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0xff && bytes[1] === 0xfe)))
    return true;
  const sample = Math.min(bytes.length, 4096) & ~1;
  if (sample < 2) return false;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < sample; i += 2) {
    if (bytes[i] === 0) even++;
    if (bytes[i + 1] === 0) odd++;
  }
  const pairs = sample / 2;
  const [many, few] = even >= odd ? [even, odd] : [odd, even];
  return many >= pairs / 4 && few <= many / 8;
}

/**
 * Refuses, before any request, an upload source that is not a regular file (a folder, a FIFO that would block a
 * hash, a device): every API's upload calls it first.
 * @returns the file's stat (its size in bytes for the upload).
 * @throws InputError `unreadable` (no such file, or unreadable) or `not_a_file`, naming the path.
 */
export async function assertUploadFile(file: string): Promise<Stats> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (err) {
    throw new InputError(
      'unreadable',
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  if (!stat.isFile())
    throw new InputError(
      'not_a_file',
      `${file} is not a regular file (${stat.isDirectory() ? 'a folder' : 'a special file'}); give the path of a file to upload`,
    );
  return stat;
}

/**
 * The offset of the first byte that does not start a valid UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates U+D800–U+DFFF, nothing above U+10FFFF, no truncated sequence), or -1 when all of `bytes` is UTF-8.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) lo = 0xa0; // overlong below U+0800
      if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) lo = 0x90; // overlong below U+10000
      if (b === 0xf4) hi = 0x8f; // above U+10FFFF
    } else return i; // a continuation byte, C0/C1 (overlong two-byte lead), or F5–FF
    if (i + length > n) return i;
    const second = bytes[i + 1];
    if (second < lo || second > hi) return i;
    for (let k = 2; k < length; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    i += length;
  }
  return -1;
}

/**
 * Decodes a file's bytes as strict UTF-8 (`TextDecoder('utf-8', {fatal: true})`); a leading UTF-8 BOM is accepted and
 * skipped. `name` is how messages call the file.
 * @throws InputError `not_utf8`: "<name>: the file is not UTF-8 (looks like UTF-16): save it as UTF-8" for a UTF-16
 *   file (with or without BOM), or "… (invalid UTF-8 at byte N) …" (N: 0-based offset from the file's start) for
 *   anything else that is not UTF-8, such as Latin-1 (never submitted with replacement characters).
 */
export function decodeText(bytes: Uint8Array, name: string): string {
  const refuse = (why: string): InputError =>
    new InputError('not_utf8', `${name}: the file is not UTF-8 (${why}): save it as UTF-8`);
  if (looksLikeUtf16(bytes)) throw refuse('looks like UTF-16');
  const bom = bytes.length >= 3 && UTF8_BOM.every((b, i) => bytes[i] === b) ? 3 : 0;
  const body = bytes.subarray(bom);
  const bad = firstInvalidUtf8(body);
  if (bad >= 0) throw refuse(`invalid UTF-8 at byte ${bad + bom}`);
  try {
    // ignoreBOM: the BOM was skipped above; a second one would be content.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    throw refuse('invalid UTF-8'); // not reached: the check above is at least as strict
  }
}

/** What a non-regular file is, for a message. */
function kindOf(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function unreadable(file: string, err: unknown): InputError {
  const code = (err as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : (err as Error).message;
  return new InputError('unreadable', `cannot read ${file}: ${why}`);
}

/** Options of {@link readInputBytes}. */
export interface ReadBytesOptions {
  /**
   * Largest accepted file, in bytes, or a function of the file's first bytes (up to 64 KiB; fewer only when the file
   * is shorter) giving it: a PNG and a JSON file have different bounds. Default {@link MAX_WORKFLOW_BYTES}.
   */
  maxBytes?: number | ((head: Uint8Array) => number);
}

/**
 * Reads an input file's bytes, before any request.
 * - Refuses what is not a regular file (a directory, a FIFO, a socket, a device): InputError `not_a_file`. A FIFO is
 *   never opened for reading (that would wait for a writer); the handle is opened non-blocking and checked again
 *   with `fstat`, so a file swapped meanwhile is refused too.
 * - Refuses a file larger than `maxBytes` (default 16 MiB), from the opened handle's `fstat`, and reads at most
 *   `maxBytes + 1` bytes, so a file that grows meanwhile is still bounded: InputError `too_large` naming the size
 *   and the bound.
 * - A missing or unreadable file: InputError `unreadable`.
 * Rule: an input file is checked before any request, the same way in the CLI and the extension.
 */
export async function readInputBytes(file: string, options: ReadBytesOptions = {}): Promise<Buffer> {
  const boundOf = options.maxBytes ?? MAX_WORKFLOW_BYTES;
  try {
    const before = await fs.stat(file);
    if (!before.isFile()) throw notAFileError(file, kindOf(before));
  } catch (err) {
    throw InputError.is(err) ? err : unreadable(file, err);
  }
  let handle: fs.FileHandle;
  try {
    // O_NONBLOCK: if the path became a FIFO since the stat, opening it does not wait for a writer (Linux, macOS).
    handle = await fs.open(file, fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'EISDIR' ? notAFileError(file, 'a directory') : unreadable(file, err);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw notAFileError(file, kindOf(stat));
    const chunks: Buffer[] = [];
    let total = 0;
    let maxBytes = typeof boundOf === 'number' ? boundOf : undefined;
    if (maxBytes !== undefined && stat.size > maxBytes) throw tooLargeError(file, stat.size, maxBytes);
    // Read until EOF or one byte past the bound: the file may have grown since the fstat.
    while (maxBytes === undefined || total <= maxBytes) {
      const chunk = Buffer.allocUnsafe(maxBytes === undefined ? 64 * 1024 : Math.min(64 * 1024, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead > 0) chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (maxBytes === undefined) {
        // The bound of this kind of file, known from its first bytes (the first read, or all of a shorter file).
        maxBytes = (boundOf as (head: Uint8Array) => number)(chunk.subarray(0, bytesRead));
        if (stat.size > maxBytes) throw tooLargeError(file, stat.size, maxBytes);
      }
      if (bytesRead === 0) break;
    }
    if (total > maxBytes) throw tooLargeError(file, maxBytes, maxBytes, true);
    return Buffer.concat(chunks, total);
  } catch (err) {
    throw InputError.is(err) ? err : unreadable(file, err);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads a JSON input file (a workflow) as text, before any request: {@link readInputBytes} (regular file, bounded
 * size: InputError `not_a_file`, `too_large`, `unreadable`), then text that is not UTF-8 is refused: InputError
 * `not_utf8` ({@link decodeText}).
 * Rule: an input file is checked before any request, the same way in the CLI and the extension.
 */
export async function readInputFile(file: string, options: ReadInputOptions = {}): Promise<string> {
  return decodeText(await readInputBytes(file, options), file);
}

/**
 * Parses a workflow's text, drops a top-level `$schema` string ({@link withoutSchemaKey}) and checks it is API format,
 * before any request. `name` is how messages call the file
 * (its base name). Shared by {@link readWorkflowFile} and the extension (which has the text of an open editor).
 * @throws InputError `bad_json` (naming the file and the parser's message), `workflow_format_ui`, `not_api_format`.
 */
export function parseWorkflowText(text: string, name: string): ApiWorkflow {
  let workflow: unknown;
  try {
    workflow = JSON.parse(text);
  } catch (err) {
    throw new InputError(
      'bad_json',
      `${name} is not valid JSON (${(err as Error).message}); fix the file or export the workflow again.`,
    );
  }
  // An editor's `$schema` reference (workflow IntelliSense) is not a node: it never reaches a server.
  workflow = withoutSchemaKey(workflow);
  assertApiWorkflow(workflow);
  return workflow;
}

/**
 * Reads and checks a workflow file before any request: {@link readInputFile} then {@link parseWorkflowText}.
 * @throws InputError `unreadable`, `not_a_file`, `too_large`, `not_utf8`, `bad_json`, `workflow_format_ui`,
 *   `not_api_format`. The one reader of workflow files for the CLI and the extension.
 */
export async function readWorkflowFile(file: string, options: ReadInputOptions = {}): Promise<ApiWorkflow> {
  return parseWorkflowText(await readInputFile(file, options), path.basename(file));
}
