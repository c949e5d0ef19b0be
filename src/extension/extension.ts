import * as path from 'node:path';
import * as vscode from 'vscode';
import { AssetRecords, BatchStore, FetchEngine, Redactor, StateStore, defaultStateDir, globalFetch, learnSecrets, type ActiveConnection } from '../core';
import { RouterClient, RouterService, fileKeyStore } from '../core/router';
import { AssetCommands } from './assets/assetCommands';
import { AssetsView } from './assets/assetsView';
import { BatchService } from './batches/batches';
import { Clients } from './platform/clients';
import { Config } from './platform/config';
import { ConnectionCommands } from './connection/connectionCommands';
import { ConnectionStatus } from './connection/connectionStatus';
import { ContactSheetPanels } from './batches/contactSheet';
import { Commands, EMULATOR_DATA_FOLDER, EMULATOR_PORT_KEY, EMULATOR_RETENTION_MS, GRAPH_VIEW_TYPE, JOB_DOCUMENT_SCHEME, ContextKeys, MONITOR_VIEW_TYPE, ROUTER_SCHEMA_SCHEME, ROUTER_SECRET_PREFIX, Settings, Views, WORKFLOW_SCHEMA_SCHEME } from './platform/constants';
import { Disposable } from './platform/disposable';
import { Display } from './platform/display';
import { EmulatorProcess } from './connection/emulatorProcess';
import { WorkflowGraphPanels } from './workflow/graphView';
import { JobActions } from './jobs/jobActions';
import { JobDocumentsProvider } from './jobs/jobDocumentsProvider';
import { JobEndService } from './jobs/jobEnds';
import { JobServiceHost } from './platform/jobServiceHost';
import { JobsView } from './jobs/jobsView';
import { once, registerLazyCommands } from './platform/lazy';
import { Log } from './platform/log';
import { ModelInputs } from './models/modelInputs';
import { ModelsView } from './models/modelsView';
import { MonitorManager } from './monitor/monitorManager';
import { OutputLocations } from './platform/outputs';
import { WorkflowProblems } from './workflow/problems';
import { RememberedJobs } from './jobs/rememberedJobs';
import { RunModel } from './models/runModel';
import { BATCH_FILE, RunVariations } from './batches/runVariations';
import { ApiKeys } from './platform/secrets';
import { JobEndNotifier } from './jobs/notifications';
import { SubmitWorkflowCommand, type SubmitOptions } from './workflow/submit';
import { SampleWorkflows, WelcomeContext } from './connection/welcome';
import { WorkflowIntelliSense } from './workflow/workflowIntelliSense';
import { WorkflowConversion } from './workflow/workflowConversion';
import { ImageWorkflows } from './workflow/imageWorkflows';

/** The commands of AssetCommands (built at the first of them). */
const ASSET_COMMANDS = [Commands.uploadAsset, Commands.refreshAssets, Commands.downloadAsset, Commands.copyAssetReference, Commands.copyAssetId, Commands.deleteAsset];
/** The commands of JobActions (built at the first of them). */
const JOB_ACTION_COMMANDS = [
  Commands.openJobWorkflow,
  Commands.openJobLogs,
  Commands.openJobError,
  Commands.rerunJob,
  Commands.removeJob,
  Commands.clearFinishedJobs,
  Commands.loadMoreJobs,
  Commands.saveOutputAs,
  Commands.revealOutput,
  Commands.copyOutputAssetReference,
];

/**
 * The extension: builds the services and hands each its collaborators (nothing reaches for a global), and
 * registers the commands. Everything registered is disposed with it.
 */
