import * as path from 'node:path';
import * as vscode from 'vscode';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { detectWorkflowFormat } from '../../core/util';
import { workflowGraph, type GraphModel } from '../../core/graph/model';
import { graphHtml } from '../../core/graph/page';
import { problemsOnNodes, type NodeErrorLike } from '../../core/graph/problems';
import {
  GRAPH_PROTOCOL_VERSION,
  savedGraphDocument,
  parseGraphWebviewMessage,
  type GraphHostMessage,
  type GraphWebviewMessage,
} from '../../core/graph/protocol';
import { fieldEdit, nodeForm } from '../../core/graph/nodeForm';
import { formWords } from './graphFormWords';
import type { GraphProblems } from '../../core/graph/types';
import type { NodeDefinitions, WorkflowDiagnostic } from '../../core/workflowSchema';
import { Commands, GRAPH_VIEW_TYPE } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import { cleanModel, nodeAtOffset, nodeSpan } from '../../core/graph/positions';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import {
  webviewPanelOptions,
  WebviewPanelHost,
  type PageBasics,
  type PageProtocol,
  type ReadyMessage,
} from '../platform/webviewPanelHost';

export { GRAPH_VIEW_TYPE };

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false };
/** The graph's page protocol (core/graph/protocol.ts). */
const GRAPH_PAGE: PageProtocol<GraphWebviewMessage> = {
  component: 'graph',
  version: GRAPH_PROTOCOL_VERSION,
  parse: parseGraphWebviewMessage,
};

/** What the graph panels need from the extension. */
export interface WorkflowGraphDeps {
  extensionUri: vscode.Uri;
  display: Display;
  log: Log;
  /** Workflow IntelliSense's node definitions in use (edge types, class names); undefined when unknown. */
  definitions(): Promise<NodeDefinitions | undefined>;
  /**
   * Fetches the definitions (quietly) and resolves with them: a node's form when none are known. Resolves undefined
   * without asking when it already asked for the same connection.
   */
  fetchDefinitions?(): Promise<NodeDefinitions | undefined>;
  /** Fires when those definitions change (a refresh, another source): open graphs are made again. */
  onDidChangeDefinitions: vscode.Event<unknown>;
  /** The diagnostics Submit put in Problems for a document (a 422's node errors, the check before submit). */
  serverDiagnostics(uri: vscode.Uri): readonly vscode.Diagnostic[];
  /** The wait after the last edit before the graph is made again, ms (default 300). */
  debounceMs?: number;
}

/** The webview options of a graph panel: scripts on, no command URIs, local resources only from dist/webview. */
export function graphWebviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return webviewPanelOptions(extensionUri);
}

