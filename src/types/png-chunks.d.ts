/**
 * Types of the PNG chunk libraries (CommonJS, untyped): the shapes their sources return. Kept here rather than as
 * `@types/*` packages so that the build needs only the libraries themselves.
 */

/** One PNG chunk: its four-letter type and its data (without length and CRC). */
interface PngChunk {
  name: string;
  data: Uint8Array;
}

declare module 'png-chunks-extract' {
  /**
   * The chunks of a whole PNG file, in file order, IEND last. Checks the signature and each chunk's CRC.
   * @throws Error for a bad signature, a CRC mismatch, IHDR not first, or no IEND.
   */
  function extractChunks(data: Uint8Array): PngChunk[];
  export = extractChunks;
}

declare module 'png-chunks-encode' {
  /** A PNG file: the signature, then each chunk with its length and CRC (computed here). No IEND is added. */
  function encodeChunks(chunks: readonly PngChunk[]): Uint8Array;
  export = encodeChunks;
}

declare module 'png-chunk-text' {
  /**
   * A tEXt chunk of `keyword` (1 to 79 Latin-1 characters) and `content` (Latin-1).
   * @throws Error for a character outside Latin-1, a NUL, or a keyword of 80 characters or more.
   */
  export function encode(keyword: string, content: string): PngChunk;
  /** The keyword and text of a tEXt chunk (Latin-1). */
  export function decode(data: Uint8Array | PngChunk): { keyword: string; text: string };
}
