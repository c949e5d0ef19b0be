/**
 * Fault injection: the one place where the emulator decides to misbehave on purpose, so that a client's
 * "never lose or duplicate a job" rules (Job and Asset API v2, POST /api/v2/jobs, rules 3–7, Errors, Events, and
 * what public sources fill in where it says "not shown") can be tested against real HTTP.
 *
 * A {@link FaultPlan} is a list of rules. A rule names the requests it targets (`on`, a {@link RouteKind}), what
 * it does (`kind` and its fields, see {@link FaultAction}) and when (`times`, `every`, `share`, `after`, see
 * {@link FaultSchedule}). Rules are data: a zod schema checks each and completes it (faults/schema.ts); the command
 * line writes them in a small spec language (faults/spec.ts); faults/injector.ts applies a plan. Deterministic by
 * default: counts and "every Nth"; a `share` draws from a PRNG seeded by the plan's `seed`, so a run repeats.
 *
 * The server consults the plan at five hooks, each for its own kinds of rule:
 * - before the handler: `status` (an error envelope, Retry-After), `reset` (the socket is destroyed before any
 *   answer), `delay` (the answer is held, then the request is handled normally: a job submitted that way is
 *   created even when the client gave up). On a submission a `status` or `reset` creates no job, and says whether
 *   the request had reached submission (`claims`), so that its Idempotency-Key is claimed as the contract says
 *   (below);
 * - when a submission is about to create its job: `lag` (the listing omits the job, and its own routes answer 404,
 *   for a while after its creation: a listing lags the truth);
 * - after a submission created and queued its job: `afterCreate` (answer 5xx, reset, or answer late: the job
 *   exists whatever the client sees);
 * - when an event stream opens: `dropStream` (end or reset it after N frames, never the terminal status),
 *   `silentStream` (N frames, then nothing at all: no keep-alive, no end); the same when a v1 WebSocket opens
 *   (`v1:ws`: N frames, text and binary, then a close frame 1001, a reset, or silence);
 * - when content bytes are sent: `cutAfterBytes` (the connection closes after N bytes of the body).
 *
 * What a submission (POST /api/v2/jobs) can come to, and the fault that gives each (Job and Asset API v2,
 * POST /api/v2/jobs, rules 3–7):
 * - refused before submission, no job: a validation refusal (a real one, or `status` with a 4xx such as
 *   `invalid_workflow`); the key is released (rule 4), so the same key can be presented again;
 * - busy, no job: `status` with `queue_full` (429, Retry-After) or `insufficient_credits` (402): the key is released
 *   (rules 4 and 7);
 * - unknown outcome WITHOUT a job: `status` with a 5xx (e.g. 503 `upstream_unreachable`) or `reset`: nothing is
 *   created, yet the key stays claimed (rule 5): presenting it again gets 422 `idempotency_key_reuse`, and the client
 *   must look for its job (it finds none);
 * - unknown outcome WITH a job: `afterCreate` (created and queued, then a 5xx, a reset, or the 201 after the client's
 *   timeout): the key stays claimed (rule 5);
 * - a created job that the listing and its own routes show only after a while: `lag`.
 * A `status` or `reset` that reached submission (`claims`; by default a 5xx, a reset and the submission's own
 * refusals of rule 7) claims the key first, as every submission does: a key already presented gets 422
 * `idempotency_key_reuse` instead of the fault's answer (rule 3). One with `claims: false` answers for a proxy in front
 * of the service, before the request reached submission: the key is never looked at and no claim is left (to the
 * client the outcome is just as unknown).
 *
 * Every rule counts every request it targets at its hook; at most one rule fires per request and hook: the
 * first, in plan order, that is due. Each firing is appended to {@link FaultInjector.log}.
 */

export { ROUTE_KINDS, type RouteKind } from './faults/routes';
export { checkFaultRule, type FaultAction, type FaultRule, type FaultSchedule } from './faults/schema';
export { parseFaultSpec } from './faults/spec';
export { checkFaultPlan, type FaultPlan } from './faults/plan';
export {
  FaultInjector,
  type AfterCreateFault,
  type BeforeFault,
  type BucketAnswer,
  type FaultAnswer,
  type FaultCounter,
  type FaultLogEntry,
  type FaultRequest,
  type Faults,
  type FaultState,
  type JobLag,
  type StreamFault,
} from './faults/injector';
