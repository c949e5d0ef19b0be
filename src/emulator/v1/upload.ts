/**
 * POST /api/upload/image and POST /api/upload/mask (Cloud API v1 (deprecated), Endpoints; the public OpenAPI of the
 * v1 cloud API for the limits): multipart/form-data parsed as it streams (`busboy`), the file's bytes hashed into the
 * shared blob store (blobs.ts) and recorded as an asset of the caller, answered `{name, subfolder, type}`.
 *
 * - image: `image` (the file, required), `type` (`input` default, `temp`, or `output`), `overwrite` (`true` or
 *   `false`; ignored: content-addressed storage), `subfolder` (echoed, ignored for storage); parts in any order;
 * - mask: the same plus `original_ref`, a JSON file reference `{filename, subfolder?, type?}` naming a file of the
 *   caller (an upload or an output); the answer adds `metadata: {is_mask, original_hash, mask_type}`;
 * - `name` is the blake3 hex of the bytes plus the file's extension (state.ts: flat, content-addressed);
 * - refusals answer 400 `{code, message}` (the document gives 400 for uploads over the limits: 50 MB, 16384 px a
 *   side, 64 megapixels; the emulator reads the PNG header for the sizes): not multipart, no `image` file part,
 *   a malformed `type`, `overwrite` or `original_ref`, an `original_ref` naming no file of the caller. Nothing is
 *   stored on a refusal.
 */
import busboy, { type Busboy } from 'busboy';
import * as fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { StagedBlob } from '../blobs';
import type { AssetStore } from '../v2/assets';
import { isPlainObject } from '../../core/util/workflow';
import { contentName, type FileRef, type V1State } from './state';

/** Largest upload file, in bytes (50 MB). */
const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
/** Largest image side, in pixels. */
const MAX_UPLOAD_SIDE = 16384;
/** Most pixels of an uploaded image (64 megapixels). */
const MAX_UPLOAD_PIXELS = 67108864;

/** A v1 refusal with its HTTP status, answered `{code, message}`. */
export class V1Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'V1Refusal';
  }
}

function bad(message: string): V1Refusal {
  return new V1Refusal(400, 'invalid_upload', message);
}

/** The parts of an upload form. */
interface UploadForm {
  fields: Map<string, string>;
  staged: StagedBlob;
  filename: string;
  mimeType: string;
}

/** Reads the form; the `image` part streams into a staged blob. @throws V1Refusal 400. */
async function readForm(req: IncomingMessage, assets: AssetStore): Promise<UploadForm> {
  let parser: Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      limits: { fieldSize: 64 * 1024, parts: 32, files: 1, fileSize: MAX_UPLOAD_BYTES },
    });
  } catch {
    req.resume();
    throw bad('send the upload as multipart/form-data with a boundary (let the form encoder set Content-Type)');
  }
  const fields = new Map<string, string>();
  let file: { written: Promise<StagedBlob>; filename: string; mimeType: string; stream: Readable } | undefined;
  const parsed = new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (e: unknown): void => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.resume();
      file?.stream.destroy(e instanceof Error ? e : new Error(String(e)));
      reject(e);
    };
    parser.on('field', (name, value) => {
      if (!failed) fields.set(name, value);
    });
    parser.on('file', (name, stream, info) => {
      if (failed || name !== 'image' || file !== undefined) return void stream.resume();
      stream.on('limit', () => fail(bad(`the file is larger than ${MAX_UPLOAD_BYTES} bytes (50 MB)`)));
      const written = assets.ingest(stream);
      file = { written, filename: info.filename ?? '', mimeType: info.mimeType, stream };
      written.catch(fail);
    });
    parser.on('error', (e: Error) => fail(bad(`malformed multipart body: ${e.message}`)));
    parser.on('close', () => (failed ? undefined : resolve()));
    req.on('close', () => {
      if (!req.complete) fail(bad('the upload broke off before the body ended'));
    });
    req.pipe(parser);
  });
  try {
    await parsed;
  } catch (e) {
    const staged = await file?.written.catch(() => undefined);
    if (staged !== undefined) await assets.discard(staged);
    throw e;
  }
  if (file === undefined) throw bad('the form has no "image" file part');
  return { fields, staged: await file.written, filename: file.filename, mimeType: file.mimeType };
}

