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
} as const;

/** The activity-bar view container (issue 9, "The sidebar"). */
export const VIEW_CONTAINER = 'comfyCloud';

/** View ids (in the {@link VIEW_CONTAINER} container). */
export const Views = {
  jobs: 'comfyCloud.jobs',
} as const;

/** The configuration section and its settings (full ids are `comfyCloud.<key>`). */
export const CONFIG_SECTION = 'comfyCloud';
export const Settings = {
  baseUrl: 'baseUrl',
  outputDirectory: 'outputDirectory',
  connections: 'connections',
  activeConnection: 'activeConnection',
} as const;

/** Status bar item ids (issue 9, "Connections"). */
export const StatusBarItems = {
  connection: 'comfyCloud.connection',
} as const;

/** The connection "Comfy Cloud: Start Local Emulator" makes active (its base URL changes at each start). */
export const EMULATOR_CONNECTION_NAME = 'Local emulator';

/** The connection made when a running self-hosted companion (found from its state file) is chosen. */
export const COMPANION_CONNECTION_NAME = 'Self-hosted companion';

/** Default base URL: the self-hosted companion on loopback (jobs-assets-api-v2.md, "Surfaces"). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8189';

/** SecretStorage key prefix; the key is kept per origin: `comfyCloud.apiKey:<origin>`. */
export const SECRET_PREFIX = 'comfyCloud.apiKey:';

/** Name of the log output channel. */
export const LOG_CHANNEL = 'Comfy Cloud';
