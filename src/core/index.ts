/**
 * The client core's public surface: no `vscode` import, runs in plain Node.
 * - `http/`: what every API shares: the transport (bounded reads, timeouts, credentials only to their origin,
 *   request ids), the error base, the retry policy, the clock, link resolution;
 * - `jobs/`: the client's own job model, owned by no API (Job, JobState, JobUpdate), the JobBackend contract with its
 *   capabilities, and the job service; what the views and the CLI read;
 * - `v2/`: the Job and Asset API: jobs, assets, submission, watching, downloads, its wire shapes, and its job backend;
 *   `v1/` (the deprecated API) and `router/` (the model router) stand beside it, each with its own client;
 * - `state/`: the store of remembered submissions, shared by the CLI and the extension;
 * - here: what is not tied to one API (workflow formats, hashing, text and file-name safety, input files), and the
 *   words shown to a person about an error (presentation.ts).
 */
export * from './http/errors';
export * from './http/clock';
export * from './http/transport';
export * from './http/engine';
export * from './http/fetchEngine';
export * from './http/retry';
export * from './http/linkResolution';
export * from './http/baseUrl';
export * from './v2/errors';
export * from './v2/surface';
export * from './lazySchema';
export * from './v2/schemas';
// The client's own job model (core/jobs): what the views, the CLI and the job service read. Its names win over the
// v2 wire shapes of the same names, which are exported as `V2Job`, `V2JobOutput`, … for v2's own code.
export * from './jobs';
export type { Job, JobOutput, JobError, Progress, Preview } from './jobs';
export type { Job as V2Job, JobOutput as V2JobOutput, JobError as V2JobError, Progress as V2Progress, Preview as V2Preview } from './v2/schemas';
export * from './v2/events';
export * from './v2/jobs';
export * from './v2/watch';
// Downloads: types only here; their functions are imported from './v2/download' itself.
export type { DownloadOptions, DownloadResult, PartialPaths } from './v2/download';
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
export type { V1Client, V1ClientOptions, V1Submission, V1SubmitOptions, V1Outputs, V1DownloadedOutput, UploadImageOptions, ObjectInfo, NodeDefinition, V1WatchOptions, SubmitAndWatchOptions, V1RunResult, V1Socket, V1Message, V1PromptError, FileRef, NodeFile, V1JobState, UploadResult, BinaryFrame, PreviewMetadata } from './v1';
export * from './v2/submission';
export * from './v2/reconcile';
export * from './state/stateStore';
export * from './state/hashCache';
export * from './state/assetRecords';
export * from './workflow';
export * from './json';
export * from './fileNames';
export * from './hash';
export * from './text';
export * from './l10n';
// Reading input files (inputFile.ts) is not exported here: it is imported as `../core/inputFile`.
export * from './version';
export * from './presentation';
export * from './workflowPositions';
export * from './jobTree';
export * from './assetTree';
// The job documents (jobDocuments.ts) are not exported here: they are imported as `../core/jobDocuments`.
export * from './connections';
export * from './health';
export * from './jobEndNotice';
export * from './secretLearning';
