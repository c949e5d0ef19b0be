import * as path from 'node:path';
import * as vscode from 'vscode';
import { InputError, describeError, refusalText } from '../../core';
import { parseBatchFile, recordBatch, variationsFromBatchFile, type Variation } from '../../core/batch';
import type { ApiWorkflow } from '../../core/util';
import type { BatchStore } from '../../core/state';
import { parseWorkflowText, readWorkflowFile } from '../../core/util/inputFile';
import { nodeInputAt } from '../workflow';
import { listValues, rangeProblem, variationsFromQuickInput, type QuickValueKind } from '../../core/batch/quickInput';
import type { BatchService } from './batches';
import type { Config } from '../platform/config';
import { Commands } from '../platform/constants';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { JobsNode } from '../jobs';
import type { Log } from '../platform/log';

/** What "Run with Variations…" may be given instead of asking (tests, other extensions): any part left out is asked. */
export interface VariationsRequest {
  nodeId?: string;
  field?: string;
  kind?: QuickValueKind;
  /** The range, the list, or the path of the file or folder. */
  values?: string;
  /** A UI-format file: converted to API format first (the refusal's "Convert and Run with Variations"). */
  convertUiFormat?: boolean;
}

/** The batch file name pattern: a `*.batch.json` gets "Run Batch" and the batch file schema. */
export const BATCH_FILE = /\.batch\.json$/i;

/** Where a batch command's argument names a batch: an id, or the Jobs view's batch node. */
type BatchArg = string | JobsNode | undefined;

/**
 * The batch commands: "Run with Variations…" (a node input of an API-format workflow, its values from a quick
 * input), "Run Batch" (a `*.batch.json`), and the Jobs view's Cancel Batch, Resume Batch, Copy Batch Id. Each batch is
 * recorded whole (every variation's Idempotency-Key) before anything is sent (Job and Asset API v2, POST
 * /api/v2/jobs, rules 3–5); bad values are said and nothing is recorded.
 */
export class RunVariations {
  constructor(
    private readonly deps: {
      batches: BatchService;
      store: BatchStore;
      jobs: JobServiceHost;
      config: Pick<Config, 'batchConcurrency'>;
      display: Display;
      log: Log;
      /** The batch id of the Jobs view's selected batch item, if one is selected. */
      selectedBatch?: () => string | undefined;
      /** Converts a UI-format workflow (the workflow feature's conversion): its API graph and the file it is kept in. */
      convertUi?: (text: string, name: string) => Promise<{ workflow: ApiWorkflow; file: string } | undefined>;
    },
  ) {}

  /** The commands, by id. */
  commands(): Record<string, (...args: never[]) => unknown> {
    return {
      [Commands.runWithVariations]: (uri?: unknown, request?: unknown) =>
        this.runWithVariations(
          uri instanceof vscode.Uri ? uri : undefined,
          isRequest(request) ? request : isRequest(uri) ? uri : undefined,
        ),
      [Commands.runBatchFile]: (uri?: unknown) => this.runBatchFile(uri instanceof vscode.Uri ? uri : undefined),
      [Commands.cancelBatch]: (arg?: BatchArg) => this.cancelBatch(arg),
      [Commands.resumeBatch]: (arg?: BatchArg) => this.resumeBatch(arg),
      [Commands.copyBatchId]: (arg?: BatchArg) => this.copyBatchId(arg),
    };
  }

