/**
 * The job side of a connection to a ComfyUI server's native API: a {@link JobBackend} (core/jobs) over a
 * {@link ComfyUIClient}, jobs reported in the model (mapping.ts), watched by watch.ts.
 */
import { randomUUID } from 'node:crypto';
import type { EngineSocket } from '../engine/socket';
import { AbortError, ApiError, ConnectionError, InputError, TimeoutError } from '../http/errors';
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
import { OutcomeUnknownError } from '../jobs/unknownOutcome';
import { submissionRecord, type JobRecord, type StateStore } from '../state/stateStore';
import { assertApiWorkflow, withoutSchemaKey, type ApiWorkflow } from '../util/workflow';
import type { ComfyUIClient } from './client';
import { COMFYUI_API, answerOfComfyUI, historyEntryOf, jobOfComfyUI, statusOf, type KnownJob } from './mapping';
import { watchComfyUIJob } from './watch';

/**
 * What a ComfyUI server can do (ComfyUI server API (observed)): it lists its queue and history (every client's
 * prompts); `/interrupt` stops the running prompt; no assets (uploads are engine inputs, outputs files behind `/view`);
 * no Idempotency-Key (a client-chosen `prompt_id` lets reconcile() look a lost answer up instead). `storedWorkflow` is
 * false: the server keeps a prompt only while it is queued or in a history a restart forgets, so it cannot always
 * answer; {@link ComfyUIJobBackend.workflow} answers while it can.
 */
export const COMFYUI_CAPABILITIES: JobCapabilities = Object.freeze({
  list: true,
  cancelRunning: true,
  assets: false,
  storedWorkflow: false,
  idempotentSubmit: false,
});

/** Options of {@link ComfyUIJobBackend}. */
export interface ComfyUIJobBackendOptions {
  /** false: follow jobs by reading `/queue` and `/history` only (tests). Default true. */
  useSocket?: boolean;
  /**
   * The remembered jobs: a prompt this client removed from the queue is recorded `canceled` there, and read back as
   * `canceled` (not `lost`) by any later process, since the server keeps no trace of it (ComfyUI server API
   * (observed), Reading state). Default none: only this backend's own removals are known.
   */
  store?: Pick<StateStore, 'list' | 'recordStatus'>;
  /** How long a watch rides out an outage (ms): watch.ts `outageBudgetMs`. */
  outageBudgetMs?: number;
}

/** What {@link ComfyUIJobBackend.submit} hands to the watch: the socket opened before posting, and the prompt. */
interface Handoff {
  socket: EngineSocket | undefined;
  prompt: ApiWorkflow;
}

/** True when a submission's failure leaves its outcome unheard: sent, and no answer (or a 5xx) came back. */
function outcomeUnheard(err: unknown): boolean {
  if (err instanceof ConnectionError) return err.requestSent;
  return err instanceof TimeoutError || (ApiError.is(err) && err.status >= 500);
}

/**
 * A {@link JobBackend} over `client` (which it owns):
 * - submit: a fresh `prompt_id` written to the store BEFORE the request (`pending` with the id), the socket opened,
 *   then `POST /prompt` once; an answer not heard is resolved by looking the id up (`/queue`, `/history`);
 * - get/watch: `/queue` then `/history/{id}` (mapping.ts); cancel: `/interrupt` when running, `/queue {delete}` when
 *   pending; list: the queue and the history; workflow: the prompt the queue or history keeps.
 */
export class ComfyUIJobBackend implements JobBackend {
  readonly api = COMFYUI_API;
  readonly capabilities = COMFYUI_CAPABILITIES;
  /** Prompts this client removed from the queue: absent afterwards, they are `canceled`, not `lost`. */
  private readonly removed = new Set<string>();
  /** Sockets opened for a submission and not yet taken by its watch: {@link close} closes them (a submit without a
   * watch, e.g. the CLI's `submit` without `--wait`, must not keep the process alive). */
  private readonly untaken = new Set<EngineSocket>();

  constructor(
    private readonly client: ComfyUIClient,
    private readonly options: ComfyUIJobBackendOptions = {},
  ) {}

