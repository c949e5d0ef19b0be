/**
 * Signed content URLs, as the managed cloud and serverless deployments answer GET /api/v2/assets/{id}/content
 * (Job and Asset API v2, GET /api/v2/assets/{id}/content: "a 302 to a fresh signed URL"; public sources: the signed
 * URL carries its own authorization, follow it WITHOUT the Authorization header).
 *
 * A URL is `<signed origin>/blob/<token>?sig=<signature>`: the token names the asset and the expiry instant,
 * the signature is an HMAC-SHA256 of the token under a key made per emulator run. The second origin serves it
 * (see index.ts) and refuses any request that carries a credential.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A signed URL and the instant it stops working (ms since the epoch, the emulator's clock). */
interface SignedUrl {
  readonly url: string;
  readonly expiresAt: number;
}

/** What a presented token and signature mean. */
type Verification =
  { readonly kind: 'valid'; readonly assetId: string } | { readonly kind: 'invalid' } | { readonly kind: 'expired' };

/** Mints and checks signed URLs for one emulator run. */
export class UrlSigner {
  private readonly key = randomBytes(32);

  /**
   * @param origin the signed origin, read at every call (known once its server listens)
   * @param ttlMs lifetime of a URL, in ms
   * @param now the emulator's clock
   */
  constructor(
    private readonly origin: () => string,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** A fresh URL for asset `assetId`, valid for the TTL but never past `notAfter` (the asset's own expiry). */
  sign(assetId: string, notAfter: number | null): SignedUrl {
    const expiresAt = Math.min(this.now() + this.ttlMs, notAfter ?? Infinity);
    const token = Buffer.from(JSON.stringify({ a: assetId, e: expiresAt })).toString('base64url');
    return { url: `${this.origin()}/blob/${token}?sig=${this.signature(token)}`, expiresAt };
  }

  /** Checks a token and its signature (constant-time), then its expiry. */
  verify(token: string, signature: string | null): Verification {
    const expected = Buffer.from(this.signature(token));
    const presented = Buffer.from(signature ?? '');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return { kind: 'invalid' };
    let claims: { a?: unknown; e?: unknown };
    try {
      claims = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { a?: unknown; e?: unknown };
    } catch {
      return { kind: 'invalid' };
    }
    if (typeof claims.a !== 'string' || typeof claims.e !== 'number') return { kind: 'invalid' };
    return this.now() >= claims.e ? { kind: 'expired' } : { kind: 'valid', assetId: claims.a };
  }

  private signature(token: string): string {
    return createHmac('sha256', this.key).update(token).digest('base64url');
  }
}
