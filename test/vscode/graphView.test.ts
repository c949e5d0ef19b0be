// "Open Workflow Graph to the Side" inside a real VS Code extension host: the panel opens beside a 3-node API-format
// workflow with its graph (once per document; a nonce CSP, local resources only from dist/webview); other JSON is
// told it is not a workflow; an edit posts the graph of the new document version; invalid JSON keeps the graph under
// a banner with the line and column; the page's `reveal` selects the node's JSON; the cursor in the JSON selects its
// node; diagnostics become problems on nodes; a UI-format file keeps its saved positions; the serializer restores a
// panel from its saved state.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startEmulator } from '../../src/emulator';
import { workspaceFile } from './workspace';
import { until } from './until';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { WorkflowGraphPanel } from '../../src/extension/workflow/graphView';
import { GRAPH_PROTOCOL_VERSION, type GraphHostMessage } from '../../src/core/graph/protocol';

const EXTENSION_ID = 'comfy-cloud.comfy-cloud';
const FILE = 'graph-view.json';

type GraphMessage = Extract<GraphHostMessage, { type: 'graph' }>;

/** The last message of `type` the panel posted, if any. */
function last<T extends GraphHostMessage['type']>(
  panel: WorkflowGraphPanel,
  type: T,
): Extract<GraphHostMessage, { type: T }> | undefined {
  return [...panel.posted].reverse().find((m): m is Extract<GraphHostMessage, { type: T }> => m.type === type);
}

/** The graph posted for `document`'s current version. */
function graphOf(panel: WorkflowGraphPanel, document: vscode.TextDocument): Promise<GraphMessage> {
  return until(
    () => `the graph of version ${document.version}: ${JSON.stringify(panel.posted.map((m) => m.type))}`,
    [panel.onDidPost],
    () => {
      const g = last(panel, 'graph');
      return g && g.documentVersion === document.version ? g : undefined;
    },
  );
}

async function replaceAll(document: vscode.TextDocument, text: string): Promise<void> {
  const edit = new vscode.WorkspaceEdit();
  edit.replace(
    document.uri,
    new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)),
    text,
  );
  assert.ok(await vscode.workspace.applyEdit(edit));
}

