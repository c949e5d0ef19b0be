/**
 * The `Range` header of GET /api/v2/assets/{id}/content (Job and Asset API v2, that endpoint: standard HTTP range
 * for resumable downloads; public sources: 206 partial, 416 not satisfiable). One byte range per request; RFC 9110
 * lets a server ignore a Range it does not support (then the whole content is sent).
 */

/** An inclusive byte range. */
interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Reads `header` against content of `size` bytes: `bytes=a-b`, `bytes=a-` or `bytes=-n` (the last n bytes).
 * @returns the range to send (end clamped to the content), `'unsatisfiable'` (416: it starts past the end, or
 *   asks for the last 0 bytes), or undefined to send everything (no header, another unit, several ranges,
 *   or a malformed one).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (match === null) return undefined;
  const [, first, last] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return undefined; // bytes=9-3 is malformed: ignored
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
