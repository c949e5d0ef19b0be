/**
 * The workflow a ComfyUI output PNG carries: its `prompt` text chunk (the API-format graph as queued) and its
 * `workflow` chunk (the UI-format workflow). vscode-free.
 *
 * ComfyUI's SaveImage writes both as tEXt chunks (`json.dumps`, so ASCII); other tools re-store them as zTXt or
 * iTXt, compressed or not, so all three are read. The chunks come from png-chunks-extract (it checks each chunk's
 * CRC); this module decodes the text chunk layouts only (PNG specification, 11.3.4 Textual information), inflating
 * with a bound on the output: a chunk that would inflate past it is refused, never held in memory.
 */
import * as zlib from 'node:zlib';
import extractChunks from 'png-chunks-extract';
import { InputError } from '../http/errors';
import { describeSize } from '../util/bytes';

/** The workflows found in an image: each parsed JSON, absent when the image has no such chunk. */
export interface ImageWorkflow {
  /** The `prompt` chunk: the API-format graph that made the image. */
  readonly prompt?: unknown;
  /** The `workflow` chunk: the UI-format workflow, as the editor saved it. */
  readonly workflow?: unknown;
}

/**
 * The largest image file read whole, in bytes (256 MiB): a ComfyUI output of 8192×8192 pixels is well below it; the
 * file's bytes are in memory while its chunks are read.
 */
export const MAX_IMAGE_BYTES = 256 * 1024 * 1024;

/**
 * The largest text a `prompt` or `workflow` chunk may hold once inflated, in bytes (16 MiB, the bound of a workflow
 * file): a large workflow is a few hundred KiB, a chunk past this is a decompression bomb or not a workflow.
 */
export const MAX_IMAGE_TEXT_BYTES = 16 * 1024 * 1024;

/** Options of {@link readImageWorkflow}. */
export interface ReadImageOptions {
  /** The bound of one chunk's text once inflated, in bytes; default {@link MAX_IMAGE_TEXT_BYTES}. */
  readonly maxTextBytes?: number;
}

/** The chunk keywords ComfyUI writes, in the order {@link ImageWorkflow} names them. */
const KEYWORDS = ['prompt', 'workflow'] as const;
type Keyword = (typeof KEYWORDS)[number];

/** True when `bytes` start with the PNG signature. */
export function isPng(bytes: Uint8Array): boolean {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  return bytes.length >= 8 && signature.every((b, i) => bytes[i] === b);
}

function corrupt(why: string): InputError {
  return new InputError('png_corrupt', `the PNG is truncated or corrupt (${why}); save or download the image again`);
}

/**
 * Refuses a chunk whose declared length runs past the end of the file, before the chunks are extracted:
 * png-chunks-extract allocates a chunk's declared length before it reads it, so a corrupt length would make it
 * allocate and fill gigabytes. Only the lengths (and IEND, after which nothing is read) are looked at.
 * @throws InputError `png_corrupt`.
 */
function assertChunksFit(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 8; offset < bytes.length;) {
    // Length (4 bytes), type (4), data (length), CRC (4).
    if (bytes.length - offset < 12) throw corrupt(`the file ends inside a chunk header at byte ${offset}`);
    const length = view.getUint32(offset);
    if (length > bytes.length - offset - 12)
      throw corrupt(`a chunk at byte ${offset} declares ${length} bytes of data, more than the file has left`);
    if (view.getUint32(offset + 4) === 0x49454e44 /* IEND */) return;
    offset += 12 + length;
  }
  throw corrupt('no IEND chunk: the file was cut short');
}

/** The chunk's keyword: Latin-1 up to the first NUL (PNG specification, 11.3.4.2), or undefined when it has none. */
function splitKeyword(data: Uint8Array): { keyword: string; rest: Uint8Array } | undefined {
  const nul = data.indexOf(0);
  if (nul <= 0 || nul > 79) return undefined;
  return { keyword: Buffer.from(data.buffer, data.byteOffset, nul).toString('latin1'), rest: data.subarray(nul + 1) };
}

/**
 * Inflates a zlib stream with the output bounded (`maxOutputLength`): past the bound zlib stops and throws, so a
 * bomb never fills memory.
 * @throws InputError `png_text_too_large` past the bound, `png_corrupt` for a stream that is not zlib.
 */
function inflate(data: Uint8Array, keyword: Keyword, maxBytes: number): Buffer {
  try {
    return zlib.inflateSync(data, { maxOutputLength: maxBytes });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(keyword, maxBytes);
    throw corrupt(`the compressed "${keyword}" text chunk does not inflate: ${(e as Error).message}`);
  }
}

function tooLarge(keyword: Keyword, maxBytes: number): InputError {
  return new InputError(
    'png_text_too_large',
    `the image's "${keyword}" text chunk holds more than ${describeSize(maxBytes)} of text, above the bound for a workflow; it is not a workflow ComfyUI wrote (use the workflow JSON file instead)`,
  );
}

