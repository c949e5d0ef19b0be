import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { InputError } from '../../core';
import { assertApiWorkflow, type ApiWorkflow } from '../../core/util';
import { errorMessage } from '../../core/views';
import { isPng, readImageWorkflow, type ImageWorkflow } from '../../core/convert';
import { requireAssets } from '../assets';
import type { AssetsNode, AssetsView } from '../assets';
import type { Config } from '../platform/config';
import { Commands } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { JobsNode, JobsView } from '../jobs';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import type { SubmitResult, SubmitWorkflowCommand } from './submit';
import type { WorkflowConversion } from './workflowConversion';

/** The most bytes of an image read to find its workflow (200 MiB): a larger file is refused before it is read. */
export const MAX_IMAGE_BYTES = 200 * 1024 * 1024;

/** What the image commands take: a file (Explorer, the monitor), a job's output (Jobs view), an asset (Assets view). */
export type ImageArg = vscode.Uri | JobsNode | AssetsNode | undefined;

/** What "Open Workflow from Image" returns to its caller (tests, other extensions). */
export interface OpenImageWorkflowResult {
  /** `opened`: at least one document was opened; `refused`: none (the message says why). */
  readonly status: 'opened' | 'refused';
  /** The untitled document of the image's UI workflow (its `workflow` chunk), when it has one. */
  readonly workflow?: vscode.TextDocument;
  /** The untitled document of its API graph: the `prompt` chunk, or the conversion of the `workflow` chunk. */
  readonly prompt?: vscode.TextDocument;
  /** Where the API graph came from. */
  readonly promptFrom?: 'prompt' | 'converted';
  readonly error?: { readonly code: string; readonly message: string };
}

/** Options a caller (a test) may pass to "Run Again from Image". */
export interface RunAgainOptions {
  /** false: submit without the modal confirmation (tests). Default true. */
  readonly confirm?: boolean;
}

/** What "Run Again from Image" returns: the submission's result, or `declined` (the confirmation was dismissed). */
export type RunAgainResult = SubmitResult | { readonly status: 'declined'; readonly files: string[] };

/** An image's bytes, its file name, and its file when it is one on this machine. */
interface ImageBytes {
  readonly bytes: Uint8Array;
  readonly name: string;
  readonly file?: vscode.Uri;
}

/**
 * The workflows a ComfyUI image carries (its `workflow` text chunk: the UI workflow; its `prompt` chunk: the API graph
 * that made it; core `readImageWorkflow`), from a PNG in the Explorer, an asset of the Assets view, a job's output in the
 * Jobs view or the monitor's gallery:
 * - "Open Workflow from Image": both opened as untitled documents (`<image>.ui.json`, `<image>.api.json`); without a
 *   `prompt` chunk the API graph is the conversion of the workflow; a PNG without a workflow says so;
 * - "Run Again from Image": a new job from the `prompt` chunk (a new Idempotency-Key: Job and Asset API v2, POST
 *   /api/v2/jobs, rule 3), after a modal confirmation naming the image and the connection, followed like any
 *   submission (Submit Workflow's path).
 */
export class ImageWorkflows extends Disposable {
  constructor(
    private readonly deps: {
      readonly jobs: JobServiceHost;
      readonly jobsView: Pick<JobsView, 'outputFile'>;
      readonly assets: Pick<AssetsView, 'provider'>;
      readonly conversion: () => Pick<
        WorkflowConversion,
        'convert' | 'showRefusal' | 'openBeside' | 'storeApiWorkflow'
      >;
      readonly submit: () => Pick<SubmitWorkflowCommand, 'submitWorkflow'>;
      readonly config: Pick<Config, 'connection'>;
      readonly display: Display;
      readonly log: Log;
      /** The extension's global storage: an asset not on this machine is downloaded under `image-workflows/` to be read. */
      readonly storage: vscode.Uri;
    },
  ) {
    super();
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return {
      [Commands.openWorkflowFromImage]: (arg?: ImageArg) => this.openWorkflow(arg),
      [Commands.runAgainFromImage]: (arg?: ImageArg, options?: RunAgainOptions) => this.runAgain(arg, options),
    };
  }

