/**
 * Idempotency-Key claims of POST /api/v2/jobs (Job and Asset API v2, POST /api/v2/jobs, rules 3–6, and
 * Limits 1): reject-on-duplicate, not record-and-replay. A key is claimed by the first request that reaches
 * submission, released when that submission definitively fails without creating a job, and otherwise held
 * for 24 hours. Keys are per owner.
 */
import type { SavedClaim } from '../persistence';

/** How long a claimed key is held, in ms: 24 hours. */
const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** Claimed keys per owner, with the time of the claim. */
export class IdempotencyKeys {
  private readonly claims = new Map<string, Map<string, number>>();

  /**
   * @param now the emulator's clock (ms).
   * @param onChange called after a claim or a release (the data folder saves the claims: a restart keeps them).
   */
  constructor(
    private readonly now: () => number,
    private readonly onChange: () => void = () => undefined,
  ) {}

  /** The claims now, for the data folder (persistence.ts). */
  saved(): SavedClaim[] {
    return [...this.claims].flatMap(([owner, keys]) =>
      [...keys].map(([key, claimedAt]): SavedClaim => [owner, key, claimedAt]),
    );
  }

  /** Takes back the claims a previous run saved; expired ones are left out. */
  restore(claims: readonly SavedClaim[]): void {
    const now = this.now();
    for (const [owner, key, claimedAt] of claims) {
      if (now - claimedAt >= IDEMPOTENCY_KEY_TTL_MS) continue;
      let keys = this.claims.get(owner);
      if (keys === undefined) this.claims.set(owner, (keys = new Map()));
      keys.set(key, claimedAt);
    }
  }

  /** Claims `key` for `owner`; false when it is already claimed (and not yet expired). */
  claim(owner: string, key: string): boolean {
    const now = this.now();
    let keys = this.claims.get(owner);
    if (keys === undefined) this.claims.set(owner, (keys = new Map()));
    const claimedAt = keys.get(key);
    if (claimedAt !== undefined && now - claimedAt < IDEMPOTENCY_KEY_TTL_MS) return false;
    keys.set(key, now);
    this.onChange();
    return true;
  }

  /** Releases `key` of `owner` (the submission failed definitively, no job was created). */
  release(owner: string, key: string): void {
    if (this.claims.get(owner)?.delete(key)) this.onChange();
  }

  /** Forgets expired claims. */
  sweep(): void {
    const now = this.now();
    for (const [owner, keys] of this.claims) {
      for (const [key, claimedAt] of keys) if (now - claimedAt >= IDEMPOTENCY_KEY_TTL_MS) keys.delete(key);
      if (keys.size === 0) this.claims.delete(owner);
    }
  }
}
