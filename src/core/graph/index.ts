/**
 * The workflow graph's public surface: the model of a workflow as a graph (model.ts, types.ts), where a job is node by
 * node (runStates.ts), the problems shown on nodes (problems.ts), and the webview's page and protocol (page.ts,
 * protocol.ts). Reads workflows, node definitions and the job model; no API client, no state, no view.
 */
export * from './types';
export * from './model';
export * from './runStates';
export * from './problems';
export * from './protocol';
export * from './page';