export class ComfyCloudExtension extends Disposable {
  readonly log: Log;
  readonly config = new Config();
  readonly keys: ApiKeys;
  /** The job service: views and other extensions' code subscribe to `jobs.onDidChangeJob`. */
  readonly jobs: JobServiceHost;
  /** The Jobs view (`comfyCloud.jobs`): its provider's model is what the tree shows (tests read it). */
  readonly jobsView: JobsView;
  /** The Assets view (`comfyCloud.assets`): uploads and outputs this machine knows of (tests read its provider). */
  readonly assetsView: AssetsView;
  /** The model router's client owner, built at the first use of a router feature (tests read it). */
  readonly router: () => RouterService;
  /** The Models view's provider, built at first use (tests read it). */
  readonly modelsView: () => ModelsView;
  /** The status bar item of the active connection (tests read its name and text). */
  readonly status: ConnectionStatus;
  /** The local emulator child this extension owns ("Start Local Emulator"); stopped on dispose. */
  readonly emulator: EmulatorProcess;
  /** The end-of-job notification: its `onDidDecide` tells each decision (tests read it). */
  readonly notifier: JobEndNotifier;
  /** The one owner of a job's end (outputs, record, notification), for every remembered job (tests read it). */
  readonly jobEnds: JobEndService;
  /** The batches of this window: run, resumed at start-up, canceled (the contact sheet and tests read it). */
  readonly batches: BatchService;
  /** The job monitors, once first used (undefined before: no monitor is open). */
  monitors: MonitorManager | undefined;
  /** The workflow graph panels, once first used (undefined before: no graph is open). */
  graphs: WorkflowGraphPanels | undefined;
  /** The graph panels' serializer, as registered (tests restore a panel with it). */
  readonly graphSerializer: vscode.WebviewPanelSerializer;
  /** The context key the welcome views and the walkthrough follow (tests read its `state`). */
  readonly welcome: WelcomeContext;
  /** What is shown to a person passes through it (it redacts the keys). */
  readonly display: Display;
  /** The v1 connections the deprecation notice was shown for in this session (at most one per machine; tests read it). */
  readonly v1NoticesShown: string[] = [];
  /** The old-form deployment addresses explained in this session, `<name> <old URL>` (each once per machine; tests read it). */
  readonly legacyNoticesShown: string[] = [];
  private readonly legacyNoticeShown = this.register(new vscode.EventEmitter<string>());
  /** Fires with `<name> <old URL>` when an old-form deployment address was explained (after {@link legacyNoticesShown} grew). */
  readonly onDidShowLegacyNotice = this.legacyNoticeShown.event;

