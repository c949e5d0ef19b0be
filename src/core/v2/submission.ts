/**
 * Submitting so that a job submitted once runs once and is never lost from view: Job and Asset API v2,
 * POST /api/v2/jobs rules 3–7 ("Idempotency-Key" reject-on-duplicate; released on a definitive failure; kept
 * claimed on an unknown outcome; no replay) and "Errors" (429 by code, Retry-After).
 *
 * 1. One Idempotency-Key per send of a logical submission, written to the state store BEFORE the request is sent.
 * 2. A definitive failure without a job releases the key (the record goes); `queue_full` and
 *    `deployment_not_ready` are retried with the SAME key after Retry-After, within the retry budget.
 * 3. An unknown outcome (timeout, reset, 5xx after sending) is never resubmitted under its key: the record becomes
 *    `outcome_unknown` with the time of the send (`sentAt`), and {@link OutcomeUnknownError} is thrown. Deciding it
 *    (the job found in the listing, or its absence proven and the submission sent again under a new key) is
 *    core/jobs/unknownOutcome.ts's, the one resolution every caller uses.
 * 4. A 2xx means the job exists, whatever its body (States and transitions: a 201 means the job is durably recorded):
 *    the record keeps the key, `created` with the id when it can be read (then the job is read by GET); without one,
 *    `outcome_unknown` marked `acceptedUnread` (looked for, and never taken for absent); it is never released.
 * 5. A connection that never opened, or an abort while waiting out a Retry-After, sent nothing: definitive, the
 *    key is released and the error says so.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../http/clock';
import { AbortError, ApiError, ConnectionError, TimeoutError } from '../http/errors';
import { JobCreatedUnreadableError, type JobSnapshot, type JobsApi, type Submission } from './jobs';
import { assertApiWorkflow } from '../util/workflow';
import { withRetry, type RetryPolicy } from '../http/retry';
import { OutcomeUnknownError } from '../jobs/unknownOutcome';
import { submissionRecord, type JobRecord, type StateStore } from '../state/stateStore';

export { OutcomeUnknownError } from '../jobs/unknownOutcome';

/**
 * What a durable submission needs of the v2 client (`V2Client` is one, structurally: declared here so that the
 * client can use this module without a circle of imports): its base URL (the record's), its clock, POST
 * /api/v2/jobs, and GET /api/v2/jobs/{id} with the client's retries.
 */
interface SubmissionClient {
  readonly http: { readonly baseUrl: string };
  readonly clock: Clock;
  readonly jobs: Pick<JobsApi, 'submit'>;
  getJob(jobId: string, options: { signal?: AbortSignal }): Promise<JobSnapshot>;
}

/** Options of {@link submitDurably}. */
export interface DurableSubmitOptions {
  store: StateStore;
  idempotencyKey?: string;
  partnerApiKey?: string;
  workflowFile?: string;
  client?: JobRecord['client'];
  /** The batch this submission is a variation of: recorded with it. */
  batchId?: string;
  /** The key the submission first went out under, when `idempotencyKey` succeeds a retired one: recorded with it. */
  originKey?: string;
  signal?: AbortSignal;
  policy?: RetryPolicy;
  /** Told before each wait for a retry (queue full, deployment starting): the wait (ms) and why. */
  onWait?: (info: { delayMs: number; reason: string }) => void;
}

/** A durable submission's outcome: the job (from the 201, or found after an unknown outcome) and its record. */
export interface DurableSubmission {
  snapshot: JobSnapshot;
  record: JobRecord;
  idempotencyKey: string;
  /** True when the job was found in the listing after an unknown outcome (core/jobs/unknownOutcome.ts). */
  adopted: boolean;
}

/**
 * True when an error after sending leaves the outcome unknown (the job may exist): a timeout, a broken connection,
 * an abort while the request was under way, a 5xx. Not when nothing was sent (`requestSent: false`: refused, host
 * not found, aborted before sending or while waiting to retry).
 */
function isUnknownOutcome(err: unknown): boolean {
  if ((ConnectionError.is(err) || AbortError.is(err)) && !err.requestSent) return false;
  return (
    TimeoutError.is(err) || ConnectionError.is(err) || AbortError.is(err) || (ApiError.is(err) && err.status >= 500)
  );
}

/**
 * Submits `workflow` under the rules above, once under its key (retried only as rule 2 allows).
 * @throws InputError before anything is written for a non-API workflow; ApiError for a definitive refusal (the key
 *   released); OutcomeUnknownError when a job may exist (the record `outcome_unknown`, its `sentAt` the last send);
 *   AbortError (the record is kept as `outcome_unknown` when the request may have been sent).
 */
