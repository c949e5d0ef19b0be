/**
 * The job operations (Job and Asset API v2, Endpoints): submit, get, cancel, events, workflow, and the
 * self-hosted companion's listing (not in the v2 contract). The fault hooks of a submission (what a `status` or
 * `reset` leaves behind, `lag`, `afterCreate`) and of an opening event stream (`dropStream`, `silentStream`) are
 * consulted here (faults.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AssetStore } from './assets';
import { validateWorkflow } from '../engine/engine';
import { EmulatorError, notFound } from '../errors';
import type { EventHub } from './events';
import type { Faults } from '../faults';
import { headerValue, readJson, sendFaultAnswer, sendJson } from '../http';
import type { IdempotencyKeys } from './idempotency';
import type { JobRecord, JobStore } from './jobs';
import type { RequestContext, Route } from '../router';
import type { JobRunner } from './runner';
import { isTerminal } from './wire';
import { isPlainObject } from '../../core/util/workflow';

/** What the job routes need. */
interface JobRouteDeps {
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  readonly keys: IdempotencyKeys;
  readonly runner: JobRunner;
  readonly hub: EventHub;
  readonly faults: Faults;
}

/** The keys `extra_data` accepts: the partner-node API key, in the document's and the public spelling. */
const EXTRA_DATA_KEYS: readonly string[] = ['api_key_svc_org', 'api_key_comfy_org'];

/** Listing page size: default and maximum. */
const LIST_DEFAULT_LIMIT = 100;
const LIST_MAX_LIMIT = 1000;

/** A checked submission body. */
interface Submission {
  readonly workflow: unknown;
  readonly extraData: Record<string, string> | null;
}

/**
 * Checks the body of POST /api/v2/jobs: a JSON object with `workflow`; `webhook_url` and `inputs` are
 * reserved and rejected; `extra_data` is a closed object of string values. Other keys are ignored.
 * @throws EmulatorError 422 `invalid_workflow`.
 */
function parseSubmission(body: unknown): Submission {
  if (!isPlainObject(body))
    throw new EmulatorError(
      'invalid_workflow',
      'the request body must be a JSON object {"workflow": {…}, "extra_data"?: {…}}',
    );
  for (const reserved of ['webhook_url', 'inputs']) {
    if (Object.hasOwn(body, reserved))
      throw new EmulatorError(
        'invalid_workflow',
        `"${reserved}" is reserved and rejected: remove it from the request body`,
      );
  }
  if (!Object.hasOwn(body, 'workflow'))
    throw new EmulatorError(
      'invalid_workflow',
      '"workflow" is missing: send the API-format graph as {"workflow": {…}}',
    );
  let extraData: Record<string, string> | null = null;
  if (Object.hasOwn(body, 'extra_data')) {
    const raw = body.extra_data;
    if (!isPlainObject(raw)) throw new EmulatorError('invalid_workflow', '"extra_data" must be an object');
    for (const [key, value] of Object.entries(raw)) {
      if (!EXTRA_DATA_KEYS.includes(key)) {
        throw new EmulatorError(
          'invalid_workflow',
          `"extra_data" is a closed object: ${JSON.stringify(key)} is not accepted (allowed: ${EXTRA_DATA_KEYS.join(', ')})`,
        );
      }
      if (typeof value !== 'string')
        throw new EmulatorError('invalid_workflow', `"extra_data.${key}" must be a string`);
    }
    extraData = raw as Record<string, string>;
  }
  return { workflow: body.workflow, extraData };
}

/** The listing's `limit`: an integer in 1..LIST_MAX_LIMIT; anything else falls back to the default (tolerant). */
function listLimit(raw: string | null): number {
  const n = raw === null ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, LIST_MAX_LIMIT) : LIST_DEFAULT_LIMIT;
}

