import * as vscode from 'vscode';
import type { NodeDefinitions } from '../../core/workflowSchema/objectInfo';
import type { ApiWorkflow } from '../../core/util';
import type { ActiveConnection, ConnectionReadiness } from '../../core/connection';
import type { AssetsView } from '../assets';
import type { JobEndService, JobsView } from '../jobs';
import type { MonitorFeature } from '../monitor';
import { Commands, GRAPH_VIEW_TYPE, WORKFLOW_SCHEMA_SCHEME } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once, registerLazyCommands } from '../platform/lazy';
import type { Services } from '../platform/services';
import { WorkflowGraphPanels } from './graphView';
import { ImageWorkflows } from './imageWorkflows';
import { WorkflowProblems } from './problems';
import { SubmitWorkflowCommand, type SubmitOptions } from './submit';
import { WorkflowConversion } from './workflowConversion';
import { WorkflowIntelliSense } from './workflowIntelliSense';

export { nodeInputAt } from '../../core/graph/positions';
export type { WorkflowGraphPanels } from './graphView';

/** What the workflow feature uses of the other features. */
export interface WorkflowFeatureDeps {
  readonly jobsView: JobsView;
  /** The one owner of a job's end: a submission's job gets its outputs and notification. */
  readonly jobEnds: JobEndService;
  readonly assets: AssetsView;
  /** The job monitors: a submission opens its job's (the setting `comfyCloud.openMonitorOnSubmit`). */
  readonly monitor: Pick<MonitorFeature, 'open'>;
  /** The active connection as the status bar sees it: a submission's refusal and failure words follow it. */
  readonly connection?: () => { readiness: ConnectionReadiness; active: ActiveConnection | undefined };
}

/**
 * The workflow feature: "Submit Workflow", workflow IntelliSense (the schema, its diagnostics, "Refresh Node
 * Definitions"), the UI-format conversion, the workflow graph panels and the workflows a ComfyUI image carries.
 */
export class WorkflowFeature extends Disposable {
  /** The graph panels' serializer, as registered. */
  readonly graphSerializer: vscode.WebviewPanelSerializer;
  private madeGraphs: WorkflowGraphPanels | undefined;
  /** Workflow IntelliSense's node definitions in use (in memory, else its cache); undefined when unknown. */
  readonly definitions: () => Promise<NodeDefinitions | undefined>;
  /**
   * A UI-format workflow's text converted with those definitions, its API graph stored as a file (as Convert and
   * Submit stores it): the graph and the file's path, or undefined when it cannot be converted (said to the user).
   */
  readonly convertUi: (text: string, name: string) => Promise<{ workflow: ApiWorkflow; file: string } | undefined>;

