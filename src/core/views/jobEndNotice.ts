/**
 * The notice shown when a job submitted from this window ends (a setting, default on): succeeded with "Open Output" /
 * "Show Job", failed with the error and "Show Job". vscode-free: the extension turns a {@link JobEndNotice} into a
 * message with buttons.
 */
import { isTerminalStatus, type JobError } from '../jobs/model';
import type { Translate } from '../util/l10n';

/** What decides whether a job's end is told (the one place of that decision). */
interface NotifyFacts {
  /** The setting `comfyCloud.notifyOnJobEnd` (default true). */
  enabled: boolean;
  /** Whether the job was submitted from this window (a job of the CLI or another window is never told here). */
  submittedHere: boolean;
  /** Whether a view already shows this job's end to the user (the job monitor panel): no toast then. */
  shownElsewhere?: boolean;
}

/** True when a job's end gets a notification: the setting is on, the job is this window's, nothing else shows it. */
export function shouldNotifyJobEnd(facts: NotifyFacts): boolean {
  return facts.enabled && facts.submittedHere && !facts.shownElsewhere;
}

/** A button of the notice: open the first output in an editor, or reveal the job in the Jobs view. */
type JobEndAction = 'openOutput' | 'showJob';

/** The notice: its severity, its text (English through `t`, server strings not yet cleaned) and its buttons. */
interface JobEndNotice {
  severity: 'info' | 'warning' | 'error';
  message: string;
  actions: JobEndAction[];
}

/** How a job ended, as the submitter saw it. */
export interface JobEnd {
  jobId: string;
  /** The job's last status (terminal unless the watch gave up). */
  status: string;
  /** How many outputs were saved on this machine. */
  files: number;
  /** The workflow's name (its file's base name) when this machine remembers it: the notice names the job by it. */
  workflow?: string;
  /** The job's error (a failed job): its code, message, node id and node class, each possibly null. */
  error?: Partial<Pick<JobError, 'code' | 'message' | 'nodeId' | 'classType'>> | null;
}

/**
 * The notice for a job's end: succeeded → info, "N output(s) saved", Open Output (when a file was saved) and Show
 * Job; canceled → a plain info; failed or expired → error with the error's code, message and node, and Show Job; a
 * status that is not terminal (the watch gave up) → warning with Show Job. The job is named by its workflow and its id
 * shortened to 8 characters (`invert.json (job 8de124e6)`), or by the id alone (`job 8de124e6`).
 */
export function jobEndNotice(end: JobEnd, t: Translate): JobEndNotice {
  const id = end.jobId.slice(0, 8);
  const short = end.workflow ? t('{0} (job {1})', end.workflow, id) : t('job {0}', id);
  if (end.status === 'succeeded') {
    const message =
      end.files === 1
        ? t('Comfy Cloud: {0} succeeded — 1 output saved.', short)
        : t('Comfy Cloud: {0} succeeded — {1} outputs saved.', short, end.files);
    return { severity: 'info', message, actions: end.files > 0 ? ['openOutput', 'showJob'] : ['showJob'] };
  }
  if (end.status === 'canceled')
    return { severity: 'info', message: t('Comfy Cloud: {0} was canceled.', short), actions: [] };
  if (!isTerminalStatus(end.status)) {
    return {
      severity: 'warning',
      message: t('Comfy Cloud: {0} is still {1}; the Jobs view follows it.', short, end.status),
      actions: ['showJob'],
    };
  }
  const error = end.error ?? undefined;
  const node = error?.nodeId
    ? error.classType
      ? t(' at node {0} ({1})', error.nodeId, error.classType)
      : t(' at node {0}', error.nodeId)
    : '';
  const what = error?.message ? `: ${error.message}` : '.';
  const code = error?.code ? ` [${error.code}]` : '';
  return {
    severity: 'error',
    message: t('Comfy Cloud: {0} {1}{2}{3}{4}', short, end.status, node, what, code),
    actions: ['showJob'],
  };
}

/**
 * The ONE notice for several jobs found ended at start-up (they ended while the window was closed or reloading):
 * "N jobs ended while VS Code was away: 2 succeeded, 1 failed — 3 outputs saved." Severity: error when one failed or
 * expired, else info; the counts per status in the order succeeded, failed, expired, canceled, then any other status.
 * A single end reads as {@link jobEndNotice} (no summary for one job).
 */
export function jobEndsSummary(ends: readonly JobEnd[], t: Translate): JobEndNotice {
  if (ends.length === 1) return jobEndNotice(ends[0]!, t);
  const counts = new Map<string, number>();
  for (const end of ends) counts.set(end.status, (counts.get(end.status) ?? 0) + 1);
  const order = ['succeeded', 'failed', 'expired', 'canceled'];
  const statuses = [...order.filter((s) => counts.has(s)), ...[...counts.keys()].filter((s) => !order.includes(s))];
  const parts = statuses.map((s) => t('{0} {1}', counts.get(s)!, s)).join(', ');
  const files = ends.reduce((n, e) => n + e.files, 0);
  const saved = files === 0 ? '' : files === 1 ? t(' — 1 output saved') : t(' — {0} outputs saved', files);
  const bad = ends.some((e) => e.status === 'failed' || e.status === 'expired');
  return {
    severity: bad ? 'error' : 'info',
    message: t('Comfy Cloud: {0} jobs ended while VS Code was away: {1}{2}.', ends.length, parts, saved),
    actions: ['showJob'],
  };
}
