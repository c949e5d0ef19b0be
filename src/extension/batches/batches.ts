import * as vscode from 'vscode';
import { AbortError, describeError, isEndedStatus, type ClientLease } from '../../core';
import { assetReference } from '../../core/util';
import {
  batchStatus,
  batchesToResume,
  cancelBatch,
  describeCounts,
  describeResolution,
  runBatch,
  type BatchEvent,
  type BatchRunResult,
  type BatchStatus,
} from '../../core/batch';
import {
  outputRecord,
  savedOutputRecord,
  uploadRecord,
  type AssetRecord,
  type BatchRecord,
  type BatchStore,
} from '../../core/state';
import type { ExtensionConnection } from '../platform/clients';
import type { Config } from '../platform/config';
import { Commands, Settings } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';
import type { OutputLocations } from '../platform/outputs';

/** How a run of a batch in this window ended: its result, or the error that stopped it. */
export interface BatchRunEnd {
  batchId: string;
  result?: BatchRunResult;
  /** Why the run stopped before every variation had an outcome (an AbortError when the window went away). */
  error?: unknown;
}

/** What {@link BatchService} needs, handed over by `activate()`. */
export interface BatchServiceOptions {
  /** The job service: its leases give the backend a batch runs on; its store holds the variations' job records. */
  jobs: JobServiceHost;
  /** The batch records (the same state folder as the job records, shared with the CLI). */
  batches: BatchStore;
  /** The output-folder rule of single jobs; a batch's outputs go under `<batch-id>/`, each variation's in `<label>/`. */
  outputs: Pick<OutputLocations, 'forJob' | 'folderOf'>;
  /** Where uploads and saved outputs are remembered (the Assets view); optional. */
  assets?: { remember(record: AssetRecord): Promise<void> };
  /** Settings that choose the connection: a changed connection resumes its own batches. */
  config: Pick<Config, 'onDidChange'>;
  display: Display;
  log: Log;
  /** Fires when the active connection is reachable again: its unfinished batches are resumed. */
  onConnectionBack?: vscode.Event<void>;
}

/**
 * The batches of this window (Job and Asset API v2, POST /api/v2/jobs, rules 3–5: every variation is one job under
 * the Idempotency-Key its batch record fixed). Built once in `activate()`:
 * - {@link start} runs or resumes a recorded batch with the core's `runBatch` on a lease of the job service, at most
 *   one runner per batch id in this window; outputs go to `<outputs>/<batch-id>/<label>/` and are remembered as
 *   assets; one notification when the run ends, with "Open Contact Sheet";
 * - {@link resumeAll} (start-up, a connection changed or back) starts, unasked, every batch of the active server that
 *   VS Code recorded, not canceled and not finished;
 * - {@link cancel} marks the batch canceled (no process sends more of it) and cancels its jobs still running.
 * Disposing it (deactivation) stops the runners; the jobs already submitted keep running and the next start-up
 * follows them.
 */
