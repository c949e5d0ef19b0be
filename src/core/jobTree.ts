/**
 * The Jobs view's model (issue 9, "The sidebar: Jobs"), without `vscode`: which jobs are shown, in which group, and
 * every word of an item (label, description, icon, `contextValue`, Markdown tooltip), so all of it is tested with
 * plain mocha. The extension's tree provider (src/extension/jobsView.ts) only turns these into `TreeItem`s.
 *
 * Every server-chosen string (job id, status, progress message, node class, error code and message, output name,
 * request id) passes through the injected `clean` (the extension's redactor: secrets redacted, control and bidi
 * characters escaped, STYLE.md "Untrusted data"), and in the Markdown tooltip is also Markdown-escaped, so a server
 * cannot inject links, images or emphasis.
 */
import { neutralize } from './text';
import type { JobRecord } from './state/stateStore';
import { isTerminalStatus, type Job, type JobOutput } from './v2/schemas';

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
}

/** The two groups of the view. */
export type JobGroup = 'running' | 'recent';

/** The status an entry shows: the server's job, else the record's last status, else the submission's state. */
export function entryStatus(entry: JobEntry): string {
  if (entry.job) return entry.job.status;
  if (entry.record?.lastStatus) return entry.record.lastStatus;
  if (!entry.record?.jobId && entry.record?.state === 'outcome_unknown') return 'outcome_unknown';
  return entry.record?.state === 'pending' ? 'pending' : 'unknown';
}

/**
 * The group of an entry: "recent" when its status is terminal (succeeded, failed, canceled, expired), or it is a
 * record whose outcome cannot be learned (no job id and not pending); "running" otherwise (queued, running,
 * canceling, a pending submission). Rule: issue 9, "grouped Running / Recent".
 */
export function groupOf(entry: JobEntry): JobGroup {
  const status = entryStatus(entry);
  if (isTerminalStatus(status)) return 'recent';
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

/**
 * Merges remembered records and the server's listing into entries for `baseUrl`: records of other servers are left
 * out; a listed job with a record is joined to it (one entry per job id); `previous` entries keep their newer job
 * snapshot (a live watch's word beats a listing read before it). Order: newest first (created or submitted time).
 */
export function mergeEntries(baseUrl: string, records: readonly JobRecord[], listing: readonly Job[], previous?: ReadonlyMap<string, JobEntry>): JobEntry[] {
  const byKey = new Map<string, JobEntry>();
  for (const record of records) {
    if (record.baseUrl !== baseUrl) continue;
    const entry: JobEntry = { baseUrl, jobId: record.jobId, record };
    byKey.set(entryKey(entry), entry);
  }
  for (const job of listing) {
    const key = entryKey({ baseUrl, jobId: job.id });
    const known = byKey.get(key);
    if (known) known.job = job;
    else byKey.set(key, { baseUrl, jobId: job.id, job });
  }
  if (previous) {
    for (const [key, old] of previous) {
      const entry = byKey.get(key);
      if (!entry) {
        // A job seen live (e.g. just submitted) but not yet in the store or the listing stays shown.
        if (old.job) byKey.set(key, old);
        continue;
      }
      if (old.job && (!entry.job || !isTerminalStatus(entry.job.status))) entry.job = old.job;
      entry.requestId ??= old.requestId;
    }
  }
  return [...byKey.values()].sort((a, b) => timeOf(b) - timeOf(a));
}

function timeOf(entry: JobEntry): number {
  const t = Date.parse(entry.job?.created_at ?? entry.record?.submittedAt ?? '');
  return Number.isFinite(t) ? t : 0;
}

/** A codicon id and the theme color it is drawn in (undefined: the default foreground). */
export interface StatusIcon {
  id: string;
  color?: string;
}

/** The icon of a status: spinning while running, a theme color per outcome. Rule: issue 9, "codicon per status". */
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
    default:
      return { id: 'question' };
  }
}

/** What the presentation needs from outside: the cleaner of server strings and the time now (ms since the epoch). */
export interface PresentOptions {
  /** Makes a server string safe to show on one line (the extension's redactor). Default {@link neutralize}. */
  clean?: (text: string) => string;
  /** Now (ms since the epoch), for relative times. */
  now: number;
}

/** How a job's item looks. */
export interface JobItemModel {
  /** Stable id ({@link entryKey}). */
  id: string;
  label: string;
  description: string;
  icon: StatusIcon;
  /** Flags: `job:<status>[:cancellable][:outputs][:hasId]`; package.json menus match them by regex. */
  contextValue: string;
  /** Markdown, every server string escaped. */
  tooltip: string;
  group: JobGroup;
  /** The outputs shown as children (a succeeded job's). */
  outputs: JobOutput[];
}

/** Escapes Markdown's special characters (and `<`, `>`, `&` for its HTML), so text shows literally. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|~<>&$:]/g, (ch) => (ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '&' ? '&amp;' : `\\${ch}`));
}

/** The base name of a path (either separator), for a label. */
function baseName(file: string): string {
  return file.split(/[\\/]/).filter(Boolean).pop() ?? file;
}

