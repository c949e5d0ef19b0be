/**
 * Following links. Rule: Job and Asset API v2, Resources and their fields, Job `urls` — each link is an absolute URL or
 * a host-relative reference starting with `/` that already includes any mount prefix; a client resolves a host-relative
 * link against the origin (scheme plus authority) of the request that returned it, never against a configured
 * base URL.
 */
import { ResponseShapeError } from './errors';

/**
 * Resolves a link from a response.
 * @param link absolute (`https://…`) or host-relative (`/deployment/x/api/v2/jobs/1`)
 * @param requestUrl the URL of the request whose response carried the link (only its origin is used)
 * @throws ResponseShapeError when the link is empty or not http(s).
 */
export function resolveLink(link: string, requestUrl: string | URL): URL {
  if (typeof link !== 'string' || link.length === 0) {
    throw new ResponseShapeError(`empty link in response to ${String(requestUrl)}`);
  }
  const origin = new URL(requestUrl).origin;
  // Resolving against the bare origin (not the request path) is what makes a host-relative link keep its own
  // mount prefix and nothing of ours.
  const url = new URL(link, origin + '/');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ResponseShapeError(`link "${link}" is not an http(s) URL`);
  }
  return url;
}
