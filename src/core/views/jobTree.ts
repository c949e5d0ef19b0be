/**
 * The Jobs view's model, without `vscode`: which jobs are shown, in which group, and
 * every word of an item (label, description, icon, `contextValue`, Markdown tooltip), so all of it is tested with
 * plain mocha. The extension's tree provider (src/extension/jobsView.ts) only turns these into `TreeItem`s.
 *
 * Every server-chosen string (job id, status, progress message, node class, error code and message, output name,
 * request id) passes through the injected `clean` (the extension's redactor: secrets redacted, control and bidi
 * characters escaped: server data is untrusted), and in the Markdown tooltip is also Markdown-escaped, so a server
 * cannot inject links, images or emphasis.
 */
import { untranslated, type Translate } from '../util/l10n';
import { escapeMarkdown, neutralize } from '../util/text';
import { isExpiredRecord, type JobRecord } from '../state/stateStore';
import { isEndedStatus, isLostStatus, isTerminalStatus, statusAt, type Job, type JobError, type JobOutput } from '../jobs/model';
import { progressFraction, shownStep } from '../jobs/progress';
import type { JobOutage, JobState } from '../jobs/state';
import { outputBytes } from '../jobs/outputFiles';
import { isPlainObject, isPngOutput, prefixOfOutputName } from '../util/workflow';
import type { BatchRecord } from '../state/batchRecords';
import { batchStatus, describeCounts, type BatchStatus } from '../batch/status';

/** One job the view knows of: its remembered submission, the server's last description of it, or both. */
export interface JobEntry {
  /** The base URL of the server it belongs to. */
  readonly baseUrl: string;
  /** The job id (a remembered submission may not have one yet). */
  readonly jobId: string | undefined;
  /** The submission as this machine remembers it (VS Code or CLI), when it was submitted from here. */
  record?: JobRecord;
  /** The job as the server last described it (a watch, the listing). */
  job?: Job;
  /** The request id of the last answer that described it, when known. */
  requestId?: string;
  /** The outage the job's watch rides out (its reads fail, it retries), or null/absent while reads succeed. */
  outage?: JobOutage | null;
}

/**
 * The entry of a job as it stands now: what the view keeps of it (which job, its remembered submission) with the job
 * service's state of it (the one source: the job, its request id, its outage), read when the view draws, never kept.
 * A job not terminal past its `expires_at` reads `lost` (model.ts `statusAt`) once `now` is given.
 */
export function liveEntry(shown: Pick<JobEntry, 'baseUrl' | 'jobId' | 'record'>, state: JobState | undefined, now?: number): JobEntry {
  const entry: JobEntry = { baseUrl: shown.baseUrl, jobId: shown.jobId, record: shown.record };
  if (!state) return entry;
  const status = now === undefined ? state.job.status : statusAt(state.job.status, state.job.expiresAt, now);
  entry.job = status === state.job.status ? state.job : { ...state.job, status, queuePosition: null };
  entry.requestId = state.requestId;
  entry.outage = state.outage;
  return entry;
}

/**
 * What a job's watch riding out an outage says, the same in the Jobs view and the monitor: the server is unreachable
 * (why, cleaned), and in how long it retries (rounded up to the second). `short`: without the why (the Jobs view's
 * row, where a connection error's words would push the rest out of sight; its tooltip has them).
 */
export function describeOutage(outage: JobOutage, t: Translate = untranslated, clean: (text: string) => string = (text) => neutralize(text), short = false): string {
  const seconds = Math.ceil(outage.retryInMs / 1000);
  return short ? t('server unreachable, retrying in {0} s', seconds) : t('server unreachable ({0}), retrying in {1} s', clean(outage.reason), seconds);
}

/** The two groups of the view. */
export type JobGroup = 'running' | 'recent';

/** The status an entry shows: the server's job, else the record's last status, else the submission's state. */
function entryStatus(entry: JobEntry): string {
  if (entry.job) return entry.job.status;
  if (entry.record?.lastStatus) return entry.record.lastStatus;
  if (!entry.record?.jobId && entry.record?.state === 'outcome_unknown') return 'outcome_unknown';
  return entry.record?.state === 'pending' ? 'pending' : 'unknown';
}

