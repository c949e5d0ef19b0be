/** Every command, setting and secret id of the extension, in one place (a unit test checks package.json agrees). */

/** The extension's id as the marketplace knows it (`publisher.name`). */
export const EXTENSION_ID = 'comfy-cloud.comfy-cloud';

/** Command ids. */
export const Commands = {
  submitWorkflow: 'comfyCloud.submitWorkflow',
  setApiKey: 'comfyCloud.setApiKey',
  clearApiKey: 'comfyCloud.clearApiKey',
  showLog: 'comfyCloud.showLog',
  showJobs: 'comfyCloud.showJobs',
  refreshJobs: 'comfyCloud.refreshJobs',
  cancelJob: 'comfyCloud.cancelJob',
  copyJobId: 'comfyCloud.copyJobId',
  openOutput: 'comfyCloud.openOutput',
  switchConnection: 'comfyCloud.switchConnection',
  startEmulator: 'comfyCloud.startEmulator',
  stopEmulator: 'comfyCloud.stopEmulator',
  // The Assets view.
  uploadAsset: 'comfyCloud.uploadAsset',
  refreshAssets: 'comfyCloud.refreshAssets',
  downloadAsset: 'comfyCloud.downloadAsset',
  copyAssetReference: 'comfyCloud.copyAssetReference',
  copyAssetId: 'comfyCloud.copyAssetId',
  deleteAsset: 'comfyCloud.deleteAsset',
  // Children and actions of the Jobs view.
  openJobWorkflow: 'comfyCloud.openJobWorkflow',
  openJobLogs: 'comfyCloud.openJobLogs',
  openJobError: 'comfyCloud.openJobError',
  rerunJob: 'comfyCloud.rerunJob',
  removeJob: 'comfyCloud.removeJob',
  clearFinishedJobs: 'comfyCloud.clearFinishedJobs',
  loadMoreJobs: 'comfyCloud.loadMoreJobs',
  saveOutputAs: 'comfyCloud.saveOutputAs',
  revealOutput: 'comfyCloud.revealOutput',
  copyOutputAssetReference: 'comfyCloud.copyOutputAssetReference',
  addConnection: 'comfyCloud.addConnection',
  openSample: 'comfyCloud.openSample',
  // The job monitor.
  openJobMonitor: 'comfyCloud.openJobMonitor',
  // The workflow graph beside the workflow JSON.
  openWorkflowGraph: 'comfyCloud.openWorkflowGraph',
  // The contact sheet of a batch.
  openContactSheet: 'comfyCloud.openContactSheet',
  // The model router (Model router API).
  setRouterKey: 'comfyCloud.setRouterKey',
  refreshModels: 'comfyCloud.refreshModels',
  filterModels: 'comfyCloud.filterModels',
  newModelInput: 'comfyCloud.newModelInput',
  refreshSchema: 'comfyCloud.refreshSchema',
  runModel: 'comfyCloud.runModel',
  // Workflow IntelliSense.
  refreshNodeDefinitions: 'comfyCloud.refreshNodeDefinitions',
  // UI-format workflows and ComfyUI images.
  convertToApiFormat: 'comfyCloud.convertToApiFormat',
  openWorkflowFromImage: 'comfyCloud.openWorkflowFromImage',
  runAgainFromImage: 'comfyCloud.runAgainFromImage',
  // Batches: a workflow run once per variation.
  runWithVariations: 'comfyCloud.runWithVariations',
  runBatchFile: 'comfyCloud.runBatchFile',
  cancelBatch: 'comfyCloud.cancelBatch',
  resumeBatch: 'comfyCloud.resumeBatch',
  copyBatchId: 'comfyCloud.copyBatchId',
  // The own page of a ComfyUI server, in the browser.
  openInComfyUI: 'comfyCloud.openInComfyUI',
} as const;

/** The job monitor's webview type: its serializer's key and the `onWebviewPanel:` activation event. */
export const MONITOR_VIEW_TYPE = 'comfyCloud.jobMonitor';

/** The workflow graph's webview type: its serializer's key and the `onWebviewPanel:` activation event. */
export const GRAPH_VIEW_TYPE = 'comfyCloud.workflowGraph';

/** A batch's contact sheet webview type. */
export const CONTACT_SHEET_VIEW_TYPE = 'comfyCloud.contactSheet';

/** The URI scheme of the Jobs view's read-only documents (a job's workflow, logs, error). */
export const JOB_DOCUMENT_SCHEME = 'comfy-cloud-job';

/** The URI scheme of model input schemas: `comfy-router-schema:/<provider>/<model>[/<variant>].json`. */
export const ROUTER_SCHEMA_SCHEME = 'comfy-router-schema';

/** The URI scheme of the workflow schema: `comfy-workflow-schema://schemas/api-format.json`. */
export const WORKFLOW_SCHEMA_SCHEME = 'comfy-workflow-schema';

/** Language status item ids (which node definitions workflow IntelliSense uses, or why none). */
export const LanguageStatusItems = {
  nodeDefinitions: 'comfyCloud.nodeDefinitions',
} as const;

/** The activity-bar view container (the sidebar). */
export const VIEW_CONTAINER = 'comfyCloud';

/** View ids (in the {@link VIEW_CONTAINER} container). */
export const Views = {
  jobs: 'comfyCloud.jobs',
  assets: 'comfyCloud.assets',
  models: 'comfyCloud.models',
} as const;

