import * as vscode from 'vscode';
import * as path from 'node:path';
import {
  ApiError,
  ComfyError,
  ConnectionError,
  InputError,
  InvalidWorkflowError,
  OutcomeUnknownError,
  isTerminalStatus,
  progressFraction,
  type AcceptedJob,
  type ClientLease,
  type JobService,
  type JobUpdate,
} from '../../core';
import { errorMessage, unknownClassesMessage } from '../../core/views';
import {
  MAX_WORKFLOW_BYTES,
  decodeText,
  notAFileError,
  parseWorkflowText,
  tooLargeError,
} from '../../core/util/inputFile';
import { toAbortSignal } from '../platform/cancellation';
import type { ExtensionConnection } from '../platform/clients';
import { Commands } from '../platform/constants';
import type { Display } from '../platform/display';
import type { Log } from '../platform/log';
import type { JobEndService } from '../jobs';
import type { ActiveConnection, ConnectionReadiness } from '../../core/connection';
import type { WorkflowProblems } from './problems';
import type { WorkflowConversion } from './workflowConversion';

/** What "Submit Workflow" returns to its caller (tests, other extensions). */
export interface SubmitResult {
  /** The job id; absent when nothing was submitted. */
  jobId?: string;
  /** The job's final status, or `refused` (bad input, nothing sent) or `error` (the request failed). */
  status: string;
  /** Absolute paths of the downloaded outputs (a succeeded job). */
  files: string[];
  /** The error code and message when the status is `refused` or `error`. */
  error?: { code: string; message: string };
}

/** Options of "Submit Workflow" (tests, other extensions, the refusal's "Convert and Submit" button). */
export interface SubmitOptions {
  /**
   * A UI-format workflow is converted to API format (workflow IntelliSense's node definitions) and the result
   * submitted, instead of being refused (Job and Asset API v2, POST /api/v2/jobs, rule 2: the service runs API
   * format only).
   */
  convertUiFormat?: boolean;
}

/** A workflow to submit that is no file's text (an image's `prompt`): its name, and the file that keeps it. */
export interface WorkflowToSubmit {
  /** What the progress and the log call it (`invert_00001_.png`). */
  readonly name: string;
  /** The parsed API-format graph. */
  readonly workflow: unknown;
  /** The file holding exactly this graph, remembered with the job (its workflow, Re-run). */
  readonly workflowFile?: string;
  /** The UI-format workflow it was converted from, or the image's `workflow` chunk (JobSubmitOptions.uiWorkflow). */
  readonly uiWorkflow?: unknown;
}

/** Opens a job's monitor on submit (setting `comfyCloud.openMonitorOnSubmit`). */
export interface MonitorOnSubmit {
  /** The setting (default true). */
  enabled(): boolean;
  /** Opens (or reveals) the job's monitor without taking the focus. */
  open(jobId: string): PromiseLike<unknown>;
}

/**
 * "Comfy Cloud: Submit Workflow": submits the active editor's text (saved or not) or a given file, follows the job
 * in a cancellable progress notification (cancel = POST cancel on the server), and hands the job's end to the
 * {@link JobEndService} (the one owner of every job's end: the outputs downloaded once into the job's output folder,
 * the record updated, one notification if the setting wants it: "Open Output" / "Show Job"). An untitled editor
 * (e.g. "Open Sample Workflow") is submitted like a file, its outputs in the same folder as a file's (outputs.ts).
 * The client, the submission's record and the one watch of the job are the {@link JobService}'s: other views
 * following the same job share that watch.
 */
export class SubmitWorkflowCommand {
  constructor(
    private readonly jobs: JobService<ExtensionConnection>,
    private readonly problems: WorkflowProblems,
    private readonly log: Log,
    private readonly display: Display,
    /** The one owner of a job's end: downloads the outputs (once), updates the record, tells the end. */
    private readonly jobEnds: Pick<JobEndService, 'ended'>,
    /** The monitor opened on submit; while it is on, the progress goes to the status bar, not a notification. */
    private readonly monitor?: MonitorOnSubmit,
    /** Workflow IntelliSense, loaded at first call: its `checkBeforeSubmit` refusing means nothing is sent. */
    private readonly precheck?: () => Pick<import('./workflowIntelliSense').WorkflowIntelliSense, 'checkBeforeSubmit'>,
    /** The conversion of UI-format workflows: the refusal of one offers "Convert and Submit". */
    private readonly conversion?: () => Pick<WorkflowConversion, 'convertAndStore'>,
    /** The active connection as the status bar sees it (how usable, and which): the words of a refusal or failure. */
    private readonly connection?: () => { readiness: ConnectionReadiness; active: ActiveConnection | undefined },
  ) {}

