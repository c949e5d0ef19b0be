/**
 * The v2 job operations, one method per endpoint, exactly as Job and Asset API v2, Endpoints, describes them.
 * Links are followed, not built (design rule 4): a job's `urls.self` / `events` / `cancel` are resolved against
 * the origin of the request that returned the job; a URL is built from the base only when the link is absent.
 */
import { randomUUID } from 'node:crypto';
import { ComfyError, ResponseShapeError } from '../http/errors';
import type { Transport } from '../http/transport';
import { readJobEvents, type JobEvent } from './events';
import { resolveLink } from '../http/linkResolution';
import {
  JobListSchema,
  JobSchema,
  WorkflowResponseSchema,
  type Job,
  type JobOutput,
  type WorkflowResponse,
} from './schemas';
import { assertApiWorkflow, type ApiWorkflow } from '../util/workflow';

/** A job as one response returned it, with where it came from (for resolving its host-relative links). */
export interface JobSnapshot {
  job: Job;
  /** The URL of the request that returned this job. */
  source: URL;
  requestId: string | undefined;
}

/** Which link of a job: the document's `urls` keys, plus the workflow sub-resource (self + `/workflow`). */
type JobLink = 'self' | 'events' | 'cancel' | 'workflow';

/** What to submit. */
export interface SubmitOptions {
  /** One key per logical submission (a UUID); minted here when absent. */
  idempotencyKey?: string;
  /** Partner-service API key, sent as `extra_data.api_key_svc_org`; extra_data is sent only when set. */
  partnerApiKey?: string;
  signal?: AbortSignal;
}

/** A submission's answer, with the key that was presented. */
export interface Submission extends JobSnapshot {
  idempotencyKey: string;
}

/**
 * The server answered a submission with a 2xx, so a job exists (Job and Asset API v2, States and transitions:
 * "a 201 means the job is durably recorded"), but the body could not be read as a Job (not JSON, an odd shape,
 * too large, broken off). `jobId` is the id when it could be salvaged from the body. Never a reason to release the
 * Idempotency-Key or to resubmit (POST /api/v2/jobs, rules 4 and 5).
 */
export class JobCreatedUnreadableError extends ComfyError {
  readonly jobId: string | undefined;
  readonly idempotencyKey: string;
  constructor(idempotencyKey: string, requestId: string | undefined, cause: unknown) {
    const jobId = salvageJobId(cause);
    super(
      'job_created_unreadable',
      `the server accepted the submission (a job was created${jobId ? `: ${jobId}` : ''}) but its answer could not be read (${cause instanceof Error ? cause.message : String(cause)})`,
      { requestId },
      { cause },
    );
    this.jobId = jobId;
    this.idempotencyKey = idempotencyKey;
  }
}

/** The job id in a body that did not fit the Job shape: a non-empty string `id` (or `job.id`), else undefined. */
function salvageJobId(err: unknown): string | undefined {
  const body = ResponseShapeError.is(err)
    ? (err.body as { id?: unknown; job?: { id?: unknown } } | undefined)
    : undefined;
  const id = body && typeof body === 'object' ? (body.id ?? body.job?.id) : undefined;
  return typeof id === 'string' && id.length > 0 && id.length <= 200 && /^[\w.:-]+$/.test(id) ? id : undefined;
}

/** The low layer of v2 jobs. */
export class JobsApi {
  constructor(private readonly http: Transport) {}

  /**
   * POST /api/v2/jobs. Never sends `webhook_url` or `inputs` (reserved, rejected); sends `extra_data` only with
   * a partner key. The Idempotency-Key is minted here when not given and returned with the answer.
   * @throws InputError before any request for a non-API-format workflow; ApiError subclasses for 4xx/5xx
   *   (InvalidWorkflowError with `nodeErrors`, IdempotencyKeyReuseError, QueueFullError, …); network errors;
   *   {@link JobCreatedUnreadableError} for a 2xx whose body cannot be read as a Job (the job exists).
   */
  async submit(workflow: unknown, options: SubmitOptions = {}): Promise<Submission> {
    assertApiWorkflow(workflow);
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const body: { workflow: ApiWorkflow; extra_data?: Record<string, string> } = { workflow };
    if (options.partnerApiKey) body.extra_data = { api_key_svc_org: options.partnerApiKey };
    const sent = await this.http.send('POST', '/api/v2/jobs', {
      json: body,
      headers: { 'idempotency-key': idempotencyKey },
      signal: options.signal,
    });
    try {
      const res = await this.http.parse('POST', sent, JobSchema);
      return { job: res.data, source: res.url, requestId: res.requestId, idempotencyKey };
    } catch (err) {
      // A 2xx means the job is durably recorded (the document's "States and transitions"), whatever its body.
      if (sent.status >= 200 && sent.status < 300)
        throw new JobCreatedUnreadableError(idempotencyKey, sent.requestId, err);
      throw err;
    }
  }

