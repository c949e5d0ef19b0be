import * as vscode from 'vscode';
import type { JobsView } from '../jobs';
import { Commands, MONITOR_VIEW_TYPE } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once, registerLazyCommands } from '../platform/lazy';
import type { NodeDefinitions } from '../../core/workflowSchema/objectInfo';
import type { Services } from '../platform/services';
import { MonitorManager, type OpenMonitorOptions } from './monitorManager';

export type { MonitorManager, OpenMonitorOptions } from './monitorManager';

/**
 * The monitor feature: the job monitors (one webview panel per job), loaded at first use (the command, a submission,
 * a panel restored after a reload).
 */
export class MonitorFeature extends Disposable {
  private readonly manager: () => MonitorManager;
  private made: MonitorManager | undefined;
  /**
   * Workflow IntelliSense's node definitions in use (the workflow feature's, set by the composition root once it is
   * built): the monitor's graph takes its socket types from them. Undefined until set: graphs drawn without types.
   */
  definitions: (() => Promise<NodeDefinitions | undefined>) | undefined;

  constructor(services: Services, jobsView: Pick<JobsView, 'provider'>) {
    super();
    const { context, jobs, display, log, config, store, outputs } = services;
    this.manager = once(
      () =>
        (this.made = this.register(
          new MonitorManager({
            extensionUri: context.extensionUri,
            jobs,
            display,
            log,
            connectionName: () => config.connection().name,
            baseUrl: () => config.surface().baseUrl,
            store,
            outputs,
            jobsView,
            memento: context.workspaceState,
            reuseTab: () => config.monitorReuseTab(),
            // Workflow IntelliSense's node definitions (set once the workflow feature exists): socket types.
            definitions: () => this.definitions?.() ?? Promise.resolve(undefined),
          }),
        )),
    );
    this.register(
      vscode.window.registerWebviewPanelSerializer(MONITOR_VIEW_TYPE, {
        deserializeWebviewPanel: (panel, state) => this.manager().restore(panel, state),
      }),
    );
    this.register(registerLazyCommands([Commands.openJobMonitor], () => this.manager().commands()));
  }

  /** The job monitors, once first used (undefined before: no monitor is open). */
  get monitors(): MonitorManager | undefined {
    return this.made;
  }

  /** True while the job's monitor is open and visible (no end-of-job notification then: one signal at a time). */
  isVisible(jobId: string): boolean {
    return this.made?.isVisible(jobId) === true;
  }

  /** Opens the job's monitor (building the monitors at the first). */
  open(jobId: string, options?: OpenMonitorOptions): ReturnType<MonitorManager['open']> {
    return this.manager().open(jobId, options);
  }
}

/** Registers the monitor feature: the "Open Job Monitor" command and the monitor panels' serializer. */
export function register(services: Services, jobsView: Pick<JobsView, 'provider'>): MonitorFeature {
  return new MonitorFeature(services, jobsView);
}
