import * as vscode from 'vscode';
import { jobEndsSummary, shouldNotifyJobEnd, type JobEnd } from '../../core/views';
import type { Config } from '../platform/config';
import { Views } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { Log } from '../platform/log';

const IMAGE = /\.(png|jpe?g|gif|webp|bmp)$/i;

/** A job's end as the submitter saw it, with the paths of the outputs saved on this machine. */
export interface JobEndReport extends Omit<JobEnd, 'files'> {
  files: string[];
}

/** What {@link JobEndNotifier.onDidDecide} tells: the job, its status, and whether a notification was shown. */
export interface JobEndDecision {
  jobId: string;
  status: string;
  notified: boolean;
  /** True when the job was told in the one summary of several jobs found ended at start-up. */
  summary?: boolean;
  /** The notification's text, when one was shown. */
  message?: string;
}

/**
 * The end-of-job notification (when a job submitted from this window ends; a setting, default on): the one signal
 * at the end of a submission, honouring `comfyCloud.notifyOnJobEnd` (off: nothing at the end;
 * the progress notification still shows while the job runs). Whether to notify is decided in one place (core
 * {@link shouldNotifyJobEnd}); a view that already shows the job's end (the monitor panel) sets
 * {@link shownElsewhere}. "Show Job" focuses the Jobs view and reveals the job when a `revealJob` is given.
 */
export class JobEndNotifier extends Disposable {
  private readonly decided = this.register(new vscode.EventEmitter<JobEndDecision>());
  /** Fires once per job end reported, with the decision (tests and other views read it). */
  readonly onDidDecide = this.decided.event;
  /** Returns true when a view already shows this job's end to the user (set by the job monitor panel). */
  shownElsewhere: (jobId: string) => boolean = () => false;

  constructor(
    /** The setting `comfyCloud.notifyOnJobEnd`. */
    private readonly config: Pick<Config, 'notifyOnJobEnd'>,
    private readonly display: Display,
    private readonly log: Log,
    /** Reveals one job in the Jobs view (JobsView's job); absent, "Show Job" only focuses the view. */
    private readonly revealJob?: (jobId: string) => Thenable<unknown>,
  ) {
    super();
  }

  /** The setting `comfyCloud.notifyOnJobEnd` (default true). */
  enabled(): boolean {
    return this.config.notifyOnJobEnd();
  }

  /** Tells the end of a job submitted from this window, if the setting and the views want it. Returns whether it did. */
  jobEnded(end: JobEndReport): boolean {
    return this.jobsEnded([end]) > 0;
  }

  /**
   * Tells the ends of jobs submitted from VS Code: each one the setting and the views want told (core
   * {@link shouldNotifyJobEnd}); when more than one is left, ONE summary (core {@link jobEndsSummary}: the jobs found
   * ended at start-up, which ended while the window was closed). {@link onDidDecide} fires once per job.
   * @returns how many jobs were told.
   */
  jobsEnded(ends: readonly JobEndReport[]): number {
    const told = ends.filter((end) =>
      shouldNotifyJobEnd({
        enabled: this.enabled(),
        submittedHere: true,
        shownElsewhere: this.shownElsewhere(end.jobId),
      }),
    );
    const summary = told.length > 1;
    const notice =
      told.length > 0
        ? jobEndsSummary(
            told.map((end) => ({ ...end, files: end.files.length })),
            vscode.l10n.t,
          )
        : undefined;
    for (const end of ends)
      this.decided.fire({
        jobId: end.jobId,
        status: end.status,
        notified: told.includes(end),
        ...(summary ? { summary } : {}),
        ...(notice && told.includes(end) ? { message: notice.message } : {}),
      });
    for (const end of ends) {
      if (!told.includes(end))
        this.log.info(
          'notify',
          `job ${end.jobId} ended ${end.status}; no notification (comfyCloud.notifyOnJobEnd is off or a view shows it)`,
        );
    }
    if (!notice) return 0;
    const labels: Record<string, string> = {
      openOutput: vscode.l10n.t('Open Output'),
      showJob: summary ? vscode.l10n.t('Show Jobs') : vscode.l10n.t('Show Job'),
    };
    const buttons = notice.actions.map((a) => labels[a]!);
    const show =
      notice.severity === 'error'
        ? this.display.error
        : notice.severity === 'warning'
          ? this.display.warning
          : this.display.info;
    const only = told[0]!;
    void show.call(this.display, notice.message, ...buttons).then((choice) => {
      if (choice === labels.openOutput) {
        const first = only.files.find((f) => IMAGE.test(f)) ?? only.files[0];
        if (first) void vscode.commands.executeCommand('vscode.open', vscode.Uri.file(first));
      } else if (choice === labels.showJob) {
        void (summary ? vscode.commands.executeCommand(`${Views.jobs}.focus`) : this.showJob(only.jobId));
      }
    });
    return told.length;
  }

  /** Focuses the Jobs view, then reveals the job when the view offers it. */
  async showJob(jobId: string): Promise<void> {
    await vscode.commands.executeCommand(`${Views.jobs}.focus`);
    if (this.revealJob) await this.revealJob(jobId);
  }
}