/**
 * The group of an entry: "recent" when it has ended (a terminal status: succeeded, failed, canceled, expired; or the
 * client's `lost`: the server no longer knows it), or it is a record whose outcome cannot be learned (no job id and
 * not pending); "running" otherwise (queued, running, canceling, a pending submission). Jobs are grouped Running /
 * Recent; only "running" counts (the badge, the status bar).
 */
export function groupOf(entry: JobEntry): JobGroup {
  const status = entryStatus(entry);
  if (isEndedStatus(status)) return 'recent';
  // A job with an id that is not known to have ended is followed until it does; without an id, only a pending
  // submission is still under way (an unknown outcome is looked up by reconciling, not here).
  if (!entry.jobId) return status === 'pending' ? 'running' : 'recent';
  return 'running';
}

/** True when the view should follow the job (a non-terminal job with an id): it is then updated live. */
export function needsFollow(entry: JobEntry): boolean {
  return entry.jobId !== undefined && groupOf(entry) === 'running';
}

/** The stable id of a job's tree item: base URL and job id (or Idempotency-Key before there is a job id). */
export function entryKey(entry: Pick<JobEntry, 'baseUrl' | 'jobId' | 'record'>): string {
  return `${entry.baseUrl} ${entry.jobId ?? `key:${entry.record?.idempotencyKey ?? ''}`}`;
}

/** Options of {@link mergeEntries}. */
export interface MergeOptions {
  /**
   * Now (ms since the epoch): records past their `expires_at` ({@link isExpiredRecord}) are left out, and a job not
   * terminal past its `expires_at` reads `lost` (model.ts `statusAt`).
   */
  now?: number;
  /** Jobs removed from the list: a listed or live job that is hidden (and unchanged) is left out. */
  hidden?: HiddenJobs;
}

/**
 * The jobs removed from the list ("Remove from List", "Clear Finished") that only the server's listing or a live
 * watch knows (their record, if any, is forgotten from the store): hidden for the session, or until the job changes
 * (another status, end time or outputs count). Clear Finished and Remove from List shrink the list.
 */
export class HiddenJobs {
  private readonly hidden = new Map<string, string>();

  /** Hides the job of entry key `key` as `job` describes it now (no job: hidden until any job shows for it). */
  hide(key: string, job: Job | undefined): void {
    this.hidden.set(key, job ? HiddenJobs.fingerprint(job) : '');
  }

  /** True when `key` is hidden and `job` is as it was when hidden (a changed job shows again, and is unhidden). */
  isHidden(key: string, job: Job): boolean {
    const was = this.hidden.get(key);
    if (was === undefined) return false;
    if (was === HiddenJobs.fingerprint(job)) return true;
    this.hidden.delete(key);
    return false;
  }

  /** How many jobs are hidden. */
  get size(): number {
    return this.hidden.size;
  }

  private static fingerprint(job: Job): string {
    return `${job.status} ${job.completedAt ?? ''} ${job.outputs.length}`;
  }
}

/**
 * Merges remembered records and the server's listing into entries for `baseUrl`: records of other servers are left
 * out; a listed job with a record is joined to it (one entry per job id); `previous` entries keep their newer job
 * snapshot (a live watch's word beats a listing read before it, and a terminal snapshot with its `logs` beats the
 * listing's copy without). Order: newest first (created or submitted time).
 */
