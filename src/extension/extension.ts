import * as vscode from 'vscode';
import { StateStore, defaultStateDir } from '../core';
import { Clients } from './clients';
import { Config } from './config';
import { Commands } from './constants';
import { Disposable } from './disposable';
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

  constructor(context: vscode.ExtensionContext) {
    super();
    this.log = this.register(new Log());
    this.keys = new ApiKeys(context.secrets);
    const clients = new Clients(this.config, this.keys, this.log);
    const problems = this.register(new WorkflowProblems());
    const outputs = new OutputLocations(this.config, context.globalStorageUri);
    // The state store is shared with the CLI: a job submitted from either is visible to both.
    const store = new StateStore(defaultStateDir(process.env));
    const submit = new SubmitWorkflowCommand(clients, outputs, problems, store, this.log);

    this.register(vscode.commands.registerCommand(Commands.submitWorkflow, (uri?: vscode.Uri) => submit.run(uri)));
    this.register(vscode.commands.registerCommand(Commands.setApiKey, (key?: string) => this.setApiKey(key)));
    this.register(vscode.commands.registerCommand(Commands.clearApiKey, () => this.clearApiKey()));
    this.register(vscode.commands.registerCommand(Commands.showLog, () => this.log.show()));
    const remembered = new RememberedJobs(store, clients, this.log);
    // `{list: true}` returns the list without showing it (for tests and other extensions).
    this.register(vscode.commands.registerCommand(Commands.showJobs, (o?: { list?: boolean }) => (o?.list ? remembered.list() : remembered.show())));
    this.register(this.config.onDidChange(() => this.log.info('config', 'settings changed')));
    this.log.info('activate', `Comfy Cloud ${context.extension.packageJSON.version as string} active`);
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
    void vscode.window.showInformationMessage(`Comfy Cloud: API key saved for ${origin}.`);
    return true;
  }

  private async clearApiKey(): Promise<void> {
    const { origin } = this.config.surface();
    await this.keys.clear(origin);
    this.log.info('auth', `API key cleared for ${origin}`);
    void vscode.window.showInformationMessage(`Comfy Cloud: API key cleared for ${origin}.`);
  }
}

/** Activation: the extension object owns every registration. */
export function activate(context: vscode.ExtensionContext): ComfyCloudExtension {
  const extension = new ComfyCloudExtension(context);
  context.subscriptions.push(extension);
  return extension;
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
