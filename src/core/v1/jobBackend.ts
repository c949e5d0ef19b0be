/**
 * The job side of a connection that speaks the deprecated v1 API: a {@link JobBackend} (core/jobs) over a
 * {@link V1Client}, jobs reported in the model (mapping.ts), so the job service and its views need no v1 knowledge:
 * they read its {@link V1_CAPABILITIES}.
 */
import { randomUUID } from 'node:crypto';
import { InputError } from '../http/errors';
import type {
  AcceptedJob,
  InputUploadOptions,
  JobAnswer,
  JobBackend,
  JobCapabilities,
  JobList,
  JobSubmitOptions,
  JobWatchOptions,
  NodeClassDefinitions,
  ReconcileReport,
  SavedOutput,
  StoredWorkflow,
  UploadedInput,
} from '../jobs/backend';
import type { Job } from '../jobs/model';
import { submissionRecord, type JobRecord, type StateStore } from '../state/stateStore';
import type { V1Client } from './client';
import { V1_API, answerOfV1 } from './mapping';
import { postWithSocket, watchV1Job, type PostedPrompt } from './watch';

/**
 * What v1 can do (Cloud API v1 (deprecated)): no job listing, no assets (uploads are engine inputs, outputs files
 * behind `/api/view`), no stored workflow per job (its history is not a contract), no Idempotency-Key; a
 * running job cannot be canceled alone (`POST /api/queue` deletes a job not yet started; on the cloud `/api/interrupt`
 * stops every running job of the account).
 */
export const V1_CAPABILITIES: JobCapabilities = Object.freeze({
  list: false,
  cancelRunning: false,
  assets: false,
  storedWorkflow: false,
  idempotentSubmit: false,
});

/**
 * What a face says once when it uses a v1 connection (Cloud API v1 (deprecated), Versioning: deprecated in favor of
 * v2); each face adds its own way to move (the CLI: drop `--api v1`).
 */
export const V1_DEPRECATION_NOTICE = 'the v1 API is deprecated: the same jobs run on the v2 Job and Asset API';

/** Options of {@link V1JobBackend}. */
export interface V1JobBackendOptions {
  /** The partner-service key sent as `extra_data.api_key_svc_org` with every prompt ("Endpoints" rule 1). */
  partnerKey?: string;
  /** false: follow jobs by polling only (tests). Default true. */
  useSocket?: boolean;
}

/** What {@link V1JobBackend.submit} hands to the watch of the job it posted. */
interface Handoff {
  posted: PostedPrompt;
}

/** An operation v1 does not offer, as the error a caller tells by its code (`not_supported`). */
function notSupported(what: string): InputError {
  return new InputError('not_supported', `${what}: the v1 API does not offer it`);
}

/** A key for a v1 submission's record: the API has no Idempotency-Key, so a local one (never sent) names it. */
function localRecordKey(): string {
  return `v1-${randomUUID()}`;
}

/** Options of {@link rememberPrompt}. */
export interface RememberPromptOptions {
  /** The record's key; default a new local one (`v1-<uuid>`, never sent: v1 has no Idempotency-Key). */
  key?: string;
  workflowFile?: string;
  /** Who submitted it. Default `core`. */
  client?: JobRecord['client'];
  /** The job's status as first known. */
  lastStatus?: string;
}

/**
 * Remembers a prompt the server accepted, as any submission is remembered in the state store shared by the CLI and the
 * extension: `created` with the prompt id, the workflow's hash (of the workflow as given, so its file still hashes to
 * it) and SaveImage prefix, when and by whom. The one way v1 submissions are remembered, by the job backend and by
 * the CLI's `--api v1 submit`. Written after the prompt was accepted: v1 has no key to write before sending.
 * @returns the record written. @throws the store's errors (`state_locked`, file system errors).
 */
export async function rememberPrompt(
  store: StateStore,
  client: V1Client,
  workflow: unknown,
  promptId: string,
  options: RememberPromptOptions = {},
): Promise<JobRecord> {
  const record = await submissionRecord(
    workflow,
    {
      idempotencyKey: options.key ?? localRecordKey(),
      baseUrl: client.http.baseUrl,
      state: 'created',
      jobId: promptId,
      workflowFile: options.workflowFile,
      client: options.client,
      lastStatus: options.lastStatus,
    },
    client.clock.now(),
  );
  await store.put(record);
  return record;
}

/**
 * A {@link JobBackend} over `client` (which it owns: `close()` closes it).
 * - submit: the socket opened BEFORE the prompt is posted ({@link postWithSocket}), handed to the job's watch; the
 *   prompt posted once (no Idempotency-Key: a retry could run it twice); with a store, the accepted job remembered;
 * - watch: {@link watchV1Job} (prompt_id filtering, status polling alongside, bounded reconnects; the final state from
 *   the status endpoint), each status answer passed on as the server's word;
 * - get: the status endpoint, outputs confirmed once terminal (V1Client.job);
 * - cancel: `POST /api/queue {delete}` (a job not yet started), then the job as it stands; a running job goes on;
 * - downloadOutputs: through `/api/view`, its 302 followed without the key (V1Client.downloadOutputs).
 */
