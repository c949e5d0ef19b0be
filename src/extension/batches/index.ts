import * as vscode from 'vscode';
import type { ApiWorkflow } from '../../core/util';
import { Commands, CONTACT_SHEET_VIEW_TYPE } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once, registerLazyCommands } from '../platform/lazy';
import type { Services } from '../platform/services';
import { BatchService } from './batches';
import { ContactSheetPanels } from './contactSheet';
import { BATCH_FILE, RunVariations } from './runVariations';

export type { BatchService } from './batches';

/** What the batch runs read of the other features. */
export interface BatchRunsDeps {
  /** Where uploads and saved outputs are remembered (the Assets view's provider). */
  readonly assets: BatchServiceAssets;
  /** Fires when the active connection answers again: its unfinished batches are resumed. */
  readonly onDidReconnect: vscode.Event<void>;
}
type BatchServiceAssets = NonNullable<ConstructorParameters<typeof BatchService>[0]['assets']>;

/**
 * The batches of this window (run, resumed at start-up, canceled): a workflow run once per variation, each variation
 * one job under its recorded Idempotency-Key; the batch records live beside the job records (the CLI's batches show
 * too). Built before the jobs feature, whose list shows the batches.
 */
export function createBatchRuns(services: Services, deps: BatchRunsDeps): BatchService {
  const { jobs, batchStore, outputs, config, display, log } = services;
  return new BatchService({
    jobs,
    batches: batchStore,
    outputs,
    assets: deps.assets,
    config,
    display,
    log,
    onConnectionBack: deps.onDidReconnect,
  });
}

/** What the batch commands read of the other features. */
export interface BatchesFeatureDeps {
  /** The batch runs of {@link createBatchRuns} (the feature disposes them). */
  readonly runs: BatchService;
  /** The batch id of the Jobs view's selected batch item, if one is selected. */
  readonly selectedBatch: () => string | undefined;
}

/** The batches feature: the batch runs, the batch commands and their CodeLens, and the contact sheet. */
export class BatchesFeature extends Disposable {
  readonly runs: BatchService;
  /** The workflow feature's conversion of a UI-format workflow (set once that feature is made): Run with Variations on one. */
  convertUi: ((text: string, name: string) => Promise<{ workflow: ApiWorkflow; file: string } | undefined>) | undefined;

  constructor(services: Services, deps: BatchesFeatureDeps) {
    super();
    const { context, jobs, store, batchStore, config, display, log } = services;
    const runs = (this.runs = this.register(deps.runs));
    const sheets = once(() =>
      this.register(
        new ContactSheetPanels({
          extensionUri: context.extensionUri,
          display,
          log,
          store,
          batches: batchStore,
          outputDir: (b) => runs.outputDir(b),
          onDidChange: runs.onDidChange,
        }),
      ),
    );
    this.register(registerLazyCommands([Commands.openContactSheet], () => sheets().commands()));
    // A sheet open when the window reloads comes back, as the monitor and the graph do.
    this.register(
      vscode.window.registerWebviewPanelSerializer(CONTACT_SHEET_VIEW_TYPE, {
        deserializeWebviewPanel: (panel, state) => sheets().restore(panel, state),
      }),
    );
    const variations = once(
      () =>
        new RunVariations({
          batches: runs,
          store: batchStore,
          jobs,
          config,
          display,
          log,
          selectedBatch: deps.selectedBatch,
          convertUi: (text, name) => (this.convertUi ? this.convertUi(text, name) : Promise.resolve(undefined)),
        }),
    );
    this.register(
      registerLazyCommands(
        [
          Commands.runWithVariations,
          Commands.runBatchFile,
          Commands.cancelBatch,
          Commands.resumeBatch,
          Commands.copyBatchId,
        ],
        () => variations().commands(),
      ),
    );
    this.register(
      vscode.languages.registerCodeLensProvider(
        { language: 'json', pattern: '**/*.batch.json' },
        { provideCodeLenses: (d) => (BATCH_FILE.test(d.uri.path) ? variations().codeLenses(d) : []) },
      ),
    );
  }
}

/** Registers the batches feature: its commands, CodeLens and contact sheet over the batch runs. */
export function register(services: Services, deps: BatchesFeatureDeps): BatchesFeature {
  return new BatchesFeature(services, deps);
}
