/**
 * A small streaming parser of `multipart/form-data` request bodies (RFC 7578 over RFC 2046 §5.1.1), for
 * POST /api/v2/assets (FACTS.md "v2 assets": servers stream the body, so the metadata parts must come before
 * the file part).
 *
 * Push-based and synchronous: {@link MultipartParser.write} takes the next chunk of the body and returns what
 * it completed, as events (a part's headers, a slice of its bytes, its end). The caller handles those events
 * (awaiting a file write, say) before it reads the next chunk, so the body is never held whole in memory:
 * the parser keeps at most one chunk plus the length of the delimiter.
 *
 * A maintained parser (`busboy`, npm) would do the same; this one exists because the emulator may not add
 * dependencies. It covers what clients send: CRLF line ends, a preamble and an epilogue (ignored), transport
 * padding after a delimiter, quoted or token parameters, `filename*` (RFC 5987).
 */

/** The headers of one part, as far as form data needs them. */
export interface PartHeaders {
  /** The field name of `Content-Disposition: form-data; name="…"`. */
  readonly name: string;
  /** The `filename` (or decoded `filename*`) parameter; undefined for a plain field. */
  readonly filename: string | undefined;
  /** The part's `Content-Type`, when it has one. */
  readonly contentType: string | undefined;
}

/** What one chunk completed, in body order. `data` slices are never copies of more than one chunk. */
export type MultipartEvent =
  | { readonly type: 'part'; readonly part: PartHeaders }
  | { readonly type: 'data'; readonly bytes: Buffer }
  | { readonly type: 'partEnd' };

/** The body is not well-formed multipart (or breaks a limit); the message says where. */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultipartError';
  }
}

/** Limits of one body. */
export interface MultipartLimits {
  /** Largest header block of one part, in bytes (default 16 KiB). */
  readonly maxHeaderBytes?: number;
  /** Most parts in one body (default 1000). */
  readonly maxParts?: number;
}

const CRLF = Buffer.from('\r\n');
const CRLFCRLF = Buffer.from('\r\n\r\n');
/** Transport padding allowed between a delimiter and its CRLF (RFC 2046: linear white space). */
const MAX_PADDING = 256;

type State = 'preamble' | 'afterDelimiter' | 'headers' | 'body' | 'epilogue';

/**
 * The boundary of a `multipart/form-data` Content-Type, or undefined when the type is another one or the
 * boundary is missing or malformed (1 to 70 characters, RFC 2046).
 */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const [type, ...rest] = splitParameters(contentType);
  if (type.trim().toLowerCase() !== 'multipart/form-data') return undefined;
  const params = parseParameters(rest);
  const boundary = params.boundary;
  return boundary !== undefined && boundary.length >= 1 && boundary.length <= 70 ? boundary : undefined;
}

/** Parses one multipart body, chunk by chunk. */
export class MultipartParser {
  private state: State = 'preamble';
  /** Bytes not yet handled. It starts with a CRLF so that a body opening with the first delimiter matches. */
  private buffer: Buffer = CRLF;
  private readonly delimiter: Buffer;
  private readonly maxHeaderBytes: number;
  private readonly maxParts: number;
  private parts = 0;

  /** @throws MultipartError for a boundary that is empty or longer than 70 characters. */
  constructor(boundary: string, limits: MultipartLimits = {}) {
    if (boundary.length < 1 || boundary.length > 70) throw new MultipartError('the multipart boundary must be 1 to 70 characters');
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.maxHeaderBytes = limits.maxHeaderBytes ?? 16 * 1024;
    this.maxParts = limits.maxParts ?? 1000;
  }

