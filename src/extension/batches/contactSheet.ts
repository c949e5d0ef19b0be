import * as path from 'node:path';
import * as vscode from 'vscode';
import { batchStatus } from '../../core/batch';
import type { BatchRecord, BatchStore, StateStore } from '../../core/state';
import {
  contactSheet,
  variationFiles,
  type ContactSheetModel,
  type VariationFiles,
} from '../../core/batch/contactSheet';
import {
  contactSheetHtml,
  parseSheetWebviewMessage,
  SHEET_PROTOCOL_VERSION,
  sheetView,
  type SheetHostMessage,
  type SheetStrings,
  type SheetWebviewMessage,
} from '../../core/batch/sheetProtocol';
import { Commands, CONTACT_SHEET_VIEW_TYPE } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import {
  webviewPanelOptions,
  WebviewPanelHost,
  type PageBasics,
  type PageProtocol,
  type ReadyMessage,
} from '../platform/webviewPanelHost';

/** The contact sheet's page protocol (core/batch/sheetProtocol.ts). */
const SHEET_PAGE: PageProtocol<SheetWebviewMessage> = {
  component: 'sheet',
  version: SHEET_PROTOCOL_VERSION,
  parse: parseSheetWebviewMessage,
};

/** What the contact sheets need from the extension (the batch service gives the stores, the folders and the event). */
export interface ContactSheetDeps {
  extensionUri: vscode.Uri;
  display: Display;
  log: Log;
  /** The job records (each variation's truth). */
  store: Pick<StateStore, 'list'>;
  /** The batch records. */
  batches: Pick<BatchStore, 'get' | 'list'>;
  /** The root of a batch's outputs (a variation's files are in `join(root, label)`); undefined: none on this machine. */
  outputDir(batch: BatchRecord): string | undefined | Promise<string | undefined>;
  /** Fires with the id of a batch whose state changed (a variation submitted, a job's status, outputs downloaded). */
  onDidChange: vscode.Event<string>;
  /** Why variation `index` of a batch failed, when its runner heard it (a job's error, a refusal); else undefined. */
  failureOf?(batchId: string, index: number): string | undefined;
  /** The wait after the last change before the sheet is made again, ms (default 150). */
  debounceMs?: number;
}

/**
 * One batch's contact sheet: a `WebviewPanel` (core/batch/sheetProtocol.ts: nonce CSP, no network) showing every
 * variation's state and first image. Rules:
 * - The sheet is made again {@link ContactSheetDeps.debounceMs} after the last change of its batch, and posted whole.
 * - The page reads local resources only from dist/webview and the batch's output root (`localResourceRoots`): its
 *   images come as webview URIs of the files found there.
 * - `openImage` opens the cell's image (`vscode.open`), `openJob` the monitor of its job; both name a cell by its
 *   index, looked up in the sheet last posted (the page never names a path or a job).
 * - Closing the panel never cancels a job.
 * Every message from the page is validated (`parseSheetWebviewMessage`); an invalid one is logged and dropped.
 */
export class ContactSheetPanel extends WebviewPanelHost<SheetWebviewMessage, SheetHostMessage> {
  /** The sheet last made (what `openImage` and `openJob` look their cell up in). */
  model: ContactSheetModel | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Sheets being made: a refresh that started before another finished never posts over it. */
  private generation = 0;

  constructor(
    panel: vscode.WebviewPanel,
    readonly batchId: string,
    /** The batch's output root, or undefined (then the page shows no image). */
    readonly outputRoot: string | undefined,
    private readonly deps: ContactSheetDeps,
  ) {
    super(panel, deps, SHEET_PAGE, { kept: 50 });
    panel.webview.options = contactSheetWebviewOptions(deps.extensionUri, outputRoot);
    this.render();
    this.register({ dispose: () => clearTimeout(this.timer) });
  }

  /** The page (core/batch/sheetProtocol.ts): it says `ready`, then the host posts the sheet. */
  protected html(basics: PageBasics, asset: (name: string) => string): string {
    return contactSheetHtml({
      ...basics,
      codiconCss: asset('codicon.css'),
      sheetCss: asset('contactSheet.css'),
      sheetJs: asset('contactSheet.js'),
      title: this.panel.title,
    });
  }

  protected subject(): string {
    return `batch ${this.batchId}`;
  }

