/**
 * The asset operations served today (FACTS.md "v2 assets"): GET /api/v2/assets/{id} (the record) and
 * GET /api/v2/assets/{id}/content (the bytes, streamed from disk, with single byte ranges). Upload,
 * from-hash, HEAD by-hash and DELETE are a later issue.
 */
import * as fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { AssetStore } from './assets';
import { EmulatorError, notFound } from './errors';
import { sendJson } from './http';
import { parseRange } from './range';
import type { RequestContext, Route } from './router';

/** What the asset routes need. */
export interface AssetRouteDeps {
  readonly assets: AssetStore;
}

/** The asset routes. */
export function assetRoutes(deps: AssetRouteDeps): Route[] {
  const { assets } = deps;
  const assetOf = (context: RequestContext) => {
    const asset = assets.get(context.owner, context.params.id);
    if (asset === undefined) throw notFound('asset', context.params.id);
    return asset;
  };

  return [
    {
      method: 'GET',
      pattern: '/api/v2/assets/{id}',
      name: 'getAsset',
      handler: (_req, res, context) => sendJson(res, 200, assets.toWire(assetOf(context))),
    },
    {
      method: 'GET',
      pattern: '/api/v2/assets/{id}/content',
      name: 'assetContent',
      handler: async (req, res, context) => {
        const asset = assetOf(context);
        let size: number;
        try {
          size = (await fs.promises.stat(asset.file)).size;
        } catch {
          // Dropped by retention between the lookup and the read.
          throw notFound('asset', asset.id);
        }
        const header = typeof req.headers.range === 'string' ? req.headers.range : undefined;
        const range = parseRange(header, size);
        if (range === 'unsatisfiable') {
          throw new EmulatorError('range_not_satisfiable', `the range ${JSON.stringify(header)} is outside the ${size} bytes of this asset`, undefined, {
            'content-range': `bytes */${size}`,
          });
        }
        const start = range?.start ?? 0;
        const end = range?.end ?? size - 1;
        res.writeHead(range === undefined ? 200 : 206, {
          'content-type': asset.contentType,
          'content-length': String(Math.max(0, end - start + 1)),
          'accept-ranges': 'bytes',
          'cache-control': 'private, no-store',
          ...(range === undefined ? {} : { 'content-range': `bytes ${start}-${end}/${size}` }),
        });
        if (size === 0) {
          res.end();
          return;
        }
        // Streamed from disk: a blob is never held whole in memory. A read error after the headers resets
        // the connection (the client sees a short body and can resume with Range).
        await pipeline(fs.createReadStream(asset.file, { start, end }), res).catch(() => res.destroy());
      },
    },
  ];
}