/** The job routes. */
export function jobRoutes(deps: JobRouteDeps): Route[] {
  const { jobs, assets, keys, runner, hub, faults } = deps;

  /** The job of the path, as its own routes see it (a `lag` fault may hide it yet). @throws 404 `not_found`. */
  const jobOf = (context: RequestContext): JobRecord => {
    const job = jobs.read(context.owner, context.params.id);
    if (job === undefined) throw notFound('job', context.params.id);
    return job;
  };

  /**
   * Claims `key` of `owner` for a submission (rule 3: the first request presenting a key is processed, any later one
   * refused and never executed). @throws EmulatorError 422 `idempotency_key_reuse` when it was already presented.
   */
  const claim = (owner: string, key: string): void => {
    if (!keys.claim(owner, key))
      throw new EmulatorError(
        'idempotency_key_reuse',
        'this Idempotency-Key was already presented; it is single-use and the request was not executed',
      );
  };

  /**
   * POST /api/v2/jobs. The Idempotency-Key is claimed before the body is read, so a concurrent duplicate is
   * refused too; it is released when the submission is refused (4xx: no job was created, rule 4) and kept otherwise.
   * A `lag` fault keeps the created job out of sight for a while. An `afterCreate` fault answers 5xx, resets the
   * connection or answers late once the job is created and queued: the key stays claimed, as for any unknown outcome
   * (rule 5).
   */
  const submitJob = async (req: IncomingMessage, res: ServerResponse, context: RequestContext): Promise<void> => {
    const key = headerValue(req, 'idempotency-key');
    if (key !== undefined) claim(context.owner, key);
    let job: JobRecord;
    try {
      const submission = parseSubmission(await readJson(req));
      const plan = validateWorkflow(submission.workflow, (id) => assets.get(context.owner, id) !== undefined);
      // Consulted once the submission is valid: only created jobs count for a `lag` rule.
      job = jobs.create(
        context.owner,
        submission.workflow as Record<string, unknown>,
        plan,
        submission.extraData,
        faults.lag(context),
      );
    } catch (e) {
      if (key !== undefined && e instanceof EmulatorError && e.status < 500) keys.release(context.owner, key);
      throw e;
    }
    runner.submit(job);
    const fault = faults.afterCreate(context);
    if (fault !== undefined && fault.delayMs > 0) {
      try {
        await faults.sleep(fault.delayMs);
      } catch {
        res.destroy(); // the emulator is closing
        return;
      }
    }
    if (fault?.then.kind === 'reset') res.destroy();
    else if (fault?.then.kind === 'status') sendFaultAnswer(res, fault.then.answer);
    else sendJson(res, 201, jobs.toWire(job));
  };

  /**
   * A `status` or `reset` fault answers a submission instead of the handler: no job is created. When it reached
   * submission (`claims`) the key is claimed as for any submission (a reused key is refused 422 first, rule 3), then
   * released after a 4xx (a definitive failure without a job, rule 4) and kept after a 5xx or a reset (an unknown
   * outcome, rule 5: presenting the key again can only get 422, even though no job exists).
   */
  const submitFaulted: Route['faulted'] = (req, context, fault) => {
    const key = headerValue(req, 'idempotency-key');
    if (!fault.claims || key === undefined) return;
    claim(context.owner, key);
    if (fault.kind === 'status' && fault.answer.status < 500) keys.release(context.owner, key);
  };

  return [
    { method: 'POST', pattern: '/api/v2/jobs', name: 'submitJob', handler: submitJob, faulted: submitFaulted },
    {
      method: 'GET',
      pattern: '/api/v2/jobs',
      name: 'listJobs',
      handler: (_req, res, context) => {
        const statuses = (context.query.get('status') ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
        const page = jobs.list(context.owner, { statuses, limit: listLimit(context.query.get('limit')) });
        sendJson(res, 200, { jobs: page.jobs.map((j) => jobs.toWire(j)), truncated: page.truncated });
      },
    },
    {
      method: 'GET',
      pattern: '/api/v2/jobs/{id}',
      name: 'getJob',
      // The one answer with `logs` where the surface has them (Rules for `logs` 4).
      handler: (_req, res, context) => sendJson(res, 200, jobs.toWire(jobOf(context), { withLogs: true })),
    },
    {
      method: 'POST',
      pattern: '/api/v2/jobs/{id}/cancel',
      name: 'cancelJob',
      handler: (_req, res, context) => {
        // A write: it reaches the job even while a `lag` fault hides it from reads.
        const job = jobs.get(context.owner, context.params.id);
        if (job === undefined) throw notFound('job', context.params.id);
        runner.cancel(job);
        sendJson(res, 200, jobs.toWire(job));
      },
    },
    {
      method: 'GET',
      pattern: '/api/v2/jobs/{id}/events',
      name: 'jobEvents',
      handler: (_req, res, context) => {
        const job = jobOf(context);
        // Snapshot and subscription happen in the same turn: no event can fall between them.
        hub.open(job.id, res, jobs.snapshot(job), isTerminal(job.status), faults.eventStream(context));
      },
    },
    {
      method: 'GET',
      pattern: '/api/v2/jobs/{id}/workflow',
      name: 'jobWorkflow',
      // v2 submissions carry no version pin, so always `api` (rule 4), verbatim, never extra_data (rule 3).
      handler: (_req, res, context) => sendJson(res, 200, { format: 'api', workflow: jobOf(context).workflow }),
    },
  ];
}
