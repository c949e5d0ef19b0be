/**
 * Authentication and ownership (Job and Asset API v2, Authentication): HTTP bearer. Self-hosted accepts
 * unauthenticated requests by default (one owner); configured with static tokens, every request needs one of
 * them and each token is its own owner, so another token's jobs and assets answer 404 like unknown ones.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { EmulatorError } from './errors';

/** Who a request acts for. */
export interface Auth {
  /**
   * The owner of a request, from its headers (as Node parsed them).
   * @throws EmulatorError 401 `unauthorized` when tokens are configured and the header is missing or wrong.
   */
  ownerOf(headers: IncomingHttpHeaders): string;
}

/** The one owner of an emulator without tokens. */
export const ANONYMOUS_OWNER = 'local';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Bearer authentication against `tokens`; none: every request is {@link ANONYMOUS_OWNER}'s. */
export function createAuth(tokens: readonly string[]): Auth {
  if (tokens.length === 0) return { ownerOf: () => ANONYMOUS_OWNER };
  // Compared as digests of equal length, in constant time, so timing does not reveal a token.
  // A token listed twice is one owner: its first position names it.
  const known = tokens.map((token) => ({ digest: digest(token), owner: `token-${tokens.indexOf(token)}` }));
  return {
    ownerOf(headers) {
      const authorization = headers.authorization;
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
      if (match !== null) {
        const presented = digest(match[1]);
        let owner: string | undefined;
        for (const k of known) if (timingSafeEqual(k.digest, presented) && owner === undefined) owner = k.owner;
        if (owner !== undefined) return owner;
      }
      throw new EmulatorError(
        'unauthorized',
        authorization
          ? 'the bearer token is not valid for this service'
          : 'missing credentials: send Authorization: Bearer <API key>',
        undefined,
        {
          'www-authenticate': 'Bearer',
        },
      );
    },
  };
}

/**
 * The signed origin's rule (Job and Asset API v2, GET /api/v2/assets/{id}/content, not shown there; public sources:
 * a signed URL carries its own authorization; credentials go
 * only to the origin they were configured for): any request carrying `Authorization`, `X-API-Key` or `Cookie`
 * is refused with 403 `forbidden`; every other request is {@link ANONYMOUS_OWNER}'s.
 */
export const REJECT_CREDENTIALS: Auth = {
  ownerOf(headers) {
    const carried = ['authorization', 'x-api-key', 'cookie'].filter((name) => headers[name] !== undefined);
    if (carried.length > 0) {
      throw new EmulatorError(
        'forbidden',
        `this signed URL carries its own authorization; the request must not send ${carried.join(', ')} (a credential leaked to another origin)`,
      );
    }
    return ANONYMOUS_OWNER;
  },
};
