/**
 * The v2 asset operations, one method per endpoint (Job and Asset API v2, GET /api/v2/assets/{id}/content and
 * HEAD /api/v2/assets/by-hash/{hash}; upload, from-hash, get and delete are not shown there: their paths and shapes
 * come from public sources), and the
 * `core/ASSET` workflow reference.
 */
import { randomUUID } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import * as path from 'node:path';
import { InputError } from '../http/errors';
import type { Transport } from '../http/transport';
import { AssetSchema, type Asset } from './schemas';
import { isLink, type ApiWorkflow } from '../util/workflow';
import { contentTypeOf } from '../util/fileNames';

/** Metadata of an upload; sent as multipart parts BEFORE the file part (servers stream and reject the reverse). */
export interface UploadMetadata {
  /** MIME type; default from the file name's extension, else application/octet-stream. */
  contentType?: string;
  /** Name kept with the asset, e.g. `photo.png`; default the file's base name. */
  filePath?: string;
  /** `blake3:<hex>` the server checks the bytes against (409 `hash_mismatch` when wrong). */
  expectedHash?: string;
  tags?: string[];
  /** Lifetime in seconds. */
  expiresIn?: number;
}

/** An asset as one response returned it. */
export interface AssetResult {
  asset: Asset;
  /** 201: a new blob (or a new asset minted); 200: it was there already (a dedup hit). */
  status: number;
  requestId: string | undefined;
  /** The URL of the request that returned it (for resolving its host-relative `url`). */
  source: URL;
}

/** The low layer of v2 assets. */
export class AssetsApi {
  constructor(private readonly http: Transport) {}

  /**
   * POST /api/v2/assets: streamed multipart upload of `file`, metadata parts first, with an Idempotency-Key.
   * @throws HashMismatchError (409), other ApiErrors, network errors.
   */
  async upload(
    file: string,
    meta: UploadMetadata = {},
    options: { idempotencyKey?: string; signal?: AbortSignal } = {},
  ): Promise<AssetResult & { idempotencyKey: string }> {
    const filePath = meta.filePath ?? path.basename(file);
    const contentType = meta.contentType ?? contentTypeOf(filePath);
    let blob: Blob;
    try {
      // A file-backed Blob: the engine streams it from disk, it is never held whole in memory.
      blob = await openAsBlob(file, { type: contentType });
    } catch (err) {
      throw new InputError('unreadable', `cannot read ${file}: ${(err as Error).message}`);
    }
    const form = this.http.formData(); // the engine's own FormData: each engine encodes only its own
    form.append('content_type', contentType);
    form.append('file_path', filePath);
    if (meta.expectedHash) form.append('expected_hash', meta.expectedHash);
    for (const tag of meta.tags ?? []) form.append('tags', tag);
    if (meta.expiresIn !== undefined) form.append('expires_in', String(meta.expiresIn));
    form.append('file', blob, path.basename(filePath));
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const res = await this.http.json('POST', '/api/v2/assets', AssetSchema, {
      body: form,
      headers: { 'idempotency-key': idempotencyKey },
      signal: options.signal,
      // An upload may take long: the timeout covers only the wait for the answer once the body is sent.
      timeoutMs: 3_600_000,
    });
    return { asset: res.data, status: res.status, requestId: res.requestId, source: res.url, idempotencyKey };
  }

  /** POST /api/v2/assets/from-hash: mints an asset from a blob the account can use. @throws BlobNotFoundError (404). */
  async fromHash(
    hash: string,
    meta: Omit<UploadMetadata, 'expectedHash' | 'contentType'> = {},
    signal?: AbortSignal,
  ): Promise<AssetResult> {
    const body: Record<string, unknown> = { hash };
    if (meta.filePath) body.file_path = meta.filePath;
    if (meta.tags?.length) body.tags = meta.tags;
    if (meta.expiresIn !== undefined) body.expires_in = meta.expiresIn;
    const res = await this.http.json('POST', '/api/v2/assets/from-hash', AssetSchema, { json: body, signal });
    return { asset: res.data, status: res.status, requestId: res.requestId, source: res.url };
  }

  /** HEAD /api/v2/assets/by-hash/{hash}: true (200) when the account can mint from this blob, false (404). */
  async existsByHash(hash: string, signal?: AbortSignal): Promise<boolean> {
    const res = await this.http.send('HEAD', `/api/v2/assets/by-hash/${encodeURIComponent(hash)}`, { signal });
    await res.body.dump();
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    throw await this.http.failure(res);
  }

  /** GET /api/v2/assets/{id}: the record with a fresh `url`. @throws NotFoundError. */
  async get(id: string, signal?: AbortSignal): Promise<AssetResult> {
    const res = await this.http.json('GET', `/api/v2/assets/${encodeURIComponent(id)}`, AssetSchema, { signal });
    return { asset: res.data, status: res.status, requestId: res.requestId, source: res.url };
  }

  /**
   * DELETE /api/v2/assets/{id}: 204.
   * @throws NotFoundError (unknown or already deleted); AssetInUseError (409 `asset_in_use`: a job still uses it).
   */
  async delete(id: string, signal?: AbortSignal): Promise<{ requestId: string | undefined }> {
    const res = await this.http.send('DELETE', `/api/v2/assets/${encodeURIComponent(id)}`, { signal });
    if (res.status !== 204 && res.status !== 200) throw await this.http.failure(res);
    await res.body.dump();
    return { requestId: res.requestId };
  }

  /** The content URL of an asset (`GET /api/v2/assets/{id}/content`). */
  contentUrl(id: string): URL {
    return this.http.url(`/api/v2/assets/${encodeURIComponent(id)}/content`);
  }
}

/**
 * Writes `value` into input `field` of node `nodeId` of an API-format workflow (a copy; the original is kept).
 * @throws InputError `no_such_node` naming the nodes there are; `input_is_link` when the input is wired to another
 *   node (overwriting a link would silently change the graph).
 */
export function setNodeInput(workflow: ApiWorkflow, nodeId: string, field: string, value: unknown): ApiWorkflow {
  const node = workflow[nodeId];
  if (!node) {
    throw new InputError(
      'no_such_node',
      `the workflow has no node "${nodeId}" (its nodes: ${Object.keys(workflow).join(', ')})`,
    );
  }
  if (isLink(node.inputs[field])) {
    throw new InputError(
      'input_is_link',
      `input ${field} of node ${nodeId} (${node.class_type}) is wired to another node; unwire it or choose another input`,
    );
  }
  return { ...workflow, [nodeId]: { ...node, inputs: { ...node.inputs, [field]: value } } };
}
