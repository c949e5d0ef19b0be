import * as vscode from 'vscode';
import * as path from 'node:path';
import { AbortError, ComfyError, InputError, type AcceptedJob, type ClientLease } from '../../core';
import { errorMessage, groupOf, type JobEntry } from '../../core/views';
import { assertApiWorkflow, jsonForTerminal } from '../../core/util';
import { loadJobWorkflow, outputAssetReference, type JobWorkflow } from '../../core/views/jobDocuments';
import { Commands } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { CommandHandlers } from '../platform/lazy';
import type { Display } from '../platform/display';
import type { ExtensionConnection } from '../platform/clients';
import type { JobDocumentKind, JobDocumentsProvider, OpenedJobDocument } from './jobDocumentsProvider';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { JobsNode, JobsView } from './jobsView';
import type { Log } from '../platform/log';
import type { JobEndService } from './jobEnds';

/** What "Re-run" returns to its caller (tests, other extensions). */
export interface RerunResult {
  /** The NEW job's id; absent when nothing was submitted. */
  jobId?: string;
  /** The key of the new submission's record: its Idempotency-Key where the API has one (a new one: never the old job's). */
  idempotencyKey?: string;
  /** `submitted`, `declined` (the confirmation was dismissed), `refused` (no workflow to submit) or `error`. */
  status: 'submitted' | 'declined' | 'refused' | 'error';
  error?: { code: string; message: string };
}

/** Options a caller (a test) may pass to "Re-run". */
export interface RerunOptions {
  /** false: submit without the modal confirmation (tests; the person already confirmed elsewhere). Default true. */
  confirm?: boolean;
}

/**
 * The Jobs view's actions on a job and on its children: open the workflow, logs or
 * error document; Re-run; Remove from List; Clear Finished; Load more; and on an output: Save As, Reveal, Copy Asset
 * Reference. Menus find them from the items' flag-style `contextValue` (`job:…:rerunnable`, `job:…:removable`,
 * `output`, `jobChild:<kind>`).
 */
export class JobActions extends Disposable {
  constructor(
    private readonly jobs: JobServiceHost,
    private readonly view: JobsView,
    private readonly documents: JobDocumentsProvider,
    private readonly display: Display,
    private readonly log: Log,
    /** The one owner of a job's end: a re-run's job, submitted from this window, gets its outputs and notification. */
    private readonly jobEnds?: Pick<JobEndService, 'ended'>,
  ) {
    super();
  }

  /** The command ids this object handles, with their handlers (registered by the extension: lazy.ts). */
  commands(): CommandHandlers {
    const open = (kind: JobDocumentKind) => (arg?: JobsNode) => this.openDocument(arg, kind);
    return {
      [Commands.openJobWorkflow]: open('workflow'),
      [Commands.openJobLogs]: open('logs'),
      [Commands.openJobError]: open('error'),
      [Commands.rerunJob]: (arg?: JobsNode | string, options?: RerunOptions) => this.rerun(arg, options),
      [Commands.removeJob]: (arg?: JobsNode | string, selected?: JobsNode[]) => this.remove(arg, selected),
      [Commands.clearFinishedJobs]: () => this.clearFinished(),
      [Commands.loadMoreJobs]: () => this.view.provider.loadMore(),
      [Commands.saveOutputAs]: (arg?: JobsNode, options?: { target?: string }) => this.saveOutputAs(arg, options),
      [Commands.revealOutput]: (arg?: JobsNode) => this.revealOutput(arg),
      [Commands.copyOutputAssetReference]: (arg?: JobsNode) => this.copyAssetReference(arg),
    };
  }

  /** The node a command acts on: its argument, else the view's selection. */
  private nodeOf(arg: JobsNode | undefined): JobsNode | undefined {
    return arg ?? this.view.view.selection[0];
  }

  private entryOf(arg: JobsNode | string | undefined): JobEntry | undefined {
    if (typeof arg === 'string') return this.view.provider.entryOf(arg);
    const node = this.nodeOf(arg);
    return node ? this.view.provider.entryOf(node) : undefined;
  }

  /** Opens a job's workflow, logs or error as a read-only document (see {@link JobDocumentsProvider}). */
  async openDocument(arg: JobsNode | undefined, kind: JobDocumentKind): Promise<OpenedJobDocument | undefined> {
    const entry = this.entryOf(arg);
    if (!entry) return undefined;
    return this.documents.open(entry, kind);
  }