export function mergeEntries(
  baseUrl: string,
  records: readonly JobRecord[],
  listing: readonly Job[],
  previous?: ReadonlyMap<string, JobEntry>,
  options: MergeOptions = {},
): JobEntry[] {
  const byKey = new Map<string, JobEntry>();
  for (const record of records) {
    if (record.baseUrl !== baseUrl) continue;
    if (options.now !== undefined && isExpiredRecord(record, options.now)) continue;
    const entry: JobEntry = { baseUrl, jobId: record.jobId, record };
    byKey.set(entryKey(entry), entry);
  }
  for (const job of listing) {
    const key = entryKey({ baseUrl, jobId: job.id });
    if (!byKey.has(key) && options.hidden?.isHidden(key, job)) continue;
    const known = byKey.get(key);
    if (known) known.job = job;
    else byKey.set(key, { baseUrl, jobId: job.id, job });
  }
  if (previous) {
    for (const [key, old] of previous) {
      // Another server's job (the connection changed) is never carried over.
      if (old.baseUrl !== baseUrl) continue;
      const entry = byKey.get(key);
      if (!entry) {
        // A job seen live (e.g. just submitted) but not yet in the store or the listing stays shown, unless it was
        // removed from the list (and has not changed since).
        if (old.job && !options.hidden?.isHidden(key, old.job)) byKey.set(key, old);
        continue;
      }
      // The live snapshot wins while the listing says the job is not over, and once it is over itself: a terminal
      // job no longer changes, and the live one came from GET, the one answer with `logs` (the listing never has them).
      // A job the client marked lost is the exception: a listing that knows it again is the server's word.
      const relisted = entry.job !== undefined && old.job !== undefined && isLostStatus(old.job.status);
      if (old.job && !relisted && (!entry.job || !isTerminalStatus(entry.job.status) || isTerminalStatus(old.job.status))) entry.job = old.job;
      entry.requestId ??= old.requestId;
    }
  }
  if (options.now !== undefined) {
    for (const entry of byKey.values()) {
      const status = entry.job ? statusAt(entry.job.status, entry.job.expiresAt, options.now) : undefined;
      if (entry.job && status !== entry.job.status) entry.job = { ...entry.job, status: status!, queuePosition: null };
    }
  }
  return [...byKey.values()].sort((a, b) => timeOf(b) - timeOf(a));
}

function timeOf(entry: JobEntry): number {
  const t = Date.parse(entry.job?.createdAt ?? entry.record?.submittedAt ?? '');
  return Number.isFinite(t) ? t : 0;
}

/** A codicon id and the theme color it is drawn in (undefined: the default foreground). */
export interface StatusIcon {
  id: string;
  color?: string;
}

/** The icon of a status: spinning while running, a theme color per outcome: one codicon per status. */
export function statusIcon(status: string): StatusIcon {
  switch (status) {
    case 'succeeded':
      return { id: 'pass', color: 'testing.iconPassed' };
    case 'failed':
      return { id: 'error', color: 'testing.iconFailed' };
    case 'canceled':
    case 'canceling':
      return { id: 'circle-slash', color: 'testing.iconSkipped' };
    case 'expired':
      return { id: 'history' };
    case 'queued':
    case 'pending':
      return { id: 'clock', color: 'testing.iconQueued' };
    case 'running':
      return { id: 'sync~spin' };
    case 'lost':
      return { id: 'debug-disconnect', color: 'testing.iconSkipped' };
    default:
      return { id: 'question' };
  }
}

/** What the presentation needs from outside: the cleaner of server strings, the time now, the translation. */
export interface PresentOptions {
  /** Makes a server string safe to show on one line (the extension's redactor). Default {@link neutralize}. */
  clean?: (text: string) => string;
  /** Now (ms since the epoch), for relative times. */
  now: number;
  /** The words in the user's language (the extension passes `vscode.l10n.t`). Default {@link untranslated}. */
  t?: Translate;
}

/** The icon of a job whose watch rides out an outage: the connection lost, in the theme's warning color. */
export const OUTAGE_ICON: StatusIcon = { id: 'debug-disconnect', color: 'list.warningForeground' };

/** What kind of child a job item has (outputs, the workflow, logs where present, the error). */
export type JobChildKind = 'output' | 'error' | 'logs' | 'workflow';

/** How a child of a job item looks. */
export interface JobChildModel {
  kind: JobChildKind;
  /** Stable id: the job's id ({@link entryKey}) and the child's kind (and output id). */
  id: string;
  label: string;
  description: string;
  /** A codicon id. */
  icon: string;
  /** `jobChild:<kind>` (`output` for an output, as the menus match it); package.json menus match it. */
  contextValue: string;
  /** The output, for an output child. */
  output?: JobOutput;
  /** The error, for an error child. */
  error?: JobError;
}

/** How a job's item looks. */
export interface JobItemModel {
  /** Stable id ({@link entryKey}). */
  id: string;
  label: string;
  description: string;
  icon: StatusIcon;
  /**
   * Flags: `job:<status>[:cancellable][:outputs][:hasId][:rerunnable][:removable]`; package.json menus match them by
   * regex (`/^job:.*:rerunnable(:|$)/`).
   */
  contextValue: string;
  /** Markdown, every server string escaped. */
  tooltip: string;
  /** What a screen reader says: the label, the status spelled out, the description. */
  accessibilityLabel: string;
  group: JobGroup;
  /** The outputs shown as children (a succeeded job's). */
  outputs: JobOutput[];
  /** Every child, in order: outputs, the error, the logs, the workflow. */
  children: JobChildModel[];
}