  async run(arg?: vscode.Uri, options: SubmitOptions = {}): Promise<SubmitResult> {
    const source = await this.readSource(arg);
    if ('error' in source) return this.refuse(source.error);
    // A connection made for the cloud or a deployment (they always need a key); the default connection's need is a
    // guess from its address, so a server there that takes no key is still asked.
    const state = this.connection?.();
    if (state?.readiness === 'noKey' && isPublicService(state.active))
      return this.refuseNoKey(source.uri, options, state.active?.name ?? '');
    const { text, name } = source;
    let uri = source.uri;
    let workflowFile = uri?.scheme === 'file' ? uri.fsPath : undefined;

    let workflow: unknown;
    let uiWorkflow: unknown;
    try {
      // The same checks as the CLI's (core inputFile.ts): bad_json, workflow_format_ui, not_api_format.
      workflow = parseWorkflowText(text, name);
    } catch (err) {
      if (!InputError.is(err)) throw err;
      if (err.code !== 'workflow_format_ui' || !this.conversion) return this.refuse(err);
      if (!options.convertUiFormat) return this.refuseUiFormat(err, uri);
      // Convert and Submit: the API graph is what is sent, kept as a file the job's record names (the job's
      // workflow is then the graph sent, not the UI file); its Problems, if any, go on that file's nodes.
      uiWorkflow = JSON.parse(text) as unknown;
      let converted: Awaited<ReturnType<WorkflowConversion['convertAndStore']>>;
      try {
        converted = await this.conversion().convertAndStore(uiWorkflow, name);
      } catch (e) {
        return this.fail(e, undefined);
      }
      if ('error' in converted)
        return { status: 'refused', files: [], error: this.safeError(converted.error.code, converted.error.message) };
      workflow = converted.workflow;
      workflowFile = converted.file;
      uri = vscode.Uri.file(workflowFile);
      this.log.info(
        'submit',
        `${name} converted to API format with the node definitions of ${converted.source}: ${workflowFile}`,
      );
    }
    return this.submitWorkflow({ name, workflow, workflowFile, uiWorkflow }, uri);
  }

