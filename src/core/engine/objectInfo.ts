/**
 * The node definitions of an engine's server (`GET /api/object_info`, Cloud API v1 (deprecated), Endpoints; ComfyUI
 * server API (observed), Routes: `/object_info` and `/object_info/{class}`): their shape,
 * read tolerantly, one bounded read of the map, and when the per-class route counts as not served.
 */
import { ApiError, NotFoundError, ResponseShapeError } from '../http/errors';
import { isPlainObject } from '../util/workflow';
import * as z from 'zod/mini';
import type { Transport } from '../http/transport';
import { exposed, lazy } from '../util/lazySchema';

/** Any JSON object: an `object_info` map, whose values are read one by one. */
const ObjectMapSchema = exposed(lazy(() => z.record(z.string(), z.unknown())));

/**
 * Node definitions keyed by class name (Cloud API v1 (deprecated), Resources and their fields; other fields of a
 * definition: public sources).
 */
export type ObjectInfo = Record<string, NodeDefinition>;

/**
 * One node definition, read tolerantly (not shown beyond `input.required` in Cloud API v1 (deprecated); the engine's
 * `object_info` fields); unknown fields kept.
 */
export interface NodeDefinition {
  input?: { required?: Record<string, unknown>; optional?: Record<string, unknown>; hidden?: Record<string, unknown> };
  input_order?: Record<string, string[]>;
  output?: unknown[];
  output_name?: string[];
  output_is_list?: boolean[];
  output_node?: boolean;
  name?: string;
  display_name?: string;
  description?: string;
  category?: string;
  python_module?: string;
  deprecated?: boolean;
  experimental?: boolean;
  api_node?: boolean;
  [key: string]: unknown;
}

/** Default cap of an `object_info` body, bytes: a real engine's is a few MB, one with many custom nodes tens of MB. */
export const DEFAULT_MAX_OBJECT_INFO_BYTES = 64 * 1024 * 1024;

/**
 * One object_info read of `target`, bounded by `maxBytes` (larger than the transport's JSON cap). Values that are
 * not objects are dropped (tolerant reading).
 * @throws ResponseTooLargeError (`response_too_large`) past the cap; ResponseShapeError for a body that is not JSON
 *   or not a map; the transport's redirect error for a 3xx; ApiErrors; network errors.
 */
export async function readObjectInfo(
  http: Transport,
  target: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<ObjectInfo> {
  const res = await http.send('GET', target, { signal });
  if (res.status >= 300 && res.status < 400) {
    await res.body.dump().catch(() => undefined);
    throw http.redirectError('GET', res);
  }
  if (res.status < 200 || res.status >= 300) throw await http.failure(res);
  const bytes = await http.readBytes(res, maxBytes, { signal });
  const where = `GET ${http.redact(res.url)}`;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ResponseShapeError(
      `${where} answered ${res.status} with a body that is not JSON`,
      { requestId: res.requestId, request: where },
      { status: res.status },
    );
  }
  const parsed = ObjectMapSchema.safeParse(value);
  if (!parsed.success)
    throw new ResponseShapeError(
      `${where} answered ${res.status} with a body that is not a map of node definitions`,
      { requestId: res.requestId, request: where },
      { status: res.status },
    );
  const map: ObjectInfo = {};
  for (const [name, def] of Object.entries(parsed.data)) {
    if (isPlainObject(def)) map[name] = def as NodeDefinition;
  }
  return map;
}

/** True when the per-class object_info route is not served: 404, 405, 501, or a success that is not JSON. */
export function perClassNotServed(err: unknown): boolean {
  if (NotFoundError.is(err)) return true;
  if (ApiError.is(err)) return err.status === 405 || err.status === 501;
  return ResponseShapeError.is(err) && err.code === 'bad_response';
}
