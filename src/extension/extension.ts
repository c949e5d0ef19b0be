import * as vscode from 'vscode';
import { Redactor, StateStore, defaultStateDir } from '../core';
import { Clients } from './clients';
import { Config } from './config';
import { ConnectionCommands } from './connectionCommands';
import { ConnectionStatus } from './connectionStatus';
import { Commands } from './constants';
import { Disposable } from './disposable';
import { Display } from './display';
import { EmulatorProcess } from './emulatorProcess';
import { JobServiceHost } from './jobService';
import { JobsView } from './jobsView';
import { Log } from './log';
import { OutputLocations } from './outputs';
import { WorkflowProblems } from './problems';
import { ApiKeys } from './secrets';
import { RememberedJobs } from './rememberedJobs';
import { SubmitWorkflowCommand } from './submit';

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
  /** The status bar item of the active connection (tests read its name and text). */
  readonly status: ConnectionStatus;
  /** The local emulator child this extension owns ("Start Local Emulator"); stopped on dispose. */
  readonly emulator: EmulatorProcess;
  private readonly display: Display;

  constructor(context: vscode.ExtensionContext) {
    super();
    // One redactor for the log and everything shown: it learns each API key as it is read, set or changed.
    const redactor = new Redactor();
    this.log = this.register(new Log(redactor));
    this.display = new Display(redactor);
    this.keys = new ApiKeys(context.secrets, redactor);
    this.register(this.keys.learnChanges());
    this.learnConfiguredKey();
    // The status bar hears each request's outcome (its health where the surface has no probe); it exists only once
    // the job service does, so the clients call it through this indirection.
    let status: ConnectionStatus | undefined;
    const clients = new Clients(this.config, this.keys, this.log, (entry) => status?.requestDone(entry));
    const problems = this.register(new WorkflowProblems(this.display));
    const outputs = new OutputLocations(this.config, context.globalStorageUri);
    // The state store is shared with the CLI: a job submitted from either is visible to both.
    const store = new StateStore(defaultStateDir(process.env));
    // The one owner of clients and job watches; disposing the extension (deactivation) aborts all of them.
    this.jobs = this.register(new JobServiceHost(clients, this.config, this.keys, store, this.log));
    const submit = new SubmitWorkflowCommand(this.jobs.service, outputs, problems, this.log, this.display);

    this.register(vscode.commands.registerCommand(Commands.submitWorkflow, (uri?: vscode.Uri) => submit.run(uri)));
    this.register(vscode.commands.registerCommand(Commands.setApiKey, (key?: string) => this.setApiKey(key)));
    this.register(vscode.commands.registerCommand(Commands.clearApiKey, () => this.clearApiKey()));
    this.register(vscode.commands.registerCommand(Commands.showLog, () => this.log.show()));
    const remembered = new RememberedJobs(store, this.jobs.service, this.log, this.display);
    // `{list: true}` returns the list without showing it (for tests and other extensions).
    this.register(vscode.commands.registerCommand(Commands.showJobs, (o?: { list?: boolean }) => (o?.list ? remembered.list() : remembered.show())));
    this.emulator = this.register(new EmulatorProcess({ cliPath: context.asAbsolutePath('dist/cli.js'), log: this.log }));
    this.status = status = this.register(new ConnectionStatus(this.config, this.keys, this.jobs, this.display));
    const connections = new ConnectionCommands(this.config, this.emulator, this.log, this.display);
    this.register(vscode.commands.registerCommand(Commands.switchConnection, (name?: unknown) => connections.switchConnection(name)));
    this.register(vscode.commands.registerCommand(Commands.startEmulator, () => connections.startEmulator()));
    this.jobsView = this.register(new JobsView(this.jobs, store, this.config, outputs, this.display, this.log));
    this.register(
      this.config.onDidChange(() => {
        this.log.info('config', 'settings changed');
        this.learnConfiguredKey();
      }),
    );
    this.log.info('activate', `Comfy Cloud ${context.extension.packageJSON.version as string} active`);
    // Submissions left pending by a process that died, or of unknown outcome, are looked up in the background.
    this.jobs.start();
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
            title: 'Comfy Cloud: Set API Key',
            prompt: `API key for ${origin} (stored in the OS keychain via VS Code's SecretStorage, never in settings)`,
            password: true,
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() ? undefined : 'Enter the API key, or press Escape to cancel.'),
          });
    if (!value?.trim()) return false;
    await this.keys.set(origin, value.trim());
    this.log.info('auth', `API key set for ${origin}`);
    void this.display.info(`Comfy Cloud: API key saved for ${origin}.`);
    return true;
  }

  private async clearApiKey(): Promise<void> {
    const { origin } = this.config.surface();
    await this.keys.clear(origin);
    this.log.info('auth', `API key cleared for ${origin}`);
    void this.display.info(`Comfy Cloud: API key cleared for ${origin}.`);
  }
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
