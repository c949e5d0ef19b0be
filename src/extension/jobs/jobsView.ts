import * as vscode from 'vscode';
import { describeError } from '../../core';
import { Commands, Views } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';
import type { OutputLocations } from '../platform/outputs';
import { JobCommands } from './jobCommands';
import type { JobsNode, JobsTreeProvider } from './jobsTree';

export type { JobsNode, JobsTreeProvider } from './jobsTree';

/**
 * The Jobs view (`comfyCloud.jobs`) and its commands: Refresh, Cancel, Copy Job Id, Open Output. The view's badge
 * counts running jobs; the provider is told when the view shows or hides.
 */
export class JobsView extends Disposable {
  readonly provider: JobsTreeProvider;
  readonly view: vscode.TreeView<JobsNode>;
  /** Cancel, Copy Job Id, Open Output. */
  private readonly commands: JobCommands;

  constructor(
    /** The list of jobs the tree shows (built before the view: the status bar counts its running jobs too). */
    provider: JobsTreeProvider,
    jobs: JobServiceHost,
    outputs: OutputLocations,
    display: Display,
    private readonly log: Log,
    /** Asks which job, for Copy Job Id from the Command Palette. */
    pickJobId?: () => Promise<string | undefined>,
  ) {
    super();
    this.provider = provider;
    this.view = this.register(
      vscode.window.createTreeView(Views.jobs, { treeDataProvider: this.provider, showCollapseAll: true }),
    );
    this.provider.setVisible(this.view.visible);
    this.register(this.view.onDidChangeVisibility((e) => this.provider.setVisible(e.visible)));
    this.register(
      this.provider.onDidChangeBadge((n) => {
        this.view.badge =
          n > 0
            ? { value: n, tooltip: n === 1 ? vscode.l10n.t('1 running job') : vscode.l10n.t('{0} running jobs', n) }
            : undefined;
      }),
    );
    this.commands = new JobCommands(provider, () => this.view.selection[0], jobs, outputs, display, log, pickJobId);
    this.register(vscode.commands.registerCommand(Commands.refreshJobs, () => this.provider.refresh()));
    this.register(
      vscode.commands.registerCommand(Commands.cancelJob, (arg?: JobsNode | string) => this.commands.cancel(arg)),
    );
    this.register(
      vscode.commands.registerCommand(Commands.copyJobId, (arg?: JobsNode | string) => this.commands.copyId(arg)),
    );
    this.register(
      vscode.commands.registerCommand(Commands.openOutput, (arg?: JobsNode) => this.commands.openOutput(arg)),
    );
  }

  /**
   * Shows the Jobs view and selects a job's item (the end-of-job notification's "Show Job"). Resolves true when the
   * job is in the view; a job not loaded yet is looked up after one refresh.
   */
  async revealJob(jobId: string): Promise<boolean> {
    await this.provider.model();
    let node = this.provider.nodeOfJob(jobId);
    if (!node) {
      await this.provider.refresh();
      node = this.provider.nodeOfJob(jobId);
    }
    if (!node) return false;
    // A reveal into a view that is still opening can be dropped by the workbench (nothing selected), or fail when the
    // refresh that showing it starts (setVisible) comes in the middle: the view is shown, its visibility heard, then
    // the item revealed.
    if (!this.view.visible) await this.show();
    // A refresh of the tree while VS Code resolves the item's parents (a job of this view changing meanwhile) makes it
    // "cannot resolve tree item": the item is looked up again and revealed again, a bounded number of times.
    // A reveal that resolves while the tree's refresh on showing replaces its items can leave the previous selection
    // in place (the refresh restores it): the selection is awaited, and the item revealed again when it never came.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.view.reveal(node, { select: true, focus: true, expand: false });
        if (attempt >= 3 || (await this.selectionOf(jobId))) return true;
        this.log.info('jobs-view', `reveal of job ${jobId} again (the view kept another selection)`);
      } catch (err) {
        if (attempt >= 3) throw err;
        this.log.info('jobs-view', `reveal of job ${jobId} again (${describeError(err)})`);
      }
      await this.provider.model();
      node = this.provider.nodeOfJob(jobId);
      if (!node) return false;
    }
  }

  /**
   * Resolves true once the view's selection is the job's item (the workbench tells the selection as an event, which
   * can follow reveal()'s resolution), false when it is not after 2 000 ms.
   */
  private selectionOf(jobId: string): Promise<boolean> {
    const selected = (): boolean => this.view.selection.some((n) => this.provider.entryOf(n)?.jobId === jobId);
    if (selected()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        sub.dispose();
        resolve(selected());
      };
      const timer = setTimeout(done, 2_000);
      const sub = this.view.onDidChangeSelection(() => selected() && done());
    });
  }

  /**
   * Shows the Jobs view and resolves once the extension host has heard it visible (so the provider's refresh on
   * showing has fired), or after 5 000 ms at most.
   */
  private async show(): Promise<void> {
    const shown = new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      };
      const timer = setTimeout(done, 5_000);
      const sub = this.view.onDidChangeVisibility((e) => e.visible && done());
    });
    await vscode.commands.executeCommand(`${Views.jobs}.focus`);
    await shown;
  }

  /** The batch id of the selected batch item, if a batch item is selected. */
  selectedBatch(): string | undefined {
    const node = this.view.selection[0];
    return node?.kind === 'batch' ? node.batchId : undefined;
  }

  /**
   * The file of an output in the job's output folder, downloaded first unless it is already there (Save Output As,
   * Reveal, Run Again from Image). @throws as {@link JobCommands.outputFile}.
   */
  outputFile(node: JobsNode): Promise<string> {
    return this.commands.outputFile(node);
  }
}
