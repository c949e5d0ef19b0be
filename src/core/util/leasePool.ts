/**
 * The one connection lease shared by the long-lived services that own clients (core/jobs/jobService.ts for the job
 * backends, core/router/routerService.ts for the model router clients): one value per identity (what the settings
 * call for: a hash of the base URL and the key, never the key in clear), handed out in leases; a value replaced by
 * another identity is retired and closed once its last lease is given back, so a request under way never loses its
 * connection, and an unused one does not linger.
 */

/** One value of the pool with its identity and the leases out on it. */
export interface Pooled<T> {
  /** What the value was built for (compared; never a secret in clear). */
  readonly identity: string;
  readonly value: T;
  /** Leases not given back yet. */
  users: number;
  /** Replaced by a newer value (or the pool closed): closed once `users` is 0. */
  retired: boolean;
  closed: boolean;
}

/** How a pool closes its values: `close` releases one value's connections; its rejection goes to `onError` (the value is forgotten either way). */
interface PoolCloser<T> {
  // Method syntax: a pool of a narrower value type is usable where a wider one is expected (a JobService<C> as a JobService).
  close(value: T): Promise<void>;
  onError(err: unknown): void;
}

/** Values by identity, one current; see the module comment. */
export class LeasePool<T> {
  private readonly pooled = new Set<Pooled<T>>();
  private currentEntry: Pooled<T> | undefined;
  private shut = false;

  constructor(private readonly closer: PoolCloser<T>) {}

  /** The value handed out now, if any. */
  get current(): Pooled<T> | undefined {
    return this.currentEntry;
  }

  /** True once {@link closeAll} ran: nothing is handed out any more. */
  get closed(): boolean {
    return this.shut;
  }

  /** The values open now (the current one and retired ones still leased). */
  get size(): number {
    return this.pooled.size;
  }

  /** The open entry whose value is `value`, if any. */
  find(value: T): Pooled<T> | undefined {
    for (const entry of this.pooled) if (entry.value === value) return entry;
    return undefined;
  }

  /**
   * Adds `value`, built for `identity`, as the current one, retiring the previous current one. Once the pool is
   * closed, the value is closed at once (a build that finished after the pool's owner was disposed).
   */
  add(identity: string, value: T): Pooled<T> {
    const entry: Pooled<T> = { identity, value, users: 0, retired: false, closed: false };
    this.pooled.add(entry);
    if (this.shut) {
      entry.retired = true;
      void this.close(entry);
      return entry;
    }
    const previous = this.currentEntry;
    this.currentEntry = entry;
    if (previous && previous !== entry) this.retire(previous);
    return entry;
  }

  /**
   * Takes one lease on `entry`. @returns the function that gives it back (idempotent): a retired entry is closed when
   * its last lease is given back.
   */
  take(entry: Pooled<T>): () => void {
    entry.users++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.users--;
      if (entry.retired && entry.users === 0) void this.close(entry);
    };
  }

  /**
   * Re-reads the identity the settings call for now and, when it is not the current value's (another identity, none,
   * or `identityNow` threw: unusable settings must not go on being served), retires the current value (closed once
   * its last lease is given back). Never rejects.
   * @returns true when the current value was retired.
   */
  async refresh(identityNow: () => Promise<string | undefined>): Promise<boolean> {
    const entry = this.currentEntry;
    if (!entry || this.shut) return false;
    let identity: string | undefined;
    try {
      identity = await identityNow();
    } catch {
      identity = undefined;
    }
    if (this.currentEntry !== entry || identity === entry.identity) return false;
    this.currentEntry = undefined;
    this.retire(entry);
    return true;
  }

  /** Closes every value, leased ones too, and hands nothing out after. Idempotent. */
  async closeAll(): Promise<void> {
    this.shut = true;
    this.currentEntry = undefined;
    await Promise.all([...this.pooled].map((entry) => ((entry.retired = true), this.close(entry))));
  }

  private retire(entry: Pooled<T>): void {
    entry.retired = true;
    if (entry.users === 0) void this.close(entry);
  }

  private async close(entry: Pooled<T>): Promise<void> {
    if (entry.closed) return;
    entry.closed = true;
    this.pooled.delete(entry);
    try {
      await this.closer.close(entry.value);
    } catch (err) {
      this.closer.onError(err);
    }
  }
}
