/**
 * The client's own job model and the contract of every API's job side (see model.ts and backend.ts), the state the
 * job service keeps per job (state.ts), the one progress rule (progress.ts) and the job service (jobService.ts).
 */
export * from './model';
export * from './progress';
export * from './backend';
export * from './state';
export * from './jobService';
export * from './jobEnds';
export * from './outputFiles';
// downloadMissingOutputs, savedOutputPath and SavedOutputFile come through jobEnds.ts (where the batch runner imports them).
export { downloadOutputInto, outputProofPath, recordSavedOutput, type SavedOutputProof } from './savedOutputs';
export * from './unknownOutcome';
export * from './lateJobs';
export * from './submittedJobs';