/** The base name of a path (either separator), for a label. */
function baseName(file: string): string {
  return file.split(/[\\/]/).filter(Boolean).pop() ?? file;
}

/** "5 s ago", "3 min ago", "2 h ago", "4 d ago" from an ISO time; empty when there is none. */
export function relativeTime(iso: string | null | undefined, now: number, t: Translate = untranslated): string {
  const time = Date.parse(iso ?? '');
  if (!Number.isFinite(time)) return '';
  const s = Math.max(0, Math.round((now - time) / 1000));
  if (s < 60) return t('{0} s ago', s);
  if (s < 3600) return t('{0} min ago', Math.floor(s / 60));
  if (s < 86_400) return t('{0} h ago', Math.floor(s / 3600));
  return t('{0} d ago', Math.floor(s / 86_400));
}

/**
 * A status spelled out for a screen reader and the tooltip: the document's statuses and this client's own
 * (`pending`: being submitted; `outcome_unknown`: the submission's outcome is unknown; `lost`: the server no longer
 * knows the job); another value as it is
 * (cleaned). It is the tree item's `accessibilityInformation`, so a screen reader hears the status in words.
 */
export function statusWords(status: string, t: Translate = untranslated, clean: (text: string) => string = (s) => neutralize(s)): string {
  switch (status) {
    case 'queued':
      return t('queued');
    case 'running':
      return t('running');
    case 'succeeded':
      return t('succeeded');
    case 'canceling':
      return t('canceling');
    case 'canceled':
      return t('canceled');
    case 'failed':
      return t('failed');
    case 'expired':
      return t('expired');
    case 'pending':
      return t('being submitted');
    case 'outcome_unknown':
      return t('outcome unknown');
    case 'lost':
      return t('lost: the server no longer knows this job');
    default:
      return t('status {0}', clean(status));
  }
}

/**
 * The description of a job: while running, its progress (`42% · KSampler 21/50`: the value, then the server's
 * message, else the node class and step); while queued, its queue position; otherwise the relative time of its end
 * (or creation). While its watch rides out an outage (a job not ended), that comes first: the server is unreachable
 * and when it retries ({@link describeOutage}, short: the tooltip says why), then what was last read.
 */
export function describeEntry(entry: JobEntry, options: PresentOptions): string {
  const clean = options.clean ?? ((text: string) => neutralize(text));
  const t = options.t ?? untranslated;
  const status = entryStatus(entry);
  const last = describeStatus(entry, status, clean, t, options.now);
  return entry.outage && !isEndedStatus(status) ? [describeOutage(entry.outage, t, clean, true), last].filter(Boolean).join(' · ') : last;
}

/** The description of {@link describeEntry} without the outage. */
function describeStatus(entry: JobEntry, status: string, clean: (text: string) => string, t: Translate, now: number): string {
  const job = entry.job;
  if (status === 'running' && job?.progress) {
    const p = job.progress;
    const value = progressFraction(p);
    const percent = value === null ? '' : `${Math.round(value * 100)}%`;
    const shown = shownStep(p);
    const step = shown ? `${shown.step}/${shown.steps}` : '';
    const detail = p.message ?? [p.currentNodeClass, step].filter(Boolean).join(' ');
    return [percent, detail ? clean(detail) : ''].filter(Boolean).join(' · ') || t('running');
  }
  if (status === 'queued') return job?.queuePosition != null ? t('queued · position {0}', job.queuePosition + 1) : t('queued');
  const when = relativeTime(job?.completedAt ?? job?.createdAt ?? entry.record?.submittedAt, now, t);
  const word = isTerminalStatus(status) ? '' : clean(status);
  return [word, when].filter(Boolean).join(' · ');
}

/**
 * True when a workflow can be had for the entry: from the server (it has a job id) or its remembered file. A lost job's
 * server has forgotten its workflow with it: only the remembered file is left (`status`: the status shown, default the
 * entry's own).
 */
export function hasWorkflowSource(entry: JobEntry, status: string = entryStatus(entry)): boolean {
  if (entry.record?.workflowFile !== undefined) return true;
  return entry.jobId !== undefined && !isLostStatus(status);
}

