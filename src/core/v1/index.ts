/**
 * The v1 client core (Cloud API v1 (deprecated)), vscode-free. Its values are imported from
 * `src/core/v1` itself (as the router's from `src/core/router`), so the extension loads them at first use; the core's
 * index exports only its types.
 */
export * from '../engine/frames';
export * from '../engine/errors';
export * from './schemas';
export * from './mapping';
export * from '../engine/socket';
export * from './client';
export type { ObjectInfo, NodeDefinition } from '../engine/objectInfo';
export * from './watch';
export * from './jobBackend';
