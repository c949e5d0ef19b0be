/**
 * `comfy-cloud jobs`: lists the jobs submitted from this machine (CLI and VS Code share the state store) with their
 * current state, then the jobs the server lists that this machine did not submit.
 *
 * Rules:
 * - submissions left `pending` by a process that died, or of unknown outcome, are reconciled first (a job the
 *   server created for them is adopted and said);
 * - only the records of the configured server, unless `--all`;
 * - everything through the run's backend (CliContext `jobs`), whatever the connection's API;
 * - each remembered job is looked up at most {@link LOOKUP_CONCURRENCY} at once, each within
 *   {@link LOOKUP_BUDGET_MS}: a slow server never holds the list up; a row is printed as soon as
 *   its answer is in, a failed lookup shows its error code in the row; a changed status is written back to the store
 *   (a terminal one is kept: the store never goes back from it);
 * - a job the server answers 404 for (any code: `not_found`, `job_not_found`; gone past retention, or a server
 *   restarted without it), or not terminal past its `expires_at`, is `lost` (the client's own status, as the
 *   extension's Jobs view says it): in its row, in `--json` (`status`), and in its records;
 * - the server's own listing where its API lists jobs (the backend's `capabilities.list`; job listing is not shown in
 *   Job and Asset API v2, the self-hosted companion serves one); none (404, 501) is not an error,
 *   any other failure is said on stderr;
 * - exit code 1 when every lookup failed (the server is probably unreachable);
 * - with `--json`, one document `{remembered: [{record, status, job?, problem?}], server: [job]}` (`job` the server's
 *   own document of it where its API has one; `server` the client's model of each job): `status` is what the
 *   row says (the server's, `lost`, or the remembered one).
 */
import type { Command } from 'commander';
import * as path from 'node:path';
import {
  AbortError,
  ApiError,
  ComfyError,
  LOST_STATUS,
  isLostStatus,
  isNotFound,
  isTerminalStatus,
  statusAt,
  type Job,
} from '../../core';
import type { JobRecord } from '../../core/state';
import type { CliContext } from '../context';
import { Exit, describe, shown } from '../output';

/** Job lookups of `jobs` at once, and the time each may take (ms): a slow server never holds the list up. */
const LOOKUP_CONCURRENCY = 4;
const LOOKUP_BUDGET_MS = 10_000;

/**
 * One remembered submission with what its lookup found: the job, or the problem (an error code); `status` is what the
 * row says (the server's, the client's `lost`, or the remembered one).
 */
interface Row {
  record: JobRecord;
  status: string;
  /** The job as the server's answer wrote it (JobAnswer `wire`), else the client's model of it. */
  job?: unknown;
  problem?: string;
}

