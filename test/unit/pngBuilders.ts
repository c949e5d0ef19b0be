/**
 * Builders of PNG test files that carry text chunks: the pixels by pngjs, the chunks and their CRCs by
 * png-chunks-encode (never a CRC computed here), the text chunk layouts of the PNG specification (11.3.4).
 */
import * as zlib from 'node:zlib';
import encodeChunks from 'png-chunks-encode';
import extractChunks from 'png-chunks-extract';
import * as pngText from 'png-chunk-text';
import { solidPng } from './harness';

export type Chunk = { name: string; data: Uint8Array };

export const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');
export const NUL = Buffer.from([0]);

/** A tEXt chunk (png-chunk-text: Latin-1 only). */
export function tEXt(keyword: string, text: string): Chunk {
  return pngText.encode(keyword, text);
}

/** A tEXt chunk whose text bytes are given as they are (UTF-8, as some tools write). */
export function rawText(keyword: string, bytes: Buffer): Chunk {
  return { name: 'tEXt', data: Buffer.concat([latin1(keyword), NUL, bytes]) };
}

/** A zTXt chunk: keyword, NUL, method 0, the zlib stream (`deflated`, default: the text deflated). */
export function zTXt(keyword: string, text: string, deflated: Buffer = zlib.deflateSync(latin1(text))): Chunk {
  return { name: 'zTXt', data: Buffer.concat([latin1(keyword), NUL, Buffer.from([0]), deflated]) };
}

/** An iTXt chunk: keyword, NUL, compression flag, method 0, language tag, NUL, translated keyword, NUL, UTF-8 text. */
export function iTXt(
  keyword: string,
  text: string,
  options: { compressed?: boolean; deflated?: Buffer; language?: string } = {},
): Chunk {
  const utf8 = Buffer.from(text, 'utf8');
  const compressed = options.compressed || options.deflated !== undefined;
  const body = options.deflated ?? (compressed ? zlib.deflateSync(utf8) : utf8);
  return {
    name: 'iTXt',
    data: Buffer.concat([
      latin1(keyword),
      NUL,
      Buffer.from([compressed ? 1 : 0, 0]),
      latin1(options.language ?? 'en'),
      NUL,
      Buffer.from('Übersetzt', 'utf8'),
      NUL,
      body,
    ]),
  };
}

/** A 4×3 PNG (pngjs) with `chunks` inserted right after IHDR, re-encoded (png-chunks-encode computes every CRC). */
export function pngWith(...chunks: Chunk[]): Buffer {
  const [ihdr, ...rest] = extractChunks(solidPng(4, 3, [10, 20, 30]));
  return Buffer.from(encodeChunks([ihdr!, ...chunks, ...rest]));
}

/**
 * A zlib stream that inflates to `mib` MiB of zeros, in about 1 KiB per MiB: one deflated MiB of zeros, ended by a
 * sync flush (so it is byte-aligned and refers only to the zeros before it), repeated; then an empty final block and the
 * Adler-32 of the zeros (a = 1, b = n mod 65521). Building it never holds the inflated bytes.
 */
export function zeroBomb(mib: number): Buffer {
  const mibOfZeros = zlib.deflateRawSync(Buffer.alloc(1024 * 1024), {
    level: 9,
    finishFlush: zlib.constants.Z_SYNC_FLUSH,
  });
  const total = mib * 1024 * 1024;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((total % 65521) * 65536 + 1);
  return Buffer.concat([
    Buffer.from([0x78, 0xda]),
    ...Array<Buffer>(mib).fill(mibOfZeros),
    Buffer.from([0x03, 0x00]),
    adler,
  ]);
}
