import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { errorMessage } from '../../core/views';
import { Disposable } from './disposable';
import type { Log } from './log';

/** The first message of every page of ours: it is listening, and speaks protocol `version`. */
export interface ReadyMessage {
  type: 'ready';
  version: number;
}

/** A page's protocol as its host needs it (one `protocol.ts` shared by host and page). */
export interface PageProtocol<In> {
  /** The component tag of the panel's log lines (`sheet`, `graph`, `monitor`). */
  readonly component: string;
  /** The version the page must say in `ready`; a page of another version is written again. */
  readonly version: number;
  /** Validates a message from the page: undefined when it does not parse (then it is dropped, never acted on). */
  parse(raw: unknown): In | undefined;
}

/** What a panel host needs from the extension. */
export interface WebviewPanelHostDeps {
  extensionUri: vscode.Uri;
  log: Log;
}

/** How a panel keeps the messages it posted (tests read them as {@link WebviewPanelHost.posted}). */
export interface PostedRecord {
  /** How many messages are kept, the newest (a count of messages, not bytes). */
  kept: number;
  /**
   * Also keep (and announce) a message posted while the page is not ready, which the page never gets: it is sent
   * everything anew when it says `ready`. Default false: only what the page got is kept.
   */
  whileNotReady?: boolean;
}

/** What every page is written with: its language, the webview's CSP source, a fresh nonce. */
export interface PageBasics {
  lang: string;
  cspSource: string;
  /** 16 random bytes in base64, new for each page written: the only scripts it runs are those carrying it. */
  nonce: string;
}

/**
 * The webview options of a panel: scripts on, no command URIs, local resources only from dist/webview and the given
 * folders (absolute paths: a job's or a batch's outputs, which the page shows as webview URIs).
 */
export function webviewPanelOptions(extensionUri: vscode.Uri, folders: readonly string[] = []): vscode.WebviewOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      ...folders.map((f) => vscode.Uri.file(f)),
    ],
  };
}

/**
 * The part every webview panel of ours shares (the monitor, the workflow graph, the contact sheet): the page's life
 * around what each panel shows. Rules:
 * - The page is written by {@link render}: a fresh nonce each time, asset URIs under dist/webview; a page just written
 *   is not ready.
 * - The page says `ready` with its protocol version before the host posts: another version (an old page restored
 *   after an update) is written again; the right one makes the panel ready, then {@link onReady} sends it everything.
 * - Not kept while hidden (`retainContextWhenHidden` false): hiding the panel makes it not ready; the page says
 *   `ready` again when shown.
 * - Every message from the page is validated by its protocol's parser; an invalid one is logged and dropped. An action
 *   that throws is logged (and given to {@link onFailure}); the rest go on.
 * - Closing the panel disposes this object (the panel's own cleanup first, then {@link onDidDispose} fires once);
 *   disposing this object leaves the panel itself to VS Code. Nothing is posted once gone.
 * `In` is the page's messages, `Out` the host's.
 */
