/**
 * The client core's public surface: no `vscode` import, runs in plain Node.
 * - `http/`: what every API shares: the transport (bounded reads, timeouts, credentials only to their origin,
 *   request ids), the error base, the retry policy, the clock, link resolution;
 * - `v2/`: the Job and Asset API: jobs, assets, submission, watching, downloads, v2 shapes; the router and v1
 *   clients will stand beside it as `router/` and `v1/`;
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
export * from './v2/errors';
export * from './v2/surface';
export * from './v2/schemas';
export * from './v2/events';
export * from './v2/jobs';
export * from './v2/watch';
export * from './v2/download';
export * from './v2/assets';
export * from './v2/client';
export * from './v2/submission';
export * from './v2/reconcile';
export * from './state/stateStore';
export * from './state/hashCache';
export * from './workflow';
export * from './fileNames';
export * from './hash';
export * from './text';
export * from './inputFile';
export * from './version';
export * from './presentation';
export * from './jobService';
export * from './workflowPositions';
export * from './jobTree';
export * from './connections';
export * from './health';