export class V1JobBackend implements JobBackend {
  readonly api = V1_API;
  readonly capabilities = V1_CAPABILITIES;
  /** Cloud API v1 (deprecated), Versioning: deprecated in favor of v2, said once by a face that uses it. */
  readonly notice = V1_DEPRECATION_NOTICE;
  /** Cloud API v1 (deprecated), Endpoints, rule 1: `extra_data.api_key_svc_org` with every prompt. */
  readonly acceptsPartnerKey = true;

  constructor(
    private readonly client: V1Client,
    private readonly options: V1JobBackendOptions = {},
  ) {}

  get baseUrl(): string {
    return this.client.http.baseUrl;
  }

  /**
   * Opens the WebSocket, THEN posts the prompt (`$schema` removed; the partner key in `extra_data` when configured).
   * With a store, the accepted job is then remembered like any submission: Cloud API v1 has no Idempotency-Key, so a
   * local key, never sent, names the record (`created` with the prompt id), and the Jobs view and the CLI's `status`
   * find it. A record that cannot be written does not undo the accepted prompt: `onUnremembered` is told, the job is
   * returned.
   * @throws InputError for a workflow that is not API format (nothing sent); V1PromptError `invalid_workflow` with
   *   the engine's node errors; the transport's typed errors.
   */
  async submit(workflow: unknown, options: JobSubmitOptions = {}): Promise<AcceptedJob> {
    const posted = await postWithSocket(this.client, workflow, {
      signal: options.signal,
      partnerKey: this.options.partnerKey,
      useSocket: this.options.useSocket,
    });
    const { promptId, requestId } = posted.submission;
    // Accepted and queued: the status endpoint says more at the watch's first poll.
    const { job } = answerOfV1({ promptId, v1Status: 'pending', outputs: [], requestId });
    const handoff: Handoff = { posted };
    const recordKey = localRecordKey();
    if (options.store) {
      await rememberPrompt(options.store, this.client, workflow, job.id, {
        key: recordKey,
        workflowFile: options.workflowFile,
        client: options.client,
        lastStatus: job.status,
      }).catch((err: unknown) => options.onUnremembered?.(err));
    }
    return { job, requestId, recordKey, handoff };
  }

  async get(jobId: string, signal?: AbortSignal): Promise<JobAnswer> {
    return this.client.job(jobId, { signal });
  }

  watch(start: string | AcceptedJob, options: JobWatchOptions = {}): Promise<JobAnswer> {
    const jobId = typeof start === 'string' ? start : start.job.id;
    const posted = typeof start === 'string' ? undefined : (start.handoff as Handoff | undefined)?.posted;
    if (posted?.noSocketReason) options.onUpdate?.({ type: 'mode', mode: 'polling', reason: posted.noSocketReason });
    return watchV1Job(this.client, jobId, {
      socket: posted?.socket,
      workflow: posted?.prompt,
      useSocket: this.options.useSocket,
      signal: options.signal,
      onUpdate: options.onUpdate,
      onAnswer: options.onAnswer,
    });
  }

  async cancel(jobId: string, signal?: AbortSignal): Promise<JobAnswer> {
    await this.client.cancel(jobId, { signal });
    return this.client.job(jobId, { signal });
  }

  async downloadOutputs(
    job: Job,
    dir: string,
    options: {
      signal?: AbortSignal;
      onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
    } = {},
  ): Promise<SavedOutput[]> {
    const files = await this.client.downloadOutputs(job, dir, {
      signal: options.signal,
      onProgress: options.onProgress,
    });
    return files.map((f) => ({ output: f.output, path: f.path, bytes: f.bytes }));
  }

  /** @throws InputError `not_supported` (nothing sent): v1 lists no jobs. */
  list(_options?: { limit?: number; signal?: AbortSignal }): Promise<JobList> {
    return Promise.reject(notSupported('listing jobs'));
  }

  /** @throws InputError `not_supported` (nothing sent): v1 keeps no workflow per job. */
  workflow(_jobId: string, _signal?: AbortSignal): Promise<StoredWorkflow> {
    return Promise.reject(notSupported("a job's stored workflow"));
  }

  /** Nothing to reconcile: a record is written only once its prompt was accepted, with its id. */
  reconcile(_store: StateStore, _signal?: AbortSignal): Promise<ReconcileReport[]> {
    return Promise.resolve([]);
  }

  /** `GET /api/object_info` (Cloud API v1 (deprecated), Endpoints): V1Client.objectInfo. */
  nodeDefinitions(classType?: string, signal?: AbortSignal): Promise<NodeClassDefinitions> {
    return this.client.objectInfo(classType, { signal });
  }

  /**
   * `POST /api/upload/image`, or with `maskFor` `POST /api/upload/mask` (Cloud API v1 (deprecated), Endpoints): the file
   * becomes an input of the server that a LoadImage node names.
   */
  async uploadInput(file: string, options: InputUploadOptions = {}): Promise<UploadedInput> {
    const { type, signal } = options;
    const up = options.maskFor
      ? await this.client.uploadMask(
          file,
          {
            filename: options.maskFor.filename,
            subfolder: options.maskFor.subfolder ?? '',
            type: options.maskFor.type ?? 'input',
          },
          { type, signal },
        )
      : await this.client.uploadImage(file, { type, overwrite: options.overwrite, signal });
    return { name: up.name, subfolder: up.subfolder ?? '', type: up.type };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