  /** The "Run Batch" lens at the top of a `*.batch.json`. */
  codeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    if (!BATCH_FILE.test(document.uri.path)) return [];
    return [
      new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: vscode.l10n.t('$(run-all) Run Batch'),
        command: Commands.runBatchFile,
        arguments: [document.uri],
      }),
    ];
  }

  /**
   * "Run with Variations…": on the node input under the cursor of an API-format workflow (or `request`'s), asks how
   * the values are given and what they are, records the batch and starts it, then opens its contact sheet.
   * @returns the batch id, or undefined when nothing was recorded (canceled, or bad input: said).
   */
  async runWithVariations(uri?: vscode.Uri, request: VariationsRequest = {}): Promise<string | undefined> {
    const editor = vscode.window.activeTextEditor;
    const document = uri ? await vscode.workspace.openTextDocument(uri) : editor?.document;
    if (!document) return this.refuse(vscode.l10n.t('Open an API-format workflow and put the cursor on a node input.'));
    let workflow: ApiWorkflow;
    let file = document.uri.scheme === 'file' ? document.uri.fsPath : undefined;
    let at: { nodeId: string; field: string } | undefined;
    const name = path.basename(document.uri.path);
    try {
      workflow = parseWorkflowText(document.getText(), name);
      at =
        editor && editor.document === document
          ? nodeInputAt(document.getText(), document.offsetAt(editor.selection.active))
          : undefined;
    } catch (err) {
      const convertUi = this.deps.convertUi;
      if (!(InputError.is(err) && err.code === 'workflow_format_ui') || !convertUi)
        return this.refuse(describeError(err));
      if (!request.convertUiFormat) return this.offerConversion(document.uri, request);
      // As Convert and Submit: the variations run on the API graph, kept as the file their jobs' records name.
      const converted = await convertUi(document.getText(), name);
      if (!converted) return undefined;
      ({ workflow, file } = converted);
      if (request.nodeId === undefined || request.field === undefined) {
        at = await this.pickInput(workflow);
        if (!at) return undefined;
      }
    }
    const nodeId = request.nodeId ?? at?.nodeId;
    const field = request.field ?? at?.field;
    if (nodeId === undefined || field === undefined)
      return this.refuse(
        vscode.l10n.t(
          'Put the cursor on a node input (e.g. a seed) of the workflow, then run "Run with Variations…" again.',
        ),
      );
    const kind = request.kind ?? (await this.pickKind(nodeId, field));
    if (!kind) return undefined;
    const values = request.values ?? (await this.askValues(kind, nodeId, field));
    if (values === undefined) return undefined;
    const baseDir =
      document.uri.scheme === 'file'
        ? path.dirname(document.uri.fsPath)
        : (vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd());
    let variations: Variation[];
    try {
      variations = await variationsFromQuickInput(workflow, nodeId, field, kind, values, baseDir);
    } catch (err) {
      return this.refuse(describeError(err));
    }
    return this.record(workflow, variations, file);
  }

  /**
   * "Run Batch": reads a batch file (its workflow a path relative to it), records the batch and starts it, then
   * opens its contact sheet. @returns the batch id, or undefined when nothing was recorded (said why).
   */
  async runBatchFile(uri?: vscode.Uri): Promise<string | undefined> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (!target || target.scheme !== 'file')
      return this.refuse(vscode.l10n.t('Open a batch file (*.batch.json) saved on disk.'));
    try {
      const document = await vscode.workspace.openTextDocument(target);
      const name = path.basename(target.fsPath);
      const batchFile = parseBatchFile(document.getText(), name);
      const baseDir = path.dirname(target.fsPath);
      const workflowFile = path.resolve(baseDir, batchFile.workflow);
      const workflow = await readWorkflowFile(workflowFile);
      const variations = await variationsFromBatchFile(workflow, batchFile, baseDir);
      return await this.record(workflow, variations, workflowFile);
    } catch (err) {
      return this.refuse(describeError(err));
    }
  }

  /** Cancel Batch: nothing more of it is sent, its running jobs are canceled on the server. */
  async cancelBatch(arg?: BatchArg): Promise<string | undefined> {
    const batchId = this.batchIdOf(arg);
    if (!batchId) return undefined;
    const running = this.deps.batches.isRunning(batchId);
    await this.deps.batches.cancel(batchId);
    // A runner of this window says the end itself (one notice for the batch); else it is said here.
    if (!running)
      void this.deps.display.info(
        vscode.l10n.t('Comfy Cloud: batch {0} canceled: nothing more of it is sent.', this.deps.display.text(batchId)),
      );
    return batchId;
  }

  /** Resume Batch: runs it again in this window (accepted jobs followed, the rest sent under their keys). */
  resumeBatch(arg?: BatchArg): string | undefined {
    const batchId = this.batchIdOf(arg);
    if (!batchId) return undefined;
    this.deps.batches.start(batchId);
    return batchId;
  }

  /** Copy Batch Id (neutralized: a control character must not reach a terminal through a paste). */
  async copyBatchId(arg?: BatchArg): Promise<string | undefined> {
    const batchId = this.batchIdOf(arg);
    if (!batchId) return undefined;
    const id = this.deps.display.text(batchId);
    await vscode.env.clipboard.writeText(id);
    void this.deps.display.info(vscode.l10n.t('Comfy Cloud: batch id {0} copied.', id));
    return id;
  }

  private batchIdOf(arg: BatchArg): string | undefined {
    if (typeof arg === 'string') return arg;
    if (arg?.kind === 'batch') return arg.batchId;
    return this.deps.selectedBatch?.();
  }

  /** Records the batch (every key fixed, before anything is sent), starts it and opens its contact sheet. */
  private async record(
    workflow: ApiWorkflow,
    variations: Variation[],
    workflowFile: string | undefined,
  ): Promise<string | undefined> {
    const { log } = this.deps;
    let batchId: string;
    try {
      batchId = await this.deps.jobs.service.use(async (lease) => {
        // A batch only where a submission carries an Idempotency-Key: no variation may run twice.
        if (!lease.backend.capabilities.idempotentSubmit) {
          throw new InputError('not_supported', refusalText('idempotentSubmit', lease.backend.api, vscode.l10n.t));
        }
        const batch = await recordBatch(this.deps.store, workflow, variations, {
          baseUrl: lease.backend.baseUrl,
          workflowFile,
          concurrency: this.deps.config.batchConcurrency(),
          nowMs: Date.now(),
          client: 'vscode',
        });
        return batch.batchId;
      });
    } catch (err) {
      return this.refuse(describeError(err));
    }
    log.info(
      'batches',
      `batch ${batchId} recorded: ${variations.length} variations of ${workflowFile ?? "an editor's workflow"}`,
    );
    this.deps.batches.start(batchId);
    // The contact sheet is another module's command: a window without it still runs the batch.
    void Promise.resolve(vscode.commands.executeCommand(Commands.openContactSheet, batchId)).catch((err: unknown) =>
      log.info('batches', `no contact sheet for batch ${batchId}: ${describeError(err)}`),
    );
    return batchId;
  }

  /**
   * A UI-format file (Job and Asset API v2, POST /api/v2/jobs, rule 2: the service refuses it with
   * `workflow_format_ui`): nothing recorded; "Convert and Run with Variations" converts it, as Submit's "Convert and
   * Submit" does, and asks the rest on the API graph.
   */
  private offerConversion(uri: vscode.Uri, request: VariationsRequest): undefined {
    this.deps.log.info('batches', `not run: ${uri.path} is a UI-format workflow; conversion offered`);
    const convert = vscode.l10n.t('Convert and Run with Variations');
    const message = vscode.l10n.t(
      "Comfy Cloud: this is a UI-format workflow (the editor's save file); variations run on API format. Convert it with the node definitions in use and run the variations on the result.",
    );
    void this.deps.display.error(message, convert).then((choice) => {
      if (choice === convert)
        void vscode.commands.executeCommand(Commands.runWithVariations, uri, {
          ...request,
          convertUiFormat: true,
        } satisfies VariationsRequest);
    });
    return undefined;
  }

  /** Asks which node input of `workflow` varies: its literal inputs, node by node. Undefined when none was picked. */
  private async pickInput(workflow: ApiWorkflow): Promise<{ nodeId: string; field: string } | undefined> {
    const items: Array<vscode.QuickPickItem & { nodeId: string; field: string }> = [];
    for (const [nodeId, node] of Object.entries(workflow)) {
      for (const [field, value] of Object.entries(node.inputs ?? {})) {
        if (Array.isArray(value)) continue; // a link: its value comes from another node
        items.push({
          label: field,
          description: this.deps.display.text(`${nodeId} · ${node.class_type}`),
          detail: this.deps.display.text(JSON.stringify(value).slice(0, 80)),
          nodeId,
          field,
        });
      }
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Run with Variations'),
      placeHolder: vscode.l10n.t('Which node input varies?'),
      matchOnDescription: true,
    });
    return picked && { nodeId: picked.nodeId, field: picked.field };
  }

  private refuse(message: string): undefined {
    this.deps.log.info('batches', `not run: ${message}`);
    void this.deps.display.error(
      vscode.l10n.t('Comfy Cloud: cannot run the variations: {0}', this.deps.display.text(message)),
    );
    return undefined;
  }

  private async pickKind(nodeId: string, field: string): Promise<QuickValueKind | undefined> {
    const items: Array<vscode.QuickPickItem & { value: QuickValueKind }> = [
      {
        label: vscode.l10n.t('Range (e.g. 1..8)'),
        description: vscode.l10n.t('whole numbers; 1..20:5 steps by 5'),
        value: 'range',
      },
      { label: vscode.l10n.t('List (comma or line separated)'), value: 'list' },
      { label: vscode.l10n.t('File… (one value a line)'), value: 'file' },
      { label: vscode.l10n.t('Folder… (each file uploaded)'), value: 'folder' },
    ];
    const picked = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Run with Variations: {0}.{1}', nodeId, field),
      placeHolder: vscode.l10n.t('How are the values given?'),
    });
    return picked?.value;
  }

  private async askValues(kind: QuickValueKind, nodeId: string, field: string): Promise<string | undefined> {
    const title = vscode.l10n.t('Run with Variations: {0}.{1}', nodeId, field);
    if (kind === 'range') {
      return vscode.window.showInputBox({
        title,
        prompt: vscode.l10n.t('A range of whole numbers: 1..8, or 1..20:5 for a step of 5'),
        placeHolder: '1..8',
        ignoreFocusOut: true,
        validateInput: (v) => rangeProblem(v),
      });
    }
    if (kind === 'list') {
      return vscode.window.showInputBox({
        title,
        prompt: vscode.l10n.t('Values separated by commas (numbers, true/false, null or text)'),
        placeHolder: 'a cat, a dog, 42',
        ignoreFocusOut: true,
        validateInput: (v) => (listValues(v).length > 0 ? undefined : vscode.l10n.t('Give at least one value.')),
      });
    }
    const picked = await vscode.window.showOpenDialog({
      title,
      canSelectFiles: kind === 'file',
      canSelectFolders: kind === 'folder',
      canSelectMany: false,
      openLabel: kind === 'file' ? vscode.l10n.t('Use These Values') : vscode.l10n.t('Upload Each File'),
    });
    return picked?.[0]?.fsPath;
  }
}

function isRequest(value: unknown): value is VariationsRequest {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof vscode.Uri);
}
