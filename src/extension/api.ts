import type * as vscode from 'vscode';
import type { RouterService } from '../core/router';
import type { AssetsView } from './assets';
import type { BatchService } from './batches';
import type { ComfyUIOffer, ConnectionStatus, EmulatorProcess, WelcomeContext } from './connection';
import type { JobEndNotifier, JobEndService, JobsView } from './jobs';
import type { ModelsView } from './models';
import type { MonitorManager } from './monitor';
import type { Config } from './platform/config';
import type { Display } from './platform/display';
import type { JobServiceHost } from './platform/jobServiceHost';
import type { Log } from './platform/log';
import type { WorkflowGraphPanels } from './workflow';

/**
 * What `activate()` returns (`vscode.extensions.getExtension(...).exports`): the services and features an extension
 * test or another extension reads. Read-only: each member is what the feature registered, never a copy.
 */
export interface ComfyCloudApi {
  readonly log: Log;
  readonly config: Config;
  /** What is shown to a person passes through it (it redacts the keys); `onDidShow` tells each message. */
  readonly display: Display;
  /** The job service: `jobs.onDidChangeJob`, `jobs.service`, `jobs.store`. */
  readonly jobs: JobServiceHost;
  /** The Jobs view (`comfyCloud.jobs`): its provider's model is what the tree shows. */
  readonly jobsView: JobsView;
  /** The Assets view (`comfyCloud.assets`). */
  readonly assetsView: AssetsView;
  /** The model router's client owner, built at the first use of a router feature. */
  readonly router: () => RouterService;
  /** The Models view's provider, built at first use. */
  readonly modelsView: () => ModelsView;
  /** The status bar item of the active connection (its name, text and running count). */
  readonly status: ConnectionStatus;
  /** The local emulator child ("Start Local Emulator"). */
  readonly emulator: EmulatorProcess;
  /** The end-of-job notification: its `onDidDecide` tells each decision. */
  readonly notifier: JobEndNotifier;
  /** The one owner of a job's end (outputs, record, notification). */
  readonly jobEnds: JobEndService;
  /** The batches of this window: run, resumed at start-up, canceled. */
  readonly batches: BatchService;
  /** The job monitors, once first used (undefined before: no monitor is open). */
  readonly monitors: MonitorManager | undefined;
  /** The workflow graph panels, once first used (undefined before: no graph is open). */
  readonly graphs: WorkflowGraphPanels | undefined;
  /** The graph panels' serializer, as registered. */
  readonly graphSerializer: vscode.WebviewPanelSerializer;
  /** The context key the welcome views and the walkthrough follow (its `state`). */
  readonly welcome: WelcomeContext;
  /** The v1 connections the deprecation notice was shown for in this session. */
  readonly v1NoticesShown: readonly string[];
  /** The old-form deployment addresses explained in this session, `<name> <old URL>`. */
  readonly legacyNoticesShown: readonly string[];
  /** Fires with `<name> <old URL>` when an old-form deployment address was explained. */
  readonly onDidShowLegacyNotice: vscode.Event<string>;
  /** The offer of a ComfyUI server running on this machine (its `check(baseUrl)` probes and offers). */
  readonly comfyuiOffer: ComfyUIOffer;
}
