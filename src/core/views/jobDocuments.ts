/**
 * What the Jobs view opens as read-only documents and copies (the children of a job), without `vscode`: a job's
 * workflow (the server's where its API keeps one, branching on `format`, else the remembered file), its logs (the
 * `logs` field, inner structure not shown, read tolerantly), its error, and an output's `core/ASSET` reference. The
 * extension (src/extension/jobDocumentsProvider.ts) serves the texts under its own URI scheme.
 *
 * Every server string that ends up in a text here goes through the injected cleaner (the extension's redactor:
 * secrets redacted, control and bidi characters escaped): whatever a server sends is untrusted.
 */
import { AbortError, ComfyError, InputError } from '../http/errors';
import { hashBytes } from '../util/hash';
import { readInputFile } from '../util/inputFile';
import { untranslated, type Translate } from '../util/l10n';
import { neutralize } from '../util/text';
import type { JobBackend } from '../jobs/backend';
import type { JobError, JobOutput } from '../jobs/model';
import type { JobEntry } from './jobTree';
import { canonicalJson } from '../util/json';
import { assetReference, isPlainObject, type AssetReference } from '../util/workflow';

/** A job's workflow, and where it came from. */
export interface JobWorkflow {
  /** The workflow verbatim, in the shape `format` says. */
  workflow: Record<string, unknown>;
  /**
   * `api` (the executed API-format graph), `save` (the UI-format authoring workflow), or another value a server
   * sends (kept: read tolerantly). The remembered file is always `api` (only API format is ever submitted).
   */
  format: string;
  /** `server`: GET …/workflow answered; `file`: the remembered record's workflow file (unchanged since submission). */
  source: 'server' | 'file';
  /** The request id of the server's answer. */
  requestId?: string;
}

/** How {@link loadJobWorkflow} reads. */
export interface LoadWorkflowOptions {
  signal?: AbortSignal;
  /** Called with why the server's copy could not be had before the file is tried (for the log). */
  onServerMiss?: (why: string) => void;
}

/**
 * The workflow behind a job: first the server's, when the entry has a job id, `backend` is for the entry's server and
 * its API keeps each job's workflow (`capabilities.storedWorkflow`; on v2 `GET /api/v2/jobs/{id}/workflow`, retried
 * like any read: Job and Asset API v2, that endpoint's rules 1–6); else the remembered record's workflow file, only
 * when it still hashes to the record's `workflowHash` (the file may have been edited since: then it is not the job's
 * workflow). The Jobs view opens it read-only as a virtual document, branching on `format`.
 * @throws InputError `no_workflow` when neither is available (its message says why); AbortError when `signal`
 *   aborts.
 */
