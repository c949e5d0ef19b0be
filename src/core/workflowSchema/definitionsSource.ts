/**
 * Where workflow IntelliSense's node definitions come from, and their cache on disk: from `object_info` (fetched
 * from the active connection where it serves it, or from a local engine at a URL the user gives, used only as a
 * source of node definitions), cached on disk with a "Refresh Node Definitions" command. vscode-free, so plain
 * mocha tests it, and the CLI and the extension share it.
 *
 * - A local engine (setting `comfyCloud.nodeDefinitionsUrl`): `GET <url>/object_info` (the engine's own route),
 *   falling back to `GET <url>/api/object_info` (its `/api` alias) on a 404; never any credential.
 * - Else the active connection: `GET <baseUrl>/api/object_info` with the connection's key as `X-API-Key`
 *   (Cloud API v1 (deprecated), Authentication, rule 1), never `Authorization`.
 * The fetch is one injectable function ({@link ObjectInfoFetch}): the v1 client's `objectInfo()` replaces
 * {@link httpObjectInfoFetch} once merged.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApiError } from '../http/errors';
import type { HttpEngine } from '../http/engine';
import { Transport, type RequestLogEntry } from '../http/transport';
import { writeJsonAtomically } from '../state/stateStore';

/** Fetches a whole `object_info` map (unparsed JSON). @throws the transport's typed errors (ApiError, ConnectionError, …). */
export type ObjectInfoFetch = (signal: AbortSignal) => Promise<unknown>;

/** The largest `object_info` read, bytes: a real engine with many custom nodes serves some MB; a hostile one is cut here. */
export const MAX_OBJECT_INFO_BYTES = 64 * 1024 * 1024;

/** The time allowed for the response headers and for each next byte of the body, ms. */
const OBJECT_INFO_TIMEOUT_MS = 60_000;

/**
 * A source of node definitions: `engine` (the `comfyCloud.nodeDefinitionsUrl` setting, a local engine used only for
 * its definitions) or `connection` (the active connection). `url` is the base URL (no trailing slash); `label` names
 * it for a person (the connection's name, or the engine's URL).
 */
export interface NodeDefinitionSource {
  readonly kind: 'engine' | 'connection';
  readonly url: string;
  readonly label: string;
}

/**
 * The source in effect: the engine at `engineUrl` when it is set (trimmed, non-empty), else the connection.
 * @throws Error when `engineUrl` is set but is not an http(s) URL (the setting is wrong; nothing is fetched).
 */
export function nodeDefinitionSource(
  engineUrl: string | undefined,
  connection: { name: string; baseUrl: string },
): NodeDefinitionSource {
  const given = (engineUrl ?? '').trim();
  if (given) {
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      throw new Error(`comfyCloud.nodeDefinitionsUrl is not a URL: ${given}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`comfyCloud.nodeDefinitionsUrl is not an http(s) URL: ${given}`);
    const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    return { kind: 'engine', url: base, label: base };
  }
  return { kind: 'connection', url: connection.baseUrl.replace(/\/+$/, ''), label: connection.name };
}

/** Options of {@link httpObjectInfoFetch}. */
export interface HttpObjectInfoOptions {
  readonly source: NodeDefinitionSource;
  /** The connection's API key, sent as `X-API-Key` to a `connection` source only (an engine gets no credential). */
  readonly apiKey?: string;
  /** What sends the request (the extension host's fetch in the editor); the transport's default when absent. */
  readonly engine?: HttpEngine;
  readonly userAgent?: string;
  readonly log?: (entry: RequestLogEntry) => void;
  /** The body cap, bytes (default {@link MAX_OBJECT_INFO_BYTES}). */
  readonly maxBytes?: number;
}

/** Any JSON value: the map is read tolerantly later (core parseObjectInfo). */
const anyJson = { safeParse: (value: unknown) => ({ success: true as const, data: value }) };

/**
 * The fetch of `object_info` over HTTP for `source` (see the module's rules): a body over the cap is a
 * ResponseTooLargeError, an error status its ApiError, a redirect a RedirectError (never followed).
 */
export function httpObjectInfoFetch(options: HttpObjectInfoOptions): ObjectInfoFetch {
  const { source } = options;
  return async (signal) => {
    // No `apiKey` for the transport: it would send `Authorization: Bearer`, which v1 refuses (Cloud API v1
    // (deprecated), Authentication).
    const transport = new Transport({
      baseUrl: source.url,
      engine: options.engine,
      userAgent: options.userAgent,
      log: options.log,
      timeoutMs: OBJECT_INFO_TIMEOUT_MS,
      maxJsonBytes: options.maxBytes ?? MAX_OBJECT_INFO_BYTES,
    });
    try {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (source.kind === 'connection' && options.apiKey) headers['x-api-key'] = options.apiKey;
      const paths = source.kind === 'engine' ? ['/object_info', '/api/object_info'] : ['/api/object_info'];
      for (let i = 0; ; i++) {
        try {
          return (await transport.json('GET', paths[i]!, anyJson, { headers, signal })).data;
        } catch (err) {
          // The engine's own route first; its `/api` alias where that one is not served.
          if (i + 1 < paths.length && err instanceof ApiError && err.status === 404) continue;
          throw err;
        }
      }
    } finally {
      await transport.close();
    }
  };
}

/** What the cache keeps of one fetch: the source, when (ms since the epoch), and the map as served. */
interface CachedObjectInfo {
  readonly source: NodeDefinitionSource;
  readonly fetchedAt: number;
  readonly objectInfo: unknown;
}

/**
 * The cache of fetched `object_info` maps, one file per source under `dir` (the extension's global storage):
 * `<dir>/<sha256 of kind and URL, 32 hex>.json`, written atomically (a reader never sees half a file).
 */
export class NodeDefinitionsCache {
  constructor(private readonly dir: string) {}

  /** The cache file of `source`. */
  fileOf(source: NodeDefinitionSource): string {
    const digest = createHash('sha256').update(`${source.kind}\n${source.url}`).digest('hex').slice(0, 32);
    return path.join(this.dir, `${digest}.json`);
  }

  /**
   * The cached map of `source`, or undefined when there is none, or it is unreadable, not ours, or another source's
   * (a corrupt cache is a cache miss, never an error).
   */
  async load(source: NodeDefinitionSource): Promise<CachedObjectInfo | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(source), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const value = JSON.parse(text) as Partial<CachedObjectInfo> | null;
      if (!value || typeof value !== 'object' || typeof value.fetchedAt !== 'number' || value.objectInfo === undefined)
        return undefined;
      if (value.source?.kind !== source.kind || value.source.url !== source.url) return undefined;
      return { source, fetchedAt: value.fetchedAt, objectInfo: value.objectInfo };
    } catch {
      return undefined;
    }
  }

  /** Writes the map of `source`, fetched at `fetchedAt` (ms since the epoch). @throws file system errors. */
  async save(source: NodeDefinitionSource, objectInfo: unknown, fetchedAt: number): Promise<CachedObjectInfo> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(source);
    const entry: CachedObjectInfo = { source, fetchedAt, objectInfo };
    await writeJsonAtomically(file, entry, `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    return entry;
  }
}
