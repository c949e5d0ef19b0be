/**
 * Base URLs and surfaces. Rules: jobs-assets-api-v2.md, "What the service does" (the three surfaces, one
 * contract, moved between by the base address) and FACTS.md (a serverless deployment mounts under
 * `/deployment/{deployment_id}`).
 */
import { InputError } from './errors';

/** Which kind of server a base URL points at. */
export type SurfaceKind = 'cloud' | 'deployment' | 'self-hosted';

/** A base URL and the surface it implies. */
export interface Surface {
  kind: SurfaceKind;
  /** Normalised base URL: scheme, authority and optional path prefix, no trailing slash. */
  baseUrl: string;
  /** Scheme plus authority of `baseUrl`: the one origin that credentials are sent to. */
  origin: string;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Validates and normalises a base URL (http or https, no credentials, query or fragment; a path prefix is
 * kept; trailing slashes dropped).
 * @throws InputError `bad_base_url` naming the problem and the fix.
 */
export function normalizeBaseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new InputError('bad_base_url', `"${input}" is not a URL. Set the base URL to e.g. http://127.0.0.1:8189 or https://your-server.example.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError('bad_base_url', `The base URL must start with http:// or https:// (got ${url.protocol}).`);
  }
  if (url.username || url.password) {
    throw new InputError('bad_base_url', 'The base URL must not carry a user name or password: set the API key instead.');
  }
  if (url.search || url.hash) {
    throw new InputError('bad_base_url', 'The base URL must not carry a query (?…) or fragment (#…).');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** True for localhost, 127.0.0.0/8 and [::1]. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

/**
 * The surface a base URL implies: a `/deployment/<id>` prefix is a serverless deployment, a loopback host is
 * the self-hosted companion, anything else the managed cloud.
 * @throws InputError for a bad URL (see {@link normalizeBaseUrl}).
 */
export function surfaceFromBaseUrl(input: string): Surface {
  const baseUrl = normalizeBaseUrl(input);
  const url = new URL(baseUrl);
  const kind: SurfaceKind = /\/deployment\/[^/]+$/.test(url.pathname)
    ? 'deployment'
    : isLoopbackHost(url.hostname)
      ? 'self-hosted'
      : 'cloud';
  return { kind, baseUrl, origin: url.origin };
}