/**
 * The children of a job item, in order: the outputs of a succeeded job; the error of a job that carries one (code and
 * message; node id and `class_type` in the description); the logs where the job carries them (Job and Asset API v2,
 * Job, rules for `logs`: only a serverless deployment's GET has them); the workflow when it can be had
 * ({@link hasWorkflowSource}).
 */
export function jobChildren(entry: JobEntry, options: PresentOptions): JobChildModel[] {
  const clean = options.clean ?? ((text: string) => neutralize(text));
  const t = options.t ?? untranslated;
  const key = entryKey(entry);
  const status = entryStatus(entry);
  const job = entry.job;
  const children: JobChildModel[] = [];
  if (status === 'succeeded') {
    for (const output of job?.outputs ?? []) {
      children.push({
        kind: 'output',
        id: `${key} output:${output.id}`,
        label: outputLabel(output, clean),
        // A size of 0 is the companion's "not computed yet": not shown (outputFiles.ts outputBytes).
        description: [output.contentType, outputBytes(output) !== null ? t('{0} bytes', outputBytes(output)!) : ''].filter(Boolean).map((x) => clean(x!)).join(' · '),
        icon: /^image\//.test(output.contentType ?? '') ? 'file-media' : 'file',
        // `output:png`: a PNG may carry its workflow (Open Workflow from Image, Run Again from Image).
        contextValue: isPngOutput(output.contentType, output.name) ? 'output:png' : 'output',
        output,
      });
    }
  }
  if (job?.error) {
    const e = job.error;
    const node = [e.nodeId ? t('node {0}', clean(e.nodeId)) : '', e.classType ? clean(e.classType) : ''].filter(Boolean).join(' · ');
    children.push({
      kind: 'error',
      id: `${key} error`,
      label: [e.code ? clean(e.code) : t('error'), e.message ? clean(e.message) : ''].filter(Boolean).join(': '),
      description: node,
      icon: 'warning',
      contextValue: 'jobChild:error',
      error: e,
    });
  }
  if (hasLogs(job?.logs)) {
    children.push({ kind: 'logs', id: `${key} logs`, label: t('Logs'), description: '', icon: 'output', contextValue: 'jobChild:logs' });
  }
  if (hasWorkflowSource(entry)) {
    children.push({ kind: 'workflow', id: `${key} workflow`, label: t('Workflow'), description: '', icon: 'json', contextValue: 'jobChild:workflow' });
  }
  return children;
}