/**
 * Text of a tEXt or zTXt chunk. The specification says Latin-1, but ComfyUI's frontend decodes these chunks as UTF-8
 * (and some tools write UTF-8 into them); ComfyUI itself writes ASCII, the same either way. So: UTF-8 when the bytes
 * are valid UTF-8, else Latin-1.
 */
function latinOrUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }
}

/**
 * The text of a `prompt` or `workflow` chunk of type `name` (tEXt, zTXt or iTXt), its keyword already split off.
 * Layouts: PNG specification, 11.3.4.3 tEXt (text), 11.3.4.4 zTXt (method 0, zlib stream), 11.3.4.5 iTXt
 * (compression flag, method, language tag NUL, translated keyword NUL, UTF-8 text, zlib-compressed when flagged).
 * @throws InputError `png_corrupt` for a broken layout, `png_text_too_large` past `maxBytes`.
 */
function chunkText(name: string, rest: Uint8Array, keyword: Keyword, maxBytes: number): string {
  let text: Uint8Array;
  let utf8 = false;
  if (name === 'tEXt') text = rest;
  else if (name === 'zTXt') {
    if (rest.length < 1 || rest[0] !== 0)
      throw corrupt(`the "${keyword}" zTXt chunk names an unknown compression method`);
    text = inflate(rest.subarray(1), keyword, maxBytes);
  } else {
    utf8 = true;
    if (rest.length < 2) throw corrupt(`the "${keyword}" iTXt chunk is too short`);
    const [compressed, method] = [rest[0], rest[1]];
    const language = rest.indexOf(0, 2);
    const translated = language < 0 ? -1 : rest.indexOf(0, language + 1);
    if (translated < 0) throw corrupt(`the "${keyword}" iTXt chunk lacks its language tag or translated keyword`);
    const body = rest.subarray(translated + 1);
    if (compressed === 0) text = body;
    else if (compressed === 1 && method === 0) text = inflate(body, keyword, maxBytes);
    else throw corrupt(`the "${keyword}" iTXt chunk names an unknown compression`);
  }
  if (text.length > maxBytes) throw tooLarge(keyword, maxBytes);
  // iTXt is UTF-8 by definition; the frontend reads it without failing on a bad sequence, and so does this.
  return utf8 ? new TextDecoder('utf-8').decode(text) : latinOrUtf8(text);
}

function parseChunkJson(text: string, keyword: Keyword): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(
      'png_text_not_json',
      `the image's "${keyword}" text chunk is not JSON (${(e as Error).message}); the image was not saved by ComfyUI, or its metadata was edited: use the workflow JSON file instead`,
    );
  }
}

/**
 * Reads the workflows of a ComfyUI output PNG: the JSON of its first `prompt` and first `workflow` text chunks (tEXt,
 * zTXt or iTXt, compressed or not); other chunks are not decoded.
 * @param bytes the whole file (the caller bounds its size, e.g. by {@link MAX_IMAGE_BYTES}).
 * @returns each workflow found, parsed; at least one of the two.
 * @throws InputError `not_png` when the file does not start with the PNG signature; `png_corrupt` when it is truncated,
 *   a chunk's CRC is wrong, or a text chunk's layout or compressed stream is broken; `png_text_too_large` when a chunk's
 *   text is (or inflates to) more than `maxTextBytes`; `png_text_not_json` when a chunk is not JSON; `png_no_workflow`
 *   when it carries neither chunk.
 */
export function readImageWorkflow(bytes: Uint8Array, options: ReadImageOptions = {}): ImageWorkflow {
  const maxBytes = options.maxTextBytes ?? MAX_IMAGE_TEXT_BYTES;
  if (!isPng(bytes))
    throw new InputError(
      'not_png',
      'the file is not a PNG image (it does not start with the PNG signature); give a PNG that ComfyUI saved, or a workflow JSON file',
    );
  assertChunksFit(bytes);
  let chunks: { name: string; data: Uint8Array }[];
  try {
    chunks = extractChunks(bytes);
  } catch (e) {
    throw corrupt((e as Error).message);
  }
  const found: Partial<Record<Keyword, unknown>> = {};
  for (const chunk of chunks) {
    if (chunk.name !== 'tEXt' && chunk.name !== 'zTXt' && chunk.name !== 'iTXt') continue;
    const split = splitKeyword(chunk.data);
    const keyword = KEYWORDS.find((k) => k === split?.keyword);
    // The first chunk of each keyword counts (ComfyUI writes one); a later one is not even inflated.
    if (!split || !keyword || keyword in found) continue;
    found[keyword] = parseChunkJson(chunkText(chunk.name, split.rest, keyword, maxBytes), keyword);
  }
  if (!('prompt' in found) && !('workflow' in found)) {
    throw new InputError(
      'png_no_workflow',
      'this image carries no workflow: ComfyUI writes it into the PNGs it saves, and this one has no "prompt" or "workflow" text chunk (it was saved by another program, or its metadata was stripped, e.g. by an image optimizer or an upload); use the workflow JSON file instead',
    );
  }
  return found;
}