export abstract class WebviewPanelHost<In extends { type: string }, Out> extends Disposable {
  /** The last messages posted, oldest first (tests read them); see {@link PostedRecord}. */
  readonly posted: Out[] = [];
  private readonly didPost = this.register(new vscode.EventEmitter<Out>());
  /** Fires with each message kept in {@link posted} (tests read it). */
  readonly onDidPost = this.didPost.event;
  private readonly handled = this.register(new vscode.EventEmitter<{ message: In | undefined; result: unknown }>());
  /** Fires after each message from the page was handled (undefined: dropped as invalid); tests read it. */
  readonly onDidHandle = this.handled.event;
  private readonly closed = new vscode.EventEmitter<void>();
  /** Fires once when the panel is closed (or this object disposed). */
  readonly onDidDispose = this.closed.event;
  /** True from the page's `ready` (of the right version) until it is hidden or written again. */
  protected ready = false;
  /** True once disposed: nothing more is posted, and work that finishes late posts nothing. */
  protected gone = false;

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly host: WebviewPanelHostDeps,
    private readonly protocol: PageProtocol<In>,
    private readonly keeping: PostedRecord,
  ) {
    super();
    // Registered first, so disposed last: the closed event comes after the panel's own cleanup.
    this.register({
      dispose: () => {
        this.closed.fire();
        this.closed.dispose();
      },
    });
    this.register(panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)));
    // Not kept while hidden (retainContextWhenHidden false): the page says `ready` again when shown.
    this.register(panel.onDidChangeViewState((e) => !e.webviewPanel.visible && (this.ready = false)));
    this.register(panel.onDidDispose(() => this.dispose()));
  }

  /** Disposes the panel's own things, then fires {@link onDidDispose}; marked gone first, so nothing posts meanwhile. */
  override dispose(): void {
    this.gone = true;
    super.dispose();
  }

  /** The page's HTML, from the basics and `asset` (a file of dist/webview by name → its webview URI). */
  protected abstract html(basics: PageBasics, asset: (name: string) => string): string;

  /** The page said `ready` (right version, now ready): post it everything it shows (a shown page starts empty). */
  protected abstract onReady(): Promise<void> | void;

  /** Acts on a valid message from the page other than `ready`; resolves with what tests read as its result. */
  protected abstract act(message: Exclude<In, ReadyMessage>): Promise<unknown>;

  /** Names this panel at the start of its log lines (`job …`, `batch …`, a document's URI). */
  protected abstract subject(): string;

  /** An action of the page failed (already logged): e.g. say so to the user. Default: nothing more. */
  protected onFailure(_message: In, _err: unknown): void {}

  /** (Re)writes the page: a fresh nonce, asset URIs under dist/webview; not ready until the new page says so. */
  protected render(): void {
    const webview = this.panel.webview;
    const asset = (name: string): string =>
      webview.asWebviewUri(vscode.Uri.joinPath(this.host.extensionUri, 'dist', 'webview', name)).toString();
    this.ready = false;
    webview.html = this.html(
      { lang: vscode.env.language, cspSource: webview.cspSource, nonce: randomBytes(16).toString('base64') },
      asset,
    );
  }

  /**
   * Posts `message` to the page when it is ready (a rejected post is dropped: the page is going), keeping it in
   * {@link posted} as {@link PostedRecord} says. Nothing once gone.
   */
  protected post(message: Out): void {
    if (this.gone || !(this.ready || this.keeping.whileNotReady)) return;
    this.posted.push(message);
    if (this.posted.length > this.keeping.kept) this.posted.splice(0, this.posted.length - this.keeping.kept);
    if (this.ready) void this.panel.webview.postMessage(message).then(undefined, () => undefined);
    this.didPost.fire(message);
  }

  /**
   * Handles one message from the page: validated first (an invalid one is logged and dropped, never acted on).
   * Resolves with the action's result (undefined when dropped, failed, or `ready`). Public for tests, which drive it
   * as the page would.
   */
  async receive(raw: unknown): Promise<unknown> {
    const message = this.protocol.parse(raw);
    if (!message) {
      this.host.log.warn(this.protocol.component, `${this.subject()}: an invalid message from the page was dropped`);
      this.handled.fire({ message: undefined, result: undefined });
      return undefined;
    }
    let result: unknown;
    try {
      result = isReady(message)
        ? await this.onReadyMessage(message)
        : await this.act(message as Exclude<In, ReadyMessage>);
    } catch (err) {
      this.host.log.warn(
        this.protocol.component,
        `${this.subject()}: ${message.type} failed: ${errorMessage(err, vscode.l10n.t)}`,
      );
      this.onFailure(message, err);
    }
    this.handled.fire({ message, result });
    return result;
  }

  private async onReadyMessage(message: ReadyMessage): Promise<undefined> {
    if (message.version !== this.protocol.version) {
      // A page of another version (an old page restored after an update): written again from scratch.
      this.render();
      return undefined;
    }
    this.ready = true;
    await this.onReady();
    return undefined;
  }
}

function isReady(message: { type: string }): message is ReadyMessage {
  return message.type === 'ready';
}