/** The presentation of one entry (see {@link JobItemModel}). */
export function presentEntry(entry: JobEntry, options: PresentOptions): JobItemModel {
  const clean = options.clean ?? ((text: string) => neutralize(text));
  const t = options.t ?? untranslated;
  const md = (text: string): string => escapeMarkdown(clean(text));
  const status = entryStatus(entry);
  const job = entry.job;
  const group = groupOf(entry);
  const file = entry.record?.workflowFile;
  // A file name may hold control or bidi characters too: cleaned like the server's words.
  // Else the SaveImage prefix: remembered at submission, or read from the first output's name.
  const prefix = entry.record?.savePrefix ?? job?.outputs.map((o) => prefixOfOutputName(o.name)).find(Boolean);
  const name = file ? clean(baseName(file)) : prefix ? clean(prefix) : t('job');
  const shortId = entry.jobId ? clean(entry.jobId.slice(0, 8)) : '';
  const children = jobChildren(entry, options);
  const outputs = children.flatMap((c) => (c.output ? [c.output] : []));
  const cancellable = entry.jobId !== undefined && group === 'running' && status !== 'canceling' && status !== 'pending';
  const flags = [`job:${/^[a-z_]+$/.test(status) ? status : 'unknown'}`];
  if (cancellable) flags.push('cancellable');
  if (outputs.length > 0) flags.push('outputs');
  if (entry.jobId) flags.push('hasId');
  // Re-run needs the workflow (the server's, else the remembered file); Remove from List only for a job that ended
  // (a running job stays followed and listed until it ends).
  if (hasWorkflowSource(entry)) flags.push('rerunnable');
  if (group === 'recent') flags.push('removable');

  // A watch riding out an outage: the job's state shown is the last read, and the row says so.
  const outage = entry.outage && !isEndedStatus(status) ? describeOutage(entry.outage, t, clean) : undefined;
  const lines: string[] = [`**${escapeMarkdown(name)}** — ${md(status)}`, ''];
  if (outage) lines.push(`⚠ ${escapeMarkdown(outage)}`, '');
  if (isLostStatus(status)) {
    lines.push(
      hasWorkflowSource(entry, status)
        ? t('The server no longer knows this job: it expired, or the server was restarted without it. Re-run it to run its workflow again, or remove it from the list.')
        : t('The server no longer knows this job: it expired, or the server was restarted without it, and its workflow with it. Remove it from the list.'),
      '',
    );
  }
  const row = (label: string, value: string): void => void lines.push(`- ${label}: ${value}`);
  const notYet = t('not yet');
  row(t('Job id'), entry.jobId ? `\`${clean(entry.jobId).replace(/`/g, "'")}\`` : notYet);
  if (file) row(t('Workflow'), md(file));
  // A job that ended (or runs) without `started_at` / `completed_at` (the self-hosted companion leaves them null) says
  // nothing of those moments: "unknown", never left out as if they were still to come.
  const ended = job !== undefined && isTerminalStatus(job.status);
  const started = ended || status === 'running' || status === 'canceling';
  for (const [label, value, past] of [
    [t('Submitted'), entry.record?.submittedAt, false],
    [t('Created'), job?.createdAt, false],
    [t('Started'), job?.startedAt, started && job !== undefined],
    [t('Completed'), job?.completedAt, ended],
    [t('Expires'), job?.expiresAt ?? entry.record?.expiresAt, false],
  ] as const) {
    if (value) row(label, md(value));
    else if (past) row(label, t('unknown'));
  }
  if (status === 'queued') row(t('Queue position'), job?.queuePosition != null ? String(job.queuePosition + 1) : notYet);
  if (job?.progress && status === 'running') row(t('Progress'), escapeMarkdown(describeStatus(entry, status, clean, t, options.now)));
  const metrics = Object.entries(job?.metrics ?? {});
  if (metrics.length > 0) {
    lines.push('', `**${t('Metrics')}**`, '');
    for (const [k, v] of metrics) row(md(k), v === null ? notYet : String(v));
  }
  if (job?.error) {
    const e = job.error;
    lines.push('', `**${t('Error')}**`, '');
    row(t('Code'), e.code ? md(e.code) : t('none given'));
    if (e.message) row(t('Message'), md(e.message));
    if (e.nodeId || e.classType) row(t('Node'), md([e.nodeId, e.classType].filter(Boolean).join(' · ')));
  }
  if (outputs.length > 0) row(t('Outputs'), String(outputs.length));
  if (entry.requestId) row(t('Request id'), md(entry.requestId));
  if (entry.record?.client) row(t('Submitted from'), md(entry.record.client));

  const label = shortId ? `${name} ${shortId}` : name;
  const description = describeEntry(entry, options);
  return {
    id: entryKey(entry),
    label,
    description,
    icon: outage ? OUTAGE_ICON : statusIcon(status),
    contextValue: flags.join(':'),
    tooltip: lines.join('\n'),
    accessibilityLabel: [label, statusWords(status, t, clean), description].filter(Boolean).join(', '),
    group,
    outputs,
    children,
  };
}

/** How many jobs "Recent" shows at first, and how many more each "Load more…" shows. */
export const RECENT_PAGE_SIZE = 50;

/** The whole tree: the items of each group (newest first) and the badge's count (running jobs). */
export interface JobTreeModel {
  /** The loose jobs of "Running" (a batch's jobs are beneath its batch item). */
  running: JobItemModel[];
  /** The loose jobs of "Recent" shown (at most `recentLimit`). */
  recent: JobItemModel[];
  /** How many loose jobs are in "Recent" in all (shown or not). */
  recentTotal: number;
  /** The batches not finished (each one item, its jobs beneath), newest first; shown first in "Running". */
  runningBatches: BatchItemModel[];
  /** The finished batches, newest first; shown first in "Recent". */
  recentBatches: BatchItemModel[];
  /** How many jobs run now, loose or in a batch (the view's badge). */
  badge: number;
}