/** Registers `jobs` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('jobs')
    .description(
      'list the jobs submitted from this machine (CLI and VS Code) with their current state, and those the server lists',
    )
    .option('--all', 'also the jobs of other servers than --base-url')
    .action(async (opts: { all?: boolean }) => {
      const { backend } = (await ctx.jobs()).lease;
      const baseUrl = backend.baseUrl;
      // Submissions left pending by a process that died, or of unknown outcome: looked up before listing.
      for (const r of await backend.reconcile(ctx.store(), io.signal).catch(() => [])) {
        if (r.outcome === 'adopted')
          output.message(
            `found job ${shown(r.record.jobId ?? '?')} for the submission of ${r.record.submittedAt} (Idempotency-Key ${r.record.idempotencyKey})`,
          );
      }
      const records = (await ctx.store().list()).filter((r) => opts.all || r.baseUrl === baseUrl);
      const rows: Row[] = [];
      let lookups = 0;
      let failed = 0;
      // Looked up in parallel, each within a short budget; a row is printed as soon as its answer is in.
      await mapConcurrent(records, LOOKUP_CONCURRENCY, async (record) => {
        const row: Row = { record, status: rememberedStatus(record) };
        /** Writes the row's status (and expiry) back to the record; the row shows the record as stored. */
        const remember = async (said: { status: string; expiresAt?: string | null }): Promise<void> => {
          const [stored] = await ctx
            .store()
            .recordStatus(record.idempotencyKey, said)
            .catch(() => []);
          if (stored) row.record = stored;
        };
        if (record.jobId && record.baseUrl === baseUrl) {
          lookups++;
          try {
            const signal = io.signal
              ? AbortSignal.any([io.signal, AbortSignal.timeout(LOOKUP_BUDGET_MS)])
              : AbortSignal.timeout(LOOKUP_BUDGET_MS);
            const answer = await backend.get(record.jobId, signal);
            row.job = answer.wire ?? answer.job;
            // Not terminal past its expires_at: the server keeps a job only until then (Job and Asset API v2, Limits, rule 2).
            row.status = statusAt(answer.job.status, answer.job.expiresAt, Date.now());
            if (row.status !== record.lastStatus)
              await remember({ status: row.status, expiresAt: answer.job.expiresAt });
          } catch (e) {
            if (io.signal?.aborted) throw e;
            row.problem = ComfyError.is(e) ? e.code : String(e);
            if (isNotFound(e)) {
              // The server answered, and no longer knows the job: lost, not a failed lookup.
              // A record that knew the job ended keeps its terminal status (the store never goes back from one).
              await remember({ status: LOST_STATUS });
              const kept = row.record.lastStatus;
              row.status = kept !== undefined && isTerminalStatus(kept) ? kept : LOST_STATUS;
            } else {
              failed++;
            }
          }
        }
        rows.push(row);
        if (!output.json) output.result(jobRow(row));
      });
      // The server's own listing where its API lists jobs (capabilities.list; on v2 the self-hosted companion and the
      // emulator answer, not the v2 contract): jobs this machine did not submit, e.g. from another machine.
      const known = new Set(records.map((r) => r.jobId).filter(Boolean));
      let server: Job[] = [];
      if (backend.capabilities.list) {
        try {
          server = (await backend.list({ limit: 100, signal: io.signal })).jobs.filter((j) => !known.has(j.id));
        } catch (e) {
          if (AbortError.is(e)) throw e;
          // No listing on this surface (404, 501): the remembered jobs are the answer. Any other failure is said.
          if (!(ApiError.is(e) && (e.status === 404 || e.status === 501)))
            output.warn(`(the server's job listing failed: ${describe(e)})`);
        }
      }
      if (output.json)
        output.document({
          remembered: rows.map(({ record, status, job, problem }) => ({ record, status, job, problem })),
          server,
        });
      else {
        for (const j of server)
          output.result(
            [
              shown(j.id),
              shown(j.status),
              shown(j.createdAt ?? '-'),
              '(listed by the server, not submitted from here)',
            ].join('  '),
          );
        if (rows.length === 0 && server.length === 0) output.message(`no remembered jobs for ${baseUrl}`);
      }
      if (lookups > 0 && failed === lookups) {
        output.warn(`every job lookup failed (${failed}); is the server at ${baseUrl} reachable?`);
        ctx.setExitCode(Exit.failed);
      }
    });
}

/** What a record says of its job before (or without) a lookup: its last status, or where its submission stands. */
function rememberedStatus(r: JobRecord): string {
  if (r.state === 'created') return r.lastStatus ?? '?';
  return r.state === 'outcome_unknown' || r.state === 'pending' ? 'unknown: check before resubmitting' : r.state;
}

/** One row of `jobs`: id, status, submission time, workflow file, problem; server-chosen parts shown escaped. */
function jobRow({ record: r, status, problem }: Row): string {
  const note = isLostStatus(status)
    ? `(the server no longer knows this job: it expired, or the server was restarted without it${problem ? `; ${shown(problem)}` : ''})`
    : problem
      ? `(${shown(problem)})`
      : '';
  return [
    shown(r.jobId ?? '(no job id)'),
    shown(status),
    r.submittedAt,
    r.workflowFile ? path.basename(r.workflowFile) : '-',
    note,
  ]
    .join('  ')
    .trim();
}

/** Runs `fn` over `items` with at most `limit` at once; rejects with the first failure. */
async function mapConcurrent<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
