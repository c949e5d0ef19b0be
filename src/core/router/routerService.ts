/**
 * The one owner of model router clients (Model router API; the client is ./client.ts): one client per router, built
 * at its first use and reused by every command and view after, rebuilt when the configured router or its key
 * changes. A command never builds its own client: it leases the service's and releases it when done. vscode-free;
 * the extension and the CLI each say where the router and its key come from.
 */
import { createHash } from 'node:crypto';
import { AbortError, InputError } from '../http/errors';
import type { RouterClient } from './client';

/** Where the router is and the key it takes: what a client is built for. */
export interface RouterTarget {
  /** The router base URL (Model router API, {router_base_url}), as configured. */
  readonly baseUrl: string;
  /** The router key for the base URL's origin (sent as `Authorization: Bearer` to that origin only); undefined: none. */
  readonly apiKey: string | undefined;
}

/** The least a client must offer the service: a way to release its connections. */
export interface ClosableClient {
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
export interface RouterLease<C extends ClosableClient = RouterClient> {
  readonly client: C;
  /** Gives the lease back; idempotent. */
  release(): void;
}

/** A client with its identity and its users. */
interface Entry<C> {
  /** A hash of the base URL and the key: compared, the key never kept in it. */
  readonly identity: string;
  readonly client: C;
  users: number;
  /** Replaced by a newer client (or the service disposed): closed once `users` is 0. */
  retired: boolean;
  closed: boolean;
}

/**
 * See the module comment. Rules: one client per router (base URL and key) however many calls lease it; a different
 * base URL or key builds a new client at the next lease and retires the old one, which is closed once its last lease
 * is released; {@link refresh} retires the client at once when the settings no longer call for it; {@link close}
 * closes every client and refuses later leases.
 */
export class RouterService<C extends ClosableClient = RouterClient> {
  private readonly entries = new Set<Entry<C>>();
  private current: Entry<C> | undefined;
  private disposed = false;

  constructor(private readonly options: RouterServiceOptions<C>) {}

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
    let entry = this.current;
    if (!entry || entry.identity !== identity) {
      // Built synchronously after the last await: two leases asked at once share one client.
      entry = { identity, client: this.options.create(target), users: 0, retired: false, closed: false };
      this.entries.add(entry);
      const previous = this.current;
      this.current = entry;
      if (previous) this.retire(previous);
    }
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
    const entry = this.current;
    if (!entry || this.disposed) return;
    let identity: string | undefined;
    try {
      const target = await this.options.target();
      identity = target ? identityOf(target) : undefined;
    } catch {
      identity = undefined; // unusable settings: the old client must not go on being handed out
    }
    if (this.current === entry && identity !== entry.identity) {
      this.current = undefined;
      this.retire(entry);
    }
  }

  /** Closes every client, leased ones too (deactivation, the end of a CLI run), and refuses later leases. Idempotent. */
  async close(): Promise<void> {
    this.disposed = true;
    this.current = undefined;
    await Promise.all([...this.entries].map((entry) => ((entry.retired = true), this.closeEntry(entry))));
  }

  /** {@link close}, not awaited (a `vscode.Disposable`). */
  dispose(): void {
    void this.close();
  }

  /** The clients open now (the current one and retired ones still leased); tests read it. */
  get openClients(): number {
    return this.entries.size;
  }

  private assertLive(): void {
    if (this.disposed) throw new AbortError('the model router service was closed');
  }

  private leaseOf(entry: Entry<C>): RouterLease<C> {
    entry.users++;
    let released = false;
    return {
      client: entry.client,
      release: () => {
        if (released) return;
        released = true;
        entry.users--;
        if (entry.retired && entry.users === 0) void this.closeEntry(entry);
      },
    };
  }

  private retire(entry: Entry<C>): void {
    entry.retired = true;
    if (entry.users === 0) void this.closeEntry(entry);
  }

  private async closeEntry(entry: Entry<C>): Promise<void> {
    if (entry.closed) return;
    entry.closed = true;
    this.entries.delete(entry);
    try {
      await entry.client.close();
    } catch (err) {
      this.options.onCloseError?.(err);
    }
  }
}

/** What identifies a client: its base URL and key, hashed (compared, never kept in clear). */
function identityOf(target: RouterTarget): string {
  return createHash('sha256').update(`${target.baseUrl}\n${target.apiKey ?? ''}`).digest('hex');
}