/** Options of {@link buildJobTree}. */
export interface BuildOptions extends PresentOptions {
  /** At most this many "Recent" jobs are presented (the rest wait for "Load more…"). Default: all. */
  recentLimit?: number;
  /** The batches of the shown server, and whether each has a runner in this window. Default: none. */
  batches?: readonly BatchView[];
}

/** A batch record as the view knows it: `running` when a runner of this window runs it now. */
export interface BatchView {
  batch: BatchRecord;
  running: boolean;
}

/**
 * How a batch's item looks: one item, its jobs beneath (each labelled by its variation's label). As a job's item:
 * `id` is `<base URL> batch:<batch id>`; `label` the workflow file's base name, else `batch`; `description` the counts
 * (`12/40 done, 2 failed`, status.ts {@link describeCounts}); `icon` spinning while not finished, then a pass, an error
 * (some variation failed) or a slash (canceled); `contextValue` the flags
 * `batch:<running|finished|failed|canceled>[:cancellable][:resumable]` (cancellable while not finished and not
 * canceled; resumable while not finished, not canceled and no runner of this window runs it; package.json menus match
 * them by regex); `tooltip` Markdown (the batch id, the counts, the workflow file; every string escaped); `group`
 * "running" while not finished, else "recent".
 */
export interface BatchItemModel extends Pick<JobItemModel, 'id' | 'label' | 'description' | 'icon' | 'contextValue' | 'tooltip' | 'accessibilityLabel' | 'group'> {
  batchId: string;
  /** Where the batch stands (core status.ts), counted from the records with the live jobs' statuses. */
  status: BatchStatus;
  /** Its jobs, in variation order (a variation not sent yet has none). */
  jobs: JobItemModel[];
}

/**
 * The records of entries with each one's live job status as its last status: what {@link batchStatus} counts, so a
 * batch's counts move as its jobs' watches report, before the runner writes the records.
 */
function liveRecords(entries: Iterable<JobEntry>): JobRecord[] {
  const records: JobRecord[] = [];
  for (const e of entries) if (e.record) records.push(e.job ? { ...e.record, lastStatus: e.job.status } : e.record);
  return records;
}

/**
 * The item of a batch and of its jobs (`entries`: the entries whose record names this batch, in any order): label,
 * counts, icon, flags, tooltip; each job item labelled by its variation's label (`<index>-<short values>`).
 */
export function presentBatch(view: BatchView, entries: readonly JobEntry[], options: PresentOptions): BatchItemModel {
  const clean = options.clean ?? ((text: string) => neutralize(text));
  const t = options.t ?? untranslated;
  const md = (text: string): string => escapeMarkdown(clean(text));
  const { batch, running } = view;
  const status = batchStatus(batch, liveRecords(entries));
  const { counts, finished } = status;
  const canceled = batch.canceledAt !== undefined;
  const state = !finished ? 'running' : canceled ? 'canceled' : counts.failed > 0 ? 'failed' : 'finished';
  const flags = [`batch:${state}`];
  if (!finished && !canceled) flags.push('cancellable');
  if (!finished && !canceled && !running) flags.push('resumable');
  const icon: StatusIcon =
    state === 'running' ? { id: running ? 'sync~spin' : 'debug-pause' } : state === 'canceled' ? statusIcon('canceled') : state === 'failed' ? statusIcon('failed') : statusIcon('succeeded');
  const label = batch.workflowFile ? clean(baseName(batch.workflowFile)) : t('batch');
  const description = describeCounts(counts);
  const byKey = new Map(entries.flatMap((e) => (e.record ? [[e.record.idempotencyKey, e] as const] : [])));
  const jobs: JobItemModel[] = [];
  for (const v of status.variations) {
    const entry = byKey.get(v.variation.idempotencyKey);
    if (!entry) continue;
    const item = presentEntry(entry, options);
    const variation = clean(v.label);
    // The job's own item, named by its variation (the status words as its icon says them).
    jobs.push({ ...item, label: variation, accessibilityLabel: [variation, statusWords(entryStatus(entry), t, clean), item.description].filter(Boolean).join(', ') });
  }
  const lines = [`**${escapeMarkdown(label)}** — ${md(description)}`, ''];
  lines.push(`- ${t('Batch id')}: \`${clean(batch.batchId).replace(/`/g, "'")}\``);
  if (batch.workflowFile) lines.push(`- ${t('Workflow')}: ${md(batch.workflowFile)}`);
  lines.push(`- ${t('Variations')}: ${counts.total}`);
  lines.push(`- ${t('Created')}: ${md(batch.createdAt)}`);
  if (batch.canceledAt) lines.push(`- ${t('Canceled')}: ${md(batch.canceledAt)}`);
  if (!finished) lines.push(`- ${running ? t('Running in this window') : t('Not running: resume it to go on')}`);
  return {
    id: `${batch.baseUrl} batch:${batch.batchId}`,
    batchId: batch.batchId,
    label,
    description,
    icon,
    contextValue: flags.join(':'),
    tooltip: lines.join('\n'),
    accessibilityLabel: [t('batch'), label, description].join(', '),
    group: finished ? 'recent' : 'running',
    status,
    jobs,
  };
}