  /** The sheet made again after the debounce (a change of the batch). */
  schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, this.deps.debounceMs ?? 150);
  }

  /**
   * Makes the sheet now from the stores and the output folders and posts it (when the page is ready). Resolves with
   * the sheet made, or undefined when the batch is no longer recorded.
   */
  async refresh(): Promise<ContactSheetModel | undefined> {
    const generation = ++this.generation;
    const batch = await this.deps.batches.get(this.batchId);
    if (!batch) return undefined;
    const status = batchStatus(batch, await this.deps.store.list());
    const files = new Map<number, VariationFiles>();
    await Promise.all(
      status.variations.map(async (v) => {
        const found = this.outputRoot === undefined ? [] : await variationFiles(path.join(this.outputRoot, v.label));
        const failure = this.deps.failureOf?.(this.batchId, v.variation.index);
        files.set(v.variation.index, {
          files: found,
          ...(failure === undefined ? {} : { error: this.deps.display.text(failure) }),
        });
      }),
    );
    const model = contactSheet(status, files);
    // A later refresh has begun: it posts the newer sheet.
    if (generation !== this.generation || this.gone) return model;
    this.model = model;
    this.post({
      type: 'sheet',
      sheet: sheetView(
        model,
        (file) => this.panel.webview.asWebviewUri(vscode.Uri.file(file)).toString(),
        sheetStrings(batch),
      ),
    });
    return model;
  }

  protected async onReady(): Promise<void> {
    await this.refresh();
  }

  protected async act(message: Exclude<SheetWebviewMessage, ReadyMessage>): Promise<unknown> {
    switch (message.type) {
      case 'openImage': {
        const image = this.model?.cells.find((c) => c.index === message.index)?.image;
        if (!image) return false;
        await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(image), {
          preview: true,
          viewColumn: vscode.ViewColumn.Beside,
        });
        return true;
      }
      case 'openJob': {
        const jobId = this.model?.cells.find((c) => c.index === message.index)?.jobId;
        if (!jobId) return false;
        await vscode.commands.executeCommand(Commands.openJobMonitor, jobId);
        return true;
      }
    }
  }
}

/**
 * The webview options of a contact sheet: scripts on, no command URIs, local resources only from dist/webview and
 * the batch's output root (none when it has none).
 */
export function contactSheetWebviewOptions(
  extensionUri: vscode.Uri,
  outputRoot: string | undefined,
): vscode.WebviewOptions {
  return webviewPanelOptions(extensionUri, outputRoot === undefined ? [] : [outputRoot]);
}

/** The page's words, translated here (the page has none of its own). */
function sheetStrings(batch: BatchRecord): SheetStrings {
  return {
    // The workflow's file name says what the batch is; the id tells it from another batch of the same workflow.
    title: batch.workflowFile
      ? vscode.l10n.t('{0} · batch {1}', path.basename(batch.workflowFile), batch.batchId)
      : vscode.l10n.t('Batch {0}', batch.batchId),
    empty: vscode.l10n.t('No variation has finished yet. Images appear here as their jobs end.'),
    states: {
      not_sent: vscode.l10n.t('Not sent'),
      unknown: vscode.l10n.t('Outcome unknown'),
      queued: vscode.l10n.t('Queued'),
      running: vscode.l10n.t('Running'),
      succeeded: vscode.l10n.t('Succeeded'),
      failed: vscode.l10n.t('Failed'),
      canceled: vscode.l10n.t('Canceled'),
    },
    openJob: vscode.l10n.t('Open the monitor of job {0}'),
    openImage: vscode.l10n.t('{0}: open the image'),
    moreFiles: vscode.l10n.t('+{0} files'),
    grid: vscode.l10n.t('{0} (rows) by {1} (columns)'),
  };
}

/** A batch id as the argument of "Open Contact Sheet": a string, or an object with a `batchId` (a tree item's). */
function batchIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg.trim() || undefined;
  if (arg && typeof arg === 'object' && typeof (arg as { batchId?: unknown }).batchId === 'string')
    return (arg as { batchId: string }).batchId;
  return undefined;
}

/**
 * "Comfy Cloud: Open Contact Sheet": one sheet per batch (opening it again reveals it), each made again when its
 * batch changes ({@link ContactSheetDeps.onDidChange}). Built at the first use of the command.
 */
