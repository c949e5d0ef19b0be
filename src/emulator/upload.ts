/**
 * Receiving POST /api/v2/assets (FACTS.md "v2 assets"): a multipart/form-data body whose metadata parts
 * (`content_type`, `file_path`, optional `expected_hash`, repeated `tags`, `expires_in` in seconds) come
 * BEFORE the `file` part. The body is parsed as a stream (multipart.ts): the file's bytes go to a temporary
 * file while hashed with BLAKE3 (blobs.ts), never held whole in memory.
 *
 * Refusals (422 `invalid_upload`, a code of ours): not multipart; a malformed body; a file part before
 * `content_type` and `file_path` (servers stream, so they cannot wait for metadata that comes later); any part
 * after the file part; a second file part; no file part; a metadata value that is malformed or repeated.
 * 409 `hash_mismatch` when `expected_hash` is not the hash of the bytes. Nothing is stored on any refusal.
 */
import type { IncomingMessage } from 'node:http';
import type { AssetRecord, AssetStore } from './assets';
import { BLAKE3_HASH, type BlobWriter, type StagedBlob } from './blobs';
import { EmulatorError } from './errors';
import { headerValue } from './http';
import { MultipartError, MultipartParser, boundaryOf } from './multipart';
import type { RequestContext } from './router';

/** Largest value of one metadata part, and of all of them together, in bytes. */
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_METADATA_BYTES = 1024 * 1024;
/** Most `tags` parts. */
export const MAX_TAGS = 100;
/** Longest `expires_in`: ten years, in seconds. */
export const MAX_EXPIRES_IN_S = 10 * 365 * 24 * 60 * 60;

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
    throw invalid(`file_path must be a name such as photo.png (1 to 1024 characters, no control characters); got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Checks one tag: 1 to 128 characters. @throws 422 `invalid_upload`. */
export function checkTag(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 128) throw invalid(`a tag must be 1 to 128 characters; got ${JSON.stringify(value)}`);
  return value;
}

/** Checks `expires_in`: whole seconds, 1 to ten years. @throws 422 `invalid_upload`. */
export function checkExpiresIn(value: unknown): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_EXPIRES_IN_S) {
    throw invalid(`expires_in must be a whole number of seconds in 1..${MAX_EXPIRES_IN_S}; got ${JSON.stringify(value)}`);
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
      if (!/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+\s*(;.*)?$/.test(value) || value.length > 255) throw invalid(`content_type must be a MIME type such as image/png; got ${JSON.stringify(value)}`);
      meta.contentType = value.trim();
      return;
    case 'file_path':
      once(meta.filePath !== undefined);
      meta.filePath = checkFilePath(value);
      return;
    case 'expected_hash': {
      once(meta.expectedHash !== undefined);
      const hash = normalizeHash(value);
      if (hash === undefined) throw invalid(`expected_hash must be written blake3:<64 hex digits>; got ${JSON.stringify(value)}`);
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
 * Reads an upload body and stores its file (deduplicated by hash) as a new asset of the caller.
 * Appends the part names, in wire order, to `context.record.parts`.
 * @returns the record and `created_new` (see {@link AssetStore.store}).
 * @throws EmulatorError 422 `invalid_upload`, 409 `hash_mismatch` (the refusals above); the request body is
 *   then drained, so that the client reads the refusal. Nothing stays on disk.
 */
export async function receiveUpload(req: IncomingMessage, context: RequestContext, assets: AssetStore): Promise<{ record: AssetRecord; createdNew: boolean }> {
  const boundary = boundaryOf(headerValue(req, 'content-type'));
  if (boundary === undefined) throw invalid('send the upload as multipart/form-data with a boundary (Content-Type: multipart/form-data; boundary=…)');
  const parser = new MultipartParser(boundary, { maxParts: MAX_TAGS + 16 });
  const meta: UploadMetadata = { tags: [] };
  const names: string[] = [];
  context.record.parts = names;
  let field: { name: string; chunks: Buffer[]; size: number } | undefined;
  let writer: BlobWriter | undefined;
  let staged: StagedBlob | undefined;
  let metadataBytes = 0;
  try {
    // destroyOnReturn false: on a refusal the rest of the body is drained (below), not the connection reset.
    for await (const chunk of req.iterator({ destroyOnReturn: false })) {
      for (const event of parser.write(chunk as Buffer)) {
        if (event.type === 'part') {
          const name = event.part.name;
          names.push(name);
          if (writer !== undefined || staged !== undefined) throw invalid(`the part "${name}" comes after the file part: the file part must be the last one`);
          if (name === 'file') {
            const missing = REQUIRED_BEFORE_FILE.filter((n) => (n === 'content_type' ? meta.contentType : meta.filePath) === undefined);
            if (missing.length > 0) {
              throw invalid(`the file part came before the metadata (${missing.join(', ')} missing): send content_type, file_path, expected_hash, tags and expires_in first, the file part last`);
            }
            writer = await assets.createWriter();
          } else {
            field = { name, chunks: [], size: 0 };
          }
        } else if (event.type === 'data') {
          if (writer !== undefined) {
            await writer.write(event.bytes);
          } else if (field !== undefined) {
            field.size += event.bytes.length;
            metadataBytes += event.bytes.length;
            if (field.size > MAX_FIELD_BYTES) throw invalid(`the part "${field.name}" is longer than ${MAX_FIELD_BYTES} bytes`);
            if (metadataBytes > MAX_METADATA_BYTES) throw invalid(`the metadata parts are longer than ${MAX_METADATA_BYTES} bytes together`);
            field.chunks.push(Buffer.from(event.bytes)); // a copy: the slice would pin the whole chunk
          }
        } else if (writer !== undefined) {
          staged = await writer.finish();
          writer = undefined;
        } else if (field !== undefined) {
          applyField(meta, field.name, Buffer.concat(field.chunks).toString('utf8'));
          field = undefined;
        }
      }
    }
    if (!req.complete) throw invalid('the upload broke off before the body ended');
    parser.end();
    if (staged === undefined) throw invalid('the body has no file part: send the bytes as a part named "file", after the metadata parts');
    if (meta.expectedHash !== undefined && meta.expectedHash !== staged.hash) {
      throw new EmulatorError('hash_mismatch', `the bytes received hash to ${staged.hash}, not to the expected_hash ${meta.expectedHash}; nothing was stored`, {
        expected_hash: meta.expectedHash,
        actual_hash: staged.hash,
      });
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
    if (writer !== undefined) await writer.abort();
    if (staged !== undefined) await assets.discard(staged);
    req.resume();
    if (e instanceof MultipartError) throw invalid(`malformed multipart body: ${e.message}`);
    if (!(e instanceof EmulatorError) && req.destroyed) throw invalid('the upload broke off before the body ended');
    throw e;
  }
}
