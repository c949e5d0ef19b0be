/**
 * The base URL of a connection, as the transport and every API read it. Rule: Job and Asset API v2, What the service
 * does (one contract on three surfaces, moved between by the base address; a path prefix is part of it).
 */
import { InputError } from './errors';

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
    throw new InputError(
      'bad_base_url',
      `"${input}" is not a URL. Set the base URL to e.g. http://127.0.0.1:8189 or https://your-server.example.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError('bad_base_url', `The base URL must start with http:// or https:// (got ${url.protocol}).`);
  }
  if (url.username || url.password) {
    throw new InputError(
      'bad_base_url',
      'The base URL must not carry a user name or password: set the API key instead.',
    );
  }
  if (url.search || url.hash) {
    throw new InputError('bad_base_url', 'The base URL must not carry a query (?…) or fragment (#…).');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