  /**
   * Submits a parsed workflow that is no editor's text (Run Again from Image: the image's `prompt`), followed like
   * any submission. `uri`: where its Problems go (default: its `workflowFile`).
   */
  async submitWorkflow(
    what: WorkflowToSubmit,
    uri: vscode.Uri | undefined = what.workflowFile ? vscode.Uri.file(what.workflowFile) : undefined,
  ): Promise<SubmitResult> {
    const { name, workflow, workflowFile, uiWorkflow } = what;
    if (uri) this.problems.clear(uri);
    // Against the active connection's cached node definitions, in the server's words (its problems shown in Problems).
    const refused = await this.precheck?.().checkBeforeSubmit(uri, workflow);
    if (refused) return this.refuse(new InputError(refused.code, refused.message));

    let lease: ClientLease<ExtensionConnection>;
    try {
      lease = await this.jobs.lease();
    } catch (err) {
      return this.fail(err, uri);
    }
    const { backend } = lease;
    const { surface } = lease.connection;
    this.log.info('submit', `submitting ${name} to ${surface.baseUrl} (${surface.kind}, ${backend.api} API)`);

    // One signal at a time: when the monitor opens on submit, it shows the progress (and Cancel); the
    // submission's progress then goes to the status bar instead of a notification.
    const monitorOnSubmit = this.monitor?.enabled() === true;
    try {
      return await vscode.window.withProgress(
        {
          location: monitorOnSubmit ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification,
          title: vscode.l10n.t('Comfy Cloud: {0}', name),
          cancellable: !monitorOnSubmit,
        },
        async (progress, token) => {
          let submission: AcceptedJob | undefined;
          let cancelRequested = false;
          let reported = 0;
          // Every progress message passes through the display: the server chooses statuses, messages, node classes.
          const report = (step: { message?: string; increment?: number }): void => this.display.report(progress, step);
          const requestCancel = (): void => {
            if (!submission || !cancelRequested) return;
            report({ message: vscode.l10n.t('canceling…') });
            this.log.info('submit', `cancel requested for job ${submission.job.id}`);
            backend
              .cancel(submission.job.id, lease.signal)
              .catch((err: unknown) => this.log.warn('submit', `cancel failed: ${describe(err)}`));
          };
          // Cancelling the notification cancels the job on the server (not only the local wait), so the watch goes
          // on and sees the job end as canceled.
          const cancellation = toAbortSignal(token);
          cancellation.signal.addEventListener(
            'abort',
            () => {
              cancelRequested = true;
              requestCancel();
            },
            { once: true },
          );
          const onUpdate = (u: JobUpdate): void => {
            if (u.type === 'status') {
              // The status is the server's word (the display makes it safe); the words around it are ours.
              report({
                message:
                  u.status === 'queued' && u.queuePosition != null
                    ? vscode.l10n.t('{0} (position {1})', u.status, u.queuePosition + 1)
                    : u.status,
              });
            } else if (u.type === 'progress') {
              const p = u.progress;
              const value = Math.round((progressFraction(p) ?? 0) * 100);
              // The server's own message (e.g. `KSampler 21/50`) says it best; else the node count and class.
              const nodes = p.nodesTotal
                ? vscode.l10n.t('node {0} of {1}', Math.min((p.nodesDone ?? 0) + 1, p.nodesTotal), p.nodesTotal)
                : '';
              const message = p.message ?? [nodes, p.currentNodeClass].filter(Boolean).join(' · ');
              report({ increment: Math.max(0, value - reported), message });
              reported = Math.max(reported, value);
            } else if (u.type === 'mode' && u.mode === 'polling' && u.reason) {
              this.log.info('watch', u.reason);
            } else if (u.type === 'retrying') {
              // The job is durable on the server: the watch rides out the outage (within its budget) and says so.
              report({
                message: vscode.l10n.t(
                  'server unreachable ({0}), retrying in {1} s',
                  u.reason,
                  Math.ceil(u.delayMs / 1000),
                ),
              });
              this.log.warn('watch', `server unreachable (${u.reason}), retrying in ${Math.ceil(u.delayMs / 1000)} s`);
            }
          };
          try {
            const result = await this.jobs.submit(lease, workflow, {
              workflowFile,
              uiWorkflow,
              onWait: (w) =>
                report({ message: vscode.l10n.t('{0} — retrying in {1} s', w.reason, Math.ceil(w.delayMs / 1000)) }),
              onSubmitted: (s) => {
                submission = s;
                this.log.info(
                  'submit',
                  `job ${s.job.id} created (${backend.capabilities.idempotentSubmit ? 'Idempotency-Key' : 'record key'} ${s.recordKey}, request-id ${s.requestId ?? '-'})`,
                );
                report({ message: vscode.l10n.t('{0} · job {1}', s.job.status, s.job.id.slice(0, 8)) });
                requestCancel();
                if (monitorOnSubmit) {
                  Promise.resolve(this.monitor!.open(s.job.id)).then(undefined, (err: unknown) =>
                    this.log.warn('submit', `cannot open the monitor of job ${s.job.id}: ${describe(err)}`),
                  );
                }
              },
              onUpdate,
            });
            const final = result.final.job;
            if (final.status === 'succeeded' && final.outputs.length > 0) {
              report({
                message:
                  final.outputs.length === 1
                    ? vscode.l10n.t('downloading 1 output…')
                    : vscode.l10n.t('downloading {0} outputs…', final.outputs.length),
              });
            }
            // The one owner of a job's end: outputs (once), record, the one notification (comfyCloud.notifyOnJobEnd).
            const end = await this.jobEnds.ended(backend.baseUrl, final, undefined, backend);
            if (end.downloadError !== undefined) throw end.downloadError;
            const files = end.files;
            if (!isTerminalStatus(final.status))
              this.log.warn('submit', `job ${final.id} ended the watch in status ${final.status}`);
            return { jobId: final.id, status: final.status, files };
          } finally {
            cancellation.dispose();
          }
        },
      );
    } catch (err) {
      return this.fail(err, uri);
    } finally {
      lease.release();
    }
  }

