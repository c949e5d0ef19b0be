import * as vscode from 'vscode';
import { AbortError, ComfyError } from '../../core';
import { entryKey, type JobEntry } from '../../core/views';
import type { Redactor } from '../../core/util';
import {
  errorText,
  logsText,
  loadJobWorkflow,
  workflowDocumentName,
  workflowFormatLabel,
} from '../../core/views/jobDocuments';
import { JOB_DOCUMENT_SCHEME } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';

/** Which document of a job. */
export type JobDocumentKind = 'workflow' | 'logs' | 'error';

/** Where to find the job a document is of (the tree's entries). */
export interface JobEntrySource {
  /** The entry of the job whose item key ({@link entryKey}) is `key`. */
  entryOfKey(key: string): JobEntry | undefined;
}

/** What {@link JobDocumentsProvider.open} returns to its caller (tests): the document shown, and the workflow's `format`. */
export interface OpenedJobDocument {
  document: vscode.TextDocument;
  /** The workflow's `format` (`api`, `save`, …), for a workflow document. */
  format?: string;
  /** Where the workflow came from, for a workflow document. */
  source?: 'server' | 'file';
}

/**
 * The read-only documents of the Jobs view (the job's workflow opens read-only as a virtual
 * document, branching on `format`; logs where present; the error with its traceback), served by a
 * `TextDocumentContentProvider` under the extension's own scheme ({@link JOB_DOCUMENT_SCHEME}): a document of that
 * scheme cannot be edited or saved in place, only "Save As".
 *
 * The text is made when the document is opened from the tree and kept by URI (the URI's query names the server, the
 * job and the submission's key); a document reopened later (a restored editor) is made again from the tree's entry.
 * The workflow is the server's (where its API keeps one) or the remembered file (core jobDocuments.ts `loadJobWorkflow`),
 * written as JSON whose strings keep their value but show bidi and invisible characters escaped, with the user's keys
 * redacted; the tab's name says the format (`workflow.api.json`, `workflow.ui.json`). Logs and the error are cleaned
 * line by line (server text is untrusted).
 */
