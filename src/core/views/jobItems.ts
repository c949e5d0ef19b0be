/**
 * Every word of one job's item in the Jobs view, without `vscode` (label, description, icon, `contextValue`,
 * Markdown tooltip, children), so all of it is tested with plain mocha.
 *
 * Every server-chosen string (job id, status, progress message, node class, error code and message, output name,
 * request id) passes through the injected `clean` (the extension's redactor: secrets redacted, control and bidi
 * characters escaped: server data is untrusted), and in the Markdown tooltip is also Markdown-escaped, so a server
 * cannot inject links, images or emphasis.
 */
import { untranslated, type Translate } from '../util/l10n';
import { escapeMarkdown, neutralize } from '../util/text';
import { isEndedStatus, isLostStatus, isTerminalStatus, type JobError, type JobOutput } from '../jobs/model';
import { progressFraction, shownStep } from '../jobs/progress';
import type { JobOutage } from '../jobs/state';
import { outputBytes } from '../jobs/outputFiles';
import { isPlainObject, isPngOutput, prefixOfOutputName } from '../util/workflow';
import { entryKey, entryStatus, groupOf, type JobEntry, type JobGroup } from './jobEntries';
/**
 * What a job's watch riding out an outage says, the same in the Jobs view and the monitor: the server is unreachable
 * (why, cleaned), and in how long it retries (rounded up to the second). `short`: without the why (the Jobs view's
 * row, where a connection error's words would push the rest out of sight; its tooltip has them).
 */
