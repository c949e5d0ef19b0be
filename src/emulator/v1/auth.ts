/**
 * Authentication of the v1 surface (Cloud API v1 (deprecated), Authentication): REST calls carry
 * `X-API-Key: <API key>`, the WebSocket carries the key as the query parameter `token`. The keys are the emulator's
 * `tokens` and each is the same owner as on v2 (auth.ts names owners `token-<first index>`), so a job submitted through
 * v1 is the same caller's job on v2. Without tokens every request is the one anonymous owner, as on v2.
 *
 * `Authorization` is refused on v1 when tokens are configured (the document: v1 REST calls carry `X-API-Key`;
 * never `Authorization`), even next to a valid `X-API-Key`: a client that sends the bearer header on
 * v1 is wrong, and the emulator says so rather than letting it pass.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ANONYMOUS_OWNER, type Auth } from '../auth';
import { EmulatorError } from '../errors';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Matches a presented key against the configured ones, in constant time. */
export interface KeyCheck {
  /** The owner of `key`, or undefined when it is not one of the keys. Without keys: always the anonymous owner. */
  ownerOfKey(key: string | undefined): string | undefined;
  /** Whether keys are configured (else no authentication at all). */
  readonly required: boolean;
}

/** The key check over the emulator's `tokens` (owners named as auth.ts names them). */
export function keyCheck(tokens: readonly string[]): KeyCheck {
  if (tokens.length === 0) return { required: false, ownerOfKey: () => ANONYMOUS_OWNER };
  const known = tokens.map((token) => ({ digest: digest(token), owner: `token-${tokens.indexOf(token)}` }));
  return {
    required: true,
    ownerOfKey(key) {
      if (key === undefined || key === '') return undefined;
      const presented = digest(key);
      let owner: string | undefined;
      for (const k of known) if (timingSafeEqual(k.digest, presented) && owner === undefined) owner = k.owner;
      return owner;
    },
  };
}

/**
 * The REST authentication of v1 routes: `X-API-Key`.
 * @throws EmulatorError 401 `unauthorized` (keys configured) when `X-API-Key` is missing or wrong, or when the
 *   request carries `Authorization`.
 */
export function apiKeyAuth(keys: KeyCheck): Auth {
  return {
    ownerOf(headers: IncomingHttpHeaders): string {
      if (!keys.required) return ANONYMOUS_OWNER;
      if (headers.authorization !== undefined) {
        throw new EmulatorError(
          'unauthorized',
          'the v1 API takes the key in the X-API-Key header, never in Authorization: remove the Authorization header',
        );
      }
      const raw = headers['x-api-key'];
      const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
      const owner = keys.ownerOfKey(key);
      if (owner !== undefined) return owner;
      throw new EmulatorError(
        'unauthorized',
        key ? 'the X-API-Key is not valid for this service' : 'missing credentials: send X-API-Key: <API key>',
      );
    },
  };
}
