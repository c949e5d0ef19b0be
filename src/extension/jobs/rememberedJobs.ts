import * as vscode from 'vscode';
import { ComfyError, isTerminalStatus, type JobService } from '../../core';
import type { JobRecord, StateStore } from '../../core/state';
import { toAbortSignal } from '../platform/cancellation';
import type { Display } from '../platform/display';
import type { Log } from '../platform/log';

/** The status of a submission whose outcome is unknown (the CLI's word too; "Show Jobs" returns it as is, shows it translated). */
const UNKNOWN_OUTCOME = 'unknown: check before resubmitting';

/** One remembered job as "Show Jobs" lists it. */
export interface RememberedJob {
  record: JobRecord;
  /** The server's status now (GET), the last one seen, or the submission's state when there is no job id. */
  status: string;
  /** Set when the server could not be asked. */
  problem?: string;
}

/**
 * The jobs submitted from this machine — from VS Code or the `comfy-cloud` CLI, which
 * share the state store — for the configured server, newest first, with their current status.
 */
export class RememberedJobs {
  constructor(
    private readonly store: StateStore,
    private readonly jobs: JobService,
    private readonly log: Log,
    private readonly display: Display,
  ) {}

  /**
   * The remembered jobs of the configured server with their current status (records past retention pruned).
   * `signal` stops the reading (so does disposing the job service). @throws InputError `bad_base_url`; AbortError.
   */
  async list(signal?: AbortSignal): Promise<RememberedJob[]> {
    await this.store.prune().catch(() => 0);
    return this.jobs.use(async (lease) => {
      const { backend } = lease;
      const aborted = signal ? AbortSignal.any([lease.signal, signal]) : lease.signal;
      // Submissions left pending by a process that died (or of unknown outcome) are looked up first (Job and Asset
      // API v2, POST /api/v2/jobs, rule 5: look, never resubmit); the
      // job service logs what became of each, and shares the run with its start-up one.
      await this.jobs.reconcile().catch(() => []);
      const records = (await this.store.list()).filter((r) => r.baseUrl === backend.baseUrl);
      return Promise.all(
        records.map(async (record): Promise<RememberedJob> => {
          if (!record.jobId) return { record, status: record.state === 'created' ? record.state : UNKNOWN_OUTCOME };
          if (record.lastStatus && isTerminalStatus(record.lastStatus)) return { record, status: record.lastStatus };
          try {
            const { job } = await backend.get(record.jobId, aborted);
            if (job.status !== record.lastStatus) await this.store.recordStatus(record.idempotencyKey, job);
            return { record, status: job.status };
          } catch (err) {
            const problem = ComfyError.is(err) ? err.code : String(err);
            this.log.warn('jobs', `job ${record.jobId}: ${problem}`);
            return { record, status: record.lastStatus ?? record.state, problem };
          }
        }),
      );
    });
  }

  /**
   * "Copy Job Id" from the Command Palette: the list in a quick pick. Returns the id of the job picked (neutralized:
   * a control character in a server-chosen id must not reach a terminal through a paste), or undefined.
   */
  async pickJobId(): Promise<string | undefined> {
    const jobs = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Comfy Cloud: reading jobs') },
      async (_progress, token) => {
        const cancellation = toAbortSignal(token);
        try {
          return await this.list(cancellation.signal);
        } finally {
          cancellation.dispose();
        }
      },
    );
    if (jobs.length === 0) {
      void this.display.info(vscode.l10n.t('Comfy Cloud: no jobs submitted from this machine to this server yet.'));
      return undefined;
    }
    // Job ids, statuses and problems are the server's words; the icon (codicon syntax) is ours, added after.
    const safe = (text: string): string => this.display.text(text);
    const picked = await vscode.window.showQuickPick(
      jobs.map((j) => ({
        label: `${icon(j.status)} ${safe(j.record.jobId ?? vscode.l10n.t('(no job id yet)'))}`,
        // Our own status word is translated; a server's status is shown as it is.
        description: safe(
          `${j.status === UNKNOWN_OUTCOME ? vscode.l10n.t('unknown: check before resubmitting') : j.status}${j.problem ? ` (${j.problem})` : ''} · ${j.record.client ?? ''}`,
        ),
        detail: safe(
          vscode.l10n.t(
            '{0} · submitted {1} · Idempotency-Key {2}',
            j.record.workflowFile ?? vscode.l10n.t('workflow from an editor'),
            new Date(j.record.submittedAt).toLocaleString(),
            j.record.idempotencyKey,
          ),
        ),
        job: j,
      })),
      {
        title: vscode.l10n.t('Comfy Cloud: jobs submitted from this machine'),
        placeHolder: vscode.l10n.t('Pick a job to copy its id'),
        matchOnDetail: true,
      },
    );
    return picked?.job.record.jobId ? safe(picked.job.record.jobId) : undefined;
  }
}

function icon(status: string): string {
  switch (status) {
    case 'succeeded':
      return '$(pass)';
    case 'failed':
      return '$(error)';
    case 'canceled':
    case 'canceling':
      return '$(circle-slash)';
    case 'expired':
      return '$(history)';
    case 'outcome_unknown':
    case UNKNOWN_OUTCOME:
      return '$(question)';
    case 'queued':
    case 'pending':
      return '$(clock)';
    default:
      return '$(sync~spin)';
  }
}