/** The configuration section and its settings (full ids are `comfyCloud.<key>`). */
export const CONFIG_SECTION = 'comfyCloud';
export const Settings = {
  baseUrl: 'baseUrl',
  outputDirectory: 'outputDirectory',
  connections: 'connections',
  activeConnection: 'activeConnection',
  // The domain serverless deployments are hosts under (staging: stg.run.comfy.app).
  deploymentDomain: 'deploymentDomain',
  notifyOnJobEnd: 'notifyOnJobEnd',
  openMonitorOnSubmit: 'openMonitorOnSubmit',
  // The monitor shows the latest job in the tab already open, unless that tab is pinned.
  monitorReuseTab: 'monitor.reuseTab',
  routerUrl: 'routerUrl',
  // The URL of a local engine, used only as the source of node definitions for workflow IntelliSense.
  nodeDefinitionsUrl: 'nodeDefinitionsUrl',
  // Jobs of one batch in flight at once (Run with Variations, Run Batch).
  batchConcurrency: 'batch.concurrency',
  // How long after a send whose answer was lost the job listing is read for its job (seconds).
  unknownOutcomeSettleSeconds: 'unknownOutcomeSettleSeconds',
  // The delay per executed node of the local emulator (ms): jobs slow enough to watch progress, cancel, previews.
  emulatorNodeDelayMs: 'emulator.nodeDelayMs',
} as const;

/** Context keys the extension sets (welcome views and walkthrough). */
export const ContextKeys = {
  /** The active connection's readiness (core connections.ts `ConnectionReadiness`): `ready`, `invalid`, `stale`, `noKey`, `unconfigured`. */
  connectionState: 'comfyCloud.connectionState',
  /** True while a model router URL and its key are set (the Models view's welcome shows otherwise). */
  routerReady: 'comfyCloud.routerReady',
  /** True while the active editor holds a model input (a `comfy-router-schema:` `$schema`): Run Model's title button. */
  modelInput: 'comfyCloud.modelInput',
  /** The API the active connection speaks (`v2`, `v1`, `comfyui`; '' while the settings are unusable): "Open in ComfyUI". */
  api: 'comfyCloud.api',
  /** True while the active connection's API has no assets (`capabilities.assets` false): the Assets view's welcome. */
  noAssets: 'comfyCloud.noAssets',
} as const;

/** The walkthrough "Get Started with Comfy Cloud" (`workbench.action.openWalkthrough` takes `${EXTENSION_ID}#${WALKTHROUGH_ID}`). */
export const WALKTHROUGH_ID = 'getStarted';

/** Status bar item ids (connections). */
export const StatusBarItems = {
  connection: 'comfyCloud.connection',
} as const;

/** The connection "Comfy Cloud: Start Local Emulator" makes active (its base URL changes at each start). */
export const EMULATOR_CONNECTION_NAME = 'Local emulator';

/** The connection made when a running self-hosted companion (found from its state file) is chosen. */
export const COMPANION_CONNECTION_NAME = 'Self-hosted companion';

/** The connection made from the "ComfyUI server" choice of Add Connection, or from the start-up offer. */
export const COMFYUI_CONNECTION_NAME = 'ComfyUI';

/** Where a ComfyUI server listens by default (its own `--listen 127.0.0.1 --port 8188`): prefilled and probed at start-up. */
export const COMFYUI_BASE_URL = 'http://127.0.0.1:8188';

/** The globalState key set when the person answered "Not Now" to the offer of a running ComfyUI server: not asked again. */
export const COMFYUI_OFFER_DECLINED_KEY = 'comfyCloud.comfyuiOfferDeclined';

/** Default base URL: the self-hosted companion on loopback (Job and Asset API v2, What the service does: port 8189). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8189';

/** The globalState key of the port the built-in emulator last started on: asked for again at its next start. */
export const EMULATOR_PORT_KEY = 'comfyCloud.emulator.lastPort';

/**
 * How long the built-in emulator keeps a job and its outputs (its `expires_at`), ms: 7 days, so that its jobs are
 * still there after a restart the next day (the emulator's own default is the service's 1 hour).
 */
export const EMULATOR_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The built-in emulator's data folder, under the extension's global storage: its jobs and outputs across restarts. */
export const EMULATOR_DATA_FOLDER = 'emulator';

/**
 * The file in the extension's global storage that records the running local emulator (its pid, base URL and owner
 * token), so the next window, or another one, holds it instead of losing it (connection/emulatorOwner.ts).
 */
export const EMULATOR_RECORD_FILE = 'emulator.json';

/** The globalState key set once the v1 deprecation notice was shown (said once, on this machine). */
export const V1_NOTICE_STATE_KEY = 'comfyCloud.v1NoticeShown';

/**
 * The globalState key listing the deployment addresses in the old form already explained (`<name>\n<old URL>`): each
 * is said once on this machine.
 */
export const LEGACY_NOTICE_STATE_KEY = 'comfyCloud.legacyDeploymentNoticesShown';

/** SecretStorage key prefix; the key is kept per origin: `comfyCloud.apiKey:<origin>`. */
export const SECRET_PREFIX = 'comfyCloud.apiKey:';

/** SecretStorage key prefix of model router keys, per router origin: `comfyCloud.routerKey:<origin>`. */
export const ROUTER_SECRET_PREFIX = 'comfyCloud.routerKey:';

/** Name of the log output channel. */
export const LOG_CHANNEL = 'Comfy Cloud';
