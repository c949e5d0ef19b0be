/**
 * The state folder shared by the CLI and the extension (its public surface): remembered submissions (stateStore.ts),
 * the upload hash cache, remembered assets and batches, and the once-per-machine claims of a job's end. Its inputs are
 * structural: it reads no API's types.
 */
export * from './stateStore';
export * from './hashCache';
export * from './assetRecords';
export * from './batchRecords';
export * from './endClaims';