  constructor(context: vscode.ExtensionContext) {
    super();
    // One redactor for the log and everything shown: it learns each API key as it is read, set or changed.
    const redactor = new Redactor();
    this.log = this.register(new Log(redactor));
    this.display = new Display(redactor);
    this.keys = new ApiKeys(context.secrets, redactor);
    this.register(this.keys.learnChanges());
    this.learnConfiguredKey();
    // The model router's keys too: the configured router's at once, each as it is stored or changed.
    const routerKeys = learnSecrets(context.secrets, redactor, ROUTER_SECRET_PREFIX, () => {
      const origin = this.config.routerOrigin();
      return origin ? [origin] : [];
    });
    this.register({ dispose: routerKeys.dispose });
    // The status bar hears each request's outcome (its health where the surface has no probe); it exists only once
    // the job service does, so the clients call it through this indirection.
    let status: ConnectionStatus | undefined;
    const clients = new Clients(this.config, this.keys, this.log, (entry) => status?.requestDone(entry));
    const problems = this.register(new WorkflowProblems(this.display));
    const outputs = new OutputLocations(this.config, context.globalStorageUri);
    // The state store is shared with the CLI: a job submitted from either is visible to both.
    const store = new StateStore(defaultStateDir(process.env));
    // The batches' records, beside the job records (shared with the CLI).
    const batchStore = new BatchStore(store.dir);
    // The one owner of clients and job watches; disposing the extension (deactivation) aborts all of them.
    this.jobs = this.register(new JobServiceHost(clients, this.config, this.keys, store, this.log));
    // The model router's one client (core/router/routerService.ts), built at the first use of a router feature: every
    // router command and view leases it; a new router URL or key retires it (closed once its last lease is released).
    let routerService: RouterService | undefined;
    const router = (this.router = once(() => {
            return (routerService = this.register(
        new RouterService({
          // No URL, or no key stored for its origin: no router (the Models view shows its welcome).
          target: async () => {
            const origin = this.config.routerOrigin();
            const apiKey = origin ? await context.secrets.get(ROUTER_SECRET_PREFIX + origin) : undefined;
            return origin && apiKey ? { baseUrl: this.config.routerUrl(), apiKey } : undefined;
          },
          create: (target) =>
            new RouterClient({
              ...target,
              // The extension host's fetch: the user's proxy, PAC and certificates.
              engine: new FetchEngine(globalFetch),
              log: (entry) => this.log.request(entry),
              schemaCacheDir: path.join(store.dir, 'router-schemas'),
              keyStore: fileKeyStore(path.join(store.dir, 'router-keys')),
            }),
          onCloseError: (err) => this.log.warn('models', `closing a router client failed: ${err instanceof Error ? err.message : String(err)}`),
        }),
      ));
    }));
    this.register(
      this.config.onDidChange(() => {
        void routerKeys.relearn();
        void routerService?.refresh();
      }, Settings.routerUrl),
    );
    this.register(context.secrets.onDidChange((e) => e.key.startsWith(ROUTER_SECRET_PREFIX) && void routerService?.refresh()));
    // "Show Job" reveals the job in the Jobs view (built below; the button is only pressed after activation).
    this.notifier = this.register(new JobEndNotifier(this.config, this.display, this.log, (jobId) => this.jobsView.revealJob(jobId)));
    // The job monitors: loaded at first use (the command, a submission, a panel restored after a reload).
    const monitors = once(() => {
      return (this.monitors = this.register(
        new MonitorManager({
          extensionUri: context.extensionUri,
          jobs: this.jobs,
          display: this.display,
          log: this.log,
          connectionName: () => this.config.connection().name,
          baseUrl: () => this.config.surface().baseUrl,
          store,
          outputs,
          jobsView: this.jobsView,
          memento: context.workspaceState,
          reuseTab: () => this.config.monitorReuseTab(),
        }),
      ));
    });
    // One signal at a time: no end-of-job notification while the job's monitor is visible.
    this.notifier.shownElsewhere = (jobId) => this.monitors?.isVisible(jobId) === true;
    this.register(vscode.window.registerWebviewPanelSerializer(MONITOR_VIEW_TYPE, { deserializeWebviewPanel: (panel, state) => monitors().restore(panel, state) }));
    this.register(registerLazyCommands([Commands.openJobMonitor], () => monitors().commands()));
    // Workflow IntelliSense: the schema's provider and the command are registered now; the module (with the
    // core's workflowSchema chunk) loads at the first request for the schema (a `*.api.json`, a `$schema`), a JSON file
    // opened naming `class_type` (the `$schema` code action), the command, or a submission; it then follows edits itself.
    const workflowSchemaChanged = this.register(new vscode.EventEmitter<vscode.Uri>());
    const intellisense = once(() => this.register(new WorkflowIntelliSense({ config: this.config, keys: this.keys, log: this.log, display: this.display }, problems, context, workflowSchemaChanged)));
    this.register(vscode.workspace.registerTextDocumentContentProvider(WORKFLOW_SCHEMA_SCHEME, { onDidChange: workflowSchemaChanged.event, provideTextDocumentContent: () => intellisense().schemaText() }));
    this.register(registerLazyCommands([Commands.refreshNodeDefinitions], () => intellisense().commands()));
    const wake = (d: vscode.TextDocument): unknown => d.languageId === 'json' && d.getText().includes('"class_type"') && intellisense();
    this.register(vscode.workspace.onDidOpenTextDocument(wake));
    vscode.workspace.textDocuments.forEach(wake);
    // UI-format workflows: the CodeLens and quick fix "Convert to API Format" (cheap checks per request), converting
    // with workflow IntelliSense's node definitions (loaded at the first conversion).
    const conversion = this.register(new WorkflowConversion(intellisense, this.display, this.log, context.globalStorageUri));
    this.register(registerLazyCommands([Commands.convertToApiFormat], () => conversion.commands()));
    // The workflow graph beside a workflow's JSON: loaded at first use (the command, a panel restored after a reload).
    const graphs = once(() => {
      return (this.graphs = this.register(
        new WorkflowGraphPanels({
          extensionUri: context.extensionUri,
          display: this.display,
          log: this.log,
          definitions: async () => (await intellisense().definitions())?.definitions,
          onDidChangeDefinitions: workflowSchemaChanged.event,
          serverDiagnostics: (uri) => problems.diagnostics(uri),
        }),
      ));
    });
    this.graphSerializer = { deserializeWebviewPanel: async (panel, state) => void (await graphs().restore(panel, state)) };
    this.register(vscode.window.registerWebviewPanelSerializer(GRAPH_VIEW_TYPE, this.graphSerializer));
    this.register(registerLazyCommands([Commands.openWorkflowGraph], () => graphs().commands()));
    this.register(registerLazyCommands([Commands.openContactSheet], () => this.register(new ContactSheetPanels({ extensionUri: context.extensionUri, display: this.display, log: this.log, store, batches: batchStore, outputDir: (b) => this.batches.outputDir(b), onDidChange: this.batches.onDidChange })).commands()));
    // Command implementations are built at their first call (lazy.ts).
    const submit = once(() =>
      new SubmitWorkflowCommand(this.jobs.service, problems, this.log, this.display, this.jobEnds, {
        enabled: () => this.config.openMonitorOnSubmit(),
        open: (jobId) => monitors().open(jobId, { preserveFocus: true }),
      }, intellisense, () => conversion),
    );

    // The Explorer's context menu passes (uri, selected uris): only a plain object is taken as the options.
    this.register(vscode.commands.registerCommand(Commands.submitWorkflow, (uri?: vscode.Uri, options?: unknown) => submit().run(uri, isSubmitOptions(options) ? options : undefined)));
    this.register(vscode.commands.registerCommand(Commands.setApiKey, (key?: string) => this.setApiKey(key)));
    this.register(vscode.commands.registerCommand(Commands.clearApiKey, () => this.clearApiKey()));
    this.register(vscode.commands.registerCommand(Commands.showLog, () => this.log.show()));
    const remembered = once(() => new RememberedJobs(store, this.jobs.service, this.log, this.display));
    // `{list: true}` returns the list without showing it (for tests and other extensions).
    this.register(vscode.commands.registerCommand(Commands.showJobs, (o?: { list?: boolean }) => (o?.list ? remembered().list() : remembered().show())));
    this.emulator = this.register(
      new EmulatorProcess({
        cliPath: context.asAbsolutePath('dist/cli.js'),
        log: this.log,
        dataDir: path.join(context.globalStorageUri.fsPath, EMULATOR_DATA_FOLDER),
        retentionMs: EMULATOR_RETENTION_MS,
        ports: {
          get: () => {
            const port = context.globalState.get<unknown>(EMULATOR_PORT_KEY);
            return typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
          },
          set: (port) => context.globalState.update(EMULATOR_PORT_KEY, port),
        },
      }),
    );
    const connections = once(() => new ConnectionCommands(this.config, this.emulator, this.log, this.display));
    // A v1 connection made active: the deprecation notice, once on this machine.
    const onV1Connection = (name: string): unknown => connections().v1Notice(context.globalState, name).then((shown) => shown && this.v1NoticesShown.push(name));
    // The Jobs view first: its count of the active connection's running jobs is the status bar's too (one count).
    this.jobsView = this.register(new JobsView(this.jobs, store, this.config, outputs, this.display, this.log));
    this.status = status = this.register(new ConnectionStatus(this.config, this.keys, this.jobsView.provider, this.display, { emulator: this.emulator, onV1Connection }));
    // A job's end, whoever saw it (this window's submission, or a reading of the remembered jobs at start-up, on a
    // connection changed or back): its outputs, its record and one notification.
    this.jobEnds = this.register(new JobEndService(this.jobs, outputs, this.notifier, this.config, this.log, this.status.onDidReconnect));
    this.welcome = this.register(new WelcomeContext(this.status, this.log));
    // A deployment's address in the old form (`<cloud URL>/deployment/<id>`) in the active connection: its own host is
    // used, and that is said once (connectionCommands.ts legacyNotice).
    const noteLegacy = (): void => {
      let active: ActiveConnection;
      try {
        active = this.config.connection();
      } catch {
        return; // unusable settings are the status bar's to say
      }
      const said = `${active.name} ${active.legacy?.before}`;
      if (active.legacy) {
        void connections()
          .legacyNotice(context.globalState, active)
          .then((shown) => {
            if (!shown) return;
            this.legacyNoticesShown.push(said);
            this.legacyNoticeShown.fire(said);
          });
      }
    };
    this.register(this.config.onDidChange(noteLegacy, Settings.baseUrl, Settings.connections, Settings.activeConnection, Settings.deploymentDomain));
    noteLegacy();
    const samples = new SampleWorkflows(context.extensionUri, this.log, this.display);
    this.register(vscode.commands.registerCommand(Commands.openSample, (name?: unknown) => samples.open(typeof name === 'string' ? name : undefined)));
    this.register(vscode.commands.registerCommand(Commands.switchConnection, (name?: unknown) => connections().switchConnection(name)));
    this.register(vscode.commands.registerCommand(Commands.startEmulator, () => connections().startEmulator()));
    this.register(vscode.commands.registerCommand(Commands.addConnection, () => connections().addConnection()));
    // Asset records live beside the job records: an upload from the CLI shows in the Assets view too.
    this.assetsView = this.register(new AssetsView(this.jobs, new AssetRecords(store.dir), this.config, this.display, this.log));
    const assetCommands = once(() => this.register(new AssetCommands(this.jobs, this.assetsView, this.display, this.log)));
    this.register(registerLazyCommands(ASSET_COMMANDS, () => assetCommands().commands()));
    // The Models view: registered now, its provider (./modelsView) loaded at its first display or command.
    const modelsChanged = this.register(new vscode.EventEmitter<void>());
    const modelsTree: vscode.TreeView<unknown>[] = [];
    const models = once(() => this.register(new ModelsView(modelsChanged, () => modelsTree[0]!, router(), this.config, context.secrets, this.log)));
    modelsTree.push(this.register(vscode.window.createTreeView(Views.models, { treeDataProvider: { onDidChangeTreeData: modelsChanged.event, getChildren: (n?: unknown) => models().getChildren(n), getTreeItem: (n: unknown) => models().getTreeItem(n) } })));
    this.register(registerLazyCommands([Commands.setRouterKey, Commands.refreshModels, Commands.filterModels], () => models().commands()));
    this.modelsView = models;
    // Model input schemas (comfy-router-schema:): the provider is registered now (an input opened before
    // activation asks for its schema), its module loaded at the first schema or command.
    const schemasChanged = this.register(new vscode.EventEmitter<vscode.Uri>());
    const inputs = once(() => this.register(new ModelInputs(router(), schemasChanged, this.log)));
    this.register(vscode.workspace.registerTextDocumentContentProvider(ROUTER_SCHEMA_SCHEME, { onDidChange: schemasChanged.event, provideTextDocumentContent: (uri) => inputs().provideTextDocumentContent(uri) }));
    this.register(registerLazyCommands([Commands.newModelInput, Commands.refreshSchema], () => inputs().commands()));
    // Run Model: palette, editor title button (context key), CodeLens on a model input's $schema.
    const runs = once(() => this.register(new RunModel(router(), this.log, this.display)));
    this.register(registerLazyCommands([Commands.runModel], () => runs().commands()));
    const isInput = (d?: vscode.TextDocument): boolean => d?.languageId === 'json' && d.getText().includes(`"${ROUTER_SCHEMA_SCHEME}:`);
    const inputKey = (): unknown => vscode.commands.executeCommand('setContext', ContextKeys.modelInput, isInput(vscode.window.activeTextEditor?.document));
    this.register(vscode.window.onDidChangeActiveTextEditor(inputKey));
    this.register(vscode.workspace.onDidChangeTextDocument((e) => e.document === vscode.window.activeTextEditor?.document && inputKey()));
    void inputKey();
    this.register(vscode.languages.registerCodeLensProvider({ language: 'json' }, { provideCodeLenses: (d) => (isInput(d) ? runs().codeLenses(d) : []) }));
    // The Jobs view's read-only documents (workflow, logs, error) and its actions (Re-run, Remove, output actions).
    // The documents' provider is registered now (a restored editor asks for its text) and built at its first use.
    const documentsChanged = this.register(new vscode.EventEmitter<vscode.Uri>());
    const documents = once(() => {
      const made = this.register(new JobDocumentsProvider(this.jobs, this.jobsView.provider, redactor, this.display, this.log));
      this.register(made.onDidChange((uri) => documentsChanged.fire(uri)));
      return made;
    });
    this.register(
      vscode.workspace.registerTextDocumentContentProvider(JOB_DOCUMENT_SCHEME, {
        onDidChange: documentsChanged.event,
        provideTextDocumentContent: (uri) => documents().provideTextDocumentContent(uri),
      }),
    );
    const jobActions = once(() => this.register(new JobActions(this.jobs, this.jobsView, documents(), this.display, this.log, this.jobEnds)));
    this.register(registerLazyCommands(JOB_ACTION_COMMANDS, () => jobActions().commands()));
    // The workflows a ComfyUI image carries: Open Workflow from Image, Run Again from Image.
    const images = once(() =>
      this.register(
        new ImageWorkflows({
          jobs: this.jobs,
          jobsView: this.jobsView,
          assets: this.assetsView,
          conversion: () => conversion,
          submit,
          config: this.config,
          display: this.display,
          log: this.log,
          storage: context.globalStorageUri,
        }),
      ),
    );
    this.register(registerLazyCommands([Commands.openWorkflowFromImage, Commands.runAgainFromImage], () => images().commands()));
    // Batches: a workflow run once per variation, each variation one job under its recorded Idempotency-Key; the batch
    // records live beside the job records (the CLI's batches show too).
    this.batches = this.register(
      new BatchService({ jobs: this.jobs, batches: batchStore, outputs, assets: this.assetsView.provider, config: this.config, display: this.display, log: this.log, onConnectionBack: this.status.onDidReconnect }),
    );
    this.jobsView.provider.attachBatches({ store: batchStore, isRunning: (id) => this.batches.isRunning(id), onDidChange: this.batches.onDidChange });
    const variations = once(() => new RunVariations({ batches: this.batches, store: batchStore, jobs: this.jobs, config: this.config, display: this.display, log: this.log, selectedBatch: () => this.jobsView.selectedBatch() }));
    this.register(registerLazyCommands([Commands.runWithVariations, Commands.runBatchFile, Commands.cancelBatch, Commands.resumeBatch, Commands.copyBatchId], () => variations().commands()));
    this.register(vscode.languages.registerCodeLensProvider({ language: 'json', pattern: '**/*.batch.json' }, { provideCodeLenses: (d) => (BATCH_FILE.test(d.uri.path) ? variations().codeLenses(d) : []) }));
    this.register(
      this.config.onDidChange(() => {
        this.log.info('config', 'settings changed');
        this.learnConfiguredKey();
      }),
    );
    this.log.info('activate', `Comfy Cloud ${context.extension.packageJSON.version as string} active`);
    // Submissions left pending by a process that died, or of unknown outcome, are looked up in the background; then
    // every remembered job not known to have ended is read again (one that ended while no window watched gets its
    // outputs and its notification; one still running is followed to its end).
    this.jobs.start();
    this.jobEnds.start();
    // Batches VS Code recorded and left unfinished (a reload, a closed window) go on, unasked.
    this.batches.startResuming();
    // The jobs read in the background: the badge and the status bar count the running ones from start-up.
    this.jobsView.provider.start();
  }

