import * as path from 'node:path';
import * as vscode from 'vscode';
import { JobEnds, type HandledEnd, type Job, type JobBackend } from '../../core';
import type { JobRecord } from '../../core/state';
import type { ExtensionConnection } from '../platform/clients';
import type { Config } from '../platform/config';
import { Settings } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';
import type { JobEndNotifier } from './notifications';
import type { OutputLocations } from '../platform/outputs';

/**
 * The extension's owner of a job's end (core {@link JobEnds}), built once in `activate()`: every remembered job
 * submitted from VS Code gets, when it ends, its record updated, its outputs in its output folder ({@link
 * OutputLocations}, each output downloaded once) and one end-of-job notification ({@link JobEndNotifier}, one summary
 * for the jobs found ended at start-up) — whether this window's submission saw it end or the job ended while no
 * window watched (a reload, a closed window). {@link start} reads the remembered jobs again at start-up, when the
 * active connection changes and when it comes back after an outage. Disposing it (deactivation) stops following.
 */
export class JobEndService extends Disposable {
  readonly core: JobEnds<ExtensionConnection>;
  private readonly told = this.register(new vscode.EventEmitter<HandledEnd[]>());
  /** Fires with the ends handed to the notifier (tests read it). */
  readonly onDidTell = this.told.event;
  private readonly resumed = this.register(new vscode.EventEmitter<HandledEnd[]>());
  /** Fires after each reading of the remembered jobs, with the ends it found (tests read it). */
  readonly onDidResume = this.resumed.event;

  constructor(
    private readonly jobs: JobServiceHost,
    outputs: Pick<OutputLocations, 'forJob'>,
    notifier: Pick<JobEndNotifier, 'jobsEnded'>,
    private readonly config: Pick<Config, 'onDidChange'>,
    private readonly log: Log,
    /** Fires when the active connection is reachable again (the status bar's health back to fine). */
    private readonly onConnectionBack?: vscode.Event<void>,
  ) {
    super();
    this.core = new JobEnds<ExtensionConnection>({
      jobs: jobs.service,
      store: jobs.store,
      log,
      outputDir: (jobId, record) =>
        outputs.forJob(jobId, record?.workflowFile ? vscode.Uri.file(record.workflowFile) : undefined),
      tell: (ends) => {
        notifier.jobsEnded(
          ends.map((e) => ({
            jobId: e.job.id,
            status: e.job.status,
            files: e.files,
            error: e.job.error,
            // Named as the other notices name it (after a reload too: the record remembers the workflow's file).
            ...(e.record?.workflowFile ? { workflow: path.basename(e.record.workflowFile) } : {}),
          })),
        );
        this.told.fire(ends);
      },
    });
    this.register({ dispose: () => this.core.dispose() });
  }

  /**
   * Reads the remembered jobs again now (in the background), and again whenever the active connection changes or comes
   * back. Never rejects: failures are logged.
   */
  start(): void {
    const resume = (): void => void this.resume();
    // The settings that choose the connection (another server: its remembered jobs are read again).
    this.register(this.config.onDidChange(resume, Settings.baseUrl, Settings.connections, Settings.activeConnection));
    if (this.onConnectionBack) this.register(this.onConnectionBack(resume));
    resume();
  }

  /** One reading of the remembered jobs (core {@link JobEnds.resume}); never rejects. */
  async resume(): Promise<HandledEnd[]> {
    // The job service first learns a changed connection (its refresh is what a settings change triggers too), and
    // looks up the submissions whose outcome was not heard (a job id found is then read again here).
    await this.jobs.service.refresh();
    await this.jobs.service.reconcile().catch(() => []);
    const ends = await this.core.resume();
    this.resumed.fire(ends);
    return ends;
  }

  /**
   * A job submitted from this window ended (its submission saw it): handled as every job's end (outputs downloaded
   * once into its folder, record updated, one notification). `backend`: the submission's connection.
   * @returns the end (its `files`, and a `downloadError` when the download failed).
   */
  ended(baseUrl: string, job: Job, record: JobRecord | undefined, backend: JobBackend): Promise<HandledEnd> {
    this.log.info('job-ends', `job ${job.id} ended ${job.status}`);
    return this.core.ended(baseUrl, job, { record, backend });
  }
}
