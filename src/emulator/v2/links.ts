/**
 * The follow-up links the emulator embeds (Job and Asset API v2, What the service does, design rule 4, and Job
 * `urls`; its keys, not shown there, from public sources: self, events, cancel). Without a mount prefix links are
 * absolute URLs; under a prefix they are host-relative and include it, as a serverless deployment's are.
 */
import type { WireJobUrls } from './wire';

/** Builds links from a base: an origin (`http://127.0.0.1:8189`) or a mount prefix (`/deployment/dep-1`). */
export class Links {
  /** @param base read at every call: the origin is known only once the server listens. */
  constructor(private readonly base: () => string) {}

  /** `…/api/v2/jobs/{id}`. */
  job(id: string): string {
    return `${this.base()}/api/v2/jobs/${encodeURIComponent(id)}`;
  }

  /** The `urls` object of job `id`. */
  jobUrls(id: string): WireJobUrls {
    const self = this.job(id);
    return { self, events: `${self}/events`, cancel: `${self}/cancel` };
  }

  /** `…/api/v2/assets/{id}/content`: an output's and an asset's `url`. */
  assetContent(id: string): string {
    return `${this.base()}/api/v2/assets/${encodeURIComponent(id)}/content`;
  }
}
