/**
 * Receiving POST /api/v2/assets (not shown in Job and Asset API v2; public sources): a multipart/form-data body whose
 * metadata parts (`content_type`, `file_path`, optional `expected_hash`, repeated `tags`, `expires_in` in seconds) come
 * BEFORE the `file` part. The body is parsed as a stream (`busboy`): the file's bytes go to a temporary
 * file while hashed with BLAKE3 (blobs.ts), never held whole in memory.
 *
 * Refusals (422 `invalid_upload`, a code of ours): not multipart; a malformed body; a file part before
 * `content_type` and `file_path` (servers stream, so they cannot wait for metadata that comes later); any part
 * after the file part; a second file part; no file part; a metadata value that is malformed or repeated.
 * 409 `hash_mismatch` when `expected_hash` is not the hash of the bytes. Nothing is stored on any refusal.
 */
import busboy, { type Busboy } from 'busboy';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { AssetRecord, AssetStore } from './assets';
import { BLAKE3_HASH, type StagedBlob } from '../blobs';
import { EmulatorError } from '../errors';
import type { RequestContext } from '../router';

/** Largest value of one metadata part, and of all of them together, in bytes. */
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_METADATA_BYTES = 1024 * 1024;
/** Most `tags` parts. */
export const MAX_TAGS = 100;
/** Longest `expires_in`: ten years, in seconds. */
const MAX_EXPIRES_IN_S = 10 * 365 * 24 * 60 * 60;

/** The metadata parts of an upload, as read so far. */
interface UploadMetadata {
  contentType?: string;
  filePath?: string;
  expectedHash?: string;
  tags: string[];
  expiresIn?: number;
}

/** The parts that must come before the file part. */
const REQUIRED_BEFORE_FILE = ['content_type', 'file_path'] as const;

function invalid(message: string): EmulatorError {
  return new EmulatorError('invalid_upload', message);
}