suite('Workflow graph beside the JSON in a real VS Code extension host', () => {
  let extension: ComfyCloudApi;
  let document: vscode.TextDocument;
  let panel: WorkflowGraphPanel;
  let original: string;

  suiteSetup(async function () {
    this.timeout(180_000);
    const ext = vscode.extensions.getExtension<ComfyCloudApi>(EXTENSION_ID);
    assert.ok(ext);
    extension = await ext.activate();
    original = new TextDecoder().decode(await vscode.workspace.fs.readFile(workspaceFile('invert.json')));
    await vscode.workspace.fs.writeFile(workspaceFile(FILE), new TextEncoder().encode(original));
    document = await vscode.workspace.openTextDocument(workspaceFile(FILE));
    await vscode.window.showTextDocument(document, vscode.ViewColumn.One);
  });

  suiteTeardown(async () => {
    // The test file saved as it was, so no dirty editor is left behind, then removed.
    if (!document.isClosed) {
      await replaceAll(document, original);
      await document.save();
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.fs.delete(workspaceFile(FILE)).then(undefined, () => undefined);
  });

  test('opening beside a 3-node API workflow: the graph in the column beside, titled "Graph: <file>", one panel per document', async function () {
    this.timeout(180_000);
    const opened = await vscode.commands.executeCommand<WorkflowGraphPanel | undefined>('comfyCloud.openWorkflowGraph');
    assert.ok(opened, 'no panel');
    panel = opened;
    assert.equal(panel.panel.title, `Graph: ${FILE}`);
    // The column is known once the workbench has placed the panel.
    assert.equal(
      await until('the panel placed', [panel.panel.onDidChangeViewState], () => panel.panel.viewColumn),
      vscode.ViewColumn.Two,
    );
    assert.equal(vscode.window.activeTextEditor?.document, document, 'the focus left the editor');
    const graph = await graphOf(panel, document);
    assert.deepEqual(
      graph.model.root.nodes.map((n) => [n.id, n.title]),
      [
        ['1', 'Red canvas'],
        ['2', 'Invert'],
        ['3', 'Save'],
      ],
    );
    assert.deepEqual(
      graph.model.root.edges.map((e) => `${e.from}->${e.to}.${e.toInput}`),
      ['1->2.image', '2->3.images'],
    );
    // The page: a nonce CSP, no remote origin, resources only from dist/webview.
    const html = panel.panel.webview.html;
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1] ?? '';
    assert.match(csp, /^default-src 'none';.*script-src 'nonce-[A-Za-z0-9+/=]{16,}'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:\/\/(?!\S*vscode)/);
    const roots = (panel.panel.webview.options.localResourceRoots ?? []).map((u) => u.path);
    assert.equal(roots.length, 1);
    assert.ok(roots[0]!.endsWith('/dist/webview'), roots[0]);
    assert.ok(!panel.panel.webview.options.enableCommandUris, 'command URIs are enabled');
    // Running it again reveals the same panel.
    assert.equal(await vscode.commands.executeCommand('comfyCloud.openWorkflowGraph', document.uri), panel);
  });

  test('on JSON that is not a workflow, the command says so and opens no panel', async function () {
    this.timeout(180_000);
    const uri = workspaceFile('not-a-workflow.json');
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode('{ "editor.tabSize": 2 }\n'));
    try {
      const said: string[] = [];
      const sub = extension.display.onDidShow((n) => said.push(n.message));
      try {
        assert.equal(await vscode.commands.executeCommand('comfyCloud.openWorkflowGraph', uri), undefined);
      } finally {
        sub.dispose();
      }
      assert.equal(extension.graphs?.panelFor(uri), undefined);
      assert.ok(
        said.some((m) => /not-a-workflow\.json is not a workflow/.test(m)),
        JSON.stringify(said),
      );
    } finally {
      await vscode.workspace.fs.delete(uri);
    }
  });

  test('an edit posts the graph of the new document version', async function () {
    this.timeout(180_000);
    const before = last(panel, 'graph')!.documentVersion;
    await replaceAll(document, original.replace('"Invert"', '"Flip"'));
    const graph = await graphOf(panel, document);
    assert.ok(graph.documentVersion > before);
    assert.equal(graph.model.root.nodes[1]!.title, 'Flip');
  });

  test('invalid JSON keeps the last good graph under a banner with the line and column; valid again clears it', async function () {
    this.timeout(180_000);
    const good = last(panel, 'graph')!;
    await replaceAll(document, original.replace('"Invert"', '"Invert",,'));
    const banner = await until('a banner', [panel.onDidPost], () => last(panel, 'banner')?.text ?? undefined);
    assert.match(banner, /line 10, column \d+/);
    assert.match(banner, /last valid version/);
    assert.equal(last(panel, 'graph'), good, 'a graph was posted for the invalid document');
    await replaceAll(document, original);
    await graphOf(panel, document);
    await until('the banner cleared', [panel.onDidPost], () => last(panel, 'banner')?.text === null);
  });

  test("the page's reveal selects the node's JSON in the editor and opens its form", async function () {
    this.timeout(180_000);
    assert.equal(await panel.receive({ type: 'reveal', nodeId: '2' }), true);
    const editor = vscode.window.visibleTextEditors.find((e) => e.document === document);
    assert.ok(editor, 'the JSON is not shown');
    const selected = document.getText(editor.selection);
    assert.equal(last(panel, 'form')?.form?.nodeId, '2');
    assert.ok(selected.startsWith('"2": {') && selected.includes('"ImageInvert"') && selected.endsWith('}'), selected);
    assert.equal(await panel.receive({ type: 'reveal', nodeId: '99' }), false, 'a node the document does not have');
    assert.equal(await panel.receive({ type: 'reveal', nodeId: '' }), undefined, 'an invalid message is dropped');
  });

  test("the form's edit is one edit of the JSON (the value's text only, the document dirty), undone by the editor's undo; a refused value changes nothing", async function () {
    this.timeout(180_000);
    // The form is typed from the active connection's node definitions: an emulator's.
    const emu = await startEmulator({ port: 0 });
    const config = vscode.workspace.getConfiguration('comfyCloud');
    await config.update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    try {
      await formEdits();
    } finally {
      await config.update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
      await emu.close();
    }
  });

  async function formEdits(): Promise<void> {
    // None loaded for the emulator yet: choosing a node fetches them (quietly) for its form.
    assert.equal(await panel.receive({ type: 'reveal', nodeId: '1' }), true);
    const form = last(panel, 'form')?.form;
    assert.equal(form?.definitions, 'known', 'no node definitions for the form');
    const width = form.fields.find((f) => f.name === 'width');
    assert.deepEqual([width?.kind, width?.value, width?.min], ['int', 64, 1]);
    const before = document.getText();
    // Refused: below the minimum, not an integer. Nothing written; the refusal comes back on the field.
    for (const [value, words] of [
      [0, /below the minimum 1/],
      [2.5, /expects an integer/],
    ] as const) {
      assert.equal(await panel.receive({ type: 'edit', nodeId: '1', field: 'width', value }), false);
      assert.equal(document.getText(), before);
      const problem = last(panel, 'form')?.problem;
      assert.equal(problem?.field, 'width');
      assert.match(problem.message, words);
    }
    // Taken: exactly the value's text changes; the graph of the new version is posted, the form with the new value.
    assert.equal(await panel.receive({ type: 'edit', nodeId: '1', field: 'width', value: 640 }), true);
    assert.equal(document.getText(), before.replace('"width": 64,', '"width": 640,'));
    assert.ok(document.isDirty, 'the document is not dirty');
    await graphOf(panel, document);
    const after = last(panel, 'form')?.form?.fields.find((f) => f.name === 'width');
    assert.equal(after?.value, 640);
    // The editor's undo takes it back, and the form follows.
    await vscode.window.showTextDocument(document, vscode.ViewColumn.One);
    await vscode.commands.executeCommand('undo');
    assert.equal(document.getText(), before);
    await until(
      'the form of the undone document',
      [panel.onDidPost],
      () => last(panel, 'form')?.form?.fields.find((f) => f.name === 'width')?.value === 64,
    );
    assert.equal(await panel.receive({ type: 'closeForm' }), undefined);
  }

  test('a page of another protocol version is written again with a fresh nonce; a page of this version saying ready gets the graph', async function () {
    this.timeout(180_000);
    const nonce = (): string | undefined => /'nonce-([^']+)'/.exec(panel.panel.webview.html)?.[1];
    const before = nonce();
    assert.ok(before, 'the page has a nonce');
    assert.equal(await panel.receive({ type: 'ready', version: GRAPH_PROTOCOL_VERSION + 1 }), undefined);
    assert.notEqual(nonce(), before, 'the page was written again');
    // A page of this version says ready (the new page does so by itself too): the graph is posted to it anew.
    const posted = panel.posted.length;
    await panel.receive({ type: 'ready', version: GRAPH_PROTOCOL_VERSION });
    await until('the graph posted after ready', [panel.onDidPost], () =>
      panel.posted.slice(posted).some((m) => m.type === 'graph'),
    );
  });

  test('moving the cursor in the JSON selects the node under it in the graph', async function () {
    this.timeout(180_000);
    const editor = await vscode.window.showTextDocument(document, vscode.ViewColumn.One);
    const at = document.positionAt(document.getText().indexOf('"SaveImage"'));
    editor.selection = new vscode.Selection(at, at);
    await until('select 3', [panel.onDidPost], () => last(panel, 'select')?.nodeId === '3');
    const outside = document.positionAt(0);
    editor.selection = new vscode.Selection(outside, outside);
    await until('select null', [panel.onDidPost], () => last(panel, 'select')?.nodeId === null);
  });

  test("the document's diagnostics become problems on their nodes", async function () {
    this.timeout(180_000);
    const collection = vscode.languages.createDiagnosticCollection('graph-view-test');
    try {
      const offset = document.getText().indexOf('"image"');
      const d = new vscode.Diagnostic(
        new vscode.Range(document.positionAt(offset), document.positionAt(offset + 7)),
        'expects IMAGE; got LATENT',
        vscode.DiagnosticSeverity.Error,
      );
      d.source = 'Comfy Cloud';
      d.code = 'link_type_mismatch';
      collection.set(document.uri, [d]);
      const problems = await until(
        'problems on node 2',
        [panel.onDidPost],
        () => last(panel, 'problems')?.problems.byNode['2'],
      );
      assert.deepEqual(problems, [{ field: 'image', message: 'expects IMAGE; got LATENT', source: 'check' }]);
      collection.clear();
      await until(
        'the problems cleared',
        [panel.onDidPost],
        () => last(panel, 'problems')?.problems.byNode['2'] === undefined,
      );
    } finally {
      collection.dispose();
    }
  });

  test('a UI-format file: its graph keeps the saved positions', async function () {
    this.timeout(180_000);
    const ui = await vscode.workspace.openTextDocument(workspaceFile('ui-convert.json'));
    await vscode.window.showTextDocument(ui, vscode.ViewColumn.One);
    const uiPanel = await vscode.commands.executeCommand<WorkflowGraphPanel>('comfyCloud.openWorkflowGraph');
    assert.notEqual(uiPanel, panel, 'one panel per document');
    const graph = await graphOf(uiPanel, ui);
    assert.equal(graph.model.format, 'ui');
    assert.equal(graph.model.root.positioned, true);
    // Node 1 is saved at pos [40, 80], size [315, 130]; the box includes the 30 px title bar above pos.
    assert.deepEqual(graph.model.root.nodes.find((n) => n.id === '1')?.box, { x: 40, y: 50, width: 315, height: 160 });
    uiPanel.panel.dispose();
  });

  test('the serializer restores a panel after a reload from its saved state (the document, the view)', async function () {
    this.timeout(180_000);
    panel.panel.dispose();
    assert.equal(extension.graphs?.panelFor(document.uri), undefined);
    const fresh = vscode.window.createWebviewPanel('comfyCloud.workflowGraph', 'restored', {
      viewColumn: vscode.ViewColumn.Two,
      preserveFocus: true,
    });
    // A state saved by an older page (another protocol version) still names its document: the view is reset.
    await extension.graphSerializer.deserializeWebviewPanel(fresh, {
      version: 1,
      zoom: 1.5,
      panX: 10,
      panY: 20,
      subgraph: null,
      document: document.uri.toString(),
    });
    const restored = extension.graphs?.panelFor(document.uri);
    assert.ok(restored, 'not restored');
    assert.equal(restored.panel, fresh);
    assert.equal(fresh.title, `Graph: ${FILE}`);
    assert.match(fresh.webview.html, /data-document="[^"]*graph-view\.json"/);
    await graphOf(restored, document);
    // A state without a document closes the panel.
    const orphan = vscode.window.createWebviewPanel('comfyCloud.workflowGraph', 'orphan', vscode.ViewColumn.Two);
    let closed = false;
    orphan.onDidDispose(() => (closed = true));
    await extension.graphSerializer.deserializeWebviewPanel(orphan, {
      version: 1,
      zoom: 1,
      panX: 0,
      panY: 0,
      subgraph: null,
    });
    assert.equal(closed, true);
    restored.panel.dispose();
  });
});
