/**
 * The client of a ComfyUI server's native API (ComfyUI server API (observed)): one method per route it uses, over the
 * core's transport (bounded reads, timeouts, credentials only to their origin, request ids) and retry policy. No key by
 * default; a connection that carries one sends it as `Authorization: Bearer` (the transport's own way). The engine's
 * protocol shared with v1 (its error bodies, socket, file references, object_info) comes from ../engine.
 */
import * as path from 'node:path';
import { fileBlob, filesOfOutputs, isFinalOutput, jobOutputOf, type FileRef, type NodeFile } from '../engine/files';
import { promptErrorOf, v1ErrorFromResponse } from '../engine/errors';
import { DEFAULT_MAX_OBJECT_INFO_BYTES, readObjectInfo, type ObjectInfo } from '../engine/objectInfo';
import { EngineSocket } from '../engine/socket';
import { systemClock, type Clock } from '../http/clock';
import { downloadIntoFolder, type DownloadOptions, type DownloadResult } from '../http/download';
import { ApiError, InputError, NotFoundError, ResponseShapeError } from '../http/errors';
import { withRetry, type RetryOptions } from '../http/retry';
import { Transport, type TransportOptions } from '../http/transport';
import type { Job, JobOutput } from '../jobs/model';
import { safeFileName } from '../util/fileNames';
import type { ApiWorkflow } from '../util/workflow';
import { historyEntryOf, queueEntryOf, type HistoryEntry, type Placement, type QueueEntry } from './mapping';
import { HistorySchema, PromptAnswerSchema, QueueSchema, UploadResultSchema } from './schemas';

/** How to build a {@link ComfyUIClient}: the transport's options plus the clock. */
export interface ComfyUIClientOptions extends TransportOptions {
  clock?: Clock;
  /** Source of jitter in [0, 1) for reconnects. Default Math.random. */
  random?: () => number;
  /** Largest `object_info` body read, bytes. Default 64 MiB. */
  maxObjectInfoBytes?: number;
}

/** Read options: an abort signal, and who is told of a retried read. */
type ReadOptions = { signal?: AbortSignal; onRetry?: RetryOptions['onRetry'] };

/** The server's queue, its entries read ({@link queueEntryOf}; odd ones skipped). */
export interface ComfyUIQueue {
  running: QueueEntry[];
  pending: QueueEntry[];
  requestId: string | undefined;
}

/** The error of a server that does not answer as ComfyUI: one line naming the route, its answer and the fix. */
function notComfyUI(baseUrl: string, route: string, what: string, cause: unknown): InputError {
  const err = new InputError(
    'not_comfyui',
    `${baseUrl} is not a ComfyUI server (${route} answered ${what}); check the base URL (e.g. http://127.0.0.1:8188)`,
  );
  (err as { cause?: unknown }).cause = cause;
  return err;
}

/** A client of one ComfyUI server. Close it when done. */
export class ComfyUIClient {
  readonly http: Transport;
  readonly clock: Clock;
  readonly random: () => number;
  private readonly apiKey: string | undefined;
  private readonly userAgent: string | undefined;
  private readonly maxObjectInfoBytes: number;

  /** @throws InputError `bad_base_url`. */
  constructor(options: ComfyUIClientOptions) {
    // The engine's error bodies (`{error, node_errors}`) are read by the engine's factory: a refusal names its nodes.
    this.http = new Transport({ ...options, errorFactory: options.errorFactory ?? v1ErrorFromResponse });
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.apiKey = options.apiKey || undefined;
    this.userAgent = options.userAgent;
    this.maxObjectInfoBytes = options.maxObjectInfoBytes ?? DEFAULT_MAX_OBJECT_INFO_BYTES;
  }

  /** A read, retried as retry.ts says for reads. */
  private read<T>(operation: () => Promise<T>, options: ReadOptions = {}): Promise<T> {
    return withRetry('read', operation, { clock: this.clock, signal: options.signal, onRetry: options.onRetry });
  }