  get baseUrl(): string {
    return this.client.http.baseUrl;
  }

  private known(): KnownJob {
    return { jobOutputs: (files) => this.client.jobOutputs(files) };
  }

  /**
   * Submits once (see the class comment). Its record's key is `comfyui-<prompt_id>` (never sent).
   * @throws InputError for a workflow that is not API format (nothing sent) or a server that is not ComfyUI;
   *   V1PromptError `invalid_workflow` naming each node and input; OutcomeUnknownError when no answer was heard and the
   *   id is in neither the queue nor the history yet (reconcile() looks it up again); the transport's typed errors.
   */
  async submit(workflow: unknown, options: JobSubmitOptions = {}): Promise<AcceptedJob> {
    const prompt = withoutSchemaKey(workflow);
    assertApiWorkflow(prompt);
    const promptId = randomUUID();
    const recordKey = `comfyui-${promptId}`;
    const store = options.store;
    const record = store
      ? await submissionRecord(
          workflow,
          {
            idempotencyKey: recordKey,
            baseUrl: this.baseUrl,
            state: 'pending',
            jobId: promptId,
            workflowFile: options.workflowFile,
            client: options.client,
            batchId: options.batchId,
          },
          this.client.clock.now(),
        )
      : undefined;
    if (store && record) await store.put(record);
    let socket: EngineSocket | undefined;
    if (this.options.useSocket !== false)
      socket = await this.client.connect({ signal: options.signal }).catch(() => undefined);
    // Once accepted, a record that cannot be written does not undo the job: onUnremembered is told.
    // A status goes through the store's one writer of what a server said (StateStore.recordStatus).
    const remember = (patch: Partial<JobRecord>, status?: string): Promise<unknown> =>
      store
        ? store
            .update(recordKey, patch)
            .then(() => (status !== undefined ? store.recordStatus(recordKey, { status }) : undefined))
            .catch((err: unknown) => options.onUnremembered?.(err))
        : Promise.resolve();
    let sent;
    try {
      sent = await this.client.submit(prompt, {
        promptId,
        clientId: socket?.clientId,
        uiWorkflow: options.uiWorkflow,
        signal: options.signal,
      });
    } catch (err) {
      if (!outcomeUnheard(err)) socket?.close();
      if (AbortError.is(err) && err.requestSent) {
        // Aborted once sent: a job may exist; the record stays for reconcile() to look its prompt_id up.
        await remember({ state: 'outcome_unknown', sentAt: record?.submittedAt });
        throw err;
      }
      if (!outcomeUnheard(err)) {
        await store?.remove(recordKey);
        throw err;
      }
      return this.resolveUnheard(promptId, recordKey, { socket, prompt }, err, options, remember, record);
    }
    await remember({ state: 'created' }, 'queued');
    const job = jobOfComfyUI(promptId, { where: 'pending', position: 0 }, this.known());
    if (socket) this.untaken.add(socket);
    return { job, requestId: sent.requestId, recordKey, handoff: { socket, prompt } satisfies Handoff };
  }

  /**
   * A submission whose answer was not heard: its record marked `outcome_unknown`, then its prompt_id looked up in
   * `/queue` and `/history`. Found: adopted. Not found: OutcomeUnknownError (never sent again: reconcile() looks again).
   */
  private async resolveUnheard(
    promptId: string,
    recordKey: string,
    handoff: Handoff,
    err: unknown,
    options: JobSubmitOptions,
    remember: (patch: Partial<JobRecord>, status?: string) => Promise<unknown>,
    record: JobRecord | undefined,
  ): Promise<AcceptedJob> {
    await remember({ state: 'outcome_unknown', sentAt: record?.submittedAt });
    options.onResolution?.({ type: 'unknown', key: recordKey, error: err });
    const found = await this.client.place(promptId, false, { signal: options.signal }).catch(() => undefined);
    if (!found || found.placement.where === 'absent') {
      handoff.socket?.close();
      throw new OutcomeUnknownError(record ?? unrecorded(recordKey, this.baseUrl, this.client.clock.now()), err);
    }
    const job = jobOfComfyUI(promptId, found.placement, this.known());
    await remember({ state: 'created' }, job.status);
    options.onResolution?.({ type: 'adopted', key: recordKey, jobId: promptId });
    // The socket whose clientId the prompt was posted with goes to the watch: the server sends it the prompt's messages.
    if (handoff.socket) this.untaken.add(handoff.socket);
    return { job, requestId: found.requestId, recordKey, adopted: true, handoff };
  }

