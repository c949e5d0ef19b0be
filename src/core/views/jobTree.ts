/**
 * The Jobs view's model, without `vscode`: which jobs are shown, in which group, with the batches' items, so all of it
 * is tested with plain mocha. The extension's tree provider (src/extension/jobs/) only turns these into `TreeItem`s.
 * The entries are jobEntries.ts's, the words of each job's item jobItems.ts's (re-exported here).
 */
import { untranslated, type Translate } from '../util/l10n';
import { escapeMarkdown, neutralize } from '../util/text';
import type { JobRecord } from '../state/stateStore';
import type { BatchRecord } from '../state/batchRecords';
import { batchStatus, describeCounts, type BatchStatus } from '../batch/status';
import { entryStatus, groupOf, type JobEntry, type JobGroup } from './jobEntries';
import {
  baseName,
  presentEntry,
  statusIcon,
  statusWords,
  type JobItemModel,
  type PresentOptions,
  type StatusIcon,
} from './jobItems';

export * from './jobEntries';
export * from './jobItems';

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
 * (`10 succeeded, 2 failed, 4 running`, status.ts {@link describeCounts}); `icon` spinning while not finished, then a pass, an error
 * (some variation failed) or a slash (canceled); `contextValue` the flags
 * `batch:<running|finished|failed|canceled>[:cancellable][:resumable]` (cancellable while not finished and not
 * canceled; resumable while not finished, not canceled and no runner of this window runs it; package.json menus match
 * them by regex); `tooltip` Markdown (the batch id, the counts, the workflow file; every string escaped); `group`
 * "running" while not finished, else "recent".
 */
export interface BatchItemModel extends Pick<
  JobItemModel,
  'id' | 'label' | 'description' | 'icon' | 'contextValue' | 'tooltip' | 'accessibilityLabel' | 'group'
> {
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
    state === 'running'
      ? { id: running ? 'sync~spin' : 'debug-pause' }
      : state === 'canceled'
        ? statusIcon('canceled')
        : state === 'failed'
          ? statusIcon('failed')
          : statusIcon('succeeded');
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
    jobs.push({
      ...item,
      label: variation,
      accessibilityLabel: [variation, statusWords(entryStatus(entry), t, clean), item.description]
        .filter(Boolean)
        .join(', '),
    });
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
  const batches = new Map(
    (options.batches ?? []).map((b) => [b.batch.batchId, { view: b, entries: [] as JobEntry[] }]),
  );
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
  const items = [...batches.values()]
    .sort((a, b) => b.view.batch.createdAt.localeCompare(a.view.batch.createdAt))
    .map((b) => presentBatch(b.view, b.entries, options));
  return {
    running,
    recent,
    recentTotal,
    runningBatches: items.filter((b) => b.group === 'running'),
    recentBatches: items.filter((b) => b.group === 'recent'),
    badge,
  };
}

/**
 * Whether "Recent" ends with a "Load more…" item: more recent jobs are known than shown, or the server's listing said
 * more jobs exist than it returned (`truncated`) and a longer page can still be asked for. The listing
 * (`GET /api/v2/jobs?status=&limit=` → `{jobs, truncated}`, the self-hosted companion's; job listing is not shown
 * in Job and Asset API v2) has no cursor: a longer page is a
 * larger `limit`; a truncated answer shorter than the limit asked means the server caps the limit, so asking for more
 * would bring nothing new. Load more pages long histories.
 */
export function hasMoreJobs(
  tree: Pick<JobTreeModel, 'recent' | 'recentTotal'>,
  listing?: { limit: number; returned: number; truncated: boolean },
): boolean {
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
