/** PNG encoding and decoding of {@link RgbImage}s with pngjs (8-bit RGB, colour type 2). */
import * as fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { PNG, type PackerOptions } from 'pngjs';
import type { RgbImage } from './image';

// Input and output are both 8-bit RGB: no alpha channel is invented or stored.
const RGB: PackerOptions = { colorType: 2, inputColorType: 2, inputHasAlpha: false, bitDepth: 8 };

function toPng(image: RgbImage): PNG {
  const png = new PNG({ width: image.width, height: image.height, ...RGB });
  png.data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  return png;
}

/** The PNG file of `image`, in memory. For small images only (previews); outputs use {@link writePng}. */
export function encodePng(image: RgbImage): Buffer {
  return PNG.sync.write(toPng(image), RGB);
}

/**
 * Streams the PNG of `image` to `file` (created or truncated) and resolves with its size in bytes.
 * @throws the write error, or an AbortError when `signal` aborts (the partial file is removed).
 */
export async function writePng(image: RgbImage, file: string, signal?: AbortSignal): Promise<number> {
  try {
    await pipeline(toPng(image).pack(), fs.createWriteStream(file), { signal });
  } catch (e) {
    await fs.promises.rm(file, { force: true });
    throw e;
  }
  return (await fs.promises.stat(file)).size;
}

/**
 * Decodes a PNG (any colour type pngjs reads) into RGB; alpha is dropped. For LoadImage (a later issue).
 * @throws when `bytes` is not a readable PNG.
 */
export function decodePng(bytes: Buffer): RgbImage {
  const png = PNG.sync.read(bytes);
  const data = new Uint8Array(png.width * png.height * 3);
  // pngjs always hands back RGBA, whatever the file's colour type.
  for (let p = 0, q = 0; q < data.length; p += 4, q += 3) {
    data[q] = png.data[p];
    data[q + 1] = png.data[p + 1];
    data[q + 2] = png.data[p + 2];
  }
  return { width: png.width, height: png.height, data };
}
