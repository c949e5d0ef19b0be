import * as vscode from 'vscode';
import { AbortError, describeError, downloadJobOutput, isEndedStatus, refusalText, savedOutputPath } from '../../core';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';
import type { OutputLocations } from '../platform/outputs';
import type { JobsNode, JobsTreeProvider } from './jobsTree';

/**
 * The Jobs view's commands on one job: Cancel (and what the server answered), Copy Job Id, Open Output (downloaded
 * into the job's output folder first unless already there). A node given names its job through the tree; none given,
 * the view's selection.
 */
export class JobCommands {
  constructor(
    private readonly tree: Pick<JobsTreeProvider, 'entryOf'>,
    /** The node selected in the Jobs view, if any. */
    private readonly selection: () => JobsNode | undefined,
    private readonly jobs: JobServiceHost,
    private readonly outputs: OutputLocations,
    private readonly display: Display,
    private readonly log: Log,
    /** Asks which job (Copy Job Id from the Command Palette): its id, or undefined when none was picked. */
    private readonly pickJobId: () => Promise<string | undefined> = async () => undefined,
  ) {}

  private jobIdOf(arg: JobsNode | string | undefined): string | undefined {
    if (typeof arg === 'string') return arg;
    const node = arg ?? this.selection();
    return node ? this.tree.entryOf(node)?.jobId : undefined;
  }

  /**
   * Cancel (non-terminal jobs only): asks nothing, POSTs cancel through the job service's client, then says what
   * the server answered, once per event: `canceling` is a notice "is being canceled" that closes itself when the job
   * ends (a plain toast would stay, saying so of a job long ended); the end (`canceled` at once, or later) is told
   * here only when no submission of this window tells it (its end-of-job notification says "was canceled").
   * Returns the status the server gave, or undefined when nothing was sent.
   */
  async cancel(arg?: JobsNode | string): Promise<string | undefined> {
    const jobId = this.jobIdOf(arg);
    if (!jobId) return undefined;
    const short = this.display.text(jobId.slice(0, 8));
    const known = this.tree.entryOf(jobId);
    const status = known?.job?.status ?? known?.record?.lastStatus;
    if (status && isEndedStatus(status)) {
      void this.display.info(
        vscode.l10n.t('Comfy Cloud: job {0} already ended ({1}); nothing to cancel.', short, status),
      );
      return undefined;
    }
    try {
      const { answer, cancelsRunning, api, toldElsewhere } = await this.jobs.service.use(async (lease) => ({
        answer: await lease.backend.cancel(jobId, lease.signal),
        cancelsRunning: lease.backend.capabilities.cancelRunning,
        api: lease.backend.api,
        // Read after the answer: a submission still following the job tells its end itself.
        toldElsewhere: () => this.jobs.service.isSubmission(lease.backend.baseUrl, jobId),
      }));
      this.log.info(
        'jobs-view',
        `cancel of job ${jobId}: ${answer.job.status} (request-id ${answer.requestId ?? '-'})`,
      );
      const now = answer.job.status;
      const ended = vscode.l10n.t('Comfy Cloud: job {0} was canceled.', short);
      if (now === 'canceled') {
        if (!toldElsewhere()) void this.display.info(ended);
      } else if (now === 'canceling') {
        const elsewhere = toldElsewhere();
        const follow = this.jobs.service.follow(jobId);
        const notice = this.display.lasting(
          vscode.l10n.t('Comfy Cloud: job {0} is being canceled…', short),
          follow.done,
          { busy: true },
        );
        follow.done.then(
          (final) => {
            if (elsewhere) return;
            const end = final.job.status;
            void this.display.info(
              end === 'canceled'
                ? ended
                : vscode.l10n.t('Comfy Cloud: job {0} ended {1} before the cancel took effect.', short, end),
            );
          },
          (err: unknown) =>
            AbortError.is(err) || this.log.warn('jobs-view', `job ${jobId} after its cancel: ${describeError(err)}`),
        );
        // Closed by the user: nothing more is awaited of it (the watch stops unless a submission follows the job).
        void notice.closed.then(() => follow.dispose());
      } else {
        void this.display.info(
          now === 'running' && !cancelsRunning
            ? vscode.l10n.t(
                'Comfy Cloud: job {0} could not be canceled: it is running, and {1}.',
                short,
                refusalText('cancelRunning', api, vscode.l10n.t),
              )
            : vscode.l10n.t('Comfy Cloud: job {0} could not be canceled: it is {1}.', short, now),
        );
      }
      return now;
    } catch (err) {
      this.log.warn('jobs-view', `cancel of job ${jobId} failed: ${describeError(err)}`);
      void this.display.error(vscode.l10n.t('Comfy Cloud: cancel of job {0} failed: {1}', short, describeError(err)));
      return undefined;
    }
  }

  /** Copies the job id (neutralized: a control character must not reach a terminal through a paste). */
  async copyId(arg?: JobsNode | string): Promise<string | undefined> {
    // From the Command Palette (no argument): which job is asked, not taken from a selection the user may not see.
    const jobId = arg === undefined ? await this.pickJobId() : this.jobIdOf(arg);
    if (!jobId) return undefined;
    const id = this.display.text(jobId);
    await vscode.env.clipboard.writeText(id);
    void this.display.info(vscode.l10n.t('Comfy Cloud: job id {0} copied.', id));
    return id;
  }

  /**
   * Opens an output in an editor tab, downloading it first (job service's client, into the job's output folder)
   * unless the file is already there. Returns the file's path.
   */
  async openOutput(arg?: JobsNode): Promise<string | undefined> {
    const node = arg ?? this.selection();
    if (node?.kind !== 'output') return undefined;
    const jobId = this.tree.entryOf(node)?.jobId;
    if (!jobId) return undefined;
    try {
      const file = await this.outputFile(node);
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file), { preview: true });
      return file;
    } catch (err) {
      this.log.warn('jobs-view', `opening an output of job ${jobId} failed: ${describeError(err)}`);
      void this.display.error(vscode.l10n.t('Comfy Cloud: cannot open the output: {0}', describeError(err)));
      return undefined;
    }
  }

  /**
   * The file of an output in the job's output folder, downloaded first (a fresh GET of the job: its link may have
   * expired) unless it is already there. Returns its absolute path.
   * @throws Error when the node is not an output of a job with an id, or the server no longer lists the output; as
   *   the download.
   */
  async outputFile(node: JobsNode): Promise<string> {
    const entry = node.kind === 'output' ? this.tree.entryOf(node) : undefined;
    if (node.kind !== 'output' || !entry?.jobId) throw new Error(vscode.l10n.t('not an output of a job'));
    const jobId = entry.jobId;
    const workflow = entry.record?.workflowFile ? vscode.Uri.file(entry.record.workflowFile) : undefined;
    const dir = await this.outputs.forJob(jobId, workflow);
    // The one rule of a complete output file (core savedOutputPath): one on disk is opened, never downloaded again.
    let file = (await savedOutputPath(node.output, dir, jobId))?.path;
    if (!file) {
      file = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Comfy Cloud: downloading output') },
        () =>
          this.jobs.service.use(async (lease) => {
            const done = await downloadJobOutput(lease.backend, jobId, node.output.id, dir, lease.signal);
            if (done === undefined) throw new Error(vscode.l10n.t('the server no longer lists this output'));
            return done;
          }),
      );
    }
    return file;
  }
}
