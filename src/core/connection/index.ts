/**
 * Connections (their public surface): which server and API a connection names (connections.ts), and its health
 * (health.ts).
 */
export * from './connections';
export * from './health';