/** A parse error's code in words: `CommaExpected` → `comma expected`. */
function parseErrorWords(error: ParseError): string {
  return printParseErrorCode(error.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

/**
 * One workflow file's graph: a `WebviewPanel` (core/graph/page.ts: nonce CSP, no network, resources from dist/webview
 * only) that draws the document as it is edited. Rules:
 * - Each change is drawn after {@link WorkflowGraphDeps.debounceMs} without a further one; a graph is posted with
 *   its document version, never one older than the last posted (the page drops an older one too).
 * - A document that is not valid JSON, or not a workflow, keeps the last good graph under a banner saying why
 *   (with the line and column of a parse error).
 * - `reveal` from the page selects the node's JSON in the editor (the focus stays on the page) and opens its form; the
 *   cursor in the JSON selects its node (`select`).
 * - A form's `edit` is one `WorkspaceEdit` of the document (undo and redo in the editor, the file dirty as after a
 *   hand edit), checked against the node definition first; the graph and the form are made again at once.
 * - The document's diagnostics (workflow IntelliSense's, the JSON schema's, a refusal's in Problems) are posted as
 *   problems on nodes.
 * Every message from the page is validated (`parseGraphWebviewMessage`); an invalid one is logged and dropped.
 */
export class WorkflowGraphPanel extends WebviewPanelHost<GraphWebviewMessage, GraphHostMessage> {
  private model: GraphModel | undefined;
  /** The document version of {@link model}. */
  private version = -1;
  private banner: string | null = null;
  private problems: GraphProblems = { byNode: {}, graph: [] };
  private selected: string | null = null;
  /** The node whose form is open on the page (posted again after each change of the document). */
  private formNode: string | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The column the JSON was in when the graph was opened (a reveal shows it there when it is not visible). */
  private sourceColumn: vscode.ViewColumn;

  constructor(
    panel: vscode.WebviewPanel,
    readonly uri: vscode.Uri,
    private readonly deps: WorkflowGraphDeps,
    sourceColumn: vscode.ViewColumn | undefined,
  ) {
    super(panel, deps, GRAPH_PAGE, { kept: 200 });
    this.sourceColumn = sourceColumn ?? vscode.ViewColumn.One;
    panel.webview.options = graphWebviewOptions(deps.extensionUri);
    panel.title = vscode.l10n.t('Graph: {0}', deps.display.text(path.posix.basename(uri.path)));
    this.render();
    this.register({ dispose: () => clearTimeout(this.timer) });
  }

  /** The page (core/graph/page.ts): it says `ready`, then the host posts what it shows. */
  protected html(basics: PageBasics, asset: (name: string) => string): string {
    return graphHtml({
      ...basics,
      graphCss: asset('graph.css'),
      graphJs: asset('graph.js'),
      title: this.panel.title,
      documentUri: this.uri.toString(),
    });
  }

  protected subject(): string {
    return this.uri.toString(true);
  }

  /** Brings the panel to the front without taking the focus from the editor. */
  reveal(): void {
    this.panel.reveal(undefined, true);
  }

  /** The graph drawn again after the debounce (an edit). */
  schedule(document: vscode.TextDocument): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh(document);
    }, this.deps.debounceMs ?? 300);
  }

  /**
   * Makes the graph of `document` now and posts it (or the banner saying why it cannot be drawn). A document changed
   * while the definitions were read is left to the refresh its change scheduled.
   */
  async refresh(document: vscode.TextDocument): Promise<void> {
    const version = document.version;
    const text = document.getText();
    const definitions = await this.deps.definitions().catch(() => undefined);
    if (!document.isClosed && document.version !== version) return;
    if (version < this.version) return;
    const errors: ParseError[] = [];
    const value: unknown = parse(text, errors, PARSE_OPTIONS);
    let why: string | undefined;
    if (errors.length > 0) {
      const first = errors[0]!;
      const at = document.positionAt(first.offset);
      why = vscode.l10n.t(
        'The JSON is not valid at line {0}, column {1}: {2}.',
        at.line + 1,
        at.character + 1,
        parseErrorWords(first),
      );
    } else {
      const made = workflowGraph(value, definitions);
      if ('problem' in made) why = made.problem;
      else {
        this.model = cleanModel(made.model, (t) => this.deps.display.text(t));
        this.version = version;
        this.post({ type: 'graph', documentVersion: version, model: this.model });
        this.setBanner(null);
        this.updateProblems(document);
        if (this.formNode !== null) this.postForm(text, definitions, null);
        return;
      }
    }
    const shown = this.deps.display.text(why);
    this.setBanner(this.model ? vscode.l10n.t('{0} The graph shows the last valid version.', shown) : shown);
  }

  private setBanner(text: string | null): void {
    if (text === this.banner) return;
    this.banner = text;
    this.post({ type: 'banner', text });
  }

  /** The document's diagnostics as problems on nodes, posted when they changed. */
  updateProblems(document: vscode.TextDocument): void {
    const text = document.getText();
    const server = this.deps.serverDiagnostics(document.uri);
    const key = (d: vscode.Diagnostic): string => `${d.range.start.line}:${d.range.start.character}:${d.message}`;
    const fromServer = new Set(server.map(key));
    const clean = (t: string): string => this.deps.display.text(t);
    const nodeErrors: NodeErrorLike[] = [];
    const checks: WorkflowDiagnostic[] = [];
    for (const d of vscode.languages.getDiagnostics(document.uri)) {
      if (d.severity !== vscode.DiagnosticSeverity.Error && d.severity !== vscode.DiagnosticSeverity.Warning) continue;
      // Ours (workflow IntelliSense, Submit's refusals) and the JSON language service's (the workflow schema's).
      if (d.source !== 'Comfy Cloud' && d.source !== 'json') continue;
      const at = nodeAtOffset(text, document.offsetAt(d.range.start));
      if (fromServer.has(key(d))) {
        if (at) nodeErrors.push({ nodeId: at.nodeId, field: at.field, reason: d.message });
        continue;
      }
      if (!at && d.source !== 'Comfy Cloud') continue;
      checks.push({
        code: String(typeof d.code === 'object' ? d.code.value : d.code) as WorkflowDiagnostic['code'],
        message: clean(d.message),
        path: [],
        ...(at ? { nodeId: at.nodeId, field: at.field } : {}),
      });
    }
    const problems = problemsOnNodes(checks, nodeErrors, clean);
    if (JSON.stringify(problems) === JSON.stringify(this.problems)) return;
    this.problems = problems;
    this.post({ type: 'problems', problems });
  }

  /** The node under the cursor at `offset` of `document` selected in the graph (null: none), posted when it changed. */
  selectAt(document: vscode.TextDocument, offset: number): void {
    const nodeId = nodeAtOffset(document.getText(), offset)?.nodeId ?? null;
    if (nodeId === this.selected) return;
    this.selected = nodeId;
    this.post({ type: 'select', nodeId });
  }

  /** Everything the page shows, anew (a reloaded or re-shown page starts empty); the graph made when out of date. */
  protected async onReady(): Promise<void> {
    const document = await vscode.workspace.openTextDocument(this.uri);
    if (this.model) this.post({ type: 'graph', documentVersion: this.version, model: this.model });
    if (this.banner !== null) this.post({ type: 'banner', text: this.banner });
    this.post({ type: 'problems', problems: this.problems });
    if (this.selected !== null) this.post({ type: 'select', nodeId: this.selected });
    if (this.formNode !== null)
      this.postForm(document.getText(), await this.deps.definitions().catch(() => undefined), null);
    if (!this.model || document.version > this.version) await this.refresh(document);
  }

  protected async act(message: Exclude<GraphWebviewMessage, ReadyMessage>): Promise<unknown> {
    switch (message.type) {
      case 'reveal':
        return this.openForm(message.nodeId);
      case 'goToNode':
        return this.revealNode(message.nodeId);
      case 'edit':
        return this.edit(message.nodeId, message.field, message.value);
      case 'closeForm':
        this.formNode = null;
        return undefined;
      case 'openSubgraph':
        return undefined;
    }
  }

  /**
   * A node chosen on the page: its JSON selected in the editor (the focus left on the page, where its form opens) and
   * its form posted. Resolves with false when the document has no such node.
   */
  async openForm(nodeId: string): Promise<boolean> {
    if (!(await this.revealNode(nodeId, true))) return false;
    this.formNode = nodeId;
    const document = await vscode.workspace.openTextDocument(this.uri);
    let definitions = await this.deps.definitions().catch(() => undefined);
    if (!definitions && this.deps.fetchDefinitions)
      definitions = await this.deps.fetchDefinitions().catch(() => undefined);
    this.postForm(document.getText(), definitions, null);
    return true;
  }

  /** Posts the form of {@link formNode} in `text` (null when the node is gone), with a refusal to show, if any. */
  private postForm(
    text: string,
    definitions: NodeDefinitions | undefined,
    problem: { field: string; message: string } | null,
  ): void {
    const form = this.formNode === null ? undefined : nodeForm(text, this.formNode, definitions);
    if (!form) this.formNode = null;
    const clean = (t: string): string => this.deps.display.text(t);
    this.post({
      type: 'form',
      form: form ? { ...form, title: clean(form.title), classType: clean(form.classType) } : null,
      words: formWords(),
      problem: problem && { field: problem.field, message: clean(problem.message) },
    });
  }

  /**
   * Sets field `field` of node `nodeId` to `value` by one `WorkspaceEdit` of the document (core/graph/nodeForm.ts
   * `fieldEdit`: the value's text only), then makes the graph and the form again without the debounce. A refused value
   * (or a node or field gone) changes nothing and comes back as the form's problem. Resolves with whether the
   * document changed.
   */
  async edit(nodeId: string, field: string, value: string | number | boolean): Promise<boolean> {
    const document = await vscode.workspace.openTextDocument(this.uri);
    const definitions = await this.deps.definitions().catch(() => undefined);
    const text = document.getText();
    this.formNode = nodeId;
    let edits;
    try {
      edits = fieldEdit(text, nodeId, field, value, definitions, formWords()).edits;
    } catch (err) {
      this.postForm(text, definitions, { field, message: err instanceof Error ? err.message : String(err) });
      return false;
    }
    const edit = new vscode.WorkspaceEdit();
    for (const e of edits)
      edit.replace(
        document.uri,
        new vscode.Range(document.positionAt(e.offset), document.positionAt(e.offset + e.length)),
        e.content,
      );
    if (!(await vscode.workspace.applyEdit(edit))) {
      this.postForm(text, definitions, { field, message: vscode.l10n.t('The editor refused the change.') });
      return false;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.refresh(document);
    return true;
  }

  /**
   * Selects node `nodeId`'s object in the JSON editor and scrolls it into view (the editor where the document is
   * visible, else the column it was opened from), moving the focus there unless `preserveFocus`. Resolves with false
   * when the document has no such node.
   */
  async revealNode(nodeId: string, preserveFocus = false): Promise<boolean> {
    const document = await vscode.workspace.openTextDocument(this.uri);
    const span = nodeSpan(document.getText(), nodeId);
    if (!span) return false;
    // The page selected the node itself: the selection change that follows posts nothing back.
    this.selected = nodeId;
    const range = new vscode.Range(document.positionAt(span.offset), document.positionAt(span.offset + span.length));
    const visible = vscode.window.visibleTextEditors.find((e) => e.document === document);
    const editor = await vscode.window.showTextDocument(document, {
      viewColumn: visible?.viewColumn ?? this.sourceColumn,
      preserveFocus,
    });
    editor.selection = new vscode.Selection(range.start, range.end);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return true;
  }
}

