import * as vscode from 'vscode';
import type { StateStore } from '../../core/state';
import { Commands, MONITOR_VIEW_TYPE } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { JobsNode, JobsView } from '../jobs';
import type { CommandHandlers } from '../platform/lazy';
import type { OutputLocations } from '../platform/outputs';
import { MonitorPanel, monitorWebviewOptions, type MonitorPanelDeps, type MonitorTarget } from './monitorPanel';

/** The workspace-state key of the job ids whose monitors are open (a restored page that kept no state finds its job here). */
const OPEN_MONITORS_KEY = 'comfyCloud.openJobMonitors';

/** What the manager needs from the extension. */
export interface MonitorManagerDeps extends MonitorPanelDeps {
  store: StateStore;
  outputs: OutputLocations;
  /** The Jobs view: a tree node given to "Open Monitor" names its job through it. */
  jobsView: Pick<JobsView, 'provider'>;
  /** Where the open monitors are remembered across a window reload (the workspace state). */
  memento: vscode.Memento;
  /** The setting `comfyCloud.monitor.reuseTab` (default true): a new job's monitor takes the tab of the one shown. */
  reuseTab(): boolean;
}

/** Options of {@link MonitorManager.open}. */
export interface OpenMonitorOptions {
  /** The editor keeps the focus (a submission). */
  preserveFocus?: boolean;
  /** The monitor whose tab the new one should take (Re-run from it), when tabs are reused and it is not pinned. */
  replacing?: MonitorPanel;
}

/**
 * The job monitors: at most one panel per job (opening it again reveals it), "Comfy Cloud: Open Job
 * Monitor" (a job id, a Jobs tree node, or an input box), the restore of a panel after a window reload (its
 * `WebviewPanelSerializer` delegates here; the job is read again), and whether a job's monitor is visible (the
 * end-of-job notification is then not shown: "One signal at a time").
 *
 * One tab for the latest job, as VS Code's preview editors do: with `comfyCloud.monitor.reuseTab` on (the default), a
 * job without a monitor takes the tab of the latest monitor whose tab is not pinned (the new panel opens in that tab's
 * group, then the old one closes; its job goes on). A pinned tab (`Tab.isPinned`, read from `window.tabGroups`: a
 * webview panel does not know its own tab) keeps its job; so does every tab with the setting off.
 */
export class MonitorManager extends Disposable {
  private readonly panels = new Map<string, MonitorPanel>();
  private readonly opening = new Map<string, Promise<MonitorPanel>>();
  private readonly opened = this.register(new vscode.EventEmitter<MonitorPanel>());
  /** Fires with each panel made or restored (tests read it). */
  readonly onDidOpen = this.opened.event;

  constructor(private readonly deps: MonitorManagerDeps) {
    super();
  }

  /** The command ids this object handles (registered lazily by the extension). */
  commands(): CommandHandlers {
    return { [Commands.openJobMonitor]: (arg?: JobsNode | string) => this.openCommand(arg) };
  }

  /** The open panel of a job, if any (tests read it). */
  panelOf(jobId: string): MonitorPanel | undefined {
    return this.panels.get(jobId);
  }

  /** True while the job's monitor is open and visible. */
  isVisible(jobId: string): boolean {
    return this.panels.get(jobId)?.visible === true;
  }

  /** "Open Job Monitor": the job of a tree node, a job id, else one asked for. Returns the panel, if one opened. */
  async openCommand(arg?: JobsNode | string): Promise<MonitorPanel | undefined> {
    let jobId =
      typeof arg === 'string' ? arg.trim() : arg ? this.deps.jobsView.provider.entryOf(arg)?.jobId : undefined;
    if (!jobId && arg === undefined) {
      jobId = (
        await vscode.window.showInputBox({
          title: vscode.l10n.t('Comfy Cloud: Open Job Monitor'),
          prompt: vscode.l10n.t('The id of the job to monitor'),
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Enter a job id, or press Escape to cancel.')),
        })
      )?.trim();
    }
    if (!jobId) return undefined;
    return this.open(jobId);
  }

  /** Opens (or reveals) the monitor of a job, in the tab of a monitor it may replace (see the class). */
  open(jobId: string, options: OpenMonitorOptions = {}): Promise<MonitorPanel> {
    const open = this.panels.get(jobId);
    if (open) {
      open.panel.reveal(undefined, options.preserveFocus ?? false);
      return Promise.resolve(open);
    }
    let pending = this.opening.get(jobId);
    if (!pending) {
      pending = this.make(jobId, options).finally(() => this.opening.delete(jobId));
      this.opening.set(jobId, pending);
    }
    return pending;
  }

  /** Restores a panel VS Code kept across a reload: its job from the page's state, else from the remembered list. */
  async restore(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const jobId = jobIdOfState(state) ?? this.remembered().find((id) => !this.panels.has(id));
    if (!jobId || this.panels.has(jobId)) {
      panel.dispose();
      return;
    }
    this.deps.log.info('monitor', `restoring the monitor of job ${jobId}`);
    this.adopt(panel, await this.target(jobId));
  }