/** Checks a `file_path` (upload and from-hash): 1 to 1024 characters, no control characters. @throws 422 `invalid_upload`. */
export function checkFilePath(value: unknown): string {
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.trim() === '' || value.length > 1024 || /[\u0000-\u001f\u007f]/.test(value)) {
    throw invalid(
      `file_path must be a name such as photo.png (1 to 1024 characters, no control characters); got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Checks one tag: 1 to 128 characters. @throws 422 `invalid_upload`. */
export function checkTag(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 128)
    throw invalid(`a tag must be 1 to 128 characters; got ${JSON.stringify(value)}`);
  return value;
}

/** Checks `expires_in`: whole seconds, 1 to ten years. @throws 422 `invalid_upload`. */
export function checkExpiresIn(value: unknown): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_EXPIRES_IN_S) {
    throw invalid(
      `expires_in must be a whole number of seconds in 1..${MAX_EXPIRES_IN_S}; got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/** Checks a hash written `blake3:<64 hex digits>` (hex case ignored). @returns it in lower case, or undefined. */
export function normalizeHash(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const lower = value.trim().toLowerCase();
  return BLAKE3_HASH.test(lower) ? lower : undefined;
}

/** Reads one metadata part into `meta`. Unknown names are ignored. @throws 422 `invalid_upload`. */
function applyField(meta: UploadMetadata, name: string, value: string): void {
  const once = (present: boolean): void => {
    if (present) throw invalid(`the part "${name}" is repeated; send it once`);
  };
  switch (name) {
    case 'content_type':
      once(meta.contentType !== undefined);
      if (!/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+\s*(;.*)?$/.test(value) || value.length > 255)
        throw invalid(`content_type must be a MIME type such as image/png; got ${JSON.stringify(value)}`);
      meta.contentType = value.trim();
      return;
    case 'file_path':
      once(meta.filePath !== undefined);
      meta.filePath = checkFilePath(value);
      return;
    case 'expected_hash': {
      once(meta.expectedHash !== undefined);
      const hash = normalizeHash(value);
      if (hash === undefined)
        throw invalid(`expected_hash must be written blake3:<64 hex digits>; got ${JSON.stringify(value)}`);
      meta.expectedHash = hash;
      return;
    }
    case 'tags':
      if (meta.tags.length >= MAX_TAGS) throw invalid(`at most ${MAX_TAGS} tags`);
      meta.tags.push(checkTag(value));
      return;
    case 'expires_in':
      once(meta.expiresIn !== undefined);
      meta.expiresIn = checkExpiresIn(value);
      return;
  }
}

/**
 * Reads an upload body and stores its file (deduplicated by hash) as a new asset of the caller. The body is parsed
 * as it streams in by `busboy`; the file part's bytes are streamed into a staged blob (blobs.ts), with backpressure.
 * Appends the part names, in wire order, to `context.record.parts`.
 * @returns the record and `created_new` (see {@link AssetStore.store}).
 * @throws EmulatorError 422 `invalid_upload`, 409 `hash_mismatch` (the refusals above); the rest of the request
 *   body is then drained, so that the client reads the refusal. Nothing stays on disk.
 */
export async function receiveUpload(
  req: IncomingMessage,
  context: RequestContext,
  assets: AssetStore,
): Promise<{ record: AssetRecord; createdNew: boolean }> {
  let parser: Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      preservePath: true,
      limits: { fieldSize: MAX_FIELD_BYTES, parts: MAX_TAGS + 16 },
    });
  } catch {
    throw invalid(
      'send the upload as multipart/form-data with a boundary (Content-Type: multipart/form-data; boundary=…)',
    );
  }
  const meta: UploadMetadata = { tags: [] };
  const names: string[] = [];
  context.record.parts = names;
  let metadataBytes = 0;
  /** The file part: its bytes, and the task that writes them (settled before this function answers). */
  let file: { stream: Readable; written: Promise<StagedBlob> } | undefined;

  const parsed = new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (e: unknown): void => {
      if (failed) return;
      failed = true;
      // Stop parsing and drain the rest of the body, so that the client reads the refusal.
      req.unpipe(parser);
      req.resume();
      // With the refusal as its error: a file part already read to its end but not yet written would otherwise
      // count as finished, and its ingest would wait for the rest forever.
      file?.stream.destroy(e instanceof Error ? e : new Error(String(e)));
      reject(e);
    };
    parser.on('field', (name, value, info) => {
      if (failed) return;
      names.push(name);
      try {
        if (file !== undefined)
          throw invalid(`the part "${name}" comes after the file part: the file part must be the last one`);
        if (name === 'file')
          throw invalid('the part "file" must be the file: give it a filename (Content-Disposition filename="…")');
        if (info.valueTruncated) throw invalid(`the part "${name}" is longer than ${MAX_FIELD_BYTES} bytes`);
        metadataBytes += Buffer.byteLength(value);
        if (metadataBytes > MAX_METADATA_BYTES)
          throw invalid(`the metadata parts are longer than ${MAX_METADATA_BYTES} bytes together`);
        applyField(meta, name, value);
      } catch (e) {
        fail(e);
      }
    });
    parser.on('file', (name, stream) => {
      names.push(name);
      if (failed) return void stream.resume();
      const missing = REQUIRED_BEFORE_FILE.filter(
        (n) => (n === 'content_type' ? meta.contentType : meta.filePath) === undefined,
      );
      let refusal: EmulatorError | undefined;
      if (file !== undefined)
        refusal = invalid(`the part "${name}" comes after the file part: the file part must be the last one`);
      else if (name !== 'file')
        refusal = invalid(
          `the part "${name}" is a file: send the bytes as the part named "file", and the metadata as plain fields`,
        );
      else if (missing.length > 0) {
        refusal = invalid(
          `the file part came before the metadata (${missing.join(', ')} missing): send content_type, file_path, expected_hash, tags and expires_in first, the file part last`,
        );
      }
      if (refusal !== undefined) {
        stream.resume();
        return fail(refusal);
      }
      const written = assets.ingest(stream);
      file = { stream, written };
      written.catch(fail);
    });
    parser.on('partsLimit', () => fail(invalid(`more than ${MAX_TAGS + 16} parts`)));
    parser.on('error', (e: Error) => fail(invalid(`malformed multipart body: ${e.message}`)));
    parser.on('close', () => (failed ? undefined : resolve()));
    req.on('close', () => {
      if (!req.complete) fail(invalid('the upload broke off before the body ended'));
    });
    req.pipe(parser);
  });

  let staged: StagedBlob | undefined;
  try {
    await parsed;
    staged = await file?.written;
    if (staged === undefined)
      throw invalid('the body has no file part: send the bytes as a part named "file", after the metadata parts');
    if (meta.expectedHash !== undefined && meta.expectedHash !== staged.hash) {
      throw new EmulatorError(
        'hash_mismatch',
        `the bytes received hash to ${staged.hash}, not to the expected_hash ${meta.expectedHash}; nothing was stored`,
        {
          expected_hash: meta.expectedHash,
          actual_hash: staged.hash,
        },
      );
    }
    const result = assets.store(staged, context.owner, {
      contentType: meta.contentType!,
      name: meta.filePath!,
      tags: meta.tags,
      expiresAt: null,
      expiresInS: meta.expiresIn,
    });
    staged = undefined;
    return result;
  } catch (e) {
    // A refused upload leaves nothing: a broken ingest removed its temporary file, a finished one is discarded here.
    if (staged === undefined) staged = await file?.written.catch(() => undefined);
    if (staged !== undefined) await assets.discard(staged);
    throw e;
  }
}