  /** The document to submit: the given file (its open editor's text if open, so unsaved edits count), or the active editor. */
  private async readSource(
    arg?: vscode.Uri,
  ): Promise<{ uri?: vscode.Uri; text: string; name: string } | { error: InputError }> {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    if (!uri) {
      return {
        error: new InputError(
          'no_workflow',
          vscode.l10n.t(
            'Open a workflow JSON file (API format) in the editor, then run "{0}".',
            vscode.l10n.t('Comfy Cloud: Submit Workflow'),
          ),
        ),
      };
    }
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const name = path.basename(uri.path) || 'workflow';
    // An open editor's text is already decoded by VS Code (and may have unsaved edits): submit it as is.
    if (open) return { uri, text: open.getText(), name };
    // From disk: the core's rules (inputFile.ts): a regular file, at most MAX_WORKFLOW_BYTES, strict UTF-8, so a
    // Latin-1 or UTF-16 file is refused with the CLI's words instead of being submitted with replacement characters.
    const where = uri.scheme === 'file' ? uri.fsPath : uri.toString();
    try {
      const stat = await vscode.workspace.fs.stat(uri);
      if ((stat.type & vscode.FileType.File) === 0) {
        return {
          error: notAFileError(where, stat.type & vscode.FileType.Directory ? 'a directory' : 'not a regular file'),
        };
      }
      if (stat.size > MAX_WORKFLOW_BYTES) return { error: tooLargeError(where, stat.size, MAX_WORKFLOW_BYTES) };
      const bytes = await vscode.workspace.fs.readFile(uri);
      // The file may have grown since the stat.
      if (bytes.length > MAX_WORKFLOW_BYTES) return { error: tooLargeError(where, bytes.length, MAX_WORKFLOW_BYTES) };
      return { uri, text: decodeText(bytes, name), name };
    } catch (err) {
      if (InputError.is(err)) return { error: err };
      const missing = err instanceof vscode.FileSystemError && err.code === 'FileNotFound';
      return {
        error: new InputError(
          'unreadable',
          vscode.l10n.t(
            'cannot read {0}: {1}',
            where,
            missing ? vscode.l10n.t('no such file') : (err as Error).message,
          ),
        ),
      };
    }
  }

  /**
   * A UI-format workflow (Job and Asset API v2, POST /api/v2/jobs, rule 2: the service refuses it with
   * `workflow_format_ui`): refused, nothing sent, with the buttons "Convert and Submit" (this command again, converting)
   * and "Convert to API Format" (the converted graph opened beside the file).
   */
  private refuseUiFormat(err: InputError, uri: vscode.Uri | undefined): SubmitResult {
    this.log.warn('submit', `refused before any request: ${err.code}: ${err.message}`);
    const convertAndSubmit = vscode.l10n.t('Convert and Submit');
    const convert = vscode.l10n.t('Convert to API Format');
    const message = vscode.l10n.t(
      "Comfy Cloud: this is a UI-format workflow (the editor's save file); the job service runs API format. Convert it with the node definitions in use and submit the result, or in ComfyUI use Workflow → Export (API).",
    );
    void this.display.error(message, convertAndSubmit, convert).then((choice) => {
      if (choice === convertAndSubmit)
        void vscode.commands.executeCommand(Commands.submitWorkflow, uri, {
          convertUiFormat: true,
        } satisfies SubmitOptions);
      else if (choice === convert) void vscode.commands.executeCommand(Commands.convertToApiFormat, uri);
    });
    return { status: 'refused', files: [], error: this.safeError(err.code, err.message) };
  }

  /**
   * The active connection always needs an API key (the cloud, a deployment) and has none: nothing is sent (the server
   * would refuse it); "Set API Key" asks for it, then submits the same workflow.
   */
  private refuseNoKey(uri: vscode.Uri | undefined, options: SubmitOptions, name: string): SubmitResult {
    const message = vscode.l10n.t(
      'Comfy Cloud: the connection "{0}" needs an API key, and none is set: nothing was sent.',
      name,
    );
    this.log.warn('submit', `refused before any request: no API key for "${name}"`);
    const setKey = vscode.l10n.t('Set API Key');
    void this.display.error(message, setKey).then(async (choice) => {
      if (choice === setKey && (await vscode.commands.executeCommand<boolean>(Commands.setApiKey)) === true)
        void vscode.commands.executeCommand(Commands.submitWorkflow, uri, options);
    });
    return { status: 'refused', files: [], error: this.safeError('no_api_key', message) };
  }

  private refuse(err: InputError): SubmitResult {
    this.log.warn('submit', `refused before any request: ${err.code}: ${err.message}`);
    void this.display.error(vscode.l10n.t('Comfy Cloud: {0}', err.message));
    return { status: 'refused', files: [], error: this.safeError(err.code, err.message) };
  }

