/**
 * The asset operations (Job and Asset API v2, GET /api/v2/assets/{id}/content and
 * HEAD /api/v2/assets/by-hash/{hash}; the rest, not shown there, as public sources describe them):
 * - POST /api/v2/assets: streamed multipart upload, blake3 dedup, Idempotency-Key (upload.ts); 201 new bytes,
 *   200 a dedup hit (`created_new`); 422 `invalid_upload`, 409 `hash_mismatch`, 422 `idempotency_key_reuse`.
 * - POST /api/v2/assets/from-hash `{hash, file_path?, tags?, expires_in?}`: 201 minted, 200 already there,
 *   404 `blob_not_found` (also for another owner's blob: see assets.ts on scoping).
 * - HEAD /api/v2/assets/by-hash/{hash}: 200 when the caller may mint from the blob, 404 otherwise; no body.
 * - GET /api/v2/assets/{id}: the record with a fresh `url`.
 * - DELETE /api/v2/assets/{id}: 204; 404 unknown or already deleted; 409 `asset_in_use` while a queued or
 *   running job refers to it by a `core/ASSET` reference.
 * - GET /api/v2/assets/{id}/content: the bytes with Range (content.ts), or with signed URLs a 302 to a fresh
 *   signed URL on the second origin, served by {@link signedContentRoute}.
 */
import type { AssetStore } from './assets';
import { sendContent } from './content';
import { EmulatorError, notFound } from '../errors';
import type { Faults } from '../faults';
import { headerValue, readJson, sendJson } from '../http';
import type { IdempotencyKeys } from './idempotency';
import type { JobStore } from './jobs';
import type { RequestContext, Route } from '../router';
import type { UrlSigner } from '../signing';
import { checkExpiresIn, checkFilePath, checkTag, MAX_TAGS, normalizeHash, receiveUpload } from './upload';
import { isPlainObject } from '../../core/util/workflow';

/** What the asset routes need. */
interface AssetRouteDeps {
  readonly assets: AssetStore;
  readonly jobs: JobStore;
  /** Idempotency-Key claims of uploads (their own key space, per owner). */
  readonly keys: IdempotencyKeys;
  readonly faults: Faults;
  /** Set when content answers with a 302 to a signed URL. */
  readonly signer?: UrlSigner;
}

/** The checked body of POST /api/v2/assets/from-hash. @throws EmulatorError 422 `invalid_upload`. */
function parseFromHash(body: unknown): {
  hash: string;
  filePath: string | null;
  tags: string[];
  expiresIn: number | undefined;
} {
  if (!isPlainObject(body))
    throw new EmulatorError(
      'invalid_upload',
      'the request body must be a JSON object {"hash": "blake3:…", "file_path"?, "tags"?, "expires_in"?}',
    );
  const hash = normalizeHash(body.hash);
  if (hash === undefined)
    throw new EmulatorError(
      'invalid_upload',
      `"hash" must be written blake3:<64 hex digits>; got ${JSON.stringify(body.hash)}`,
    );
  const filePath = body.file_path === undefined || body.file_path === null ? null : checkFilePath(body.file_path);
  let tags: string[] = [];
  if (body.tags !== undefined && body.tags !== null) {
    if (!Array.isArray(body.tags) || body.tags.length > MAX_TAGS)
      throw new EmulatorError('invalid_upload', `"tags" must be an array of at most ${MAX_TAGS} strings`);
    tags = body.tags.map(checkTag);
  }
  const expiresIn =
    body.expires_in === undefined || body.expires_in === null ? undefined : checkExpiresIn(body.expires_in);
  return { hash, filePath, tags, expiresIn };
}

