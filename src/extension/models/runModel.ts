import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { neutralize } from '../../core/util';
import {
  DeadlineExceededError,
  RouterError,
  RouterOutcomeUnknownError,
  fieldErrorSpans,
  findOutputImages,
  imageExtension,
  imageFileName,
  jsonPathText,
  removeTopLevelSchemaKey,
  retryMessage,
  writeFileAtomically,
  type OutputImage,
  type RouterService,
} from '../../core/router';
import { Commands } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display, LastingNotice } from '../platform/display';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import { modelIdOf } from './modelUris';

/** What a Run Model call ended with (tests read it: the command returns it). */
export interface RunModelOutcome {
  /** The editor document holding the native output, on success. */
  output?: vscode.TextDocument;
  /** The images found in the output (outputImages.ts), in document order; empty when none. On success. */
  images?: OutputImage[];
  /** What "Preview" does for image `index` (default 0): the file written and opened, or the URL opened externally. */
  previewImage?: (index?: number) => Promise<vscode.Uri | undefined>;
  /** What "Save…" does for image `index`: writes it to `target` (default: asked with a save dialog); the file written. */
  saveImage?: (index?: number, target?: vscode.Uri) => Promise<vscode.Uri | undefined>;
  /** The refusal or failure, otherwise. */
  error?: unknown;
  /** The Idempotency-Key the call was sent with, when the error carries it ("Collect Result" runs again with it). */
  idempotencyKey?: string;
  /** The message shown to the user about the failure (redacted and neutralized). */
  message?: string;
  /** The progress messages told for retries and collects, in order ("rate_limited: retrying in 2 s (attempt 2)"). */
  retries: string[];
}

/** The model id of a JSON input whose top-level `$schema` is a model schema URI (`comfy-router-schema:/p/m.json`), or undefined. */
export function modelOfInput(text: string): string | undefined {
  const m = /"\$schema"\s*:\s*"(comfy-router-schema:[^"]*)"/.exec(text);
  return m ? modelIdOf(vscode.Uri.parse(m[1]!)) : undefined;
}

/**
 * Run Model (Model router API, POST /v1/models/{provider}/{model}): sends the input file without its top-level
 * `$schema` (removeTopLevelSchemaKey: nothing else changed), with cancellable progress (each retry said in it:
 * "rate_limited: retrying in 2 s (attempt 2)"); opens the native output (the exact bytes) as JSON; images in it
 * (src/core/router/outputImages.ts) are offered in a notification "N image(s) in the output of <model>" with "Preview"
 * and "Save…"; a 422's field errors become Problems at each `loc` path in the file; another refusal a message with its
 * bucket and request id; a 504 (or a lost answer) with a key offers "Collect Result", which runs the command again with
 * the SAME Idempotency-Key (`comfyCloud.runModel <uri> <key>`). Every message shown passes through the Redactor
 * (Display).
 *
 * Images: a base64 image is written to a private temporary folder (removed on dispose) and opened with `vscode.open`
 * (VS Code's image preview); "Save…" writes it where the save dialog says, atomically for a local file. An image URL
 * is never fetched by the extension: "Preview" hands it to `vscode.env.openExternal` (VS Code shows the address and
 * asks before opening an outside link), so no router credential, no download size and no request from the extension
 * host to an address a server chose; it cannot be saved from here (the browser can).
 */
export class RunModel extends Disposable {
  private readonly problems = this.register(vscode.languages.createDiagnosticCollection('comfy-router'));
  private previewDir: Promise<string> | undefined;
  private outputs = 0;
  /** The refusal notice still up, per model id (closed when that model runs again). */
  private readonly refusals = new Map<string, LastingNotice>();

