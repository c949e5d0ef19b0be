/**
 * The on-disk cache of model input schemas (Model router API, GET /v1/models/{provider}/{model}/openapi.json): each
 * `openapi.json` kept with its ETag, so it is revalidated with `If-None-Match` and served stale when the router cannot
 * answer. The folder is the caller's (the CLI and the extension pass a subfolder of their state dir). One body file and
 * one meta file per schema URL, named by the URL's SHA-256; each written to a temporary file and renamed (atomic on one
 * file system).
 */
import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** One cached schema: the exact bytes served, its ETag and when it was stored (ms since the epoch). */
export interface CachedSchema {
  url: string;
  etag: string | undefined;
  storedAt: number;
  bytes: Buffer;
}

/**
 * RFC 9110 weak comparison of two entity tags (`W/"x"` equals `"x"`): the opaque tags compared, the weakness
 * ignored. Malformed tags compare as their whole text.
 */
export function weakEtagEqual(a: string, b: string): boolean {
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  return opaque(a) === opaque(b);
}

/** The schema cache in one folder (created on first write). */
export class SchemaCache {
  constructor(readonly dir: string) {}

  private base(url: string): string {
    return path.join(this.dir, createHash('sha256').update(url).digest('hex').slice(0, 32));
  }

  /** The cached schema of `url`, or undefined when none (or the files are unreadable or do not belong together). */
  async get(url: string): Promise<CachedSchema | undefined> {
    const base = this.base(url);
    try {
      const meta = JSON.parse(await fs.readFile(`${base}.meta.json`, 'utf8')) as {
        url?: unknown;
        etag?: unknown;
        storedAt?: unknown;
        size?: unknown;
      };
      if (meta.url !== url) return undefined;
      const bytes = await fs.readFile(`${base}.body`);
      if (typeof meta.size === 'number' && meta.size !== bytes.length) return undefined;
      return {
        url,
        etag: typeof meta.etag === 'string' ? meta.etag : undefined,
        storedAt: typeof meta.storedAt === 'number' ? meta.storedAt : 0,
        bytes,
      };
    } catch {
      return undefined;
    }
  }

  /** Stores the schema of `url` (body first, then the meta that names its size, so a torn pair is ignored). */
  async put(entry: CachedSchema): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    const base = this.base(entry.url);
    await atomicWrite(`${base}.body`, entry.bytes);
    await atomicWrite(
      `${base}.meta.json`,
      `${JSON.stringify({ url: entry.url, etag: entry.etag, storedAt: entry.storedAt, size: entry.bytes.length })}\n`,
    );
  }
}

async function atomicWrite(file: string, data: Buffer | string): Promise<void> {
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    await fs.writeFile(temp, data, { mode: 0o600 });
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}