  /** True when this client removed prompt `jobId` from the queue: this backend did, or its record says `canceled`. */
  private async removedHere(jobId: string): Promise<boolean> {
    if (this.removed.has(jobId)) return true;
    const records = (await this.options.store?.list().catch(() => [])) ?? [];
    const canceled = records.some(
      (r) => r.baseUrl === this.baseUrl && r.jobId === jobId && r.lastStatus === 'canceled',
    );
    if (canceled) this.removed.add(jobId);
    return canceled;
  }

  /** {@link ComfyUIClient.place}, an absent prompt `canceled` when this client removed it ({@link removedHere}). */
  private async place(jobId: string, signal?: AbortSignal): ReturnType<ComfyUIClient['place']> {
    const read = await this.client.place(jobId, false, { signal });
    if (read.placement.where === 'absent') read.placement.canceledHere = await this.removedHere(jobId);
    return read;
  }

  async get(jobId: string, signal?: AbortSignal): Promise<JobAnswer> {
    const read = await this.place(jobId, signal);
    return answerOfComfyUI(jobId, read.placement, this.known(), read.requestId);
  }

  watch(start: string | AcceptedJob, options: JobWatchOptions = {}): Promise<JobAnswer> {
    const jobId = typeof start === 'string' ? start : start.job.id;
    const handoff = typeof start === 'string' ? undefined : (start.handoff as Handoff | undefined);
    if (handoff?.socket) this.untaken.delete(handoff.socket);
    return watchComfyUIJob(this.client, jobId, {
      socket: handoff?.socket,
      workflow: handoff?.prompt,
      useSocket: this.options.useSocket,
      canceledHere: () => this.removedHere(jobId),
      outageBudgetMs: this.options.outageBudgetMs,
      signal: options.signal,
      onUpdate: options.onUpdate,
      onAnswer: options.onAnswer,
    });
  }

  /**
   * `POST /interrupt {prompt_id}` when it runs, `POST /queue {delete: [id]}` when pending (Cancelling); then the job
   * as it stands. A prompt removed from the queue is remembered as canceled by this client. An interrupt takes effect
   * between nodes, and the server has no state for that wait: a job interrupted here that still reads `running` is
   * answered `canceling` (the job model's word for a cancel requested and not yet done), never `running`, so no face
   * says the cancel failed.
   */
  async cancel(jobId: string, signal?: AbortSignal): Promise<JobAnswer> {
    const before = await this.place(jobId, signal);
    const interrupted = before.placement.where === 'running';
    if (interrupted) await this.client.interrupt(jobId, { signal });
    if (before.placement.where === 'pending') {
      this.removed.add(jobId);
      await this.client.deletePending(jobId, { signal });
      // The server forgets it at once: its record is what says it was canceled, to every later reader.
      await this.options.store
        ?.recordStatus({ baseUrl: this.baseUrl, jobId }, { status: 'canceled' })
        .catch(() => undefined);
    }
    const after = await this.get(jobId, signal);
    return interrupted && after.job.status === 'running'
      ? { ...after, job: { ...after.job, status: 'canceling' } }
      : after;
  }

  async downloadOutputs(
    job: Job,
    dir: string,
    options: {
      signal?: AbortSignal;
      onProgress?: (receivedBytes: number, totalBytes: number | undefined) => void;
    } = {},
  ): Promise<SavedOutput[]> {
    const files = await this.client.downloadOutputs(job, dir, options);
    return files.map((f) => ({ output: f.output, path: f.path, bytes: f.bytes }));
  }

