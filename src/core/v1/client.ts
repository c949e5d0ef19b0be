/**
 * The v1 client (Cloud API v1 (deprecated)): one method per endpoint of the document, plus what the idiomatic
 * layer needs (outputs confirmed at the end, downloads through `/api/view`, submit-and-watch). It reuses the core's
 * transport (bounded reads, timeouts, credentials only to their origin, request ids), retry policy, downloads and
 * v2's error classes; jobs are reported in the client's job model (mapping.ts). What differs from v2 is said where it
 * is done.
 */
import * as path from 'node:path';
import { InputError, ResponseShapeError } from '../http/errors';
import type { TransportOptions } from '../http/transport';
import { systemClock, type Clock } from '../http/clock';
import { withRetry, type RetryOptions } from '../http/retry';
import { NotFoundError, parseNodeErrors, type NodeError } from '../http/errors';
import { assertApiWorkflow } from '../util/workflow';
import { downloadIntoFolder, type DownloadOptions, type DownloadResult } from '../http/download';
import type { JobAnswer } from '../jobs/backend';
import type { Job, JobOutput } from '../jobs/model';
import { safeFileName } from '../util/fileNames';
import { isPlainObject, withoutSchemaKey, type ApiWorkflow } from '../util/workflow';
import { promptErrorOf } from '../engine/errors';
import { answerOfV1, isV1TerminalStatus } from './mapping';
import {
  fileBlob,
  filesOfOutputs,
  failureOf,
  isFinalOutput,
  jobOutputOf,
  type FileRef,
  type NodeFile,
  type V1Failure,
} from '../engine/files';
import {
  HistorySchema,
  JobDetailSchema,
  JsonObjectSchema,
  PromptAnswerSchema,
  StatusAnswerSchema,
  UploadResultSchema,
  type StatusAnswer,
  type UploadResult,
} from './schemas';
import {
  DEFAULT_MAX_OBJECT_INFO_BYTES,
  perClassNotServed,
  readObjectInfo,
  type ObjectInfo,
} from '../engine/objectInfo';
import { EngineSocket } from '../engine/socket';
import { V1Transport } from './transport';

/** How to build a {@link V1Client}: the transport's options plus the clock and the socket's bounds. */
export interface V1ClientOptions extends TransportOptions {
  clock?: Clock;
  /** Source of jitter in [0, 1) for reconnects. Default Math.random. */
  random?: () => number;
  /** Largest `object_info` body read, bytes. Default {@link DEFAULT_MAX_OBJECT_INFO_BYTES} (64 MiB). */
  maxObjectInfoBytes?: number;
  /** Largest WebSocket message accepted, bytes. Default 32 MiB. */
  maxSocketMessageBytes?: number;
}

/** Options of {@link V1Client.uploadImage}. */
export interface UploadImageOptions {
  /** `input` (default) for images, `temp` for temporary files (Cloud API v1 (deprecated), Endpoints). */
  type?: 'input' | 'temp';
  /** Sent as the string `true` or `false` (default false). */
  overwrite?: boolean;
  signal?: AbortSignal;
}

/** Options of {@link V1Client.submit}. */
export interface V1SubmitOptions {
  /** The partner-service key, sent as `extra_data.api_key_svc_org` (rule 1); extra_data is sent only with it. */
  partnerKey?: string;
  /** The `clientId` of the socket that watches this prompt, sent as `client_id` (see {@link V1Client.submit}). */
  clientId?: string;
  signal?: AbortSignal;
}

/** An accepted prompt. */
export interface V1Submission {
  promptId: string;
  /** The queue number the engine gave, when it did. */
  number: number | undefined;
  /** Errors of some nodes of an otherwise accepted prompt (the engine's `node_errors`, in v2's shape). */
  nodeErrors: NodeError[];
  requestId: string | undefined;
}

/** The outputs of a job as an endpoint confirmed them. */
export interface V1Outputs {
  /** The final files (`type` `output`) as outputs of the model. */
  outputs: JobOutput[];
  /** Which endpoint answered: `jobs` (`GET /api/jobs/{id}`) or `history` (`GET /api/history_v2/{id}`). */
  source: 'jobs' | 'history';
  /** The engine's failure, when the answer had one. */
  failure?: V1Failure;
}

/** One downloaded output. */
export interface V1DownloadedOutput extends DownloadResult {
  output: JobOutput;
}

/** A client of one v1 server (one base URL and API key). Close it when done. */
export class V1Client {
  readonly http: V1Transport;
  readonly clock: Clock;
  readonly random: () => number;
  private readonly apiKey: string | undefined;
  private readonly maxObjectInfoBytes: number;
  private readonly maxSocketMessageBytes: number | undefined;
  private readonly userAgent: string | undefined;

