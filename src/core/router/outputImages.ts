/**
 * Images in a model's native output (images in it, base64 or URLs, are offered for preview and saving), and the
 * files they are previewed or saved in. vscode-free. It reads any JSON document, not the router's wire. The output
 * is server data: it is parsed with `JSON.parse` inside a try (a malformed or too
 * deeply nested document finds nothing, never throws), walked iteratively with bounds (depth, nodes, images), and a
 * base64 string is recognised by the signature of its decoded bytes (PNG, JPEG, GIF, WebP), never by its key name or
 * by a `data:` URL's claimed type. Decoding is bounded: the size a string would decode to is checked before decoding.
 * The document shown to the user stays the exact bytes received: this module only reads a parsed copy.
 */

import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** A raster image format recognised by its signature (magic bytes). */
type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** A path into the output JSON, outermost first; a number indexes an array (like a 422's `loc`). */
export type JsonPath = (string | number)[];

/** An image found in a model output. */
export type OutputImage =
  | {
      kind: 'base64';
      path: JsonPath;
      format: ImageFormat;
      /** The decoded image bytes (their first bytes are the format's signature). */
      bytes: Buffer;
      /** Whether it was a `data:image/…;base64,` URL (else a bare base64 string). */
      dataUrl: boolean;
    }
  | {
      kind: 'url';
      path: JsonPath;
      /** An absolute http(s) URL, as the output gave it. Never fetched here. */
      url: string;
    };

/** Bounds of {@link findOutputImages}. */
export interface FindImagesOptions {
  /** The largest image decoded, bytes (a larger base64 string is skipped). Default 32 MiB. */
  maxImageBytes?: number;
  /** At most this many images are reported. Default 32. */
  maxImages?: number;
  /** Deeper values are not visited. Default 64. */
  maxDepth?: number;
  /** A bare base64 string shorter than this (characters) is not considered: too small to be an image. Default 64. */
  minBase64Chars?: number;
}

const SIGNATURES: { format: ImageFormat; test: (b: Buffer) => boolean }[] = [
  {
    format: 'png',
    test: (b) =>
      b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { format: 'jpeg', test: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  {
    format: 'gif',
    test: (b) =>
      b.length >= 6 &&
      (b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a'),
  },
  {
    format: 'webp',
    test: (b) =>
      b.length >= 12 &&
      b.subarray(0, 4).toString('latin1') === 'RIFF' &&
      b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];

/** The format whose signature `bytes` start with, or undefined (SVG and anything else: not an image here). */
export function imageFormatOf(bytes: Buffer): ImageFormat | undefined {
  return SIGNATURES.find((s) => s.test(bytes))?.format;
}

/** The usual file extension of `format` (no dot). */
export function imageExtension(format: ImageFormat): string {
  return format === 'jpeg' ? 'jpg' : format;
}

/** `data[0].b64_json`-style text of a JSON path (for labels; keys that are not identifiers are quoted). */
export function jsonPathText(path: JsonPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === '' ? '(root)' : out;
}

// Standard or URL-safe base64, optionally padded; line breaks (MIME style) are removed before this test.
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const DATA_URL = /^data:image\/[A-Za-z0-9.+-]+(?:;[A-Za-z0-9=._-]+)*;base64,/i;
const IMAGE_PATH = /\.(?:png|jpe?g|gif|webp)$/i;
// Keys under which an http(s) string is an image's address even without an image extension (OpenAI's `url` in
// `data[]`, `image_url`, fal's `images[].url`).
const URL_KEYS = new Set(['url', 'image_url', 'imageurl', 'image', 'image_uri', 'uri', 'href', 'src']);

/** The decoded bytes of `b64` when it is an image within `maxBytes`, else undefined. Checks the signature before decoding all. */
function decodeImage(b64: string, maxBytes: number): { bytes: Buffer; format: ImageFormat } | undefined {
  const compact = b64.includes('\n') || b64.includes('\r') ? b64.replace(/[\r\n]/g, '') : b64;
  // 4 characters give 3 bytes: bound the size before decoding anything large.
  if (Math.floor((compact.length * 3) / 4) > maxBytes + 2) return undefined;
  if (!BASE64.test(compact)) return undefined;
  // The signature first, from a short prefix (16 characters → 12 bytes, enough for every signature).
  if (imageFormatOf(Buffer.from(compact.slice(0, 16), 'base64')) === undefined) return undefined;
  const bytes = Buffer.from(compact, 'base64');
  const format = imageFormatOf(bytes);
  return format === undefined || bytes.length > maxBytes ? undefined : { bytes, format };
}

function imageUrl(value: string, key: string | number | undefined): string | undefined {
  if (!/^https?:\/\//i.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const keyed = typeof key === 'string' && URL_KEYS.has(key.toLowerCase());
  return keyed || IMAGE_PATH.test(url.pathname) ? value : undefined;
}

/**
 * The images in a model's native output `output` (the bytes or text received), in document order, each with its JSON
 * path: `data:image/…;base64,` URLs and bare base64 strings whose decoded bytes start with a PNG, JPEG, GIF or WebP
 * signature (the signature decides, not the key nor the data URL's claimed type), and absolute http(s) URLs whose path
 * ends in an image extension or that stand under a key such as `url` or `image_url`. Bounded by `options` (sizes in
 * bytes). Output that is not JSON, or nested too deeply for the parser, has no images. Never throws. Rule: images are
 * offered for preview and saving; the output is untrusted server data.
 */
export function findOutputImages(output: Buffer | string, options: FindImagesOptions = {}): OutputImage[] {
  const maxImageBytes = options.maxImageBytes ?? 32 * 1024 * 1024;
  const maxImages = options.maxImages ?? 32;
  const maxDepth = options.maxDepth ?? 64;
  const minChars = options.minBase64Chars ?? 64;
  let root: unknown;
  try {
    root = JSON.parse(typeof output === 'string' ? output : output.toString('utf8'));
  } catch {
    return []; // not JSON (or nested beyond the parser's stack): nothing to offer
  }
  const found: OutputImage[] = [];
  // Depth-first, in document order: the stack holds the children of a container reversed.
  const stack: { value: unknown; path: JsonPath }[] = [{ value: root, path: [] }];
  while (stack.length > 0 && found.length < maxImages) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const key = path.at(-1);
      const dataUrl = DATA_URL.exec(value);
      if (dataUrl) {
        const image = decodeImage(value.slice(dataUrl[0].length), maxImageBytes);
        if (image) found.push({ kind: 'base64', path, format: image.format, bytes: image.bytes, dataUrl: true });
        continue;
      }
      if (value.length >= minChars) {
        const image = decodeImage(value, maxImageBytes);
        if (image) {
          found.push({ kind: 'base64', path, format: image.format, bytes: image.bytes, dataUrl: false });
          continue;
        }
      }
      const url = imageUrl(value, key);
      if (url !== undefined) found.push({ kind: 'url', path, url });
      continue;
    }
    if (value === null || typeof value !== 'object' || path.length >= maxDepth) continue;
    const children: { value: unknown; path: JsonPath }[] = Array.isArray(value)
      ? value.map((v, i) => ({ value: v as unknown, path: [...path, i] }))
      : Object.entries(value as Record<string, unknown>).map(([k, v]) => ({ value: v, path: [...path, k] }));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return found;
}

/**
 * The default file name of image `index` (0-based) of model `modelId`'s output: `<provider>-<model>[-<variant>]-<n>.<ext>`
 * with n = index + 1, e.g. `emulator-solid-png-1.png`. Characters outside `[a-z0-9._-]` become `-` (the id comes
 * from the user's file), and a leading dot is removed, so the name is one plain file name on every platform.
 */
export function imageFileName(modelId: string, index: number, format: ImageFormat): string {
  const stem =
    modelId
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 120) || 'model';
  return `${stem}-${index + 1}.${imageExtension(format)}`;
}

/**
 * Writes `bytes` to `file` atomically: a temporary file beside it (same folder, so the rename stays on one volume),
 * then renamed over `file`; on failure the temporary file is removed and the error thrown (never a half-written
 * image at `file`). @throws the file system's error (ENOENT for a missing folder, EACCES, …).
 */
export async function writeFileAtomically(file: string, bytes: Uint8Array): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  try {
    await fs.writeFile(temp, bytes, { flag: 'wx' });
    await fs.rename(temp, file);
  } catch (e) {
    await fs.rm(temp, { force: true });
    throw e;
  }
}