  /**
   * `POST /prompt {prompt, client_id, prompt_id, extra_data?}` (ComfyUI server API (observed), Submitting): the
   * client-chosen `prompt_id` becomes the job's id, so a lost answer can be looked up. Never retried (no
   * Idempotency-Key). `uiWorkflow` goes as `extra_data.extra_pnginfo.workflow`: the server writes it into each PNG
   * it saves, as it does for its own frontend's submissions.
   * @throws V1PromptError `invalid_workflow` with the node errors (400 `{error, node_errors}`); InputError
   *   `not_comfyui` for a server that answers 404 or a 2xx that is not a prompt answer; the transport's typed errors.
   */
  async submit(
    prompt: ApiWorkflow,
    options: { clientId?: string; promptId: string; uiWorkflow?: unknown; signal?: AbortSignal },
  ): Promise<{ promptId: string; number: number | undefined; requestId: string | undefined }> {
    const body = {
      prompt,
      prompt_id: options.promptId,
      ...(options.clientId ? { client_id: options.clientId } : {}),
      ...(options.uiWorkflow !== undefined ? { extra_data: { extra_pnginfo: { workflow: options.uiWorkflow } } } : {}),
    };
    let res;
    try {
      res = await this.http.json('POST', '/prompt', PromptAnswerSchema, { json: body, signal: options.signal });
    } catch (err) {
      if (NotFoundError.is(err) || (ApiError.is(err) && err.status === 405))
        throw notComfyUI(this.http.baseUrl, 'POST /prompt', `HTTP ${err.status}`, err);
      if (err instanceof ResponseShapeError && !(err instanceof ApiError))
        throw notComfyUI(this.http.baseUrl, 'POST /prompt', 'with a body that is not JSON', err);
      throw err;
    }
    const where = `POST ${this.http.redact(res.url)}`;
    const refused = promptErrorOf(res.data, res.status, { requestId: res.requestId, request: where });
    if (refused) throw refused;
    if (!res.data.prompt_id)
      throw notComfyUI(this.http.baseUrl, 'POST /prompt', `${res.status} without a prompt_id`, undefined);
    return { promptId: res.data.prompt_id, number: res.data.number, requestId: res.requestId };
  }

  /** `GET /queue` (Reading state), retried as a read. @throws the transport's typed errors. */
  async queue(options: ReadOptions = {}): Promise<ComfyUIQueue> {
    const res = await this.read(
      () => this.http.json('GET', '/queue', QueueSchema, { signal: options.signal }),
      options,
    );
    const entries = (items: unknown[]): QueueEntry[] => items.flatMap((i) => queueEntryOf(i) ?? []);
    return {
      running: entries(res.data.queue_running),
      pending: entries(res.data.queue_pending),
      requestId: res.requestId,
    };
  }

  /**
   * `GET /history/{id}` or, without an id, `GET /history?max_items=N` (Reading state), retried as a read: prompt id →
   * raw entry (`{}` when none).
   */
  async history(
    promptId: string | undefined,
    options: ReadOptions & { maxItems?: number } = {},
  ): Promise<{ entries: Record<string, unknown>; requestId: string | undefined }> {
    const target = promptId
      ? `/history/${encodeURIComponent(promptId)}`
      : `/history${options.maxItems ? `?max_items=${options.maxItems}` : ''}`;
    const res = await this.read(
      () => this.http.json('GET', target, HistorySchema, { signal: options.signal }),
      options,
    );
    return { entries: res.data, requestId: res.requestId };
  }

  /**
   * Where prompt `promptId` stands: `/queue` first (running, pending), then `/history/{id}`; neither: `absent`
   * (`canceledHere` as given). The queue is read first so a prompt that ends between the two reads is found in history.
   * @returns the placement, and the request id of the answer that told it.
   */
  async place(
    promptId: string,
    canceledHere: boolean,
    options: ReadOptions = {},
  ): Promise<{ placement: Placement; requestId: string | undefined }> {
    const queue = await this.queue(options);
    if (queue.running.some((e) => e.promptId === promptId))
      return { placement: { where: 'running' }, requestId: queue.requestId };
    const position = queue.pending.findIndex((e) => e.promptId === promptId);
    if (position >= 0) return { placement: { where: 'pending', position }, requestId: queue.requestId };
    const { entries, requestId } = await this.history(promptId, options);
    const history: HistoryEntry | undefined = historyEntryOf(entries[promptId]);
    if (history) return { placement: { where: 'history', history }, requestId };
    return { placement: { where: 'absent', canceledHere }, requestId };
  }

  /** `POST /interrupt {prompt_id}` (Cancelling): stops the prompt only if it is the one running. */
  async interrupt(promptId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.post('/interrupt', { prompt_id: promptId }, options.signal);
  }

  /** `POST /queue {delete: [id]}` (Cancelling): removes a pending prompt. */
  async deletePending(promptId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.post('/queue', { delete: [promptId] }, options.signal);
  }