  /**
   * No answer from the server. A public service (the cloud, a deployment) is up: the network or a proxy is the likely
   * cause, with VS Code's proxy setting; a connection of `comfyCloud.connections` is checked there; the default one in
   * `comfyCloud.baseUrl`.
   */
  private connectionFailed(err: ConnectionError, message: string): void {
    const active = this.connection?.().active;
    const publicService = isPublicService(active);
    const setting = publicService
      ? 'http.proxy'
      : active && active.kind !== 'default'
        ? 'comfyCloud.connections'
        : 'comfyCloud.baseUrl';
    const text = publicService
      ? vscode.l10n.t(
          'Comfy Cloud: {0}. No network, or a proxy in the way? VS Code reaches the internet through the setting {1}.',
          errorMessage(err, vscode.l10n.t, { hint: false }),
          setting,
        )
      : active && active.kind !== 'default'
        ? vscode.l10n.t(
            'Comfy Cloud: {0}. Check the connection "{1}" in the setting {2}.',
            message,
            active.name,
            setting,
          )
        : vscode.l10n.t('Comfy Cloud: {0}. Check the setting {1}.', message, setting);
    const openSettings = vscode.l10n.t('Open Settings');
    void this.display.error(text, openSettings).then((choice) => {
      if (choice === openSettings) void vscode.commands.executeCommand('workbench.action.openSettings', setting);
    });
  }

  /** The error as the command returns it to its caller, made safe like anything shown (its caller may show it). */
  private safeError(code: string, message: string): { code: string; message: string } {
    return { code: this.display.text(code), message: this.display.text(message) };
  }

  private fail(err: unknown, uri: vscode.Uri | undefined): SubmitResult {
    const code = ComfyError.is(err) ? err.code : 'error';
    const message = describe(err);
    this.log.error('submit', message + (ComfyError.is(err) && err.requestId ? ` (request-id ${err.requestId})` : ''));
    if (err instanceof InvalidWorkflowError && uri) {
      this.problems
        .show(uri, err)
        .catch((e: unknown) => this.log.warn('submit', `cannot show the problems: ${describe(e)}`));
    }
    if (ApiError.hasCode(err, 'unauthorized')) {
      const setKey = vscode.l10n.t('Set API Key');
      void this.display
        .error(vscode.l10n.t('Comfy Cloud: the server refused the API key ({0}).', message), setKey)
        .then((choice) => {
          if (choice === setKey) void vscode.commands.executeCommand(Commands.setApiKey);
        });
    } else if (OutcomeUnknownError.is(err)) {
      const showLog = vscode.l10n.t('Show Log');
      void this.display.warning(vscode.l10n.t('Comfy Cloud: {0}', err.message), showLog).then((choice) => {
        if (choice === showLog) void vscode.commands.executeCommand(Commands.showLog);
      });
    } else if (ConnectionError.is(err)) {
      this.connectionFailed(err, message);
    } else if (InputError.is(err)) {
      void this.display.error(vscode.l10n.t('Comfy Cloud: {0}', message));
      return { status: 'refused', files: [], error: this.safeError(code, message) };
    } else {
      const showLog = vscode.l10n.t('Show Log');
      void this.display.error(vscode.l10n.t('Comfy Cloud: {0}', message), showLog).then((choice) => {
        if (choice === showLog) void vscode.commands.executeCommand(Commands.showLog);
      });
    }
    return { status: 'error', files: [], error: this.safeError(code, message) };
  }
}

/**
 * A message a person can act on: code and message of a core error (the message stays the core's English, as in the
 * CLI and the log), with our words around it and the advice in the user's language.
 */
function describe(err: unknown): string {
  // Node classes the server does not run: one sentence naming each class once (core unknownClassesMessage).
  const unknownClasses = err instanceof InvalidWorkflowError ? unknownClassesMessage(err, vscode.l10n.t) : undefined;
  if (unknownClasses !== undefined) return unknownClasses;
  if (err instanceof InvalidWorkflowError && err.nodeErrors.length > 0) {
    const first = err.nodeErrors
      .slice(0, 3)
      .map((n) => vscode.l10n.t('node {0}: {1}', `${n.nodeId}${n.field ? `.${n.field}` : ''}`, n.reason));
    const more = err.nodeErrors.length > 3 ? vscode.l10n.t(' (+{0} more)', err.nodeErrors.length - 3) : '';
    return vscode.l10n.t('the workflow is invalid — {0}{1}', first.join('; '), more);
  }
  return errorMessage(err, vscode.l10n.t);
}

/** A connection made for a public service (the cloud, a deployment): it always needs a key, and it is always up. */
function isPublicService(active: ActiveConnection | undefined): boolean {
  return active?.kind === 'cloud' || active?.kind === 'deployment';
}
