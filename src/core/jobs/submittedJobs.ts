/**
 * Finding a submission's job in its server's listing (Job and Asset API v2, POST /api/v2/jobs, rules 3–5: the client
 * lists its jobs to learn an unknown outcome): a job matches by its workflow's hash, created within the send's time
 * windows, and held by no other record. Read by the resolution of an unknown outcome (unknownOutcome.ts) and by
 * reconciling remembered submissions (v2/reconcile.ts).
 */
import { ApiError, InputError, isNotFound } from '../http/errors';
import type { Clock } from '../http/clock';
import { RetryPause, retryAfterMs } from '../http/retry';
import { hashBytes } from '../util/hash';
import { canonicalJson } from '../util/json';
import type { JobBackend } from './backend';
import type { Job } from './model';

/** A job as a listing gives it: enough to match it to a submission and to adopt it. */
export type ListedJob = Pick<Job, 'id' | 'createdAt' | 'status'> & Partial<Pick<Job, 'expiresAt'>>;

/** What a submission's job is looked for by: its workflow's hash, its time windows (ms since the epoch) and its send. */
export interface SubmittedJobQuery {
  /** BLAKE3 of the canonical workflow JSON (StateStore `submissionRecord`). */
  workflowHash: string;
  /** Creation times that fit, each [from, to] (ms since the epoch). */
  windows: ReadonlyArray<readonly [number, number]>;
  /** The send the job is closest to (ms since the epoch): the closest match first. */
  near: number;
}

/** One reading: the closest unclaimed job that matched, and whether the reading saw every candidate (rule 3). */
export interface SubmittedJobMatch<J extends ListedJob = ListedJob> {
  job: J | undefined;
  complete: boolean;
}

/**
 * The job of `listing` that matches `query` and that no record holds (`claimed`), the closest in time to the send
 * first; each candidate's workflow hash from `hashOf` (null: the server does not show its workflow now, 404). Stops
 * at the first match. `complete` is false when a candidate's workflow could not be read or the listing was cut
 * (`truncated`) before the earliest window: a reading that found nothing then proves nothing.
 * @throws what `hashOf` throws (a failed read of a workflow).
 */
export async function matchSubmittedJob<J extends ListedJob>(
  listing: { jobs: readonly J[]; truncated: boolean },
  query: SubmittedJobQuery,
  claimed: ReadonlySet<string>,
  hashOf: (jobId: string) => Promise<string | null>,
): Promise<SubmittedJobMatch<J>> {
  const inWindow = (t: number): boolean => query.windows.some(([from, to]) => t >= from && t <= to);
  const candidates = listing.jobs
    .map((job) => ({ job, created: Date.parse(job.createdAt ?? '') }))
    .filter(({ job, created }) => Number.isFinite(created) && inWindow(created) && !claimed.has(job.id))
    .sort((a, b) => Math.abs(a.created - query.near) - Math.abs(b.created - query.near));
  let complete = true;
  if (listing.truncated) {
    // Newest first: a cut page whose oldest job is newer than the windows' start may miss the job.
    const oldest = Math.min(...listing.jobs.map((j) => Date.parse(j.createdAt ?? '')).filter(Number.isFinite));
    const start = Math.min(...query.windows.map(([from]) => from));
    if (!(oldest <= start)) complete = false;
  }
  for (const { job } of candidates) {
    const hash = await hashOf(job.id);
    if (hash === null) complete = false;
    else if (hash === query.workflowHash) return { job, complete: true };
  }
  return { job: undefined, complete };
}

/** The listing's failure when the surface has no listing at all (not supported, 404, 501), as opposed to a failure. */
export function isNoListing(err: unknown): boolean {
  return (
    (InputError.is(err) && err.code === 'not_supported') ||
    (ApiError.is(err) && (err.status === 404 || err.status === 501))
  );
}

/** Jobs asked of the listing by one reading. */
const LIST_LIMIT = 1000;

/** Workflow hashes kept (a job's workflow never changes). */
const HASHES_KEPT = 5000;

/**
 * The readings of one backend's listing, shared by every resolution under way (a batch resolves several variations at
 * once): a listing fetched at or after the time a reading asks for is shared, each job's workflow hash is read once,
 * and a Retry-After of the listing holds every reading (the longest pause wins).
 */
export class SubmittedJobReader {
  private fetch: { startedAt: number; page: Promise<{ jobs: Job[]; truncated: boolean }> } | undefined;
  private readonly hashes = new Map<string, Promise<string | null>>();
  readonly pause: RetryPause;

  constructor(
    private readonly backend: Pick<JobBackend, 'list' | 'workflow'>,
    readonly clock: Clock,
  ) {
    this.pause = new RetryPause(clock);
  }

  /**
   * The listing as fetched at `notBefore` (ms since the epoch) or later: one under way or just read that started then
   * is shared. @throws the listing's error (a 429's Retry-After then holds every reading).
   */
  async listing(notBefore: number, signal?: AbortSignal): Promise<{ jobs: Job[]; truncated: boolean }> {
    await this.pause.wait(signal);
    if (this.fetch && this.fetch.startedAt >= notBefore) return this.fetch.page;
    const fetch = { startedAt: this.clock.now(), page: this.backend.list({ limit: LIST_LIMIT, signal }) };
    this.fetch = fetch;
    try {
      return await fetch.page;
    } catch (err) {
      if (this.fetch === fetch) this.fetch = undefined;
      const asked = retryAfterMs(err);
      if (asked !== undefined) this.pause.extend(asked);
      throw err;
    }
  }

  /** The hash of job `jobId`'s workflow (canonical JSON, BLAKE3); null when the server does not show it now (404). */
  workflowHash(jobId: string, signal?: AbortSignal): Promise<string | null> {
    let hash = this.hashes.get(jobId);
    if (!hash) {
      hash = this.backend.workflow(jobId, signal).then(
        ({ workflow }) => hashBytes(canonicalJson(workflow)),
        (err: unknown) => {
          if (isNotFound(err)) return null;
          throw err;
        },
      );
      this.hashes.set(jobId, hash);
      // Only a hash read is kept: a 404 (a new job not shown yet) or a failure is read again next time.
      hash.then(
        (h) => {
          if (h === null) this.hashes.delete(jobId);
        },
        () => this.hashes.delete(jobId),
      );
      if (this.hashes.size > HASHES_KEPT) this.hashes.delete(this.hashes.keys().next().value!);
    }
    return hash;
  }
}