export function describeOutage(
  outage: JobOutage,
  t: Translate = untranslated,
  clean: (text: string) => string = (text) => neutralize(text),
  short = false,
): string {
  const seconds = Math.ceil(outage.retryInMs / 1000);
  return short
    ? t('server unreachable, retrying in {0} s', seconds)
    : t('server unreachable ({0}), retrying in {1} s', clean(outage.reason), seconds);
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
export function baseName(file: string): string {
  // The last segment that is not empty, found by scanning back (no array of segments: one per item of the view).
  let end = file.length;
  while (end > 0 && isSeparator(file.charCodeAt(end - 1))) end--;
  if (end === 0) return file;
  let start = end;
  while (start > 0 && !isSeparator(file.charCodeAt(start - 1))) start--;
  return file.slice(start, end);
}

/** `/` or `\\`. */
function isSeparator(code: number): boolean {
  return code === 47 || code === 92;
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
export function statusWords(
  status: string,
  t: Translate = untranslated,
  clean: (text: string) => string = (s) => neutralize(s),
): string {
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
 * and when it retries ({@link describeOutage}, short: the tooltip says why), then what was last read. `status`: the
 * entry's {@link entryStatus}, when the caller has it already.
 */
export function describeEntry(entry: JobEntry, options: PresentOptions, status = entryStatus(entry)): string {
  const clean = options.clean ?? ((text: string) => neutralize(text));
  const t = options.t ?? untranslated;
  const last = describeStatus(entry, status, clean, t, options.now);
  return entry.outage && !isEndedStatus(status)
    ? [describeOutage(entry.outage, t, clean, true), last].filter(Boolean).join(' · ')
    : last;
}

/** The description of {@link describeEntry} without the outage. */
function describeStatus(
  entry: JobEntry,
  status: string,
  clean: (text: string) => string,
  t: Translate,
  now: number,
): string {
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
  if (status === 'queued')
    return job?.queuePosition != null ? t('queued · position {0}', job.queuePosition + 1) : t('queued');
  const when = relativeTime(job?.completedAt ?? job?.createdAt ?? entry.record?.submittedAt, now, t);
  const word = isTerminalStatus(status) ? '' : clean(status);
  return word && when ? `${word} · ${when}` : word || when;
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
 * ({@link hasWorkflowSource}). `key` and `status`: the entry's {@link entryKey} and {@link entryStatus}, when the caller
 * has them already (computed otherwise).
 */
export function jobChildren(
  entry: JobEntry,
  options: PresentOptions,
  key = entryKey(entry),
  status = entryStatus(entry),
): JobChildModel[] {
  const clean = options.clean ?? ((text: string) => neutralize(text));
  const t = options.t ?? untranslated;
  const job = entry.job;
  const children: JobChildModel[] = [];
  if (status === 'succeeded') {
    for (const output of job?.outputs ?? []) {
      children.push({
        kind: 'output',
        id: `${key} output:${output.id}`,
        label: outputLabel(output, clean),
        // A size of 0 is the companion's "not computed yet": not shown (outputFiles.ts outputBytes).
        description: [output.contentType, outputBytes(output) !== null ? t('{0} bytes', outputBytes(output)!) : '']
          .filter(Boolean)
          .map((x) => clean(x!))
          .join(' · '),
        icon: /^image\//.test(output.contentType ?? '') ? 'file-media' : 'file',
        // `output:png`: a PNG may carry its workflow (Open Workflow from Image, Run Again from Image).
        contextValue: isPngOutput(output.contentType, output.name) ? 'output:png' : 'output',
        output,
      });
    }
  }
  if (job?.error) {
    const e = job.error;
    const node = [e.nodeId ? t('node {0}', clean(e.nodeId)) : '', e.classType ? clean(e.classType) : '']
      .filter(Boolean)
      .join(' · ');
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
    children.push({
      kind: 'logs',
      id: `${key} logs`,
      label: t('Logs'),
      description: '',
      icon: 'output',
      contextValue: 'jobChild:logs',
    });
  }
  if (hasWorkflowSource(entry, status)) {
    children.push({
      kind: 'workflow',
      id: `${key} workflow`,
      label: t('Workflow'),
      description: '',
      icon: 'json',
      contextValue: 'jobChild:workflow',
    });
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
  const key = entryKey(entry);
  const children = jobChildren(entry, options, key, status);
  const outputs: JobOutput[] = [];
  for (const c of children) if (c.output) outputs.push(c.output);
  const workflow = hasWorkflowSource(entry, status);
  const cancellable =
    entry.jobId !== undefined && group === 'running' && status !== 'canceling' && status !== 'pending';
  const flags = [`job:${/^[a-z_]+$/.test(status) ? status : 'unknown'}`];
  if (cancellable) flags.push('cancellable');
  if (outputs.length > 0) flags.push('outputs');
  if (entry.jobId) flags.push('hasId');
  // Re-run needs the workflow (the server's, else the remembered file); Remove from List only for a job that ended
  // (a running job stays followed and listed until it ends).
  if (workflow) flags.push('rerunnable');
  if (group === 'recent') flags.push('removable');

  // A watch riding out an outage: the job's state shown is the last read, and the row says so.
  const outage = entry.outage && !isEndedStatus(status) ? describeOutage(entry.outage, t, clean) : undefined;
  const lines: string[] = [`**${escapeMarkdown(name)}** — ${md(status)}`, ''];
  if (outage) lines.push(`⚠ ${escapeMarkdown(outage)}`, '');
  if (isLostStatus(status)) {
    lines.push(
      workflow
        ? t(
            'The server no longer knows this job: it expired, or the server was restarted without it. Re-run it to run its workflow again, or remove it from the list.',
          )
        : t(
            'The server no longer knows this job: it expired, or the server was restarted without it, and its workflow with it. Remove it from the list.',
          ),
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
  const moment = (label: string, value: string | null | undefined, past: boolean): void => {
    if (value) row(label, md(value));
    else if (past) row(label, t('unknown'));
  };
  moment(t('Submitted'), entry.record?.submittedAt, false);
  moment(t('Created'), job?.createdAt, false);
  moment(t('Started'), job?.startedAt, started && job !== undefined);
  moment(t('Completed'), job?.completedAt, ended);
  moment(t('Expires'), job?.expiresAt ?? entry.record?.expiresAt, false);
  if (status === 'queued')
    row(t('Queue position'), job?.queuePosition != null ? String(job.queuePosition + 1) : notYet);
  if (job?.progress && status === 'running')
    row(t('Progress'), escapeMarkdown(describeStatus(entry, status, clean, t, options.now)));
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
  const description = describeEntry(entry, options, status);
  return {
    id: key,
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
