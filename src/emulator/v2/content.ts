/**
 * Sending an asset's bytes, as GET /api/v2/assets/{id}/content and the signed origin answer them
 * (Job and Asset API v2, GET /api/v2/assets/{id}/content: Range for resumable downloads; public sources: 200
 * whole, 206 partial, 416 not satisfiable). Streamed from disk: a blob is never held whole in memory.
 * A `cutAfterBytes` fault (faults.ts) closes the connection after that many body bytes, so that a client's
 * resumption can be tested.
 */
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { AssetRecord } from './assets';
import { EmulatorError, notFound } from '../errors';
import { parseRange } from '../range';

/**
 * Answers `req` with the bytes of `asset`: 200, or 206 for a satisfiable single Range.
 * @param cutAfter close the connection after this many bytes of the body (undefined: send it all)
 * @throws EmulatorError 416 `range_not_satisfiable` (with `Content-Range: bytes *\/size`), 404 `not_found`
 *   when the blob went away meanwhile.
 */
export async function sendContent(
  req: IncomingMessage,
  res: ServerResponse,
  asset: AssetRecord,
  cutAfter: number | undefined,
): Promise<void> {
  let size: number;
  try {
    size = (await fs.promises.stat(asset.file)).size;
  } catch {
    // Deleted, or dropped by retention, between the lookup and the read.
    throw notFound('asset', asset.id);
  }
  const header = typeof req.headers.range === 'string' ? req.headers.range : undefined;
  const range = parseRange(header, size);
  if (range === 'unsatisfiable') {
    throw new EmulatorError(
      'range_not_satisfiable',
      `the range ${JSON.stringify(header)} is outside the ${size} bytes of this asset`,
      undefined,
      {
        'content-range': `bytes */${size}`,
      },
    );
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
  if (cutAfter !== undefined && cutAfter < end - start + 1) {
    await sendCut(res, asset.file, start, cutAfter);
    return;
  }
  if (size === 0) {
    res.end();
    return;
  }
  // A read error after the headers resets the connection (the client sees a short body and can resume).
  await pipeline(fs.createReadStream(asset.file, { start, end }), res).catch(() => res.destroy());
}

/**
 * Sends `limit` bytes of `file` from `start` (fewer than the response announced), then closes the connection:
 * the socket is ended after the bytes written, so they reach the client before it sees the body break off.
 */
async function sendCut(res: ServerResponse, file: string, start: number, limit: number): Promise<void> {
  const socket = res.socket;
  if (limit > 0) {
    const source = fs.createReadStream(file, { start, end: start + limit - 1 });
    try {
      for await (const chunk of source) {
        if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
        if (res.destroyed) return;
      }
    } catch {
      res.destroy();
      return;
    }
  } else {
    res.flushHeaders();
  }
  // end(), not destroy(): written bytes still queued in the socket are flushed first.
  if (socket !== null) socket.end();
  else res.destroy();
}