/** The asset routes of the main origin. */
export function assetRoutes(deps: AssetRouteDeps): Route[] {
  const { assets, jobs, keys, faults, signer } = deps;
  const assetOf = (context: RequestContext) => {
    const asset = assets.get(context.owner, context.params.id);
    if (asset === undefined) throw notFound('asset', context.params.id);
    return asset;
  };

  return [
    {
      method: 'POST',
      pattern: '/api/v2/assets',
      name: 'uploadAsset',
      handler: async (req, res, context) => {
        // Claimed before the body is read, so a concurrent duplicate is refused too; released on any refusal
        // (nothing was stored: the asset is created last, in one step).
        const key = headerValue(req, 'idempotency-key');
        if (key !== undefined && !keys.claim(context.owner, key)) {
          req.resume();
          throw new EmulatorError(
            'idempotency_key_reuse',
            'this Idempotency-Key was already presented; it is single-use and the upload was not stored',
          );
        }
        let result;
        try {
          result = await receiveUpload(req, context, assets);
        } catch (e) {
          if (key !== undefined) keys.release(context.owner, key);
          throw e;
        }
        sendJson(res, result.createdNew ? 201 : 200, {
          ...assets.toWire(result.record),
          created_new: result.createdNew,
        });
      },
    },
    {
      method: 'POST',
      pattern: '/api/v2/assets/from-hash',
      name: 'assetFromHash',
      handler: async (req, res, context) => {
        const body = parseFromHash(await readJson(req, 'invalid_upload'));
        const result = assets.mint(context.owner, body.hash, {
          name: body.filePath,
          tags: body.tags,
          expiresAt: null,
          expiresInS: body.expiresIn,
        });
        if (result === undefined)
          throw new EmulatorError(
            'blob_not_found',
            `no blob ${body.hash} that this account can use; upload the bytes instead`,
          );
        sendJson(res, result.minted ? 201 : 200, { ...assets.toWire(result.record), created_new: false });
      },
    },
    {
      method: 'HEAD',
      pattern: '/api/v2/assets/by-hash/{hash}',
      name: 'assetByHash',
      handler: (_req, res, context) => {
        const hash = normalizeHash(context.params.hash);
        if (hash === undefined || !assets.canMint(context.owner, hash))
          throw new EmulatorError('blob_not_found', 'no blob with this hash that this account can use');
        res.writeHead(200, { 'cache-control': 'no-store' });
        res.end();
      },
    },
    {
      method: 'GET',
      pattern: '/api/v2/assets/{id}',
      name: 'getAsset',
      handler: (_req, res, context) => sendJson(res, 200, assets.toWire(assetOf(context))),
    },
    {
      method: 'DELETE',
      pattern: '/api/v2/assets/{id}',
      name: 'deleteAsset',
      handler: (_req, res, context) => {
        const asset = assetOf(context);
        const user = jobs.jobUsingAsset(context.owner, asset.id);
        if (user !== undefined) {
          throw new EmulatorError(
            'asset_in_use',
            `job ${user.id} (${user.status}) uses this asset; delete it once the job has ended`,
            { job_id: user.id },
          );
        }
        assets.delete(asset);
        res.writeHead(204, { 'cache-control': 'no-store' });
        res.end();
      },
    },
    {
      method: 'GET',
      pattern: '/api/v2/assets/{id}/content',
      name: 'assetContent',
      handler: async (req, res, context) => {
        const asset = assetOf(context);
        if (signer !== undefined) {
          res.writeHead(302, { location: assets.contentLink(asset).url, 'cache-control': 'no-store' });
          res.end();
          return;
        }
        await sendContent(req, res, asset, faults.contentCut(context));
      },
    },
  ];
}

/** What the signed origin's route needs. */
interface SignedRouteDeps {
  readonly assets: AssetStore;
  readonly signer: UrlSigner;
  readonly faults: Faults;
}

/**
 * GET /blob/{token}?sig=… on the signed origin: the bytes of the asset the token names, with Range, whoever
 * owns it (the signature authorizes). 403 `forbidden` for a bad signature or an expired URL (and, before
 * this route, for any credential: auth.ts REJECT_CREDENTIALS); 404 `not_found` once the asset is gone.
 */
export function signedContentRoute(deps: SignedRouteDeps): Route {
  return {
    method: 'GET',
    pattern: '/blob/{token}',
    name: 'signedContent',
    handler: async (req, res, context) => {
      const verdict = deps.signer.verify(context.params.token, context.query.get('sig'));
      if (verdict.kind === 'invalid') throw new EmulatorError('forbidden', 'the signature of this URL is not valid');
      if (verdict.kind === 'expired')
        throw new EmulatorError('forbidden', 'this signed URL has expired; GET /api/v2/assets/{id} gives a fresh one');
      const asset = deps.assets.byId(verdict.assetId);
      if (asset === undefined) throw notFound('asset', verdict.assetId);
      await sendContent(req, res, asset, deps.faults.contentCut(context));
    },
  };
}