export class ContactSheetPanels extends Disposable {
  private readonly panels = new Map<string, ContactSheetPanel>();
  private readonly opening = new Map<string, Promise<ContactSheetPanel | undefined>>();
  private readonly opened = this.register(new vscode.EventEmitter<ContactSheetPanel>());
  /** Fires with each panel made (tests read it). */
  readonly onDidOpen = this.opened.event;

  constructor(private readonly deps: ContactSheetDeps) {
    super();
    this.register(deps.onDidChange((batchId) => this.panels.get(batchId)?.schedule()));
    this.register({
      dispose: () => {
        for (const panel of [...this.panels.values()]) panel.dispose();
      },
    });
  }

  /** The open sheet of a batch, if any (tests read it). */
  panelOf(batchId: string): ContactSheetPanel | undefined {
    return this.panels.get(batchId);
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return { [Commands.openContactSheet]: (arg?: unknown) => this.openCommand(arg) };
  }

  /** "Open Contact Sheet": the batch named by the argument, else one picked from the recorded batches. */
  async openCommand(arg?: unknown): Promise<ContactSheetPanel | undefined> {
    let batchId = batchIdOf(arg);
    if (!batchId) {
      const batches = await this.deps.batches.list();
      if (batches.length === 0) {
        void this.deps.display.info(vscode.l10n.t('Comfy Cloud: no batch is recorded on this machine yet.'));
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        batches.map((b) => ({
          label: b.batchId,
          description: vscode.l10n.t('{0} variations', b.variations.length),
          detail: b.workflowFile ? path.basename(b.workflowFile) : undefined,
          batchId: b.batchId,
        })),
        { title: vscode.l10n.t('Comfy Cloud: Open Contact Sheet'), placeHolder: vscode.l10n.t('The batch to show') },
      );
      batchId = picked?.batchId;
    }
    return batchId ? this.open(batchId) : undefined;
  }

  /**
   * Opens (or reveals) the sheet of `batchId`. Resolves with the panel; undefined (after saying so) when no such
   * batch is recorded.
   */
  open(batchId: string): Promise<ContactSheetPanel | undefined> {
    const existing = this.panels.get(batchId);
    if (existing) {
      existing.panel.reveal(undefined, false);
      return Promise.resolve(existing);
    }
    let pending = this.opening.get(batchId);
    if (!pending) {
      pending = this.make(batchId).finally(() => this.opening.delete(batchId));
      this.opening.set(batchId, pending);
    }
    return pending;
  }

  /**
   * Takes back a sheet's tab after a window reload (the serializer of {@link CONTACT_SHEET_VIEW_TYPE}): the page kept
   * its batch id in its state. A state without one, a batch no longer recorded, or a batch whose sheet is open already:
   * the tab is closed.
   */
  async restore(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const batchId = batchIdOf(state);
    const batch = batchId && !this.panels.has(batchId) ? await this.deps.batches.get(batchId) : undefined;
    if (!batchId || !batch) {
      panel.dispose();
      return;
    }
    this.deps.log.info('batch', `restoring the contact sheet of batch ${batchId}`);
    this.adopt(panel, batchId, await this.deps.outputDir(batch));
  }

  private async make(batchId: string): Promise<ContactSheetPanel | undefined> {
    const batch = await this.deps.batches.get(batchId);
    if (!batch) {
      void this.deps.display.info(
        vscode.l10n.t('Comfy Cloud: no batch {0} is recorded on this machine.', this.deps.display.text(batchId)),
      );
      return undefined;
    }
    const outputRoot = await this.deps.outputDir(batch);
    const panel = vscode.window.createWebviewPanel(
      CONTACT_SHEET_VIEW_TYPE,
      vscode.l10n.t(
        'Contact Sheet: {0}',
        batch.workflowFile ? path.basename(batch.workflowFile) : batchId.slice(0, 10),
      ),
      vscode.ViewColumn.Active,
      contactSheetWebviewOptions(this.deps.extensionUri, outputRoot),
    );
    return this.adopt(panel, batchId, outputRoot);
  }

  private adopt(panel: vscode.WebviewPanel, batchId: string, outputRoot: string | undefined): ContactSheetPanel {
    const made = new ContactSheetPanel(panel, batchId, outputRoot, this.deps);
    this.panels.set(batchId, made);
    made.onDidDispose(() => this.panels.get(batchId) === made && this.panels.delete(batchId));
    this.opened.fire(made);
    return made;
  }
}
