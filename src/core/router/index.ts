/**
 * The model router client core (Model router API): ids and cursors, catalog, schemas with their ETag cache,
 * invocation with Idempotency-Keys, the router's errors. vscode-free.
 */
export * from './ids';
export * from './errors';
export * from './schemas';
export * from './schemaCache';
export * from './keyStore';
export * from './input';
export * from './client';
export * from './calls';
export { retryMessage, type RouterRetryInfo } from './routerRetry';
export * from './inputSchema';
export * from './fieldPositions';
export * from './modelTree';
export * from './outputImages';
export * from './routerService';
