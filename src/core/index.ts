/**
 * The client core's contracts: the job model and the errors. Everything else is imported from its own module's
 * `index.ts` (`core/http`, `core/state`, `core/batch`, `core/util`, `core/views`, `core/connection`, `core/backends`,
 * `core/convert`, `core/graph`, `core/router`, `core/workflowSchema`), never from here. No `vscode` import; runs in
 * plain Node.
 *
 * What is here:
 * - `jobs/` (all of its index): the client's own job model, owned by no API (Job, JobState, JobUpdate, progress),
 *   the JobBackend contract with its capabilities, the job service and its options, job ends, unknown outcomes;
 *   and the refusals of a capability a backend lacks (jobs/refusals.ts);
 * - `http/errors.ts`: the error contract every API and the job model throw (ComfyError, ApiError, InputError,
 *   AbortError, the shared refusals, describeError);
 * - `http/clock.ts`: the Clock a backend or a job service is given (what a caller needs to implement or drive those
 *   contracts).
 *
 * Elsewhere, by design: the transport, engines, retries and downloads (`core/http`); which API a connection speaks
 * and a backend's asset client (`core/backends`); the APIs' own clients and wire shapes (`core/v2`, `core/v1`,
 * `core/router`: the extension and the CLI never name `core/v1` nor `core/v2`); stored records (`core/state`);
 * batches (`core/batch`); the views' models (`core/views`); connections and their surfaces (`core/connection`).
 * Inside the core, modules import each other by path, never this index (eslint.config.mjs).
 */
export * from './jobs';
export * from './jobs/refusals';
export * from './http/errors';
export * from './http/clock';