  /** "Open Workflow from Image" (see the class). */
  async openWorkflow(arg: ImageArg): Promise<OpenImageWorkflowResult> {
    const read = await this.read(arg);
    if ('error' in read) return this.refused(read.error, read.name);
    const { image, found } = read;
    const base = image.name.replace(/\.png$/i, '');
    let apiGraph: unknown = found.prompt;
    let promptFrom: OpenImageWorkflowResult['promptFrom'] = found.prompt !== undefined ? 'prompt' : undefined;
    let refusal: InputError | undefined;
    if (apiGraph === undefined && found.workflow !== undefined) {
      const converted = await this.deps.conversion().convert(found.workflow);
      if ('error' in converted) refusal = converted.error;
      else {
        apiGraph = converted.workflow;
        promptFrom = 'converted';
      }
    }
    const conversion = this.deps.conversion();
    const workflow =
      found.workflow !== undefined
        ? await conversion.openBeside(image.file, `${base}.ui.json`, json(found.workflow), vscode.ViewColumn.Active)
        : undefined;
    // Beside the UI workflow when both open; alone, in the active column (no empty group beside it).
    const prompt =
      apiGraph !== undefined
        ? await conversion.openBeside(
            image.file,
            `${base}.api.json`,
            json(apiGraph),
            workflow ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active,
          )
        : undefined;
    this.deps.log.info(
      'image',
      `${image.name}: ${[workflow && 'UI workflow', prompt && `API graph (${promptFrom})`].filter(Boolean).join(' and ')} opened`,
    );
    // The UI workflow is open, but its conversion failed: said, with each node and why.
    if (refusal) conversion.showRefusal(image.name, refusal);
    return { status: 'opened', workflow, prompt, promptFrom };
  }

  /** "Run Again from Image" (see the class). */
  async runAgain(arg: ImageArg, options: RunAgainOptions = {}): Promise<RunAgainResult> {
    const read = await this.read(arg);
    if ('error' in read) {
      const refused = this.refused(read.error, read.name);
      return { status: 'refused', files: [], error: refused.error };
    }
    const { image, found } = read;
    let prompt: ApiWorkflow;
    try {
      if (found.prompt === undefined) {
        throw new InputError(
          'png_no_prompt',
          vscode.l10n.t(
            '{0} carries no API-format graph (no "prompt" chunk): use "{1}" to convert its workflow',
            image.name,
            vscode.l10n.t('Comfy Cloud: Open Workflow from Image'),
          ),
        );
      }
      assertApiWorkflow(found.prompt);
      prompt = found.prompt;
    } catch (err) {
      if (!InputError.is(err)) throw err;
      const refused = this.refused(err, image.name);
      return { status: 'refused', files: [], error: refused.error };
    }
    if (options.confirm !== false) {
      let connection: string;
      try {
        connection = this.deps.config.connection().name;
      } catch (err) {
        connection = errorMessage(err, vscode.l10n.t);
      }
      const runAgain = vscode.l10n.t('Run Again');
      const choice = await vscode.window.showWarningMessage(
        this.deps.display.text(vscode.l10n.t('Run {0} again on {1}?', image.name, connection)),
        {
          modal: true,
          detail: vscode.l10n.t(
            'This submits the graph that made the image (its "prompt") as a new job, with a new Idempotency-Key.',
          ),
        },
        runAgain,
      );
      if (choice !== runAgain) return { status: 'declined', files: [] };
    }
    let workflowFile: string;
    try {
      workflowFile = await this.deps
        .conversion()
        .storeApiWorkflow(`${image.name.replace(/\.png$/i, '')}.api.json`, prompt);
    } catch (err) {
      const refused = this.refused(new InputError('unwritable', errorMessage(err, vscode.l10n.t)), image.name);
      return { status: 'error', files: [], error: refused.error };
    }
    this.deps.log.info('image', `running ${image.name} again from its prompt (${workflowFile})`);
    return this.deps
      .submit()
      .submitWorkflow({ name: image.name, workflow: prompt, workflowFile, uiWorkflow: found.workflow });
  }