  /**
   * Re-run: a NEW submission of the job's workflow (the server's API-format copy, else the remembered file) with a
   * NEW Idempotency-Key, through the job service's submit path (the record is remembered before sending; the new job
   * shows in the view live), after a modal confirmation that says so. The old job is not changed. Resolves once the
   * new job exists (its watch goes on in the service). Rule: Job and Asset API v2, POST /api/v2/jobs, rule 3 (a key
   * is single-use, so a re-run needs a new one).
   */
  async rerun(arg?: JobsNode | string, options: RerunOptions = {}): Promise<RerunResult> {
    const entry = this.entryOf(arg);
    if (!entry) return { status: 'refused', error: { code: 'no_job', message: vscode.l10n.t('No job is selected.') } };
    const name = this.display.text(
      entry.record?.workflowFile
        ? path.basename(entry.record.workflowFile)
        : (entry.jobId ?? '').slice(0, 8) || vscode.l10n.t('job'),
    );
    if (options.confirm !== false) {
      const rerun = vscode.l10n.t('Re-run');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t('Re-run {0}?', name),
        {
          modal: true,
          detail: vscode.l10n.t('This submits the workflow again as a new job; the old job is not changed.'),
        },
        rerun,
      );
      if (choice !== rerun) return { status: 'declined' };
    }
    let lease: ClientLease<ExtensionConnection>;
    try {
      lease = await this.jobs.service.lease();
    } catch (err) {
      return this.fail(err);
    }
    let workflow: JobWorkflow;
    try {
      workflow = await loadJobWorkflow(lease.backend, entry, { signal: lease.signal });
      // A `save` (UI-format) workflow is not submitted (only API format runs): the remembered file may do.
      if (workflow.format !== 'api' && workflow.source === 'server' && entry.record?.workflowFile)
        workflow = await loadJobWorkflow(undefined, entry);
      assertApiWorkflow(workflow.workflow);
    } catch (err) {
      lease.release();
      return this.fail(err);
    }
    const submitted = new Promise<AcceptedJob>((resolve, reject) => {
      this.jobs.service
        .submit(lease, workflow.workflow, {
          workflowFile: entry.record?.workflowFile,
          onSubmitted: (s) => resolve(s),
        })
        .then(
          (result) => {
            const final = result.final.job;
            this.log.info('jobs-view', `re-run job ${final.id} ended ${final.status}`);
            // Submitted from this window: its end is handled like a submission's (outputs downloaded, one notification),
            // with the lease held until then.
            return this.jobEnds?.ended(lease.backend.baseUrl, final, undefined, lease.backend);
          },
          (err: unknown) => {
            reject(err); // ignored once resolved
            if (!AbortError.is(err))
              this.log.warn('jobs-view', `re-run of job ${entry.jobId ?? '?'}: ${errorMessage(err, vscode.l10n.t)}`);
          },
        )
        .finally(() => lease.release());
    });
    try {
      const s = await submitted;
      this.log.info(
        'jobs-view',
        `re-run of job ${entry.jobId ?? '?'}: new job ${s.job.id} (${lease.backend.capabilities.idempotentSubmit ? 'Idempotency-Key' : 'record key'} ${s.recordKey}, request-id ${s.requestId ?? '-'})`,
      );
      // The toast offers the new job's monitor (Re-run from a monitor opens it by itself; the button then reveals it).
      const openMonitor = vscode.l10n.t('Open Monitor');
      void this.display
        .info(
          vscode.l10n.t('Comfy Cloud: {0} submitted again as new job {1}.', name, s.job.id.slice(0, 8)),
          openMonitor,
        )
        .then((choice) => {
          if (choice === openMonitor) void vscode.commands.executeCommand(Commands.openJobMonitor, s.job.id);
        });
      return { status: 'submitted', jobId: s.job.id, idempotencyKey: s.recordKey };
    } catch (err) {
      return this.fail(err);
    }
  }

  /**
   * Remove from List: the job (or every selected job) leaves the view; its record is forgotten from the state store;
   * a job the server lists is hidden for the session or until it changes. Only ended jobs (`job:…:removable`). Says
   * what it did. Returns how many were removed.
   */
  async remove(arg?: JobsNode | string, selected?: readonly JobsNode[]): Promise<number> {
    const nodes = selected && selected.length > 0 ? selected : [typeof arg === 'string' ? undefined : this.nodeOf(arg)];
    const entries =
      typeof arg === 'string' && !(selected && selected.length > 0)
        ? [this.view.provider.entryOf(arg)]
        : nodes.map((n) => (n && n.kind === 'job' ? this.view.provider.entryOf(n) : undefined));
    const removable = entries.filter((e): e is JobEntry => e !== undefined && isRemovable(e));
    if (removable.length === 0) return 0;
    try {
      const n = await this.view.provider.remove(removable);
      void this.display.info(
        n === 1
          ? vscode.l10n.t('Comfy Cloud: 1 job removed from the list.')
          : vscode.l10n.t('Comfy Cloud: {0} jobs removed from the list.', n),
      );
      return n;
    } catch (err) {
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot remove from the list: {0}', errorMessage(err, vscode.l10n.t)),
      );
      return 0;
    }
  }

  /** Clear Finished (view title): removes every ended job from the list, asks nothing, says how many. */
  async clearFinished(): Promise<number> {
    await this.view.provider.model(); // loaded
    const finished = this.view.provider.allEntries().filter(isRemovable);
    let n = 0;
    try {
      n = finished.length > 0 ? await this.view.provider.remove(finished) : 0;
    } catch (err) {
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot clear the finished jobs: {0}', errorMessage(err, vscode.l10n.t)),
      );
      return 0;
    }
    void this.display.info(
      n === 0
        ? vscode.l10n.t('Comfy Cloud: no finished jobs to clear.')
        : n === 1
          ? vscode.l10n.t('Comfy Cloud: 1 finished job cleared from the list.')
          : vscode.l10n.t('Comfy Cloud: {0} finished jobs cleared from the list.', n),
    );
    return n;
  }

  /**
   * Save As on an output: downloads it (into the job's output folder, unless there already) and copies it where the
   * person chooses (`options.target` for tests). Returns the path written.
   */
  async saveOutputAs(arg?: JobsNode, options: { target?: string } = {}): Promise<string | undefined> {
    const node = this.nodeOf(arg);
    if (node?.kind !== 'output') return undefined;
    try {
      const file = await this.view.outputFile(node);
      const target = options.target
        ? vscode.Uri.file(options.target)
        : await vscode.window.showSaveDialog({
            title: vscode.l10n.t('Save Output As'),
            defaultUri: defaultSaveUri(path.basename(file)),
          });
      if (!target) return undefined;
      await vscode.workspace.fs.copy(vscode.Uri.file(file), target, { overwrite: true });
      void this.display.info(vscode.l10n.t('Comfy Cloud: output saved as {0}.', target.fsPath));
      return target.fsPath;
    } catch (err) {
      this.log.warn('jobs-view', `saving an output failed: ${errorMessage(err, vscode.l10n.t)}`);
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot save the output: {0}', errorMessage(err, vscode.l10n.t)),
      );
      return undefined;
    }
  }

  /**
   * Reveal on an output: downloads it unless there already, then shows it in the Explorer when it is inside the
   * workspace, else in the OS file manager. Returns its path.
   */
  async revealOutput(arg?: JobsNode): Promise<string | undefined> {
    const node = this.nodeOf(arg);
    if (node?.kind !== 'output') return undefined;
    try {
      const file = await this.view.outputFile(node);
      const uri = vscode.Uri.file(file);
      await vscode.commands.executeCommand(
        vscode.workspace.getWorkspaceFolder(uri) ? 'revealInExplorer' : 'revealFileInOS',
        uri,
      );
      return file;
    } catch (err) {
      this.log.warn('jobs-view', `revealing an output failed: ${errorMessage(err, vscode.l10n.t)}`);
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot reveal the output: {0}', errorMessage(err, vscode.l10n.t)),
      );
      return undefined;
    }
  }

  /**
   * Copy Asset Reference on an output: the `core/ASSET` JSON a workflow input takes, valid JSON with bidi and invisible
   * characters escaped. Only where the connection's outputs are assets (`capabilities.assets`); else it says so and
   * copies nothing. Returns the text copied.
   */
  async copyAssetReference(arg?: JobsNode): Promise<string | undefined> {
    const node = this.nodeOf(arg);
    if (node?.kind !== 'output') return undefined;
    const assets = await this.jobs.service.use(async (lease) => lease.backend.capabilities.assets).catch(() => true);
    if (!assets) {
      void this.display.error(
        vscode.l10n.t(
          'Comfy Cloud: the outputs of this connection are files, not assets: there is no asset reference to copy.',
        ),
      );
      return undefined;
    }
    const text = jsonForTerminal(outputAssetReference(node.output));
    await vscode.env.clipboard.writeText(text);
    void this.display.info(
      vscode.l10n.t('Comfy Cloud: asset reference of {0} copied.', node.output.name ?? node.output.id),
    );
    return text;
  }

  private fail(err: unknown): RerunResult {
    const code = ComfyError.is(err) ? err.code : 'error';
    const message = errorMessage(err, vscode.l10n.t);
    this.log.warn('jobs-view', `re-run failed: ${message}`);
    void this.display.error(vscode.l10n.t('Comfy Cloud: cannot re-run the job: {0}', message));
    return {
      status: InputError.is(err) ? 'refused' : 'error',
      error: { code: this.display.text(code), message: this.display.text(message) },
    };
  }
}

/** Only a job under Recent (ended, or a submission whose outcome cannot be learned): the `removable` flag. */
function isRemovable(entry: JobEntry): boolean {
  return groupOf(entry) === 'recent';
}

/** The Save dialog's starting place: the first workspace folder (or the home folder) and the output's name. */
function defaultSaveUri(name: string): vscode.Uri | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return folder ? vscode.Uri.joinPath(folder, name) : undefined;
}