  /** GET the job (the authoritative view, with `logs` where the surface has them). @throws NotFoundError … */
  async get(job: JobSnapshot | string, signal?: AbortSignal): Promise<JobSnapshot> {
    const res = await this.http.json('GET', this.link(job, 'self'), JobSchema, { signal });
    return { job: res.data, source: res.url, requestId: res.requestId };
  }

  /**
   * POST cancel: idempotent (public sources); answers the current job (Job and Asset API v2,
   * POST /api/v2/jobs/{id}/cancel).
   */
  async cancel(job: JobSnapshot | string, signal?: AbortSignal): Promise<JobSnapshot> {
    const res = await this.http.json('POST', this.link(job, 'cancel'), JobSchema, { signal });
    return { job: res.data, source: res.url, requestId: res.requestId };
  }

  /** GET the workflow behind a job; branch on `format` (`api` or `save`). */
  async workflow(
    job: JobSnapshot | string,
    signal?: AbortSignal,
  ): Promise<WorkflowResponse & { requestId: string | undefined }> {
    const res = await this.http.json('GET', this.link(job, 'workflow'), WorkflowResponseSchema, { signal });
    return { ...res.data, requestId: res.requestId };
  }

  /**
   * Opens the event stream. Resolves once the server answered 200 with the stream; the iterator then yields
   * events until the stream ends. A refusal (429 `too_many_streams`, 501 `not_implemented`, …) throws its
   * typed ApiError, so the caller can fall back to polling.
   */
  async events(
    job: JobSnapshot | string,
    options: { signal?: AbortSignal; onBytes?: () => void; maxLineBytes?: number; maxFrameBytes?: number } = {},
  ): Promise<{ requestId: string | undefined; events: AsyncGenerator<JobEvent> }> {
    // No idle timeout of the transport: the watcher's own rule (45 s without a byte, as the official SDK) governs a
    // stream.
    const res = await this.http.send('GET', this.link(job, 'events'), {
      headers: { accept: 'text/event-stream' },
      signal: options.signal,
      idleTimeoutMs: 0,
    });
    if (res.status !== 200) throw await this.http.failure(res);
    return {
      requestId: res.requestId,
      events: readJobEvents(res.body, {
        onBytes: options.onBytes,
        maxLineBytes: options.maxLineBytes,
        maxFrameBytes: options.maxFrameBytes,
      }),
    };
  }

  /**
   * The self-hosted companion's listing: `GET /api/v2/jobs?status=&limit=`. Not part of the v2 contract (Job and
   * Asset API v2, Endpoints: job listing not shown).
   */
  async list(
    options: { status?: string; limit?: number; signal?: AbortSignal } = {},
  ): Promise<{ jobs: Job[]; truncated: boolean }> {
    const url = this.http.url('/api/v2/jobs');
    if (options.status) url.searchParams.set('status', options.status);
    if (options.limit) url.searchParams.set('limit', String(options.limit));
    const res = await this.http.json('GET', url, JobListSchema, { signal: options.signal });
    return { jobs: res.data.jobs, truncated: res.data.truncated ?? false };
  }

  /**
   * The URL of a job's link: its `urls` entry resolved against the origin of the response that carried it;
   * the workflow sub-resource is `self` + `/workflow` (the keys of `urls` are not shown in the document; there is no
   * `workflow` link). Built from the base URL only for a bare id
   * or a job without links.
   */
  link(job: JobSnapshot | string, key: JobLink): URL {
    if (typeof job !== 'string') {
      const urls = job.job.urls ?? {};
      const linkKey = key === 'workflow' ? 'self' : key;
      const link = urls[linkKey];
      if (link) {
        const url = resolveLink(link, job.source);
        if (key === 'workflow') url.pathname = url.pathname.replace(/\/+$/, '') + '/workflow';
        return url;
      }
    }
    const id = typeof job === 'string' ? job : job.job.id;
    const base = `/api/v2/jobs/${encodeURIComponent(id)}`;
    return this.http.url(key === 'self' ? base : `${base}/${key}`);
  }

  /** The content URL of an output: its `url` resolved like any link; else the asset's content endpoint. */
  outputUrl(snapshot: JobSnapshot, output: JobOutput): URL {
    if (output.url) return resolveLink(output.url, snapshot.source);
    return this.http.url(`/api/v2/assets/${encodeURIComponent(output.id)}/content`);
  }
}