export class BatchService extends Disposable implements vscode.Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<string>());
  /** Fires with a batch id whose state changed: a job submitted or ended, the batch canceled, a run started or ended. */
  readonly onDidChange: vscode.Event<string> = this.changed.event;
  private readonly runners = new Map<string, { controller: AbortController; done: Promise<BatchRunEnd> }>();
  private readonly lifetime = new AbortController();
  private resuming: Promise<string[]> | undefined;

  constructor(private readonly options: BatchServiceOptions) {
    super();
    this.register({
      dispose: () => {
        this.lifetime.abort();
        for (const runner of this.runners.values()) runner.controller.abort();
      },
    });
  }

  /**
   * Resumes the unfinished batches now (in the background), and again whenever the active connection changes or
   * comes back. Never rejects: failures are logged.
   */
  startResuming(): void {
    const resume = (): void => void this.resumeAll();
    this.register(
      this.options.config.onDidChange(resume, Settings.baseUrl, Settings.connections, Settings.activeConnection),
    );
    if (this.options.onConnectionBack) this.register(this.options.onConnectionBack(resume));
    resume();
  }

  /**
   * Starts every batch of the active server recorded by VS Code (its record's `client`, else its job records'),
   * not canceled and not finished, that no runner of this window runs: nothing is asked (a reload must not leave a
   * paid batch half done, nor ask to finish what the user already asked for). One reading at a time.
   * @returns the ids started. Never rejects (failures are logged).
   */
  resumeAll(): Promise<string[]> {
    this.resuming ??= this.resumeOnce()
      .catch((err: unknown) => {
        if (!AbortError.is(err) && !this.lifetime.signal.aborted)
          this.options.log.warn('batches', `resuming batches failed: ${describeError(err)}`);
        return [];
      })
      .finally(() => (this.resuming = undefined));
    return this.resuming;
  }

  private async resumeOnce(): Promise<string[]> {
    // The job service first learns a changed connection; its base URL says which batches are this server's.
    await this.options.jobs.service.refresh();
    const baseUrl = await this.options.jobs.service.use(async (lease) =>
      lease.backend.capabilities.idempotentSubmit ? lease.backend.baseUrl : undefined,
    );
    if (baseUrl === undefined) return [];
    const records = await this.options.jobs.store.list();
    const started: string[] = [];
    // The one rule of which batches are resumed unasked (core batchesToResume): never a canceled one.
    for (const batch of batchesToResume(await this.options.batches.list(), records, baseUrl, 'vscode')) {
      if (this.isRunning(batch.batchId)) continue;
      this.options.log.info('batches', `resuming batch ${batch.batchId}`);
      this.start(batch.batchId);
      started.push(batch.batchId);
    }
    return started;
  }

  /** Runs or resumes batch `batchId` in the background; a batch this window runs already is left to its runner. */
  start(batchId: string): void {
    if (this.runners.has(batchId) || this.lifetime.signal.aborted) return;
    const controller = new AbortController();
    const done = this.run(batchId, controller.signal).then((end) => {
      this.runners.delete(batchId);
      this.changed.fire(batchId);
      return end;
    });
    this.runners.set(batchId, { controller, done });
    this.changed.fire(batchId);
  }

  /** The end of this window's run of `batchId`, or undefined when none runs it. */
  whenDone(batchId: string): Promise<BatchRunEnd> | undefined {
    return this.runners.get(batchId)?.done;
  }

  /** True while a runner of this window runs the batch. */
  isRunning(batchId: string): boolean {
    return this.runners.has(batchId);
  }

  /**
   * Cancels a batch: its record is marked canceled first (a runner reads it before each submission, in any process,
   * so nothing more of it is sent), then each of its jobs not ended is canceled on the server (the runner follows
   * them to their end). @throws nothing: a failed cancel of a job is logged and said.
   */
  async cancel(batchId: string): Promise<void> {
    const { log } = this.options;
    // Marked first, outside any lease: the batch is canceled even when its server cannot be reached now.
    const batch = await this.options.batches.markCanceled(batchId, new Date().toISOString());
    this.changed.fire(batchId);
    if (!batch) return;
    log.info('batches', `batch ${batchId} canceled`);
    const live = batchStatus(batch, await this.options.jobs.store.list()).variations.filter(
      (v) => v.jobId !== undefined && !isEndedStatus(v.state),
    ).length;
    if (live === 0) return;
    let failed = 0;
    await this.options.jobs.service
      .use(async (lease) => {
        const { jobs } = await cancelBatch(lease.backend, batchId, {
          store: this.options.jobs.store,
          batches: this.options.batches,
          nowMs: Date.now(),
          signal: lease.signal,
        });
        for (const j of jobs) {
          if (j.error === undefined)
            log.info('batches', `cancel of job ${j.jobId} (${j.variation.label}): ${j.status}`);
          else log.warn('batches', `cancel of job ${j.jobId} (${j.variation.label}) failed: ${describeError(j.error)}`);
        }
        failed = jobs.filter((j) => j.error !== undefined).length;
      })
      .catch((err: unknown) => {
        failed = live;
        log.warn('batches', `cancel of batch ${batchId}'s jobs failed: ${describeError(err)}`);
      });
    this.changed.fire(batchId);
    if (failed > 0)
      void this.options.display.warning(
        vscode.l10n.t(
          'Comfy Cloud: batch {0} is canceled, but {1} of its jobs could not be canceled (see the log).',
          batchId,
          failed,
        ),
      );
  }

  /** Where batch `batchId` stands, from the stores (core `batchStatus`); undefined when it is not recorded. */
  async status(batchId: string): Promise<BatchStatus | undefined> {
    const batch = await this.options.batches.get(batchId);
    return batch ? batchStatus(batch, await this.options.jobs.store.list()) : undefined;
  }

  /** The batch's output root (the single jobs' folder rule, named by the batch id); a variation's is `join(root, label)`. */
  outputDir(batch: BatchRecord): string {
    return this.options.outputs.folderOf(
      batch.batchId,
      batch.workflowFile ? vscode.Uri.file(batch.workflowFile) : undefined,
    );
  }

  private async run(batchId: string, signal: AbortSignal): Promise<BatchRunEnd> {
    const { log, display } = this.options;
    let batch: BatchRecord | undefined;
    try {
      batch = await this.options.batches.get(batchId);
      if (!batch) throw new Error(vscode.l10n.t('no batch {0} is recorded', batchId));
      const recorded = batch;
      // The folder made by the single jobs' rule (with its .gitignore), then named by the batch.
      const out = await this.options.outputs.forJob(
        recorded.batchId,
        recorded.workflowFile ? vscode.Uri.file(recorded.workflowFile) : undefined,
      );
      log.info('batches', `running batch ${batchId} (${recorded.variations.length} variations, outputs in ${out})`);
      const result = await this.options.jobs.service.use((lease) =>
        runBatch(lease, batchId, {
          store: this.options.jobs.store,
          batches: this.options.batches,
          out,
          client: 'vscode',
          fileValue: (file, s) => this.upload(lease, file, s),
          signal: AbortSignal.any([lease.signal, signal]),
          onEvent: (event) => this.onEvent(lease, recorded, event),
        }),
      );
      const status = await this.status(batchId);
      const counts = status ? describeCounts(status.counts) : '';
      log.info('batches', `batch ${batchId} ran: ${counts}`);
      const action = vscode.l10n.t('Open Contact Sheet');
      const name = this.nameOf(recorded);
      const message = status?.batch.canceledAt
        ? vscode.l10n.t('Comfy Cloud: batch {0} canceled: {1}', name, counts)
        : vscode.l10n.t('Comfy Cloud: batch {0} {1}', name, counts);
      void (result.allSucceeded ? display.info(message, action) : display.warning(message, action)).then((picked) => {
        if (picked === action) void vscode.commands.executeCommand(Commands.openContactSheet, batchId);
      });
      return { batchId, result };
    } catch (err) {
      if (AbortError.is(err)) {
        log.info(
          'batches',
          `batch ${batchId}: this window stopped running it (its jobs keep running; the next start-up follows them)`,
        );
      } else {
        log.warn('batches', `batch ${batchId} stopped: ${describeError(err)}`);
        void display.error(
          vscode.l10n.t(
            'Comfy Cloud: batch {0} stopped: {1}',
            batch ? this.nameOf(batch) : batchId,
            describeError(err),
          ),
        );
      }
      return { batchId, error: err };
    }
  }

  private nameOf(batch: BatchRecord): string {
    const file = batch.workflowFile ? batch.workflowFile.split(/[\\/]/).pop() : undefined;
    return this.options.display.text(file ? `${file} (${batch.batchId.slice(0, 10)})` : batch.batchId);
  }

  /** A file value of a variation: uploaded (deduplicated by hash), remembered, and its core/ASSET reference returned. */
  private async upload(lease: ClientLease<ExtensionConnection>, file: string, signal?: AbortSignal): Promise<unknown> {
    const client = lease.connection.assets;
    if (!client) throw new Error(vscode.l10n.t('this connection has no assets: {0} cannot be uploaded', file));
    const up = await client.uploadFile(file, {}, { signal });
    this.options.log.info('batches', `${up.dedup ? 'dedup hit' : 'uploaded'} ${file} as asset ${up.asset.id}`);
    await this.options.assets
      ?.remember(uploadRecord(client.http.baseUrl, up, file, 'vscode'))
      .catch((err: unknown) =>
        this.options.log.warn('batches', `cannot remember the upload of ${file}: ${describeError(err)}`),
      );
    return assetReference({ ...up.asset, hash: up.asset.hash ?? up.hash });
  }

  private onEvent(lease: ClientLease<ExtensionConnection>, batch: BatchRecord, event: BatchEvent): void {
    const { log } = this.options;
    if (event.type === 'submitted')
      log.info(
        'batches',
        `batch ${batch.batchId} ${event.label}: job ${event.jobId}${event.adopted ? ' (found after an unheard submission)' : event.earlier ? ' (submitted before)' : ''}`,
      );
    else if (event.type === 'busy')
      log.info('batches', `batch ${batch.batchId}: server busy (${event.reason}); waiting ${event.delayMs} ms`);
    else if (event.type === 'retrying')
      log.info('batches', `batch ${batch.batchId} ${event.label}: again in ${event.delayMs} ms (${event.reason})`);
    else if (event.type === 'unheard' || event.type === 'retired' || event.type === 'late')
      log.info('batches', `batch ${batch.batchId} ${describeResolution(event)}`);
    else {
      const o = event.outcome;
      log.info(
        'batches',
        `batch ${batch.batchId} ${o.label}: ${o.state}${o.jobId ? ` (job ${o.jobId})` : ''}${o.error !== undefined ? `: ${describeError(o.error)}` : ''}`,
      );
      // Saved outputs are remembered as single jobs' are, where the API's outputs are assets (the Assets view).
      if (o.job && o.state === 'succeeded' && lease.backend.capabilities.assets && this.options.assets) {
        const job = o.job;
        const saved = new Map(o.saved.map((s) => [s.output.id, s]));
        void (async () => {
          for (const output of job.outputs) {
            const file = saved.get(output.id);
            await this.options.assets!.remember(
              file
                ? savedOutputRecord(lease.backend.baseUrl, job, file, 'vscode')
                : outputRecord(lease.backend.baseUrl, job.id, output, job.expiresAt, 'vscode'),
            );
          }
        })().catch((err: unknown) =>
          log.warn('batches', `cannot remember the outputs of job ${job.id}: ${describeError(err)}`),
        );
      }
    }
    this.changed.fire(batch.batchId);
  }
}