  /** @throws InputError `bad_base_url`. */
  constructor(options: V1ClientOptions) {
    this.http = new V1Transport(options);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.apiKey = options.apiKey || undefined;
    this.maxObjectInfoBytes = options.maxObjectInfoBytes ?? DEFAULT_MAX_OBJECT_INFO_BYTES;
    this.maxSocketMessageBytes = options.maxSocketMessageBytes;
    this.userAgent = options.userAgent;
  }

  /** A read, retried as retry.ts says for reads (429 after Retry-After, 5xx and network failures with backoff). */
  private read<T>(
    operation: () => Promise<T>,
    options: { signal?: AbortSignal; onRetry?: RetryOptions['onRetry'] } = {},
  ): Promise<T> {
    return withRetry('read', operation, { clock: this.clock, signal: options.signal, onRetry: options.onRetry });
  }

  /**
   * `GET /api/object_info` (Cloud API v1 (deprecated), Endpoints): the node definitions map, read up to
   * `maxObjectInfoBytes`. With `classType`: `GET /api/object_info/{class}` where the server serves it (the engine
   * does), else (a 404, 405 or 501, or a 2xx that is not JSON: a web front end's page for an unknown route) the whole
   * map filtered to that class, so one class costs one small read where the server allows it. The map holds at most
   * that class; empty when unknown. Values that are not objects are dropped (tolerant reading).
   * @throws ResponseTooLargeError (`response_too_large`) past the cap; ApiErrors; network errors.
   */
  async objectInfo(classType?: string, options: { signal?: AbortSignal } = {}): Promise<ObjectInfo> {
    if (classType !== undefined) {
      try {
        const one = await this.read(
          () =>
            readObjectInfo(
              this.http,
              `/api/object_info/${encodeURIComponent(classType)}`,
              this.maxObjectInfoBytes,
              options.signal,
            ),
          options,
        );
        return Object.prototype.hasOwnProperty.call(one, classType) ? { [classType]: one[classType] } : {};
      } catch (err) {
        if (!perClassNotServed(err)) throw err;
      }
    }
    const all = await this.read(
      () => readObjectInfo(this.http, '/api/object_info', this.maxObjectInfoBytes, options.signal),
      options,
    );
    if (classType === undefined) return all;
    return Object.prototype.hasOwnProperty.call(all, classType) ? { [classType]: all[classType] } : {};
  }

  /**
   * `POST /api/upload/image` (Cloud API v1 (deprecated), Endpoints): a multipart form from the engine's form encoder
   * (the boundary set by it, never a hand-set Content-Type: "Authentication" 1) with `type`, `overwrite`
   * (`true`/`false`) and the file as `image`, streamed from disk.
   * @returns `{name, subfolder, type?}` (zod-checked).
   * @throws InputError `unreadable` / `not_a_file` before any request; ApiErrors (the cloud answers 400 past its limits:
   *   Cloud API v1 (deprecated), Limits, not shown there; public sources: 50 MB, 16384 px a side, 64 megapixels);
   *   network errors.
   */
  async uploadImage(file: string, options: UploadImageOptions = {}): Promise<UploadResult> {
    const form = this.http.formData();
    form.append('type', options.type ?? 'input');
    form.append('overwrite', options.overwrite ? 'true' : 'false');
    form.append('image', await fileBlob(file), path.basename(file));
    return this.postForm('/api/upload/image', form, options.signal);
  }

  /**
   * `POST /api/upload/mask` (Cloud API v1 (deprecated), Endpoints): the mask as `image`, `type`, `subfolder` (accepted
   * and ignored: sent empty) and `original_ref`, the original image's file reference as a JSON string.
   * @param originalRef the original image (e.g. an upload's `{name, subfolder}` as `{filename, subfolder, type: 'input'}`)
   * @throws as {@link uploadImage}.
   */
  async uploadMask(
    file: string,
    originalRef: FileRef,
    options: { type?: 'input' | 'temp'; signal?: AbortSignal } = {},
  ): Promise<UploadResult> {
    const form = this.http.formData();
    form.append('type', options.type ?? 'input');
    form.append('subfolder', '');
    form.append(
      'original_ref',
      JSON.stringify({
        filename: originalRef.filename,
        subfolder: originalRef.subfolder ?? '',
        type: originalRef.type ?? 'input',
      }),
    );
    form.append('image', await fileBlob(file), path.basename(file));
    return this.postForm('/api/upload/mask', form, options.signal);
  }

  private async postForm(target: string, form: FormData, signal?: AbortSignal): Promise<UploadResult> {
    // An upload may take long: the timeout covers only the wait for the answer once the body is sent (as v2's).
    const res = await this.http.json('POST', target, UploadResultSchema, { body: form, signal, timeoutMs: 3_600_000 });
    return res.data;
  }