  /**
   * Takes the next chunk of the body.
   * @returns the events it completed, in order (possibly none).
   * @throws MultipartError when the body is malformed or breaks a limit.
   */
  write(chunk: Buffer): MultipartEvent[] {
    const events: MultipartEvent[] = [];
    if (this.state === 'epilogue') return events;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      switch (this.state) {
        case 'preamble':
        case 'body': {
          const at = this.buffer.indexOf(this.delimiter);
          if (at < 0) {
            // Keep what could be the start of a delimiter split across chunks; the rest is the part's.
            const keep = Math.min(this.buffer.length, this.delimiter.length - 1);
            const emit = this.buffer.length - keep;
            if (this.state === 'body' && emit > 0) events.push({ type: 'data', bytes: this.buffer.subarray(0, emit) });
            this.buffer = this.buffer.subarray(emit);
            return events;
          }
          if (this.state === 'body') {
            if (at > 0) events.push({ type: 'data', bytes: this.buffer.subarray(0, at) });
            events.push({ type: 'partEnd' });
          }
          this.buffer = this.buffer.subarray(at + this.delimiter.length);
          this.state = 'afterDelimiter';
          break;
        }
        case 'afterDelimiter': {
          if (this.buffer.length < 2) return events;
          if (this.buffer[0] === 0x2d && this.buffer[1] === 0x2d) {
            // The close delimiter: whatever follows is the epilogue, ignored.
            this.state = 'epilogue';
            this.buffer = Buffer.alloc(0);
            return events;
          }
          const eol = this.buffer.indexOf(CRLF);
          if (eol < 0) {
            if (this.buffer.length > MAX_PADDING) throw new MultipartError('a multipart delimiter is not followed by a line end');
            return events;
          }
          if (!/^[ \t]*$/.test(this.buffer.subarray(0, eol).toString('latin1'))) {
            throw new MultipartError('a multipart delimiter is followed by text: the boundary appears inside a part, or the body is malformed');
          }
          this.buffer = this.buffer.subarray(eol + 2);
          this.state = 'headers';
          break;
        }
        case 'headers': {
          // A part without headers starts with the empty line at once.
          const end = this.buffer.subarray(0, 2).equals(CRLF) ? 0 : this.buffer.indexOf(CRLFCRLF);
          if (end < 0) {
            if (this.buffer.length > this.maxHeaderBytes) throw new MultipartError(`the headers of part ${this.parts + 1} exceed ${this.maxHeaderBytes} bytes`);
            return events;
          }
          if (end > this.maxHeaderBytes) throw new MultipartError(`the headers of part ${this.parts + 1} exceed ${this.maxHeaderBytes} bytes`);
          if (++this.parts > this.maxParts) throw new MultipartError(`the body has more than ${this.maxParts} parts`);
          const part = parsePartHeaders(this.buffer.subarray(0, end).toString('utf8'), this.parts);
          this.buffer = this.buffer.subarray(end === 0 ? 2 : end + 4);
          this.state = 'body';
          events.push({ type: 'part', part });
          break;
        }
        default:
          // The epilogue: ignored.
          this.buffer = Buffer.alloc(0);
          return events;
      }
    }
  }

  /** The body has ended. @throws MultipartError unless the close delimiter was seen. */
  end(): void {
    if (this.state !== 'epilogue') {
      throw new MultipartError(this.parts === 0 ? 'the body holds no multipart part (is the boundary right?)' : 'the body ended before the closing multipart delimiter');
    }
  }
}

/** The headers of part number `index` (1-based) from its header block. */
function parsePartHeaders(block: string, index: number): PartHeaders {
  const headers = new Map<string, string>();
  let last: string | undefined;
  for (const line of block === '' ? [] : block.split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`); // obsolete line folding
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError(`part ${index} has a malformed header line ${JSON.stringify(line.slice(0, 80))}`);
    last = line.slice(0, colon).trim().toLowerCase();
    headers.set(last, line.slice(colon + 1).trim());
  }
  const disposition = headers.get('content-disposition');
  if (disposition === undefined) throw new MultipartError(`part ${index} has no Content-Disposition header`);
  const [type, ...rest] = splitParameters(disposition);
  if (type.trim().toLowerCase() !== 'form-data') throw new MultipartError(`part ${index} is not form-data (Content-Disposition: ${type.trim()})`);
  const params = parseParameters(rest);
  if (params.name === undefined) throw new MultipartError(`part ${index} has no field name (Content-Disposition without name="…")`);
  const filename = params['filename*'] !== undefined ? decodeExtValue(params['filename*']) : params.filename;
  return { name: params.name, filename, contentType: headers.get('content-type') };
}

/** Splits a header value at the semicolons outside quoted strings: `type; a=1; b="x;y"` → `type`, `a=1`, `b="x;y"`. */
function splitParameters(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (quoted && ch === '\\' && i + 1 < value.length) {
      current += ch + value[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === ';' && !quoted) {
      out.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  out.push(current);
  return out;
}

/** `name=value` parameters (names lower-cased; quoted values unquoted and unescaped); the first of a name wins. */
function parseParameters(parts: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    if (!Object.hasOwn(params, name)) params[name] = value;
  }
  return params;
}

/** An RFC 5987 ext-value such as `UTF-8''na%C3%AFve.png`; the raw text when it is not one. */
function decodeExtValue(value: string): string {
  const match = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value);
  if (match === null) return value;
  try {
    if (match[1].toLowerCase() === 'utf-8') return decodeURIComponent(match[2]);
    // ISO-8859-1, the other charset RFC 5987 names: one byte per percent escape.
    return match[2].replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  } catch {
    return match[2];
  }
}