  private async make(jobId: string, options: OpenMonitorOptions): Promise<MonitorPanel> {
    const target = await this.target(jobId);
    const replaced = this.replaceable(options.replacing);
    const panel = vscode.window.createWebviewPanel(
      MONITOR_VIEW_TYPE,
      vscode.l10n.t('Job {0}', this.deps.display.text(jobId.slice(0, 8))),
      {
        viewColumn: replaced?.panel.viewColumn ?? vscode.ViewColumn.Beside,
        preserveFocus: options.preserveFocus ?? false,
      },
      // Not kept while hidden: the page says `ready` when shown again and gets the state then.
      { ...monitorWebviewOptions(this.deps.extensionUri, target.outputDir), retainContextWhenHidden: false },
    );
    const monitor = this.adopt(panel, target);
    if (replaced && !this.gone) {
      // Made first, in the same group, so the new tab opens beside the old one and takes its place as it closes.
      this.deps.log.info(
        'monitor',
        `the monitor of job ${jobId} takes the tab of job ${replaced.jobId}'s (comfyCloud.monitor.reuseTab)`,
      );
      replaced.panel.dispose();
    }
    return monitor;
  }

  /**
   * The monitor whose tab a new job's monitor takes: none with the setting off; `preferred` when given and not pinned
   * (Re-run from it), else the latest monitor whose tab is not pinned.
   */
  private replaceable(preferred: MonitorPanel | undefined): MonitorPanel | undefined {
    if (!this.deps.reuseTab()) return undefined;
    const free = (m: MonitorPanel): boolean => this.panels.get(m.jobId) === m && tabOf(m.panel)?.isPinned === false;
    if (preferred) return free(preferred) ? preferred : undefined;
    return [...this.panels.values()].reverse().find(free);
  }

  /** The tab of a monitor's panel, if VS Code shows one (tests read its `isPinned`). */
  tabOf(jobId: string): vscode.Tab | undefined {
    const monitor = this.panels.get(jobId);
    return monitor ? tabOf(monitor.panel) : undefined;
  }

  private adopt(panel: vscode.WebviewPanel, target: MonitorTarget): MonitorPanel {
    // Re-run from the monitor opens the new job's monitor, in this tab when tabs are reused and it is not pinned.
    const monitor: MonitorPanel = new MonitorPanel(panel, target, {
      ...this.deps,
      openJob: (jobId) => this.open(jobId, { replacing: monitor }),
    });
    this.panels.set(target.jobId, monitor);
    void this.remember();
    monitor.onDidDispose(() => {
      if (this.panels.get(target.jobId) === monitor) this.panels.delete(target.jobId);
      if (!this.gone) void this.remember();
    });
    this.opened.fire(monitor);
    return monitor;
  }

  private gone = false;

  override dispose(): void {
    // The panels are left open (VS Code restores them after a reload); their watches are released.
    this.gone = true;
    for (const monitor of [...this.panels.values()]) monitor.dispose();
    this.panels.clear();
    super.dispose();
  }

  /** The job's remembered record (when submitted from this machine) and its output folder. */
  private async target(jobId: string): Promise<MonitorTarget> {
    const record = await this.deps.store.list().then(
      (records) => records.find((r) => r.jobId === jobId),
      (err: unknown) => {
        this.deps.log.warn(
          'monitor',
          `cannot read the remembered jobs: ${err instanceof Error ? err.message : String(err)}`,
        );
        return undefined;
      },
    );
    // Not made here: a job's folder is made when an output is written into it (a failed job leaves none).
    const workflow = record?.workflowFile ? vscode.Uri.file(record.workflowFile) : undefined;
    return {
      jobId,
      record,
      outputDir: this.deps.outputs.folderOf(jobId, workflow),
      makeOutputDir: () => this.deps.outputs.forJob(jobId, workflow),
    };
  }

  private remembered(): string[] {
    const ids = this.deps.memento.get<unknown>(OPEN_MONITORS_KEY);
    return Array.isArray(ids)
      ? ids.filter((x): x is string => typeof x === 'string' && x.length > 0 && x.length <= 1024)
      : [];
  }

  private remember(): Thenable<void> {
    return this.deps.memento.update(OPEN_MONITORS_KEY, [...this.panels.keys()]);
  }
}

/**
 * The tab of a webview panel: in its group, the monitor tab with its title (a panel does not know its own tab; the
 * titles "Job <id>" are one per job). Undefined when none is found.
 */
function tabOf(panel: vscode.WebviewPanel): vscode.Tab | undefined {
  const groups = vscode.window.tabGroups.all.filter(
    (g) => panel.viewColumn === undefined || g.viewColumn === panel.viewColumn,
  );
  for (const group of groups) {
    const tab = group.tabs.find(
      (t) =>
        t.input instanceof vscode.TabInputWebview &&
        t.input.viewType.endsWith(MONITOR_VIEW_TYPE) &&
        t.label === panel.title,
    );
    if (tab) return tab;
  }
  return undefined;
}

/** The job id a page kept in its state (`vscode.setState`): `{jobId}`, a MonitorState, or `{state: MonitorState}`. */
function jobIdOfState(state: unknown): string | undefined {
  const at = (o: unknown, key: string): unknown =>
    o && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined;
  for (const candidate of [
    at(state, 'jobId'),
    at(at(state, 'job'), 'jobId'),
    at(at(at(state, 'state'), 'job'), 'jobId'),
  ]) {
    if (typeof candidate === 'string' && candidate.length > 0 && candidate.length <= 1024) return candidate;
  }
  return undefined;
}
