/**
 * The calls of the model router client, as its callers see them: the options of a catalog listing and of a model run,
 * and the answers (a catalog page, an input schema document with where it came from, a model's output).
 */
import type { RouterRetryInfo } from './routerRetry';
import type { ModelEntry, ModelPageBody } from './schemas';

/** One catalog page. */
export interface ModelPage {
  /** The page object as served, fields the client does not know included (what `models list --json` prints). */
  body: ModelPageBody;
  entries: ModelEntry[];
  hasMore: boolean;
  /** The cursor of the next page, when the router gave one. */
  nextCursor: string | undefined;
  /** The page size actually served (the response's `limit`; when absent, what the document says is served). */
  limit: number;
  requestId: string | undefined;
}

/** Options of {@link RouterClient.listModels}. */
export interface ListOptions {
  /** A `next_cursor` from an earlier page; none for the first. */
  cursor?: string;
  /** Page size asked for (integer); above 100 the router serves 100, 0 or negative 20. Sent as given. */
  limit?: number;
  signal?: AbortSignal;
}

/** An input schema document as served. */
export interface InputSchemaResult {
  /** The `openapi.json` bytes exactly as served (or as cached from an earlier answer). */
  bytes: Buffer;
  etag: string | undefined;
  /** The URL it came from. */
  url: string;
  /** `fresh`: a 200 now; `not_modified`: a 304 kept the cache; `stale`: the router could not answer, the cache is served. */
  source: 'fresh' | 'not_modified' | 'stale';
  stale: boolean;
  /** Why the copy is stale (the failure), when `stale`. */
  staleReason?: string;
  /** When the served copy was stored, ms since the epoch (for a cached copy). */
  storedAt?: number;
  requestId: string | undefined;
}

/** Options of {@link RouterClient.run}. */
export interface RouterRunOptions {
  /** The key to send (1–255 visible ASCII characters): a key from an earlier call collects it. None: one is minted and persisted first. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Time allowed until the response headers of each attempt, ms. Default the client's timeout. */
  timeoutMs?: number;
  /** Told before each wait of this call (retry or collect), besides the client's listeners. */
  onRetry?: (info: RouterRetryInfo) => void;
}

/** A model's answer. */
export interface RouterRunResult {
  /** The model's native output: the exact bytes received. */
  bytes: Buffer;
  status: number;
  contentType: string | undefined;
  requestId: string | undefined;
  idempotencyKey: string;
  /** Requests made, the first included. */
  attempts: number;
}