  /** @param router the model router's client, whose Idempotency-Keys are persisted under the state dir (leased per run). */
  constructor(
    private readonly router: Pick<RouterService, 'lease'>,
    private readonly log: Log,
    private readonly display: Display,
  ) {
    super();
    // A 422's field errors belong to the text that was sent: gone once that text changes or its editor closes.
    this.register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length > 0) this.problems.delete(e.document.uri);
      }),
    );
    this.register(vscode.workspace.onDidCloseTextDocument((d) => this.problems.delete(d.uri)));
    this.register({ dispose: () => [...this.refusals.values()].forEach((notice) => notice.close()) });
    // The previews are ours alone: removed with the module (best effort; the OS cleans its temp folder too).
    this.register({
      dispose: () =>
        void this.previewDir?.then((dir) => fs.rm(dir, { recursive: true, force: true })).catch(() => undefined),
    });
  }

  /** Runs the input in `uri` (default: the active editor's document), with `idempotencyKey` to collect an earlier run. */
  async run(uri?: unknown, idempotencyKey?: string): Promise<RunModelOutcome | undefined> {
    const doc =
      uri instanceof vscode.Uri
        ? await vscode.workspace.openTextDocument(uri)
        : vscode.window.activeTextEditor?.document;
    const id = doc ? modelOfInput(doc.getText()) : undefined;
    if (!doc || !id) {
      void this.display.warning(
        vscode.l10n.t(
          'Comfy Cloud: Run Model needs a JSON input whose "$schema" is a model schema (New Model Input makes one).',
        ),
      );
      return undefined;
    }
    const lease = await this.router.lease();
    if (!lease) {
      void this.display.warning(vscode.l10n.t('Comfy Cloud: no model router is connected: set its URL and key first.'));
      return undefined;
    }
    const client = lease.client;
    this.problems.delete(doc.uri);
    // A refusal of this model told earlier is stale once the model runs again: it is taken down (one notice per event).
    this.refusals.get(id)?.close();
    this.refusals.delete(id);
    const text = doc.getText();
    const retries: string[] = [];
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Running {0}…', id), cancellable: true },
        (progress, token) => {
          const controller = new AbortController();
          token.onCancellationRequested(() => controller.abort());
          return client.run(id, removeTopLevelSchemaKey(text), {
            signal: controller.signal,
            onRetry: (info) => {
              const message = retryMessage(info, vscode.l10n.t);
              retries.push(message);
              this.display.report(progress, { message });
            },
            ...(idempotencyKey ? { idempotencyKey } : {}),
          });
        },
      );
      const output = await this.outputDocument(id, result.bytes.toString('utf8'));
      await vscode.window.showTextDocument(output, { viewColumn: vscode.ViewColumn.Beside, preview: false });
      const images = findOutputImages(result.bytes);
      const previewImage = (index = 0): Promise<vscode.Uri | undefined> => this.preview(id, images, index);
      const saveImage = (index = 0, target?: vscode.Uri): Promise<vscode.Uri | undefined> =>
        this.save(id, images, index, target);
      if (images.length > 0) this.offerImages(id, images, previewImage, saveImage);
      return { output, images, previewImage, saveImage, retries };
    } catch (error) {
      const message = this.report(id, doc, text, error);
      const key =
        error instanceof RouterOutcomeUnknownError || error instanceof DeadlineExceededError
          ? error.idempotencyKey
          : undefined;
      return { error, message, retries, ...(key ? { idempotencyKey: key } : {}) };
    } finally {
      lease.release();
    }
  }

  /**
   * A new untitled JSON document holding a model's output, named after the model (`emulator-echo-output-1.json`: the
   * tab says what it is, and Save proposes that name). A name already taken (a document restored after a reload) is
   * skipped.
   */
  private async outputDocument(id: string, text: string): Promise<vscode.TextDocument> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const uri = vscode.Uri.from({
        scheme: 'untitled',
        path: `${id.replace(/\//g, '-')}-output-${++this.outputs}.json`,
      });
      if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) continue;
      const doc = await vscode.workspace.openTextDocument(uri);
      const edit = new vscode.WorkspaceEdit();
      edit.insert(uri, new vscode.Position(0, 0), text);
      if (doc.getText() === '' && (await vscode.workspace.applyEdit(edit))) return doc;
    }
    return vscode.workspace.openTextDocument({ language: 'json', content: text });
  }

  /** The notification about the output's images: "Preview" and "Save…" (not awaited: the run is over). */
  private offerImages(
    id: string,
    images: OutputImage[],
    preview: (index?: number) => Promise<unknown>,
    save: (index?: number) => Promise<unknown>,
  ): void {
    const previewAction = vscode.l10n.t('Preview');
    const saveAction = vscode.l10n.t('Save…');
    const actions = images.some((i) => i.kind === 'base64') ? [previewAction, saveAction] : [previewAction];
    void this.display
      .info(vscode.l10n.t('Comfy Cloud: {0} image(s) in the output of {1}', images.length, id), ...actions)
      .then(async (choice) => {
        if (choice === undefined) return;
        const index = await this.pickImage(images, choice === saveAction);
        if (index === undefined) return;
        try {
          await (choice === previewAction ? preview(index) : save(index));
        } catch (e) {
          const message = this.display.text(e instanceof Error ? e.message : String(e));
          this.log.warn('models', `image ${choice === previewAction ? 'preview' : 'save'} failed: ${message}`);
          void this.display.error(
            choice === previewAction
              ? vscode.l10n.t('Comfy Cloud: the image could not be previewed: {0}', message)
              : vscode.l10n.t('Comfy Cloud: the image could not be saved: {0}', message),
          );
        }
      });
  }

  /** Which image (index), asked with a quick pick when there are several (only base64 ones when saving). */
  private async pickImage(images: OutputImage[], saving: boolean): Promise<number | undefined> {
    const candidates = images
      .map((image, index) => ({ image, index }))
      .filter((c) => !saving || c.image.kind === 'base64');
    if (candidates.length <= 1) return candidates[0]?.index;
    const picked = await vscode.window.showQuickPick(
      candidates.map(({ image, index }) => ({
        label: vscode.l10n.t('Image {0}', index + 1),
        description: this.display.text(jsonPathText(image.path)),
        detail:
          image.kind === 'base64'
            ? vscode.l10n.t('{0}, {1} bytes', image.format.toUpperCase(), image.bytes.length)
            : this.display.text(image.url),
        index,
      })),
      { title: saving ? vscode.l10n.t('Save which image?') : vscode.l10n.t('Preview which image?') },
    );
    return picked?.index;
  }

  /**
   * Preview of image `index`: a base64 image is written to the private temporary folder and opened with `vscode.open`
   * (the image preview); a URL is handed to `vscode.env.openExternal`, never fetched here.
   * @returns the file or the URL opened. @throws RangeError for an index with no image; the file system's errors.
   */
  private async preview(id: string, images: OutputImage[], index: number): Promise<vscode.Uri | undefined> {
    const image = images[index];
    if (!image) throw new RangeError(`no image ${index + 1} in the output (${images.length} found)`);
    if (image.kind === 'url') {
      const uri = vscode.Uri.parse(image.url, true);
      return (await vscode.env.openExternal(uri)) ? uri : undefined;
    }
    this.previewDir ??= fs.mkdtemp(path.join(os.tmpdir(), 'comfy-cloud-preview-'));
    const file = path.join(await this.previewDir, imageFileName(id, index, image.format));
    await writeFileAtomically(file, image.bytes);
    const uri = vscode.Uri.file(file);
    await vscode.commands.executeCommand('vscode.open', uri, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    return uri;
  }

  /**
   * "Save…" of image `index`: to `target`, or where a save dialog says (default name from the model id and the index,
   * in the first workspace folder or the home folder); a local file is written atomically (temporary file, rename).
   * @returns the file written, or undefined when the dialog was cancelled. @throws RangeError for an index with no
   *   base64 image (a URL cannot be saved from here); the file system's errors.
   */
  private async save(
    id: string,
    images: OutputImage[],
    index: number,
    target?: vscode.Uri,
  ): Promise<vscode.Uri | undefined> {
    const image = images[index];
    if (!image || image.kind !== 'base64')
      throw new RangeError(
        `image ${index + 1} of the output is not an image held in the output (a URL opens in the browser instead)`,
      );
    const name = imageFileName(id, index, image.format);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(os.homedir());
    target ??= await vscode.window.showSaveDialog({
      title: vscode.l10n.t('Save Image'),
      defaultUri: vscode.Uri.joinPath(folder, name),
      filters: { [vscode.l10n.t('Images')]: [imageExtension(image.format)] },
    });
    if (!target) return undefined;
    if (target.scheme === 'file') await writeFileAtomically(target.fsPath, image.bytes);
    else await vscode.workspace.fs.writeFile(target, image.bytes);
    this.log.info(
      'models',
      `saved image ${index + 1} of ${id} (${image.bytes.length} bytes) to ${target.toString(true)}`,
    );
    return target;
  }

  /**
   * Shows the failure of a run of model `id` (Problems for a 422); returns the message shown. A refusal is a notice
   * that closes itself when the model runs again ({@link Display.lasting}: a plain error toast could not be taken down,
   * and would still say "refused" beside the next run's success); one with "Collect Result" is an error toast (its
   * button needs one).
   */
  private report(id: string, doc: vscode.TextDocument, text: string, error: unknown): string {
    const requestId = error instanceof RouterError ? error.requestId : undefined;
    const request = requestId ? vscode.l10n.t(' (request {0})', neutralize(requestId)) : '';
    const key =
      error instanceof RouterOutcomeUnknownError || error instanceof DeadlineExceededError
        ? error.idempotencyKey
        : undefined;
    if (error instanceof RouterError && error.fieldErrors.length > 0) {
      this.problems.set(
        doc.uri,
        fieldErrorSpans(text, error.fieldErrors).map((span) => {
          const range = new vscode.Range(doc.positionAt(span.offset), doc.positionAt(span.offset + span.length));
          const where = span.error.loc.join('.');
          const diagnostic = new vscode.Diagnostic(
            range,
            vscode.l10n.t('{0}: {1} ({2})', neutralize(where), neutralize(span.error.msg), neutralize(span.error.type)),
            vscode.DiagnosticSeverity.Error,
          );
          diagnostic.source = 'Comfy Cloud';
          return diagnostic;
        }),
      );
      return this.refused(
        id,
        vscode.l10n.t(
          'Comfy Cloud: the model refused the input: {0} field error(s), shown in Problems{1}.',
          error.fieldErrors.length,
          request,
        ),
      );
    }
    // Redacted (the router key, the API keys) and neutralized: a server's detail may echo a key or hold controls.
    const message = this.display.text(
      error instanceof RouterError
        ? `${error.bucket}: ${error.detail}`
        : error instanceof Error
          ? error.message
          : String(error),
    );
    this.log.warn('models', `Run Model failed: ${message}${request}`);
    if (key) {
      const collect = vscode.l10n.t('Collect Result');
      const shown = vscode.l10n.t(
        'Comfy Cloud: {0}{1}. The generation may still finish: collect it with the same key {2}.',
        message,
        request,
        this.display.text(key),
      );
      // The command's argument form, so a key reported earlier collects the same way: comfyCloud.runModel <uri> <key>.
      void this.display.error(shown, collect).then((choice) => {
        if (choice === collect) void vscode.commands.executeCommand(Commands.runModel, doc.uri, key);
      });
      return shown;
    }
    return this.refused(id, vscode.l10n.t('Comfy Cloud: Run Model failed: {0}{1}', message, request));
  }

  /** Tells a refusal of model `id` as a notice that the model's next run takes down; returns the text shown. */
  private refused(id: string, message: string): string {
    const notice = this.display.lasting(message, undefined);
    this.refusals.set(id, notice);
    void notice.closed.then(() => this.refusals.get(id) === notice && this.refusals.delete(id));
    return notice.message;
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    // `comfyCloud.runModel [uri] [idempotencyKey]`: with a key (what "Collect Result" passes) it collects that run.
    return {
      [Commands.runModel]: (uri?: unknown, key?: unknown) =>
        this.run(uri, typeof key === 'string' && key !== '' ? key : undefined),
    };
  }

  /** The CodeLens "Run Model" on the `$schema` line of a model input. */
  codeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const text = doc.getText();
    const at = text.indexOf('"$schema"');
    if (at < 0 || !modelOfInput(text)) return [];
    const position = doc.positionAt(at);
    return [
      new vscode.CodeLens(new vscode.Range(position, position), {
        title: vscode.l10n.t('$(play) Run Model'),
        command: Commands.runModel,
        arguments: [doc.uri],
      }),
    ];
  }
}
