/**
 * The client core's public surface: no `vscode` import, runs in plain Node.
 * - `http/`: what every API shares: the transport (bounded reads, timeouts, credentials only to their origin,
 *   request ids), the error base, the retry policy, the clock, link resolution;
 * - `jobs/`: the client's own job model, owned by no API (Job, JobState, JobUpdate), the JobBackend contract with its
 *   capabilities, and the job service; what the views and the CLI read;
 * - `v2/`: the Job and Asset API: jobs, assets, submission, watching, downloads, its wire shapes, and its job backend;
 *   `v1/` (the deprecated API) and `router/` (the model router) stand beside it, each with its own client;
 * - `state/`: the store of remembered submissions and assets, shared by the CLI and the extension; it reads no API's
 *   types (its inputs are structural);
 * - `util/`: what is not tied to one API nor to a view: workflow formats, stable JSON, hashing, text and file-name
 *   safety, words (l10n), input files;
 * - `views/`: the models the views present, without `vscode`: the Jobs and Assets trees, the job documents, the
 *   end-of-job notice, the job monitor, and the words shown to a person about an error (presentation.ts);
 * - `connection/`: the connections a user sets up and their health: they choose a surface and an API;
 * - `convert/`: UI-format workflows and ComfyUI images turned into the API format (reads workflowSchema's node
 *   definitions; imported as `../core/convert`).
 * Imports point one way (eslint.config.mjs says which): util and http import no other folder; state imports only
 * those; jobs no API folder; the API folders (v2, v1, router, workflowSchema) no view and no connection; the views
 * read jobs, state, http and util, never an API folder.
 */
export * from './http/errors';
export * from './http/clock';
export * from './http/transport';
export { describeNetworkError } from './http/failures';
export * from './http/engine';
export * from './http/fetchEngine';
export * from './http/retry';
export * from './http/linkResolution';
export * from './http/baseUrl';
export * from './v2/errors';
export * from './v2/surface';
export * from './util/lazySchema';
export * from './v2/schemas';
// The client's own job model (core/jobs): what the views, the CLI and the job service read. Its names win over the
// v2 wire shapes of the same names, which are exported as `V2Job`, `V2JobOutput`, … for v2's own code.
export * from './jobs';
export type { Job, JobOutput, JobError, Progress, Preview } from './jobs';
export type {
  Job as V2Job,
  JobOutput as V2JobOutput,
  JobError as V2JobError,
  Progress as V2Progress,
  Preview as V2Preview,
} from './v2/schemas';
export * from './v2/events';
export * from './v2/jobs';
export * from './v2/watch';
// Downloads: types only here; their functions are imported from './http/download' itself.
export type { DownloadOptions, DownloadResult, PartialPaths } from './http/download';
export * from './v2/assets';
export * from './v2/client';
export * from './v2/jobBackend';
// The model router: types only here. Its values (RouterClient, its errors, removeTopLevelSchemaKey, …) are imported
// from './router' itself.
export type {
  RouterClient,
  RouterClientOptions,
  ModelPage,
  ListOptions,
  InputSchemaResult,
  RouterRunOptions,
  RouterRunResult,
  ModelId,
  RouterBucket,
  RouterError,
  DeadlineExceededError,
  RouterOutcomeUnknownError,
  RouterFieldError,
  CommittedSpend,
  ModelEntry,
  ModelDetail,
  ChargesOnPolicyRejection,
  CachedSchema,
  RouterKeyRecord,
  RouterKeyStore,
} from './router';
// The deprecated v1 client: types only here too; its values are imported from './v1' itself.
export type {
  V1Client,
  V1ClientOptions,
  V1Submission,
  V1SubmitOptions,
  V1Outputs,
  V1DownloadedOutput,
  UploadImageOptions,
  ObjectInfo,
  NodeDefinition,
  V1WatchOptions,
  SubmitAndWatchOptions,
  V1RunResult,
  V1Socket,
  V1Message,
  V1PromptError,
  FileRef,
  NodeFile,
  V1JobState,
  UploadResult,
  BinaryFrame,
  PreviewMetadata,
} from './v1';
export * from './v2/submission';
export * from './v2/reconcile';
export * from './state/stateStore';
export * from './state/hashCache';
export * from './state/assetRecords';
export * from './state/batchRecords';
// isProcessAlive comes from v2/reconcile.ts (the same rule).
export {
  EndClaims,
  CLAIM_POLL_MS,
  CLAIM_STALE_MS,
  isClaimGone,
  type ClaimAnswer,
  type ClaimOwnerOptions,
  type EndClaim,
  type EndClaimRecord,
  type EndClaimsOptions,
} from './state/endClaims';
export * from './batch/variations';
export * from './batch/gate';
export * from './batch/plan';
export * from './batch/resume';
export * from './batch/status';
export * from './batch/run';
export * from './batch/outcomes';
export * from './batch/cancel';
export * from './util/workflow';
export * from './util/json';
export * from './util/bytes';
export * from './util/fileNames';
export * from './util/watchFolder';
export * from './util/hash';
export * from './util/text';
export * from './util/l10n';
// Reading input files (inputFile.ts) is not exported here: it is imported as `../core/util/inputFile`.
export * from './util/version';
export * from './views/presentation';
export * from './jobs/refusals';
export * from './util/workflowPositions';
export * from './views/jobTree';
export * from './views/assetTree';
// The job documents (jobDocuments.ts) are not exported here: they are imported as `../core/views/jobDocuments`.
export * from './connection/connections';
export * from './connection/health';
export * from './views/jobEndNotice';
export * from './util/secretLearning';