/**
 * "Open Workflow Graph to the Side": one graph panel per workflow document (running the command again reveals it),
 * following its document's edits, cursor and diagnostics; panels restored after a window reload by the serializer
 * ({@link restore}). Built at the first use (the command, a restored panel).
 */
export class WorkflowGraphPanels extends Disposable {
  private readonly panels = new Map<string, WorkflowGraphPanel>();

  constructor(private readonly deps: WorkflowGraphDeps) {
    super();
    this.register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length > 0) this.panelFor(e.document.uri)?.schedule(e.document);
      }),
    );
    this.register(
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const selection = e.selections[0];
        if (selection)
          this.panelFor(e.textEditor.document.uri)?.selectAt(
            e.textEditor.document,
            e.textEditor.document.offsetAt(selection.active),
          );
      }),
    );
    this.register(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) {
          const panel = this.panelFor(uri);
          const document = panel && vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
          if (document) panel.updateProblems(document);
        }
      }),
    );
    this.register(
      deps.onDidChangeDefinitions(() => {
        for (const panel of this.panels.values()) {
          const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === panel.uri.toString());
          if (document) void panel.refresh(document);
        }
      }),
    );
    this.register({
      dispose: () => {
        for (const panel of [...this.panels.values()]) panel.dispose();
      },
    });
  }

  /** The open graph panel of the document at `uri`, if any. */
  panelFor(uri: vscode.Uri): WorkflowGraphPanel | undefined {
    return this.panels.get(uri.toString());
  }

  /**
   * Opens (or reveals) the graph of the workflow at `uri` (default: the active editor's document) in the column
   * beside, keeping the focus in the editor. Resolves with the panel; undefined (after saying so) when there is no
   * document or it is not a workflow.
   */
  async open(uri?: vscode.Uri): Promise<WorkflowGraphPanel | undefined> {
    const active = vscode.window.activeTextEditor;
    const document = uri ? await vscode.workspace.openTextDocument(uri) : active?.document;
    if (!document) {
      void this.deps.display.info(vscode.l10n.t('Comfy Cloud: open a workflow JSON file to see its graph.'));
      return undefined;
    }
    const existing = this.panelFor(document.uri);
    if (existing) {
      existing.reveal();
      return existing;
    }
    if (detectWorkflowFormat(parse(document.getText(), [], PARSE_OPTIONS)) === 'unknown') {
      void this.deps.display.info(
        vscode.l10n.t(
          'Comfy Cloud: {0} is not a workflow (neither API format nor UI format), so it has no graph to show.',
          this.deps.display.text(path.posix.basename(document.uri.path)),
        ),
      );
      return undefined;
    }
    const column =
      vscode.window.visibleTextEditors.find((e) => e.document === document)?.viewColumn ?? active?.viewColumn;
    const panel = vscode.window.createWebviewPanel(
      GRAPH_VIEW_TYPE,
      vscode.l10n.t('Graph: {0}', path.posix.basename(document.uri.path)),
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      graphWebviewOptions(this.deps.extensionUri),
    );
    const made = this.adopt(panel, document, column);
    return made;
  }

  /**
   * A panel restored after a window reload (the serializer): its saved state names the document; a state without
   * one, or a document that cannot be opened any more, closes the panel.
   */
  async restore(panel: vscode.WebviewPanel, state: unknown): Promise<WorkflowGraphPanel | undefined> {
    const documentUri = savedGraphDocument(state);
    let document: vscode.TextDocument | undefined;
    try {
      if (documentUri !== undefined)
        document = await vscode.workspace.openTextDocument(vscode.Uri.parse(documentUri, true));
    } catch (err) {
      this.deps.log.warn(
        'graph',
        `a restored graph's workflow cannot be opened: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (!document) {
      panel.dispose();
      return undefined;
    }
    this.panelFor(document.uri)?.dispose();
    return this.adopt(panel, document, undefined);
  }

  private adopt(
    panel: vscode.WebviewPanel,
    document: vscode.TextDocument,
    column: vscode.ViewColumn | undefined,
  ): WorkflowGraphPanel {
    const key = document.uri.toString();
    const made = new WorkflowGraphPanel(panel, document.uri, this.deps, column);
    this.panels.set(key, made);
    made.onDidDispose(() => this.panels.get(key) === made && this.panels.delete(key));
    return made;
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return {
      [Commands.openWorkflowGraph]: (uri?: vscode.Uri) => this.open(uri instanceof vscode.Uri ? uri : undefined),
    };
  }
}
