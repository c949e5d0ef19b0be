import * as vscode from 'vscode';
import type { ConnectionReadiness } from '../../core/connection';
import type { ConnectionStatus } from './connectionStatus';
import { ContextKeys } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { Log } from '../platform/log';

/**
 * First-run guidance (welcome views when there is no connection or no job, and a walkthrough (Get Started) with the
 * same steps and their completion events): keeps the context key `comfyCloud.connectionState` equal to
 * the status bar's {@link ConnectionStatus.readiness} (`ready`, `invalid`, `stale`, `noKey`, `unconfigured`; core
 * connections.ts). The Jobs view's `viewsWelcome` and the walkthrough's `onContext:` completion event read it.
 */
export class WelcomeContext extends Disposable {
  private current: ConnectionReadiness | undefined;

  constructor(
    /** The status bar's readiness and its change event: nothing else of it. */
    private readonly status: Pick<ConnectionStatus, 'readiness' | 'onDidChange'>,
    private readonly log: Log,
  ) {
    super();
    this.register(status.onDidChange(() => this.update()));
    this.update();
  }

  /** The value the context key was last set to. */
  get state(): ConnectionReadiness | undefined {
    return this.current;
  }

  private update(): void {
    const next = this.status.readiness;
    if (next === this.current) return;
    this.current = next;
    this.log.info('welcome', `connection state: ${next}`);
    vscode.commands
      .executeCommand('setContext', ContextKeys.connectionState, next)
      .then(undefined, (err: unknown) => this.log.warn('welcome', `setContext failed: ${String(err)}`));
  }
}

/**
 * "Comfy Cloud: Open Sample Workflow" (`comfyCloud.openSample`): opens a workflow bundled in `media/samples/` (the
 * only one directly; a quick pick when there are several) as an untitled JSON editor with its text, which "Submit
 * Workflow" accepts as it is (it submits an open editor's text, saved or not). Resolves the document's URI, or
 * undefined when cancelled or unreadable (said to the user).
 */
export class SampleWorkflows {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: Log,
    private readonly display: Pick<Display, 'error'>,
  ) {}

  /** The bundled samples' file names (`*.json` in `media/samples/`), sorted. */
  async list(): Promise<string[]> {
    const entries = await vscode.workspace.fs.readDirectory(this.folder());
    return entries
      .filter(([name, type]) => type === vscode.FileType.File && name.endsWith('.json'))
      .map(([name]) => name)
      .sort();
  }

  async open(name?: string): Promise<vscode.Uri | undefined> {
    let chosen = name;
    try {
      const names = await this.list();
      if (chosen !== undefined && !names.includes(chosen))
        throw new Error(vscode.l10n.t('there is no sample named "{0}"', chosen));
      if (chosen === undefined && names.length === 1) chosen = names[0];
      chosen ??= await vscode.window.showQuickPick(names, {
        title: vscode.l10n.t('Comfy Cloud: Open Sample Workflow'),
        placeHolder: vscode.l10n.t('Choose a sample workflow'),
      });
      if (!chosen) return undefined;
      const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(this.folder(), chosen));
      const content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      // Untitled: the bundled file stays untouched, the user may edit before submitting, and saving asks where.
      const document = await vscode.workspace.openTextDocument({ language: 'json', content });
      await vscode.window.showTextDocument(document, { preview: false });
      this.log.info('welcome', `sample ${chosen} opened as ${document.uri.toString()}`);
      return document.uri;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.warn('welcome', `cannot open the sample: ${message}`);
      void this.display.error(vscode.l10n.t('Comfy Cloud: cannot open the sample workflow: {0}', message));
      return undefined;
    }
  }

  private folder(): vscode.Uri {
    return vscode.Uri.joinPath(this.extensionUri, 'media', 'samples');
  }
}