  constructor(services: Services, deps: WorkflowFeatureDeps) {
    super();
    const { context, jobs, config, keys, display, log } = services;
    const problems = this.register(new WorkflowProblems(display));
    // Workflow IntelliSense: the schema's provider and the command are registered now; the module loads at the first
    // request for the schema (a `*.api.json`, a `$schema`), a JSON file opened naming `class_type` (the `$schema` code
    // action), the command, or a submission; it then follows edits itself.
    const schemaChanged = this.register(new vscode.EventEmitter<vscode.Uri>());
    const intellisense = once(() =>
      this.register(new WorkflowIntelliSense({ config, keys, log, display }, problems, context, schemaChanged)),
    );
    this.register(
      vscode.workspace.registerTextDocumentContentProvider(WORKFLOW_SCHEMA_SCHEME, {
        onDidChange: schemaChanged.event,
        provideTextDocumentContent: () => intellisense().schemaText(),
      }),
    );
    this.register(registerLazyCommands([Commands.refreshNodeDefinitions], () => intellisense().commands()));
    this.definitions = async () => (await intellisense().definitions())?.definitions;
    const wake = (d: vscode.TextDocument): unknown =>
      d.languageId === 'json' && d.getText().includes('"class_type"') && intellisense();
    this.register(vscode.workspace.onDidOpenTextDocument(wake));
    vscode.workspace.textDocuments.forEach(wake);
    // UI-format workflows: the CodeLens and quick fix "Convert to API Format" (cheap checks per request), converting
    // with workflow IntelliSense's node definitions (loaded at the first conversion).
    const conversion = this.register(new WorkflowConversion(intellisense, display, log, context.globalStorageUri));
    this.register(registerLazyCommands([Commands.convertToApiFormat], () => conversion.commands()));
    this.convertUi = async (text, name) => {
      const converted = await conversion.convertAndStore(JSON.parse(text) as unknown, name);
      return 'error' in converted ? undefined : converted;
    };
    let fetchedFor: string | undefined;
    // The workflow graph beside a workflow's JSON: loaded at first use (the command, a panel restored after a reload).
    const graphs = once(
      () =>
        (this.madeGraphs = this.register(
          new WorkflowGraphPanels({
            extensionUri: context.extensionUri,
            display,
            log,
            definitions: this.definitions,
            // A node's form fetches them quietly when none are known (as converting does), once per connection and
            // definitions setting: an unreachable server is not asked again at each click.
            fetchDefinitions: async () => {
              const source = `${config.connection().surface.baseUrl} ${config.nodeDefinitionsUrl() ?? ''}`;
              if (fetchedFor === source) return undefined;
              fetchedFor = source;
              await intellisense().refresh(true);
              return (await intellisense().definitions())?.definitions;
            },
            onDidChangeDefinitions: schemaChanged.event,
            serverDiagnostics: (uri) => problems.diagnostics(uri),
          }),
        )),
    );
    this.graphSerializer = {
      deserializeWebviewPanel: async (panel, state) => void (await graphs().restore(panel, state)),
    };
    this.register(vscode.window.registerWebviewPanelSerializer(GRAPH_VIEW_TYPE, this.graphSerializer));
    this.register(registerLazyCommands([Commands.openWorkflowGraph], () => graphs().commands()));
    const submit = once(
      () =>
        new SubmitWorkflowCommand(
          jobs.service,
          problems,
          log,
          display,
          deps.jobEnds,
          {
            enabled: () => config.openMonitorOnSubmit(),
            open: (jobId) => deps.monitor.open(jobId, { preserveFocus: true }),
          },
          intellisense,
          () => conversion,
          deps.connection,
        ),
    );
    // The Explorer's context menu passes (uri, selected uris): only a plain object is taken as the options.
    this.register(
      vscode.commands.registerCommand(Commands.submitWorkflow, (uri?: vscode.Uri, options?: unknown) =>
        submit().run(uri, isSubmitOptions(options) ? options : undefined),
      ),
    );
    // The workflows a ComfyUI image carries: Open Workflow from Image, Run Again from Image.
    const images = once(() =>
      this.register(
        new ImageWorkflows({
          jobs,
          jobsView: deps.jobsView,
          assets: deps.assets,
          conversion: () => conversion,
          submit,
          config,
          display,
          log,
          storage: context.globalStorageUri,
        }),
      ),
    );
    this.register(
      registerLazyCommands([Commands.openWorkflowFromImage, Commands.runAgainFromImage], () => images().commands()),
    );
  }

  /** The workflow graph panels, once first used (undefined before: no graph is open). */
  get graphs(): WorkflowGraphPanels | undefined {
    return this.madeGraphs;
  }
}

/** True for the options object of "Submit Workflow" (not the Explorer's array of selected files). */
function isSubmitOptions(value: unknown): value is SubmitOptions {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof vscode.Uri);
}

/** Registers the workflow feature: submission, IntelliSense, conversion, the graph and the image workflows. */
export function register(services: Services, deps: WorkflowFeatureDeps): WorkflowFeature {
  return new WorkflowFeature(services, deps);
}