  /** Reads the configured origin's key, so the redactor knows it before any line could echo it. */
  private learnConfiguredKey(): void {
    let origin: string;
    try {
      origin = this.config.surface().origin;
    } catch {
      return; // a bad base URL: no request can be made, so no key can be echoed
    }
    this.keys.get(origin).then(undefined, () => undefined);
  }

  /** Stores the API key for the configured origin (a password input unless `key` is given, as tests do). */
  private async setApiKey(key?: string): Promise<boolean> {
    const { origin } = this.config.surface();
    const value =
      typeof key === 'string'
        ? key
        : await vscode.window.showInputBox({
            title: vscode.l10n.t('Comfy Cloud: Set API Key'),
            prompt: vscode.l10n.t("API key for {0} (stored in the OS keychain via VS Code's SecretStorage, never in settings)", origin),
            password: true,
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Enter the API key, or press Escape to cancel.')),
          });
    if (!value?.trim()) return false;
    await this.keys.set(origin, value.trim());
    this.log.info('auth', `API key set for ${origin}`);
    void this.display.info(vscode.l10n.t('Comfy Cloud: API key saved for {0}.', origin));
    return true;
  }

  private async clearApiKey(): Promise<void> {
    const { origin } = this.config.surface();
    await this.keys.clear(origin);
    this.log.info('auth', `API key cleared for ${origin}`);
    void this.display.info(vscode.l10n.t('Comfy Cloud: API key cleared for {0}.', origin));
  }
}

/** True for the options object of "Submit Workflow" (not the Explorer's array of selected files). */
function isSubmitOptions(value: unknown): value is SubmitOptions {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof vscode.Uri);
}

/** Activation: the extension object owns every registration. */
export function activate(context: vscode.ExtensionContext): ComfyCloudExtension {
  const extension = new ComfyCloudExtension(context);
  context.subscriptions.push(extension);
  return extension;
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions: the job service's dispose aborts every watch and request.
}
