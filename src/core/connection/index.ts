/**
 * Connections (their public surface): which server and API a connection names (connections.ts), its health
 * (health.ts), and the surfaces it may point at (the cloud, a serverless deployment, the local companion: v2's
 * surface.ts, re-exported here so that the extension and the CLI name them without importing `core/v2`).
 */
export * from './connections';
export * from './health';
export * from '../v2/surface';