  /** A POST whose answer is 200 with an empty body (Cancelling). @throws the transport's typed errors. */
  private async post(target: string, json: unknown, signal?: AbortSignal): Promise<void> {
    const res = await this.http.send('POST', target, { json, signal });
    if (res.status < 200 || res.status >= 300) throw await this.http.failure(res);
    await res.body.dump();
  }

  /** `GET /view?filename=&subfolder=&type=` of a file (Files), under the base URL. */
  viewUrl(ref: FileRef): URL {
    const url = this.http.url('/view');
    url.searchParams.set('filename', ref.filename);
    url.searchParams.set('subfolder', ref.subfolder ?? '');
    url.searchParams.set('type', ref.type || 'output');
    return url;
  }

  /** The final files (`type` `output`) among `files`, as outputs of the model whose `url` is their `/view` URL. */
  jobOutputs(files: NodeFile[]): JobOutput[] {
    return files.filter(isFinalOutput).map((f) => jobOutputOf(f, this.viewUrl(f.ref)));
  }

  /** The outputs of a history entry's `outputs` map (node id → node output). */
  outputsOf(outputs: unknown): JobOutput[] {
    return this.jobOutputs(filesOfOutputs(outputs));
  }

  /**
   * Downloads every output of `job` into `dir` through `/view` (200 with the bytes: Files), each to a hidden partial
   * file renamed when complete, under a sanitized free name (../http/download.ts).
   * @throws InputError `unsafe_url` for an output without a `/view` URL of this server; as downloadIntoFolder.
   */
  async downloadOutputs(
    job: Pick<Job, 'id' | 'outputs'>,
    dir: string,
    options: Omit<DownloadOptions, 'overwrite' | 'expectedHash'> = {},
  ): Promise<(DownloadResult & { output: JobOutput })[]> {
    const files: (DownloadResult & { output: JobOutput })[] = [];
    for (const output of job.outputs) {
      const url = output.url ? new URL(output.url) : undefined;
      if (!url || !this.http.isOwnOrigin(url))
        throw new InputError('unsafe_url', `output ${output.id} has no /view URL of ${this.http.baseUrl}`);
      const result = await downloadIntoFolder(
        this.http,
        url,
        dir,
        (disposition) => safeFileName(output.name, safeFileName(disposition, output.id)),
        { ...options, resumeKey: `comfyui-output:${job.id}:${output.id}` },
      );
      files.push({ ...result, output });
    }
    return files;
  }

  /**
   * `POST /upload/image`, or `/upload/mask` with `originalRef` (Files): the file as `image`, `type`, `overwrite`.
   * @throws InputError `unreadable` / `not_a_file` before any request; the transport's typed errors.
   */
  async upload(
    file: string,
    options: { type?: 'input' | 'temp'; overwrite?: boolean; originalRef?: FileRef; signal?: AbortSignal } = {},
  ): Promise<{ name: string; subfolder: string; type?: string }> {
    const form = this.http.formData();
    form.append('type', options.type ?? 'input');
    form.append('overwrite', options.overwrite ? 'true' : 'false');
    if (options.originalRef) form.append('original_ref', JSON.stringify(options.originalRef));
    form.append('image', await fileBlob(file), path.basename(file));
    const target = options.originalRef ? '/upload/mask' : '/upload/image';
    const res = await this.http.json('POST', target, UploadResultSchema, {
      body: form,
      signal: options.signal,
      timeoutMs: 3_600_000,
    });
    return { name: res.data.name, subfolder: res.data.subfolder ?? '', type: res.data.type };
  }

  /** `GET /object_info` or `GET /object_info/{class}` (Routes), retried as a read; `{}` for an unknown class. */
  objectInfo(classType?: string, options: ReadOptions = {}): Promise<ObjectInfo> {
    const target = classType ? `/object_info/${encodeURIComponent(classType)}` : '/object_info';
    return this.read(() => readObjectInfo(this.http, target, this.maxObjectInfoBytes, options.signal), options);
  }

  /** Opens the WebSocket `/ws?clientId=` (engine/socket.ts): resolves once open and the feature flags are sent. */
  connect(options: { signal?: AbortSignal } = {}): Promise<EngineSocket> {
    return EngineSocket.open({
      baseUrl: this.http.baseUrl,
      authorization: this.apiKey ? `Bearer ${this.apiKey}` : undefined,
      signal: options.signal,
      userAgent: this.userAgent,
    });
  }

  /** Releases connections. */
  close(): Promise<void> {
    return this.http.close();
  }
}