  /**
   * `POST /api/prompt` (Cloud API v1 (deprecated), Endpoints, rule 1): `{prompt, extra_data?}`; `extra_data` only
   * with a partner key, as `{api_key_svc_org}`. A top-level `$schema` string is removed first ({@link withoutSchemaKey}),
   * then the API-format check runs. `client_id` is sent when `clientId` is given: the local engine sends a prompt's
   * events only to that client; the cloud ignores it (rule 3). Never retried: v1 has no idempotency key, so a
   * submission whose answer was lost may have created a job.
   * @throws InputError (`workflow_format_ui`, `not_api_format`) before any request; {@link V1PromptError} (code
   *   `invalid_workflow`, `nodeErrors`) when the answer carries `error` instead of `prompt_id` ("Errors" 2), whatever
   *   its status; other ApiErrors; ResponseShapeError for a 2xx with neither `prompt_id` nor `error`; network errors.
   */
  async submit(workflow: unknown, options: V1SubmitOptions = {}): Promise<V1Submission> {
    const prompt = withoutSchemaKey(workflow);
    assertApiWorkflow(prompt);
    const body: { prompt: ApiWorkflow; client_id?: string; extra_data?: { api_key_svc_org: string } } = { prompt };
    if (options.clientId) body.client_id = options.clientId;
    if (options.partnerKey) body.extra_data = { api_key_svc_org: options.partnerKey };
    const res = await this.http.json('POST', '/api/prompt', PromptAnswerSchema, { json: body, signal: options.signal });
    const where = `POST ${this.http.redact(res.url)}`;
    const refused = promptErrorOf(res.data, res.status, { requestId: res.requestId, request: where });
    if (refused) throw refused;
    if (!res.data.prompt_id) {
      throw new ResponseShapeError(
        `${where} answered ${res.status} with neither a prompt_id nor an error`,
        { requestId: res.requestId, request: where },
        { status: res.status, body: res.data },
      );
    }
    return {
      promptId: res.data.prompt_id,
      number: res.data.number,
      nodeErrors: parseNodeErrors(res.data.node_errors),
      requestId: res.requestId,
    };
  }

  /**
   * `GET /api/job/{prompt_id}/status` (Cloud API v1 (deprecated), Endpoints), retried as a read.
   * @returns the answer (`status`, and `error_message` where given) with its URL and request id.
   * @throws NotFoundError (any 404); other ApiErrors after the retries; network errors.
   */
  async status(
    promptId: string,
    options: { signal?: AbortSignal; onRetry?: RetryOptions['onRetry'] } = {},
  ): Promise<StatusAnswer & { source: URL; requestId: string | undefined }> {
    const res = await this.read(
      () =>
        this.http.json('GET', `/api/job/${encodeURIComponent(promptId)}/status`, StatusAnswerSchema, {
          signal: options.signal,
        }),
      options,
    );
    return { ...res.data, source: res.url, requestId: res.requestId };
  }

  /**
   * The outputs of a job, confirmed at its end (the socket's `executed` events can be missed):
   * `GET /api/jobs/{prompt_id}` (public reference, `outputs` keyed by node id), and where that answers 404,
   * `GET /api/history_v2/{prompt_id}` (`{prompt_id: {outputs, status}}`). Only final files (`type` `output`) are
   * outputs; previews (`temp`) are not.
   * @returns undefined when both answer 404 (the caller keeps what the socket's `executed` events said).
   * @throws other ApiErrors after the retries; network errors.
   */
  async outputs(
    promptId: string,
    options: { signal?: AbortSignal; onRetry?: RetryOptions['onRetry'] } = {},
  ): Promise<V1Outputs | undefined> {
    const id = encodeURIComponent(promptId);
    try {
      const res = await this.read(
        () => this.http.json('GET', `/api/jobs/${id}`, JobDetailSchema, { signal: options.signal }),
        options,
      );
      return {
        outputs: this.jobOutputs(filesOfOutputs(res.data.outputs)),
        source: 'jobs',
        failure: failureOf(res.data.execution_error),
      };
    } catch (err) {
      if (!NotFoundError.is(err)) throw err;
    }
    try {
      const res = await this.read(
        () => this.http.json('GET', `/api/history_v2/${id}`, HistorySchema, { signal: options.signal }),
        options,
      );
      const entry = res.data[promptId];
      const outputs = isPlainObject(entry) ? entry.outputs : undefined;
      return { outputs: this.jobOutputs(filesOfOutputs(outputs)), source: 'history' };
    } catch (err) {
      if (NotFoundError.is(err)) return undefined;
      throw err;
    }
  }

