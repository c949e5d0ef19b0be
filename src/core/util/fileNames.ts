/**
 * File names derived from server data: one sanitizer for every such name (an output's `name`, its `id` used as a
 * fallback, an asset's `file_path`, a Content-Disposition filename) and the check that a name lands inside its
 * folder. Server data is untrusted: a file name from it goes through one sanitizer and is checked to land
 * inside its folder, so a hostile name can neither escape the folder nor overwrite a file.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { InputError } from '../http/errors';

/** The longest file name most file systems take (ext4, APFS, NTFS…), in UTF-8 bytes. */
export const MAX_FILE_NAME_BYTES = 255;

/** What is left when neither a name nor its fallback is usable. */
const LAST_RESORT_NAME = 'output';

/** An extension longer than this (UTF-8 bytes) is not kept whole when a name is shortened: it is not an extension. */
const MAX_KEPT_EXTENSION_BYTES = 32;

// C0 controls, DEL, C1 controls; the characters Windows forbids in a name; the bidirectional controls, which make a
// name read differently from what it is (`gnp.exe` shown as `exe.png`). Path separators are handled before.
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f<>:"|?*\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** A UTF-16 surrogate without its pair: not a character; it would become U+FFFD or fail on disk. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/**
 * Windows device names, reserved in any case and with any extension (`con.txt`, `NUL.tar.gz`), also followed by
 * spaces before the extension, and the superscript-digit ports (Microsoft, "Naming Files, Paths, and Namespaces").
 */
const RESERVED_DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]) *$/i;

/**
 * Makes a server-given name a safe BASE name for a file:
 * - only its last path segment is kept (`/` and `\` both separate, whatever the platform): `a/../../b` is `b`;
 * - control characters (C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F), the characters Windows forbids
 *   (`<>:"|?*`), bidirectional controls and lone surrogates each become `_`;
 * - leading dots and spaces go (no hidden files, never `.` or `..`), trailing dots and spaces go (Windows drops
 *   them, so the name on disk would differ);
 * - a Windows device name (CON, PRN, AUX, NUL, COM0–COM9, LPT0–LPT9, COM¹…, CONIN$, CONOUT$; any case, with or
 *   without an extension) gets a leading `_`;
 * - at most {@link MAX_FILE_NAME_BYTES} bytes of UTF-8, the extension kept: the stem is shortened on a code-point
 *   boundary (a UTF-8 character is never split).
 * When nothing usable is left, `fallback` is made safe the same way (a fallback of `../../x` escapes nothing
 * either), and when that is unusable too the name is {@link LAST_RESORT_NAME}. Idempotent: a safe name is returned
 * unchanged. Never throws; never returns an empty string.
 * @param name the server's name (any value: null, undefined and non-strings are read as missing)
 * @param fallback used when `name` gives nothing usable (e.g. the asset id)
 */
export function safeFileName(name: unknown, fallback?: unknown): string {
  return sanitize(name) || sanitize(fallback) || LAST_RESORT_NAME;
}

/** The safe form of `raw`, or '' when nothing usable is left. */
function sanitize(raw: unknown): string {
  if (typeof raw !== 'string') return '';
  const base = raw.split(/[\\/]/).pop() ?? '';
  let name = base.replace(LONE_SURROGATE, '_').replace(UNSAFE_CHARACTERS, '_');
  name = trimEnds(name);
  if (name === '') return '';
  if (RESERVED_DEVICE.test(name.split('.')[0])) name = `_${name}`;
  return trimEnds(fitBytes(name, MAX_FILE_NAME_BYTES));
}

/** Without leading dots and white space, and without trailing dots and spaces. */
function trimEnds(name: string): string {
  return name.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
}

/** `name` shortened to at most `max` UTF-8 bytes, its extension kept (when it is a short one). */
function fitBytes(name: string, max: number): string {
  if (Buffer.byteLength(name, 'utf8') <= max) return name;
  let ext = path.extname(name);
  if (Buffer.byteLength(ext, 'utf8') > MAX_KEPT_EXTENSION_BYTES) ext = '';
  const stem = name.slice(0, name.length - ext.length);
  return truncateUtf8(stem, max - Buffer.byteLength(ext, 'utf8')) + ext;
}

/** The longest prefix of `text` that fits in `max` UTF-8 bytes, cut between code points. */
function truncateUtf8(text: string, max: number): string {
  let bytes = 0;
  let out = '';
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > max) break;
    bytes += size;
    out += ch;
  }
  return out;
}

/**
 * The `n`th candidate for a safe name whose plain form is taken: `name` itself for 0, then `stem-1.ext`,
 * `stem-2.ext`… The stem is shortened (on a code-point boundary) so that the candidate stays within
 * {@link MAX_FILE_NAME_BYTES}.
 * @param name a name that {@link safeFileName} returned
 */
export function numberedName(name: string, n: number): string {
  if (n === 0) return name;
  let ext = path.extname(name);
  if (Buffer.byteLength(ext, 'utf8') > MAX_KEPT_EXTENSION_BYTES) ext = '';
  const stem = name.slice(0, name.length - ext.length);
  const suffix = `-${n}`;
  const room = MAX_FILE_NAME_BYTES - Buffer.byteLength(suffix + ext, 'utf8');
  return `${truncateUtf8(stem, room)}${suffix}${ext}`;
}

/**
 * The absolute path of `name` inside `dir`, after `fs.realpath` of `dir` (a symlink on the way to the folder is
 * resolved first, so the check is made on the real place). The folder must exist.
 * @throws InputError `unsafe_path` (naming the folder) when the path would not be a direct child of the real folder:
 *   `name` is empty, `.`, `..`, or holds a path separator; the check stands even if a caller forgot the sanitizer
 *   (a second line of defence). Errors of `fs.realpath` (ENOENT, EACCES) as they are.
 */
export async function pathInside(dir: string, name: string): Promise<string> {
  const real = await fs.realpath(dir);
  const target = path.resolve(real, name);
  const relative = path.relative(real, target);
  if (
    name === '' ||
    relative === '' ||
    relative !== name ||
    relative.startsWith('..') ||
    path.isAbsolute(relative) ||
    /[\\/]/.test(relative)
  ) {
    throw new InputError(
      'unsafe_path',
      `refused to write ${JSON.stringify(name)}: it would not land inside the folder ${real} (nothing was written there).`,
    );
  }
  return target;
}

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.mp4': 'video/mp4',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
};

/** MIME type from a file name's extension. */
export function contentTypeOf(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}