export async function submitDurably(
  client: SubmissionClient,
  workflow: unknown,
  options: DurableSubmitOptions,
): Promise<DurableSubmission> {
  assertApiWorkflow(workflow);
  const { store } = options;
  const idempotencyKey = options.idempotencyKey ?? randomUUID();
  // Who is submitting is in it: a `pending` record whose process died is reconciled later (reconcile.ts).
  const record = await submissionRecord(
    workflow,
    {
      idempotencyKey,
      baseUrl: client.http.baseUrl,
      state: 'pending',
      workflowFile: options.workflowFile,
      client: options.client,
      batchId: options.batchId,
      originKey: options.originKey,
    },
    client.clock.now(),
  );
  // A key given again (e.g. `--idempotency-key K` after an unknown outcome) may already stand for a job: its record
  // is kept as it is, never overwritten, so the job stays in view whatever the server answers now. Checked and
  // written under the store's lock, so two processes given the same key never both think it is theirs.
  const previous = await store.putIfAbsent(record);

  let submission: Submission;
  let attempts = 0;
  /** When the last attempt was sent (ms): a job it made was created about then. */
  let sentAt = client.clock.now();
  try {
    submission = await withRetry(
      'submit',
      () => {
        attempts++;
        sentAt = client.clock.now();
        return client.jobs.submit(workflow, {
          idempotencyKey,
          partnerApiKey: options.partnerApiKey,
          signal: options.signal,
        });
      },
      {
        clock: client.clock,
        signal: options.signal,
        policy: options.policy,
        onRetry: (i) => options.onWait?.({ delayMs: i.delayMs, reason: i.reason }),
      },
    );
  } catch (err) {
    if (JobCreatedUnreadableError.is(err) && err.jobId) {
      // The job exists and its id is known: remembered as created; read by GET, or left for `watch` when that fails.
      const known = await createdButUnreadable(client, err.jobId, previous ?? record, options);
      if (known) return known;
      throw err;
    }
    // The key refused after a retry of THIS call: it was claimed by one of our own earlier attempts (a 429 that did
    // claim it after all), so a job may exist: unknown, never a release.
    const reusedByUs = attempts > 1 && ApiError.hasCode(err, 'idempotency_key_reuse');
    if (!reusedByUs && !JobCreatedUnreadableError.is(err) && !isUnknownOutcome(err)) {
      // A definitive answer: no job was created by THIS request. The server released the key, except on
      // `idempotency_key_reuse`: the key stands for an earlier request, whose record (if it is ours) stays.
      if (!previous) await store.remove(idempotencyKey);
      throw err;
    }
    if (previous?.state === 'created') throw err; // a known job holds the key: nothing more is unknown
    // A 2xx whose body gave no id: the job exists, only its id is unknown (`acceptedUnread`: looked for, and never
    // taken for absent).
    const unknownFields = {
      state: 'outcome_unknown' as const,
      sentAt: new Date(sentAt).toISOString(),
      ...(JobCreatedUnreadableError.is(err) ? { acceptedUnread: true } : {}),
    };
    const unknown = (await store.update(idempotencyKey, unknownFields)) ?? { ...record, ...unknownFields };
    if (AbortError.is(err)) throw err;
    throw new OutcomeUnknownError(unknown, err);
  }
  const created = {
    ...(previous ?? record),
    state: 'created' as const,
    jobId: submission.job.id,
    expiresAt: submission.job.expires_at ?? undefined,
    lastStatus: submission.job.status,
  };
  await store.put(created);
  return { snapshot: submission, record: created, idempotencyKey, adopted: false };
}

/**
 * A 2xx whose body could not be read, with the job id salvaged: the record becomes `created` with that id at once,
 * then the job is read by GET (retried like any read). Undefined when the GET fails too (the record stays created:
 * `watch <id>` finds it later).
 */
async function createdButUnreadable(
  client: SubmissionClient,
  jobId: string,
  base: JobRecord,
  options: DurableSubmitOptions,
): Promise<DurableSubmission | undefined> {
  await options.store.put({ ...base, state: 'created', jobId });
  let snapshot: JobSnapshot;
  try {
    snapshot = await client.getJob(jobId, { signal: options.signal });
  } catch {
    return undefined;
  }
  const created = {
    ...base,
    state: 'created' as const,
    jobId: snapshot.job.id,
    expiresAt: snapshot.job.expires_at ?? undefined,
    lastStatus: snapshot.job.status,
  };
  await options.store.put(created);
  return { snapshot, record: created, idempotencyKey: base.idempotencyKey, adopted: false };
}