/** Width and height from a PNG's IHDR, or undefined when the bytes are not a PNG. */
async function pngSize(path: string): Promise<{ width: number; height: number } | undefined> {
  const handle = await fs.promises.open(path, 'r');
  try {
    const head = Buffer.alloc(24);
    const { bytesRead } = await handle.read(head, 0, 24, 0);
    if (bytesRead < 24 || head.readUInt32BE(0) !== 0x89504e47 || head.toString('latin1', 12, 16) !== 'IHDR')
      return undefined;
    return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
  } finally {
    await handle.close();
  }
}

const EXTENSION_OF_TYPE: Readonly<Record<string, string>> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/webp': '.webp',
  'image/gif': '.gif',
};

/** The file's extension: from its name, else from its content type, else `.png`. */
function extensionOf(filename: string, mimeType: string): string {
  const own = /\.[A-Za-z0-9]{1,8}$/.exec(filename)?.[0];
  return (own ?? EXTENSION_OF_TYPE[mimeType] ?? '.png').toLowerCase();
}

/** The checked original reference of a mask upload. @throws V1Refusal 400. */
function parseOriginalRef(raw: string | undefined, owner: string, state: V1State): { ref: FileRef; assetId: string } {
  if (raw === undefined)
    throw bad(
      'a mask upload needs "original_ref": a JSON file reference {"filename", "subfolder", "type"} of the original image',
    );
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw bad(`"original_ref" must be JSON; got ${JSON.stringify(raw.slice(0, 80))}`);
  }
  if (!isPlainObject(value) || typeof value.filename !== 'string' || value.filename === '')
    throw bad('"original_ref" must be a file reference {"filename", "subfolder", "type"}');
  const file = state.file(owner, value.filename);
  if (file === undefined)
    throw bad(
      `"original_ref" names ${JSON.stringify(value.filename)}, which is not a file of yours (upload the original first)`,
    );
  return {
    ref: {
      filename: value.filename,
      subfolder: typeof value.subfolder === 'string' ? value.subfolder : '',
      type: typeof value.type === 'string' ? value.type : file.type,
    },
    assetId: file.assetId,
  };
}

/** The answer of an upload. */
interface UploadAnswer {
  name: string;
  subfolder: string;
  type: string;
  metadata?: { is_mask: true; original_hash: string; mask_type: string };
}

/**
 * Receives an image (`mask: false`) or a mask upload of `owner` and records it.
 * @throws V1Refusal 400 (see the module comment).
 */
export async function receiveV1Upload(
  req: IncomingMessage,
  owner: string,
  mask: boolean,
  assets: AssetStore,
  state: V1State,
): Promise<UploadAnswer> {
  const form = await readForm(req, assets);
  try {
    const type = form.fields.get('type') ?? 'input';
    if (!['input', 'temp', 'output'].includes(type))
      throw bad(`"type" must be input or temp (or output); got ${JSON.stringify(type)}`);
    const overwrite = form.fields.get('overwrite');
    if (overwrite !== undefined && overwrite !== 'true' && overwrite !== 'false' && overwrite !== '')
      throw bad(`"overwrite" must be the string true or false; got ${JSON.stringify(overwrite)}`);
    const original = mask ? parseOriginalRef(form.fields.get('original_ref'), owner, state) : undefined;
    const size = await pngSize(form.staged.temp);
    if (
      size !== undefined &&
      (size.width > MAX_UPLOAD_SIDE || size.height > MAX_UPLOAD_SIDE || size.width * size.height > MAX_UPLOAD_PIXELS)
    ) {
      throw bad(
        `the image is ${size.width}×${size.height}: at most ${MAX_UPLOAD_SIDE} px a side and ${MAX_UPLOAD_PIXELS} pixels`,
      );
    }
    const extension = extensionOf(form.filename, form.mimeType);
    const name = contentName(form.staged.hash, extension);
    const contentType =
      Object.entries(EXTENSION_OF_TYPE).find(([, ext]) => ext === extension)?.[0] ??
      (form.mimeType || 'application/octet-stream');
    const { record } = assets.store(form.staged, owner, {
      contentType,
      name,
      tags: [type, ...(mask ? ['mask'] : [])],
      expiresAt: null,
    });
    state.nameFile(owner, name, { assetId: record.id, type });
    const answer: UploadAnswer = { name, subfolder: form.fields.get('subfolder') ?? '', type };
    if (original !== undefined) {
      const originalAsset = assets.get(owner, original.assetId);
      answer.metadata = { is_mask: true, original_hash: originalAsset?.hash ?? '', mask_type: 'mask' };
    }
    return answer;
  } catch (e) {
    await assets.discard(form.staged);
    throw e;
  }
}
