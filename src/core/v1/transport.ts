/**
 * The transport of the v1 client (Cloud API v1 (deprecated)): the core's {@link Transport} with the API key sent as
 * `X-API-Key` rather than `Authorization`, and v1's error mapping.
 */
import { Transport, type RawResponse, type RequestOptions, type TransportOptions } from '../http/transport';
import { v1ErrorFromResponse } from '../engine/errors';

/**
 * The transport of v1: the core's {@link Transport} with the API key sent as `X-API-Key` (Cloud API v1 (deprecated),
 * Authentication, rule 1), never as `Authorization`, and only where the transport would send a credential: to the base
 * URL's origin, never on a followed redirect (`credentials: false`, rule 2 of "Endpoints": the signed URL of
 * `/api/view` carries its own authorization).
 */
export class V1Transport extends Transport {
  private readonly v1Key: string | undefined;

  /** @throws InputError `bad_base_url`. */
  constructor(options: TransportOptions) {
    // No `apiKey` for the base class: it would send `Authorization: Bearer`.
    super({ ...options, apiKey: undefined, errorFactory: options.errorFactory ?? v1ErrorFromResponse });
    this.v1Key = options.apiKey || undefined;
  }

  /** As {@link Transport.send}, with `X-API-Key` on requests to the configured origin that allow credentials. */
  override send(method: string, target: URL | string, options: RequestOptions = {}): Promise<RawResponse> {
    const url = typeof target === 'string' ? this.url(target) : target;
    if (this.v1Key && options.credentials !== false && this.isOwnOrigin(url)) {
      return super.send(method, url, { ...options, headers: { ...options.headers, 'x-api-key': this.v1Key } });
    }
    return super.send(method, url, options);
  }
}
