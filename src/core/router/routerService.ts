/**
 * The one owner of model router clients (Model router API; the client is ./client.ts): one client per router, built
 * at its first use and reused by every command and view after, rebuilt when the configured router or its key
 * changes. A command never builds its own client: it leases the service's and releases it when done. vscode-free;
 * the extension and the CLI each say where the router and its key come from.
 */
import { createHash } from 'node:crypto';
import { AbortError, InputError } from '../http/errors';
import { LeasePool, type Pooled } from '../util/leasePool';
import type { RouterClient } from './client';

/** Where the router is and the key it takes: what a client is built for. */
export interface RouterTarget {
  /** The router base URL (Model router API, {router_base_url}), as configured. */
  readonly baseUrl: string;
  /** The router key for the base URL's origin (sent as `Authorization: Bearer` to that origin only); undefined: none. */
  readonly apiKey: string | undefined;
}

/** The least a client must offer the service: a way to release its connections. */
interface ClosableClient {
  close(): Promise<void>;
}

/** Where the service gets its clients. */
export interface RouterServiceOptions<C extends ClosableClient = RouterClient> {
  /**
   * The router the settings call for now, read at each lease (the key too: a changed key is seen at the next use), or
   * undefined when none is configured (the extension: no router URL, or no key stored for its origin).
   * @throws what the caller decides (the CLI: a usage error when no router URL is given); passed on by the lease.
   */
  target(): RouterTarget | undefined | Promise<RouterTarget | undefined>;
  /**
   * A new client for `target` (its engine, log, schema cache and key store are the caller's to choose).
   * @throws InputError `bad_base_url` for a base URL that is not http(s) (passed on by the lease).
   */
  create(target: RouterTarget): C;
  /** Told when closing a client fails (the client is forgotten either way). */
  onCloseError?: (err: unknown) => void;
}

/**
 * A lease on the service's client of the moment: use it for a few requests, then `release()` it. A client replaced
 * meanwhile (another router or key) is closed when its last lease is released. Never close the client itself.
 */
interface RouterLease<C extends ClosableClient = RouterClient> {
  readonly client: C;
  /** Gives the lease back; idempotent. */
  release(): void;
}

/**
 * See the module comment. Rules: one client per router (base URL and key) however many calls lease it; a different
 * base URL or key builds a new client at the next lease and retires the old one, which is closed once its last lease
 * is released; {@link refresh} retires the client at once when the settings no longer call for it; {@link close}
 * closes every client and refuses later leases.
 */
export class RouterService<C extends ClosableClient = RouterClient> {
  /** The clients, by identity (a hash of the base URL and the key: compared, the key never kept in it). */
  private readonly pool: LeasePool<C>;

  constructor(private readonly options: RouterServiceOptions<C>) {
    this.pool = new LeasePool<C>({ close: (client) => client.close(), onError: (err) => options.onCloseError?.(err) });
  }

  /**
   * A lease on the client for the router configured now: the current client when its base URL and key are the same,
   * else a new one (the previous one retired). Resolves undefined when no router is configured.
   * @throws AbortError once the service is closed; what `target` and `create` throw.
   */
  async lease(): Promise<RouterLease<C> | undefined> {
    this.assertLive();
    const target = await this.options.target();
    this.assertLive();
    if (!target) return undefined;
    const identity = identityOf(target);
    let entry = this.pool.current;
    // Built synchronously after the last await: two leases asked at once share one client.
    if (!entry || entry.identity !== identity) entry = this.pool.add(identity, this.options.create(target));
    return this.leaseOf(entry);
  }

  /**
   * Runs `fn` with a leased client, released when `fn` settles.
   * @throws InputError `no_router` when no router is configured; as {@link lease} and `fn`.
   */
  async use<T>(fn: (client: C) => Promise<T>): Promise<T> {
    const lease = await this.lease();
    if (!lease) throw new InputError('no_router', 'no model router is configured: give its URL and key');
    try {
      return await fn(lease.client);
    } finally {
      lease.release();
    }
  }

  /**
   * Re-reads the target and, when it no longer calls for the current client (another router or key, none, or the
   * settings unusable), retires that client now (closed once its last lease is released); the next lease builds the
   * new one. Called when the settings or the stored keys change, so an unused client does not linger. Never rejects.
   */
  async refresh(): Promise<void> {
    await this.pool.refresh(async () => {
      const target = await this.options.target();
      return target ? identityOf(target) : undefined;
    });
  }

  /** Closes every client, leased ones too (deactivation, the end of a CLI run), and refuses later leases. Idempotent. */
  async close(): Promise<void> {
    await this.pool.closeAll();
  }

  /** {@link close}, not awaited (a `vscode.Disposable`). */
  dispose(): void {
    void this.close();
  }

  /** The clients open now (the current one and retired ones still leased); tests read it. */
  get openClients(): number {
    return this.pool.size;
  }

  private assertLive(): void {
    if (this.pool.closed) throw new AbortError('the model router service was closed');
  }

  private leaseOf(entry: Pooled<C>): RouterLease<C> {
    return { client: entry.value, release: this.pool.take(entry) };
  }
}

/** What identifies a client: its base URL and key, hashed (compared, never kept in clear). */
function identityOf(target: RouterTarget): string {
  return createHash('sha256')
    .update(`${target.baseUrl}\n${target.apiKey ?? ''}`)
    .digest('hex');
}
