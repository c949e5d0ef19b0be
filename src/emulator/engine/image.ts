/**
 * Images as the emulator's nodes pass them: 8-bit RGB, row-major, no alpha (the engine's IMAGE socket
 * carries a batch of these). Pure functions, no I/O.
 */

/** One RGB image: `data` holds `width * height * 3` bytes, row by row, R G B per pixel. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/** The value of an IMAGE socket: a batch of one or more images. */
export type ImageBatch = readonly RgbImage[];

/**
 * The value of a MASK socket: one byte per pixel, row-major, 0..255 (the engine's 0..1 floats × 255). LoadImage
 * makes it from the alpha channel, `255 - alpha`, as the engine does (`1 - alpha`).
 */
export interface Mask {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/**
 * The most pixels one batch may hold, summed over its images (48 MiB of RGB). A sanity cap: the node limits
 * (16384 px a side, 4096 a batch) alone would allow terabytes; a bigger batch fails the node that makes it.
 */
const MAX_BATCH_PIXELS = 16 * 1024 * 1024;

/** Throws a readable error when a batch of `count` images of `width`×`height` exceeds {@link MAX_BATCH_PIXELS}. */
export function assertBatchFits(width: number, height: number, count: number): void {
  const pixels = width * height * count;
  if (pixels > MAX_BATCH_PIXELS) {
    throw new Error(
      `a batch of ${count} image(s) of ${width}×${height} holds ${pixels} pixels; this emulator allows at most ${MAX_BATCH_PIXELS} per batch`,
    );
  }
}

/** An image of one colour; `color` is 0xRRGGBB. */
export function solidImage(width: number, height: number, color: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  const r = (color >> 16) & 0xff;
  const g = (color >> 8) & 0xff;
  const b = color & 0xff;
  for (let i = 0; i < data.length; i += 3) {
    data[i] = r;
    data[i + 1] = g;
    data[i + 2] = b;
  }
  return { width, height, data };
}

/** Every channel `v` becomes `255 - v` (the engine's ImageInvert: `1 - x` on 0..1 floats). */
export function invertImage(image: RgbImage): RgbImage {
  const data = new Uint8Array(image.data.length);
  for (let i = 0; i < data.length; i++) data[i] = 255 - image.data[i];
  return { width: image.width, height: image.height, data };
}

/** Resampling filters the emulator implements; the engine's other methods map onto these. */
export type Filter = 'nearest' | 'bilinear';

/** A rectangle of the source image. */
interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The part of `image` kept by the engine's `crop: 'center'`: the largest centred rectangle with the target's
 * aspect ratio (as ComfyUI's `common_upscale` does before scaling).
 */
export function centerCropRegion(image: RgbImage, targetWidth: number, targetHeight: number): Region {
  const oldAspect = image.width / image.height;
  const newAspect = targetWidth / targetHeight;
  if (oldAspect > newAspect) {
    const width = Math.max(1, Math.round(image.width * (newAspect / oldAspect)));
    return { x: Math.floor((image.width - width) / 2), y: 0, width, height: image.height };
  }
  if (oldAspect < newAspect) {
    const height = Math.max(1, Math.round(image.height * (oldAspect / newAspect)));
    return { x: 0, y: Math.floor((image.height - height) / 2), width: image.width, height };
  }
  return { x: 0, y: 0, width: image.width, height: image.height };
}

/** Resamples `region` of `image` (default: all of it) to `width`×`height`. */
export function resizeImage(image: RgbImage, width: number, height: number, filter: Filter, region?: Region): RgbImage {
  const src = region ?? { x: 0, y: 0, width: image.width, height: image.height };
  const data = new Uint8Array(width * height * 3);
  const sx = src.width / width;
  const sy = src.height / height;
  const at = (x: number, y: number, c: number): number => image.data[((src.y + y) * image.width + (src.x + x)) * 3 + c];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      if (filter === 'nearest') {
        // nearest-exact: sample at the pixel centre.
        const px = Math.min(src.width - 1, Math.floor((x + 0.5) * sx));
        const py = Math.min(src.height - 1, Math.floor((y + 0.5) * sy));
        for (let c = 0; c < 3; c++) data[o + c] = at(px, py, c);
        continue;
      }
      // bilinear with half-pixel centres (align_corners = false).
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), src.width - 1);
      const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), src.height - 1);
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const x1 = Math.min(x0 + 1, src.width - 1);
      const y1 = Math.min(y0 + 1, src.height - 1);
      const wx = fx - x0;
      const wy = fy - y0;
      for (let c = 0; c < 3; c++) {
        const top = at(x0, y0, c) * (1 - wx) + at(x1, y0, c) * wx;
        const bottom = at(x0, y1, c) * (1 - wx) + at(x1, y1, c) * wx;
        data[o + c] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return { width, height, data };
}

/** A copy of `image` no larger than `box`×`box`, aspect kept (nearest); the image itself when it already fits. */
export function thumbnail(image: RgbImage, box: number): RgbImage {
  if (image.width <= box && image.height <= box) return image;
  const scale = box / Math.max(image.width, image.height);
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  return resizeImage(image, width, height, 'nearest');
}