  /** The server's queue (running, then pending) and its newest history entries, at most `limit` (default 50). */
  async list(options: { limit?: number; signal?: AbortSignal } = {}): Promise<JobList> {
    const limit = options.limit ?? 50;
    const queue = await this.client.queue({ signal: options.signal });
    const { entries } = await this.client.history(undefined, { signal: options.signal, maxItems: limit + 1 });
    const jobs: Job[] = [
      ...queue.running.map((e) => jobOfComfyUI(e.promptId, { where: 'running' }, this.known())),
      ...queue.pending.map((e, position) => jobOfComfyUI(e.promptId, { where: 'pending', position }, this.known())),
    ];
    // `/history` lists the oldest first: the newest first here.
    for (const [id, value] of Object.entries(entries).reverse()) {
      const history = historyEntryOf(value);
      if (history) jobs.push(jobOfComfyUI(id, { where: 'history', history }, this.known()));
    }
    return { jobs: jobs.slice(0, limit), truncated: jobs.length > limit };
  }

  /**
   * The prompt the server keeps for a job (its queue entry or history entry's `prompt`), format `api`.
   * @throws InputError `workflow_gone` when neither lists it (a restart forgets both).
   */
  async workflow(jobId: string, signal?: AbortSignal): Promise<StoredWorkflow> {
    const queue = await this.client.queue({ signal });
    const queued = [...queue.running, ...queue.pending].find((e) => e.promptId === jobId);
    if (queued?.prompt) return { workflow: queued.prompt, format: 'api', requestId: queue.requestId };
    const { entries, requestId } = await this.client.history(jobId, { signal });
    const prompt = historyEntryOf(entries[jobId])?.entry?.prompt;
    if (prompt) return { workflow: prompt, format: 'api', requestId };
    throw new InputError(
      'workflow_gone',
      `the server keeps no workflow for job ${jobId}: it is in neither its queue nor its history`,
    );
  }

  /**
   * Looks up, by its prompt id, each remembered submission of this server whose outcome was not heard (`pending`
   * whose submitter is gone, or `outcome_unknown`): found in the queue or history, it is adopted (`created`); found in
   * neither, it stays as it was and is reported `unknown`.
   */
  async reconcile(store: StateStore, signal?: AbortSignal): Promise<ReconcileReport[]> {
    const reports: ReconcileReport[] = [];
    for (const record of await store.list()) {
      if (record.baseUrl !== this.baseUrl || !record.jobId) continue;
      if (record.state !== 'outcome_unknown' && record.state !== 'pending') continue;
      const read = await this.client.place(record.jobId, false, { signal });
      if (read.placement.where === 'absent') {
        reports.push({
          record,
          outcome: 'unknown',
          message: `job ${record.jobId} is in neither the queue nor the history of ${this.baseUrl}: it was not made, or the server restarted`,
        });
        continue;
      }
      const status = statusOf(read.placement);
      await store.update(record.idempotencyKey, { state: 'created' });
      const updated = (await store.recordStatus(record.idempotencyKey, { status }))[0] ?? record;
      reports.push({ record: updated, outcome: 'adopted', message: `job ${record.jobId} found (${status})` });
    }
    return reports;
  }

  nodeDefinitions(classType?: string, signal?: AbortSignal): Promise<NodeClassDefinitions> {
    return this.client.objectInfo(classType, { signal });
  }

  /** `POST /upload/image`, or with `maskFor` `POST /upload/mask` (Files): an input a LoadImage node names. */
  uploadInput(file: string, options: InputUploadOptions = {}): Promise<UploadedInput> {
    const m = options.maskFor;
    return this.client.upload(file, {
      type: options.type,
      overwrite: options.overwrite,
      signal: options.signal,
      originalRef: m ? { filename: m.filename, subfolder: m.subfolder ?? '', type: m.type ?? 'input' } : undefined,
    });
  }

  close(): Promise<void> {
    for (const socket of this.untaken) socket.close();
    this.untaken.clear();
    return this.client.close();
  }
}

/** The record an unremembered submission's OutcomeUnknownError names (no store: nothing was written). */
function unrecorded(key: string, baseUrl: string, nowMs: number) {
  return {
    idempotencyKey: key,
    baseUrl,
    state: 'outcome_unknown' as const,
    submittedAt: new Date(nowMs).toISOString(),
  };
}