export async function loadJobWorkflow(
  backend: JobBackend | undefined,
  entry: JobEntry,
  options: LoadWorkflowOptions = {},
): Promise<JobWorkflow> {
  const reasons: string[] = [];
  if (entry.jobId && backend?.capabilities.storedWorkflow && backend.baseUrl === entry.baseUrl) {
    const jobId = entry.jobId;
    try {
      const res = await backend.workflow(jobId, options.signal);
      return { workflow: res.workflow, format: res.format, source: 'server', requestId: res.requestId };
    } catch (err) {
      if (AbortError.is(err)) throw err;
      // Any failure (404 past retention, no such endpoint on this surface, unreachable): the file may still do.
      const why = ComfyError.is(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
      reasons.push(`the server did not return it (${why})`);
      options.onServerMiss?.(why);
      if (!ComfyError.is(err)) throw err; // a bug, not a condition
    }
  } else if (entry.jobId && backend && backend.baseUrl === entry.baseUrl && !backend.capabilities.storedWorkflow) {
    reasons.push('the server keeps no workflow per job');
  } else if (entry.jobId) {
    reasons.push('the job belongs to another server than the active connection');
  } else {
    reasons.push('the submission has no job id');
  }
  const record = entry.record;
  if (!record?.workflowFile) {
    reasons.push('no workflow file was remembered with it');
    throw new InputError('no_workflow', `The workflow of this job is not available: ${reasons.join('; ')}.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readInputFile(record.workflowFile));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new InputError(
      'no_workflow',
      `The workflow of this job is not available: ${[...reasons, `its file cannot be read (${why})`].join('; ')}.`,
    );
  }
  if (!isPlainObject(parsed)) {
    throw new InputError(
      'no_workflow',
      `The workflow of this job is not available: ${[...reasons, `${record.workflowFile} no longer holds a workflow`].join('; ')}.`,
    );
  }
  if (record.workflowHash && (await hashBytes(canonicalJson(parsed))) !== record.workflowHash) {
    throw new InputError(
      'no_workflow',
      `The workflow of this job is not available: ${[...reasons, `${record.workflowFile} was changed since the job was submitted`].join('; ')}.`,
    );
  }
  return { workflow: parsed, format: 'api', source: 'file' };
}

/** Words for a workflow's `format`: the two the document names, else the value itself (cleaned). */
export function workflowFormatLabel(
  format: string,
  t: Translate = untranslated,
  clean: (text: string) => string = (s) => neutralize(s),
): string {
  if (format === 'api') return t('API format');
  if (format === 'save') return t('UI format');
  return t('format {0}', clean(format));
}

/**
 * The file name of a workflow document, which is what its editor tab shows: `workflow.api.json` for API format,
 * `workflow.ui.json` for the editor's save format, `workflow.json` otherwise (branching on `format`: that endpoint's
 * rule 1).
 */
export function workflowDocumentName(format: string): string {
  return format === 'api' ? 'workflow.api.json' : format === 'save' ? 'workflow.ui.json' : 'workflow.json';
}

/** Most lines a logs document shows; the rest is counted. */
export const MAX_LOG_LINES = 20_000;

/** The string at one of `keys` of `o`, if any. */
function stringAt(o: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const k of keys) if (typeof o[k] === 'string') return o[k];
  return undefined;
}

/** One log item as lines: a string, or an object with a message (and a time and level when given). */
function itemLines(item: unknown): string[] {
  if (typeof item === 'string') return item.split(/\r?\n/);
  if (isPlainObject(item)) {
    const message = stringAt(item, ['message', 'msg', 'text', 'line']);
    if (message !== undefined) {
      const time = stringAt(item, ['time', 'timestamp', 'ts']);
      const level = stringAt(item, ['level', 'severity', 'stream']);
      const head = [time, level ? level.toUpperCase() : undefined].filter(Boolean).join(' ');
      return message.split(/\r?\n/).map((line, i) => (i === 0 && head ? `${head} ${line}` : line));
    }
  }
  return JSON.stringify(item, null, 2)?.split('\n') ?? [];
}

/**
 * A job's `logs` as plain lines. The document leaves the inner structure unshown (Job "Rules for `logs`"), so it is
 * read tolerantly: a string; an array of strings or of `{time?, level?, message}` items (the reserved `log` event's
 * shape); an object holding such an array (`lines`, `entries`, `logs`, `messages`) or strings (`text`, `stdout`,
 * `stderr`, `output`); anything else as indented JSON. Every line goes through `clean` (one line each: a server
 * string never forges another line). At most {@link MAX_LOG_LINES} lines, then a count of the rest.
 * @returns the text, ending with a newline; empty when there are no lines.
 */
export function logsText(
  logs: unknown,
  clean: (text: string) => string = (s) => neutralize(s),
  t: Translate = untranslated,
): string {
  let lines: string[] = [];
  if (typeof logs === 'string') lines = itemLines(logs);
  else if (Array.isArray(logs)) lines = logs.flatMap(itemLines);
  else if (isPlainObject(logs)) {
    const list = ['lines', 'entries', 'logs', 'messages'].map((k) => logs[k]).find(Array.isArray);
    if (list) lines = list.flatMap(itemLines);
    else {
      const parts = ['text', 'stdout', 'stderr', 'output'].filter((k) => typeof logs[k] === 'string');
      if (parts.length === 1) lines = itemLines(logs[parts[0]!]);
      else if (parts.length > 1) lines = parts.flatMap((k) => [`--- ${k} ---`, ...itemLines(logs[k])]);
      else lines = itemLines(logs);
    }
  } else if (logs !== undefined && logs !== null) lines = itemLines(logs);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const more = lines.length - MAX_LOG_LINES;
  const shown = (more > 0 ? lines.slice(0, MAX_LOG_LINES) : lines).map((l) => clean(l));
  if (more > 0) shown.push(t('… {0} more lines not shown', more));
  return shown.length > 0 ? `${shown.join('\n')}\n` : '';
}

/**
 * A job's error as a document: code, message, node id and `class_type`, then the traceback when the server gave one.
 * Single-line fields are cleaned whole; the traceback line by line.
 */
export function errorText(
  error: JobError,
  clean: (text: string) => string = (s) => neutralize(s),
  t: Translate = untranslated,
): string {
  const lines = [
    `${t('Code')}: ${error.code ? clean(error.code) : t('none given')}`,
    `${t('Message')}: ${error.message ? clean(error.message) : t('none given')}`,
    `${t('Node')}: ${error.nodeId ? clean(error.nodeId) : t('not given')}`,
    `${t('Node class')}: ${error.classType ? clean(error.classType) : t('not given')}`,
  ];
  const tb = error.traceback;
  if (tb !== undefined && tb !== null && tb !== '') {
    lines.push('', `${t('Traceback')}:`);
    const raw = Array.isArray(tb)
      ? tb.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('')
      : typeof tb === 'string'
        ? tb
        : JSON.stringify(tb, null, 2);
    lines.push(
      ...raw
        .split(/\r?\n/)
        .filter((l, i, all) => i < all.length - 1 || l !== '')
        .map((l) => clean(l)),
    );
  } else {
    lines.push('', t('The server gave no traceback.'));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The `core/ASSET` reference of a job's output (on an API whose outputs are assets, `capabilities.assets`): `info.id`
 * (what counts), and the hints `hash` and `file_path` (the output's name) when the server gave them; through
 * workflow.ts {@link assetReference}, so an output's reference and an uploaded asset's have the one shape.
 */
export function outputAssetReference(output: JobOutput): AssetReference {
  return assetReference({ id: output.id, hash: output.hash, file_path: output.name });
}
