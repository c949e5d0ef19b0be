/**
 * PNG encoding and decoding of {@link RgbImage}s with pngjs (8-bit RGB, colour type 2); the text chunks an output
 * carries (ComfyUI's `prompt`) are encoded by png-chunk-text and png-chunks-encode.
 */
import * as fs from 'node:fs';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import encodeChunks from 'png-chunks-encode';
import * as pngText from 'png-chunk-text';
import { PNG, type PackerOptions } from 'pngjs';
import { assertBatchFits, type Mask, type RgbImage } from './image';

// Input and output are both 8-bit RGB: no alpha channel is invented or stored.
const RGB: PackerOptions = { colorType: 2, inputColorType: 2, inputHasAlpha: false, bitDepth: 8 };

/** The eight bytes every PNG file starts with. */
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The largest PNG file LoadImage reads, in bytes. */
const MAX_PNG_FILE_BYTES = 64 * 1024 * 1024;

function toPng(image: RgbImage): PNG {
  const png = new PNG({ width: image.width, height: image.height, ...RGB });
  png.data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return png;
}

/** The PNG file of `image`, in memory. For small images only (previews); outputs use {@link pngStream}. */
export function encodePng(image: RgbImage): Buffer {
  return PNG.sync.write(toPng(image), RGB);
}

/** The signature (8 bytes) and the IHDR chunk (4 length, 4 type, 13 data, 4 CRC): what precedes the text chunks. */
const HEAD_BYTES = 8 + 25;

/**
 * JSON as Python's `json.dumps` writes it by default (`ensure_ascii`): every character past ASCII as a `\uXXXX`
 * escape, so the text is ASCII and fits a tEXt chunk (Latin-1). ComfyUI writes its `prompt` chunk so.
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Inserts `chunks` (already encoded, CRCs included) right after IHDR in a PNG byte stream, as ComfyUI's SaveImage
 * places its text chunks (before the pixels, where a reader that stops early still finds them). The rest passes
 * through as it comes.
 */
class AfterHeader extends Transform {
  private head: Buffer | undefined = Buffer.alloc(0);

  constructor(private readonly chunks: Uint8Array) {
    super();
  }

  override _transform(data: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.head === undefined) return done(null, data);
    this.head = Buffer.concat([this.head, data]);
    if (this.head.length < HEAD_BYTES) return done();
    // pngjs writes IHDR first with its 13 bytes of data: the chunk after it starts at HEAD_BYTES.
    if (
      !this.head.subarray(0, 8).equals(SIGNATURE) ||
      this.head.readUInt32BE(8) !== 13 ||
      this.head.toString('latin1', 12, 16) !== 'IHDR'
    ) {
      return done(new Error('the PNG encoder did not start with the signature and IHDR'));
    }
    const head = this.head;
    this.head = undefined;
    this.push(head.subarray(0, HEAD_BYTES));
    this.push(this.chunks);
    done(null, head.subarray(HEAD_BYTES));
  }

  override _flush(done: TransformCallback): void {
    done(this.head === undefined ? null : new Error('the PNG encoder ended before its IHDR chunk'));
  }
}

/**
 * The PNG file of `image` as a stream of its bytes (pipe it to where the output is stored), with a tEXt chunk per
 * entry of `text` (keyword → Latin-1 text) right after IHDR. A Readable that holds the bytes until read: pngjs's
 * packer is a classic stream, which emits at once whether or not anyone listens yet.
 * @throws Error (synchronously) when a keyword or text is not Latin-1, or a keyword is not 1 to 79 characters.
 */
export function pngStream(image: RgbImage, text: Readonly<Record<string, string>> = {}): Readable {
  const entries = Object.entries(text);
  // png-chunks-encode writes a whole file, signature first: the chunks are what follows the signature.
  const chunks =
    entries.length === 0
      ? undefined
      : encodeChunks(entries.map(([keyword, value]) => pngText.encode(keyword, value))).subarray(SIGNATURE.length);
  const packer = toPng(image).pack();
  const out = chunks === undefined ? new PassThrough() : new AfterHeader(chunks);
  packer.on('error', (e: Error) => out.destroy(e));
  return packer.pipe(out);
}

/** Decodes a PNG (any colour type pngjs reads) into RGB and its mask (`255 - alpha`). @throws when `bytes` is not a readable PNG. */
function decodePngWithMask(bytes: Buffer): { image: RgbImage; mask: Mask } {
  const png = PNG.sync.read(bytes);
  const pixels = png.width * png.height;
  const data = new Uint8Array(pixels * 3);
  const mask = new Uint8Array(pixels);
  // pngjs always hands back RGBA, whatever the file's colour type (alpha 255 when the file has none).
  for (let p = 0, q = 0, m = 0; m < pixels; p += 4, q += 3, m++) {
    data[q] = png.data[p];
    data[q + 1] = png.data[p + 1];
    data[q + 2] = png.data[p + 2];
    mask[m] = 255 - png.data[p + 3];
  }
  return {
    image: { width: png.width, height: png.height, data },
    mask: { width: png.width, height: png.height, data: mask },
  };
}

/**
 * Reads a PNG file as LoadImage does: the image (RGB) and its mask (`255 - alpha`).
 * @throws Error with a readable message when the file is larger than {@link MAX_PNG_FILE_BYTES}, is not a PNG,
 *   or is an image bigger than the emulator's pixel cap (checked on the header, before decoding).
 */
export async function readPngFile(file: string, signal?: AbortSignal): Promise<{ image: RgbImage; mask: Mask }> {
  const { size } = await fs.promises.stat(file);
  if (size > MAX_PNG_FILE_BYTES)
    throw new Error(
      `the file is ${size} bytes; LoadImage in the emulator reads PNG files of at most ${MAX_PNG_FILE_BYTES} bytes`,
    );
  const bytes = await fs.promises.readFile(file, { signal });
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(SIGNATURE) || bytes.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error('the asset is not a PNG file; LoadImage in the emulator reads PNG only');
  }
  assertBatchFits(bytes.readUInt32BE(16), bytes.readUInt32BE(20), 1);
  return decodePngWithMask(bytes);
}