/** "5 s ago", "3 min ago", "2 h ago", "4 d ago" from an ISO time; empty when there is none. */
export function relativeTime(iso: string | null | undefined, now: number): string {
  const t = Date.parse(iso ?? '');
  if (!Number.isFinite(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/**
 * The description of a job: while running, its progress (`42% · KSampler 21/50`: the value, then the server's
 * message, else the node class and step); while queued, its queue position; otherwise the relative time of its end
 * (or creation). Rule: issue 9, "description = progress or relative time".
 */
export function describeEntry(entry: JobEntry, options: PresentOptions): string {
  const clean = options.clean ?? ((t: string) => neutralize(t));
  const status = entryStatus(entry);
  const job = entry.job;
  if (status === 'running' && job?.progress) {
    const p = job.progress;
    const value = p.value ?? (p.nodes_total ? (p.nodes_done ?? 0) / p.nodes_total : null);
    const percent = value === null ? '' : `${Math.round(Math.min(1, Math.max(0, value)) * 100)}%`;
    const step = p.step != null && p.steps ? `${p.step}/${p.steps}` : '';
    const detail = p.message ?? [p.current_node_class, step].filter(Boolean).join(' ');
    return [percent, detail ? clean(detail) : ''].filter(Boolean).join(' · ') || 'running';
  }
  if (status === 'queued') return job?.queue_position != null ? `queued · position ${job.queue_position + 1}` : 'queued';
  const when = relativeTime(job?.completed_at ?? job?.created_at ?? entry.record?.submittedAt, options.now);
  const word = isTerminalStatus(status) ? '' : clean(status);
  return [word, when].filter(Boolean).join(' · ');
}

/** The presentation of one entry (see {@link JobItemModel}). */
export function presentEntry(entry: JobEntry, options: PresentOptions): JobItemModel {
  const clean = options.clean ?? ((t: string) => neutralize(t));
  const md = (text: string): string => escapeMarkdown(clean(text));
  const status = entryStatus(entry);
  const job = entry.job;
  const group = groupOf(entry);
  const file = entry.record?.workflowFile;
  // A file name may hold control or bidi characters too: cleaned like the server's words.
  const name = file ? clean(baseName(file)) : 'job';
  const shortId = entry.jobId ? clean(entry.jobId.slice(0, 8)) : '';
  const outputs = status === 'succeeded' ? (job?.outputs ?? []) : [];
  const cancellable = entry.jobId !== undefined && group === 'running' && status !== 'canceling' && status !== 'pending';
  const flags = [`job:${/^[a-z_]+$/.test(status) ? status : 'unknown'}`];
  if (cancellable) flags.push('cancellable');
  if (outputs.length > 0) flags.push('outputs');
  if (entry.jobId) flags.push('hasId');

  const lines: string[] = [`**${escapeMarkdown(name)}** — ${md(status)}`, ''];
  const row = (label: string, value: string): void => void lines.push(`- ${label}: ${value}`);
  row('Job id', entry.jobId ? `\`${clean(entry.jobId).replace(/`/g, "'")}\`` : 'not yet');
  if (file) row('Workflow', md(file));
  for (const [label, value] of [
    ['Submitted', entry.record?.submittedAt],
    ['Created', job?.created_at],
    ['Started', job?.started_at],
    ['Completed', job?.completed_at],
    ['Expires', job?.expires_at ?? entry.record?.expiresAt],
  ] as const) {
    if (value) row(label, md(value));
  }
  if (status === 'queued') row('Queue position', job?.queue_position != null ? String(job.queue_position + 1) : 'not yet');
  if (job?.progress && status === 'running') row('Progress', md(describeEntry(entry, options)));
  const metrics = Object.entries(job?.metrics ?? {});
  if (metrics.length > 0) {
    lines.push('', '**Metrics**', '');
    for (const [k, v] of metrics) row(md(k), v === null ? 'not yet' : String(v));
  }
  if (job?.error) {
    const e = job.error;
    lines.push('', '**Error**', '');
    row('Code', e.code ? md(e.code) : 'none given');
    if (e.message) row('Message', md(e.message));
    if (e.node_id || e.class_type) row('Node', md([e.node_id, e.class_type].filter(Boolean).join(' · ')));
  }
  if (outputs.length > 0) row('Outputs', String(outputs.length));
  if (entry.requestId) row('Request id', md(entry.requestId));
  if (entry.record?.client) row('Submitted from', md(entry.record.client));

  return {
    id: entryKey(entry),
    label: shortId ? `${name} ${shortId}` : name,
    description: describeEntry(entry, options),
    icon: statusIcon(status),
    contextValue: flags.join(':'),
    tooltip: lines.join('\n'),
    group,
    outputs,
  };
}

/** The whole tree: the items of each group (newest first) and the badge's count (running jobs). */
export interface JobTreeModel {
  running: JobItemModel[];
  recent: JobItemModel[];
  /** How many jobs are in "Running" (the view's badge). */
  badge: number;
}

/** Builds {@link JobTreeModel} from entries (in their order). Rule: issue 9, "grouped Running / Recent; badge". */
export function buildJobTree(entries: Iterable<JobEntry>, options: PresentOptions): JobTreeModel {
  const running: JobItemModel[] = [];
  const recent: JobItemModel[] = [];
  for (const entry of entries) {
    const item = presentEntry(entry, options);
    (item.group === 'running' ? running : recent).push(item);
  }
  return { running, recent, badge: running.length };
}

/** The label of an output child: its name (cleaned), else its id. */
export function outputLabel(output: JobOutput, clean: (text: string) => string = (t) => neutralize(t)): string {
  return clean(output.name ?? output.id);
}