  /**
   * A job as it stands now, in the model (mapping.ts): its status from `GET /api/job/{id}/status`, and, once terminal,
   * its confirmed outputs ({@link outputs}; none when both endpoints answer 404). For `status <id>`.
   * @throws as {@link status} and {@link outputs}.
   */
  async job(
    promptId: string,
    options: { signal?: AbortSignal; onRetry?: RetryOptions['onRetry'] } = {},
  ): Promise<JobAnswer> {
    const answer = await this.status(promptId, options);
    const confirmed = isV1TerminalStatus(answer.status) ? await this.outputs(promptId, options) : undefined;
    return answerOfV1({
      promptId,
      v1Status: answer.status,
      createdAt: answer.created_at,
      updatedAt: answer.updated_at,
      outputs: confirmed?.outputs ?? [],
      failure: confirmed?.failure,
      errorMessage: answer.error_message,
      requestId: answer.requestId,
    });
  }

  /** The final files among `files`, as outputs of the model whose `url` is their `/api/view` URL. */
  jobOutputs(files: NodeFile[]): JobOutput[] {
    return files.filter(isFinalOutput).map((f) => jobOutputOf(f, this.viewUrl(f.ref)));
  }

  /**
   * `GET /api/view?filename=&subfolder=&type=` of a file (Cloud API v1 (deprecated), Endpoints), under the base URL.
   */
  viewUrl(ref: FileRef): URL {
    const url = this.http.url('/api/view');
    url.searchParams.set('filename', ref.filename);
    url.searchParams.set('subfolder', ref.subfolder ?? '');
    url.searchParams.set('type', ref.type || 'output');
    return url;
  }

  /**
   * Downloads every output of a v1 job into `dir` through `/api/view`: its 302 is followed with NO credential header
   * (Cloud API v1 (deprecated), "Endpoints" rule 2), to a hidden partial file renamed when complete, the name from the
   * server sanitized and checked to land inside the folder, the first free name taken (../http/download.ts).
   * @throws InputError `unsafe_url` for an output without a `/api/view` URL of this server, `unsafe_path`; as
   *   download.downloadIntoFolder.
   */
  async downloadOutputs(
    job: Pick<Job, 'id' | 'outputs'>,
    dir: string,
    options: Omit<DownloadOptions, 'overwrite' | 'expectedHash'> = {},
  ): Promise<V1DownloadedOutput[]> {
    const files: V1DownloadedOutput[] = [];
    for (const output of job.outputs) {
      const url = output.url ? new URL(output.url) : undefined;
      // Only a `/api/view` URL under our own base is fetched (with the key); an output item from elsewhere is refused.
      if (!url || !this.http.isOwnOrigin(url))
        throw new InputError('unsafe_url', `output ${output.id} has no /api/view URL of ${this.http.baseUrl}`);
      const result = await downloadIntoFolder(
        this.http,
        url,
        dir,
        (disposition) => safeFileName(output.name, safeFileName(disposition, output.id)),
        {
          ...options,
          resumeKey: `v1-output:${job.id}:${output.id}`,
        },
      );
      files.push({ ...result, output });
    }
    return files;
  }

  /**
   * Cancels a job that has not started: `POST /api/queue` `{delete: [prompt_id]}`. The document does not show cancel
   * ("Endpoints" rule 5: queue is "not shown"); this follows the public OpenAPI (`QueueManageRequest`), which says it
   * affects pending jobs only. A running job is stopped with {@link interrupt}.
   * @returns the ids the server says it deleted (empty when it did not say).
   * @throws ApiErrors; network errors.
   */
  async cancel(promptId: string, options: { signal?: AbortSignal } = {}): Promise<string[]> {
    const res = await this.http.json('POST', '/api/queue', JsonObjectSchema, {
      json: { delete: [promptId] },
      signal: options.signal,
    });
    const deleted = res.data.deleted;
    return Array.isArray(deleted) ? deleted.filter((d): d is string => typeof d === 'string') : [];
  }

  /**
   * `POST /api/interrupt` (public OpenAPI; not in the document). CAUTION: on the cloud it stops EVERY running job of
   * the account; the local engine stops only the given prompt when `prompt_id` is sent (it is, when given). The caller
   * must have said so to the person first.
   * @throws ApiErrors; network errors.
   */
  async interrupt(promptId?: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const res = await this.http.send('POST', '/api/interrupt', {
      json: promptId ? { prompt_id: promptId } : {},
      signal: options.signal,
    });
    if (res.status < 200 || res.status >= 300) throw await this.http.failure(res);
    await res.body.dump();
  }

  /**
   * Opens the WebSocket (socket.ts): resolves once it is open and the feature flags are sent.
   * @throws as EngineSocket.open.
   */
  connect(options: { signal?: AbortSignal } = {}): Promise<EngineSocket> {
    return EngineSocket.open({
      baseUrl: this.http.baseUrl,
      apiKey: this.apiKey,
      maxPayloadBytes: this.maxSocketMessageBytes,
      signal: options.signal,
      userAgent: this.userAgent,
    });
  }

  /** Releases connections. */
  close(): Promise<void> {
    return this.http.close();
  }
}