  /** The image's bytes and the workflows it carries, or why there are none (nothing shown yet). */
  private async read(
    arg: ImageArg,
  ): Promise<{ image: ImageBytes; found: ImageWorkflow } | { error: InputError; name: string }> {
    let image: ImageBytes;
    try {
      const got = await this.bytesOf(arg);
      if (!got)
        return {
          error: new InputError(
            'no_image',
            vscode.l10n.t("choose a PNG image (Explorer, Assets view, a job's output)"),
          ),
          name: vscode.l10n.t('the image'),
        };
      image = got;
    } catch (err) {
      return {
        error: InputError.is(err) ? err : new InputError('unreadable', errorMessage(err, vscode.l10n.t)),
        name: vscode.l10n.t('the image'),
      };
    }
    if (!isPng(image.bytes))
      return {
        error: new InputError(
          'not_png',
          vscode.l10n.t('{0} is not a PNG image: only PNG images carry a workflow', image.name),
        ),
        name: image.name,
      };
    try {
      const found = readImageWorkflow(image.bytes);
      if (found.prompt === undefined && found.workflow === undefined)
        throw new InputError('png_no_workflow', vscode.l10n.t('{0} carries no workflow', image.name));
      return { image, found };
    } catch (err) {
      if (InputError.is(err)) return { error: err, name: image.name };
      throw err;
    }
  }

  /** The bytes of the image an argument names: read from disk, the job's output downloaded first, an asset's saved copy or its content. */
  private async bytesOf(arg: ImageArg): Promise<ImageBytes | undefined> {
    if (arg instanceof vscode.Uri) return { bytes: await readCapped(arg), name: path.basename(arg.path), file: arg };
    if (arg?.kind === 'output') {
      const file = vscode.Uri.file(await this.deps.jobsView.outputFile(arg));
      return { bytes: await readCapped(file), name: path.basename(file.fsPath), file };
    }
    if (arg?.kind === 'asset') {
      const record = this.deps.assets.provider.recordOf(arg);
      if (!record) return undefined;
      const name = path.basename(record.fileName ?? '') || `${record.assetId}.png`;
      if (record.localPath) {
        const local = vscode.Uri.file(record.localPath);
        const bytes = await readCapped(local).catch(() => undefined);
        if (bytes) return { bytes, name, file: local };
      }
      // Not on this machine: its content downloaded to a temporary file, read, and removed.
      const dir = path.join(this.deps.storage.fsPath, 'image-workflows');
      await fs.mkdir(dir, { recursive: true });
      const temp = path.join(dir, `${randomUUID()}.png`);
      try {
        await this.deps.jobs.service.use((lease) =>
          requireAssets(lease).downloadAsset(record.assetId, temp, { signal: lease.signal, overwrite: true }),
        );
        return { bytes: await readCapped(vscode.Uri.file(temp)), name };
      } finally {
        await fs.rm(temp, { force: true }).catch(() => undefined);
      }
    }
    return undefined;
  }

  private refused(
    err: InputError,
    name: string,
  ): OpenImageWorkflowResult & { error: { code: string; message: string } } {
    this.deps.log.warn('image', `${name}: ${err.code}: ${err.message}`);
    void this.deps.display.error(vscode.l10n.t('Comfy Cloud: {0}', errorMessage(err, vscode.l10n.t)));
    return {
      status: 'refused',
      error: { code: this.deps.display.text(err.code), message: this.deps.display.text(err.message) },
    };
  }
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A file's bytes, refused before reading when larger than {@link MAX_IMAGE_BYTES}. */
async function readCapped(uri: vscode.Uri): Promise<Uint8Array> {
  const stat = await vscode.workspace.fs.stat(uri);
  if (stat.size > MAX_IMAGE_BYTES)
    throw new InputError(
      'too_large',
      vscode.l10n.t('{0} is larger than {1} MiB: not read', path.basename(uri.path), MAX_IMAGE_BYTES / 1024 / 1024),
    );
  const bytes = await vscode.workspace.fs.readFile(uri);
  if (bytes.length > MAX_IMAGE_BYTES)
    throw new InputError(
      'too_large',
      vscode.l10n.t('{0} is larger than {1} MiB: not read', path.basename(uri.path), MAX_IMAGE_BYTES / 1024 / 1024),
    );
  return bytes;
}