/**
 * Builds {@link JobTreeModel} from entries (in their order): every running job, the first `recentLimit` recent ones;
 * a job whose record names one of `batches` is beneath that batch's item, never also loose.
 * Jobs are grouped Running / Recent; a badge counts the running ones; Load more pages long histories.
 */
export function buildJobTree(entries: Iterable<JobEntry>, options: BuildOptions): JobTreeModel {
  const running: JobItemModel[] = [];
  const recent: JobItemModel[] = [];
  const limit = options.recentLimit ?? Infinity;
  const batches = new Map((options.batches ?? []).map((b) => [b.batch.batchId, { view: b, entries: [] as JobEntry[] }]));
  let recentTotal = 0;
  let badge = 0;
  for (const entry of entries) {
    const group = groupOf(entry);
    if (group === 'running') badge++;
    const batch = entry.record?.batchId !== undefined ? batches.get(entry.record.batchId) : undefined;
    if (batch) batch.entries.push(entry);
    else if (group === 'running') running.push(presentEntry(entry, options));
    else if (recentTotal++ < limit) recent.push(presentEntry(entry, options));
  }
  const items = [...batches.values()].sort((a, b) => b.view.batch.createdAt.localeCompare(a.view.batch.createdAt)).map((b) => presentBatch(b.view, b.entries, options));
  return { running, recent, recentTotal, runningBatches: items.filter((b) => b.group === 'running'), recentBatches: items.filter((b) => b.group === 'recent'), badge };
}

/**
 * Whether "Recent" ends with a "Load more…" item: more recent jobs are known than shown, or the server's listing said
 * more jobs exist than it returned (`truncated`) and a longer page can still be asked for. The listing
 * (`GET /api/v2/jobs?status=&limit=` → `{jobs, truncated}`, the self-hosted companion's; job listing is not shown
 * in Job and Asset API v2) has no cursor: a longer page is a
 * larger `limit`; a truncated answer shorter than the limit asked means the server caps the limit, so asking for more
 * would bring nothing new. Load more pages long histories.
 */
export function hasMoreJobs(tree: Pick<JobTreeModel, 'recent' | 'recentTotal'>, listing?: { limit: number; returned: number; truncated: boolean }): boolean {
  if (tree.recentTotal > tree.recent.length) return true;
  return listing !== undefined && listing.truncated && listing.returned >= listing.limit;
}

/** The label of a group ("Running", "Recent") in the user's language. */
export function groupLabel(group: JobGroup, t: Translate = untranslated): string {
  return group === 'running' ? t('Running') : t('Recent');
}

/** What a screen reader says of a group: its name and how many jobs it holds ("Running, 2 jobs"). */
export function groupAccessibilityLabel(group: JobGroup, count: number, t: Translate = untranslated): string {
  return count === 1 ? t('{0}, 1 job', groupLabel(group, t)) : t('{0}, {1} jobs', groupLabel(group, t), count);
}

/** The label of an output child: its name (cleaned), else its id. */
function outputLabel(output: JobOutput, clean: (text: string) => string = (text) => neutralize(text)): string {
  return clean(output.name ?? output.id);
}

/** True when a job carries logs worth a child: present, and not an empty string, array or object. */
export function hasLogs(logs: unknown): boolean {
  if (logs === undefined || logs === null) return false;
  if (typeof logs === 'string' || Array.isArray(logs)) return logs.length > 0;
  if (isPlainObject(logs)) return Object.keys(logs).length > 0;
  return true;
}