export class JobDocumentsProvider extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this.register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  /** Texts by URI string; bounded: the oldest go first (a closed document's text is made again when reopened). */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly jobs: JobServiceHost,
    private readonly entries: JobEntrySource,
    private readonly redactor: Redactor,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    // Registered for JOB_DOCUMENT_SCHEME by the extension (extension.ts), which builds this object at first use.
  }

  /** The URI of a document of a job: `comfy-cloud-job:/<short id>/<name>?base=…&job=…&key=…`. */
  uriOf(entry: JobEntry, kind: JobDocumentKind, name: string): vscode.Uri {
    const short = (entry.jobId ?? entry.record?.idempotencyKey ?? 'job').slice(0, 8).replace(/[^\w.-]/g, '_');
    const query = new URLSearchParams({
      base: entry.baseUrl,
      job: entry.jobId ?? '',
      key: entry.record?.idempotencyKey ?? '',
      kind,
    });
    return vscode.Uri.from({ scheme: JOB_DOCUMENT_SCHEME, path: `/${short}/${name}`, query: query.toString() });
  }

  /**
   * Makes the text of a job's document and shows it in a preview editor tab (read-only). Workflow: `json`; logs:
   * `log`; error: `plaintext`. Returns the document, or undefined when it could not be made (a message says why).
   */
  async open(entry: JobEntry, kind: JobDocumentKind): Promise<OpenedJobDocument | undefined> {
    let made: { text: string; name: string; language: string; format?: string; source?: 'server' | 'file' };
    try {
      made = await this.make(entry, kind);
    } catch (err) {
      if (AbortError.is(err)) return undefined;
      const why = ComfyError.is(err) ? err.message : err instanceof Error ? err.message : String(err);
      this.log.warn(
        'jobs-view',
        `cannot open the ${kind} of job ${entry.jobId ?? entry.record?.idempotencyKey ?? '?'}: ${why}`,
      );
      void this.display.error(vscode.l10n.t('Comfy Cloud: {0}', why));
      return undefined;
    }
    const uri = this.uriOf(entry, kind, made.name);
    this.keep(uri, made.text);
    this.changed.fire(uri); // an open document of the same URI shows the new text
    let document = await vscode.workspace.openTextDocument(uri);
    if (document.languageId !== made.language)
      document = await vscode.languages.setTextDocumentLanguage(document, made.language);
    await vscode.window.showTextDocument(document, { preview: true });
    return { document, format: made.format, source: made.source };
  }

  provideTextDocumentContent(uri: vscode.Uri): string | Thenable<string> {
    const kept = this.texts.get(uri.toString());
    if (kept !== undefined) return kept;
    // Reopened (e.g. an editor restored): made again from the tree's entry, if the job is still shown.
    const query = new URLSearchParams(uri.query);
    const kind = query.get('kind') as JobDocumentKind | null;
    const base = query.get('base') ?? '';
    const job = query.get('job') || undefined;
    const entry = this.entries.entryOfKey(
      entryKey({ baseUrl: base, jobId: job, record: { idempotencyKey: query.get('key') ?? '' } as JobEntry['record'] }),
    );
    const gone = vscode.l10n.t('This job is no longer in the Jobs view: open it again from there.') + '\n';
    if (!entry || (kind !== 'workflow' && kind !== 'logs' && kind !== 'error')) return gone;
    return this.make(entry, kind).then(
      (made) => made.text,
      (err: unknown) => `${this.redactor.clean(err instanceof Error ? err.message : String(err))}\n`,
    );
  }

  /** The text, file name, language (and workflow format) of a job's document. @throws as loadJobWorkflow. */
  private async make(
    entry: JobEntry,
    kind: JobDocumentKind,
  ): Promise<{ text: string; name: string; language: string; format?: string; source?: 'server' | 'file' }> {
    const clean = (text: string): string => this.redactor.clean(text);
    if (kind === 'logs')
      return {
        text: logsText(entry.job?.logs, clean, vscode.l10n.t) || vscode.l10n.t('(no log lines)') + '\n',
        name: 'logs.log',
        language: 'log',
      };
    if (kind === 'error') {
      const error = entry.job?.error;
      if (!error)
        return { text: vscode.l10n.t('This job has no error.') + '\n', name: 'error.txt', language: 'plaintext' };
      return { text: errorText(error, clean, vscode.l10n.t), name: 'error.txt', language: 'plaintext' };
    }
    const loaded = await this.jobs.service.use((lease) =>
      // The server's copy where its API keeps one (capabilities.storedWorkflow), else the remembered file.
      loadJobWorkflow(lease.backend, entry, {
        signal: lease.signal,
        onServerMiss: (why) =>
          this.log.info(
            'jobs-view',
            `the workflow of job ${entry.jobId ?? '?'} from the server: ${why}; trying the remembered file`,
          ),
      }),
    );
    this.log.info(
      'jobs-view',
      `workflow of job ${entry.jobId ?? '?'}: ${workflowFormatLabel(loaded.format)} from ${loaded.source === 'server' ? `the server (request-id ${loaded.requestId ?? '-'})` : entry.record?.workflowFile}`,
    );
    // Valid JSON with the same values (the key redacted), bidi and invisible characters escaped.
    return {
      text: `${this.redactor.json(loaded.workflow)}\n`,
      name: workflowDocumentName(loaded.format),
      language: 'json',
      format: loaded.format,
      source: loaded.source,
    };
  }

  private keep(uri: vscode.Uri, text: string): void {
    const key = uri.toString();
    this.texts.delete(key);
    this.texts.set(key, text);
    while (this.texts.size > 50) this.texts.delete(this.texts.keys().next().value!);
  }
}
