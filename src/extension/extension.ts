import type * as vscode from 'vscode';
import type { ComfyCloudApi } from './api';
import * as assets from './assets';
import * as batches from './batches';
import * as connection from './connection';
import * as jobs from './jobs';
import * as models from './models';
import * as monitor from './monitor';
import { Disposable } from './platform/disposable';
import { Services } from './platform/services';
import * as workflow from './workflow';

export type { ComfyCloudApi } from './api';

/**
 * The composition root: builds the shared services, then each feature in the order of what it reads (each gets only
 * what is already built), and owns them all: disposing it disposes every registration, in reverse order.
 */
export class ComfyCloudExtension extends Disposable {
  /** What activate() returns: the services and features, as registered. */
  readonly api: ComfyCloudApi;

  constructor(context: vscode.ExtensionContext) {
    super();
    const services = this.register(new Services(context));
    const { log, config, display, jobs: jobService } = services;
    // The list of jobs first: the Jobs view shows it and the status bar counts its running jobs (one count).
    const jobList = jobs.createJobList(services);
    const connectionFeature = this.register(connection.register(services, jobList));
    const assetsFeature = this.register(assets.register(services));
    const batchRuns = batches.createBatchRuns(services, {
      assets: assetsFeature.view.provider,
      onDidReconnect: connectionFeature.status.onDidReconnect,
    });
    const jobsFeature = this.register(
      jobs.register(services, {
        list: jobList,
        batches: {
          store: services.batchStore,
          isRunning: (id: string) => batchRuns.isRunning(id),
          onDidChange: batchRuns.onDidChange,
        },
        onDidReconnect: connectionFeature.status.onDidReconnect,
      }),
    );
    const batchesFeature = this.register(
      batches.register(services, { runs: batchRuns, selectedBatch: () => jobsFeature.view.selectedBatch() }),
    );
    const monitorFeature = this.register(monitor.register(services, jobsFeature.view));
    // One signal at a time: no end-of-job notification while the job's monitor is visible.
    jobsFeature.notifier.shownElsewhere = (jobId) => monitorFeature.isVisible(jobId);
    const workflowFeature = this.register(
      workflow.register(services, {
        jobsView: jobsFeature.view,
        jobEnds: jobsFeature.jobEnds,
        assets: assetsFeature.view,
        monitor: monitorFeature,
        connection: () => ({ readiness: connectionFeature.status.readiness, active: connectionFeature.status.active }),
      }),
    );
    // The monitor's graph types its sockets with the node definitions workflow IntelliSense has.
    monitorFeature.definitions = () => workflowFeature.definitions();
    // Run with Variations on a UI-format file converts it as Convert and Submit does.
    batchesFeature.convertUi = workflowFeature.convertUi;
    const modelsFeature = this.register(models.register(services));
    this.api = {
      log,
      config,
      display,
      jobs: jobService,
      jobsView: jobsFeature.view,
      assetsView: assetsFeature.view,
      router: modelsFeature.router,
      modelsView: modelsFeature.modelsView,
      status: connectionFeature.status,
      emulator: connectionFeature.emulator,
      notifier: jobsFeature.notifier,
      jobEnds: jobsFeature.jobEnds,
      batches: batchesFeature.runs,
      get monitors() {
        return monitorFeature.monitors;
      },
      get graphs() {
        return workflowFeature.graphs;
      },
      graphSerializer: workflowFeature.graphSerializer,
      welcome: connectionFeature.welcome,
      v1NoticesShown: connectionFeature.v1NoticesShown,
      legacyNoticesShown: connectionFeature.legacyNoticesShown,
      onDidShowLegacyNotice: connectionFeature.onDidShowLegacyNotice,
      comfyuiOffer: connectionFeature.comfyuiOffer,
    };
    log.info('activate', `Comfy Cloud ${context.extension.packageJSON.version as string} active`);
    // Submissions left pending by a process that died, or of unknown outcome, are looked up in the background; then
    // every remembered job not known to have ended is read again (one that ended while no window watched gets its
    // outputs and its notification; one still running is followed to its end).
    jobService.start();
    jobsFeature.jobEnds.start();
    // Batches VS Code recorded and left unfinished (a reload, a closed window) go on, unasked.
    batchRuns.startResuming();
    // The jobs read in the background: the badge and the status bar count the running ones from start-up.
    void jobList.load();
  }
}

/** Activation: the extension object owns every registration; its API is what tests and other extensions read. */
export function activate(context: vscode.ExtensionContext): ComfyCloudApi {
  const extension = new ComfyCloudExtension(context);
  context.subscriptions.push(extension);
  return extension.api;
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions: the job service's dispose aborts every watch and request.
}
