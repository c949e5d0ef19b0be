// New Model Input inside a real VS Code extension host, against the emulator's router: the
// untitled input's `$schema` (comfy-router-schema:) gives completion from the model's openapi.json, and an invalid
// value gets a diagnostic from the JSON language service.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until } from './until';
import { startEmulator } from '../../src/emulator';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite('New Model Input: IntelliSense from the model schema in a real VS Code extension host', () => {
  let emu: Emulator;
  let doc: vscode.TextDocument;

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('routerUrl', emu.routerUrl, vscode.ConfigurationTarget.Global);
    const extension = await activateExtension();
    await extension.modelsView().storeKey(new URL(emu.routerUrl!).origin, 'test-router-key');
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('routerUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('New Model Input opens a JSON input whose $schema is the model schema URI, with the required fields and their defaults', async () => {
    doc = (await vscode.commands.executeCommand<vscode.TextDocument>('comfyCloud.newModelInput', 'emulator/strict'))!;
    assert.ok(doc, 'no document');
    assert.equal(doc.languageId, 'json');
    const value = JSON.parse(doc.getText()) as Record<string, unknown>;
    assert.equal(value.$schema, 'comfy-router-schema:/emulator/strict.json');
    assert.equal(value.steps, 20);
    assert.ok('prompt' in value);
  });

  test('completion at a new property lists a field of the schema', async function () {
    this.timeout(180_000);
    const editor = await vscode.window.showTextDocument(doc);
    const text = doc.getText();
    const at = text.lastIndexOf('\n', text.lastIndexOf('}'));
    await editor.edit((e) => e.insert(doc.positionAt(at), ',\n  ""'));
    const position = doc.positionAt(at + ',\n  "'.length);
    const labels = await until(
      'a completion item "sampler"',
      [vscode.languages.onDidChangeDiagnostics, vscode.workspace.onDidChangeTextDocument],
      async () => {
        const list = await vscode.commands.executeCommand<vscode.CompletionList>(
          'vscode.executeCompletionItemProvider',
          doc.uri,
          position,
        );
        const names = list.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
        return names.some((n) => n.includes('sampler')) ? names : undefined;
      },
    );
    assert.ok(
      labels.some((n) => n.includes('guidance')),
      labels.join(', '),
    );
    await vscode.commands.executeCommand('undo');
  });

  test('hover on a field shows its description from the model schema', async function () {
    this.timeout(180_000);
    const text = doc.getText();
    const at = text.indexOf('"steps"');
    assert.ok(at >= 0, text);
    const position = doc.positionAt(at + 2);
    let seen: string[] = [];
    const hover = await until(
      () => `a hover with the description of "steps" (hovers: ${JSON.stringify(seen)})`,
      [vscode.languages.onDidChangeDiagnostics, vscode.workspace.onDidChangeTextDocument],
      async () => {
        const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
          'vscode.executeHoverProvider',
          doc.uri,
          position,
        );
        const texts = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value)));
        seen = texts;
        // Markdown: the period may come escaped.
        return texts.find((t) => t.includes('Sampling steps'));
      },
    );
    assert.match(hover, /Sampling steps/);
  });

  test('the input offers "Run Model" as a CodeLens on its $schema line', async () => {
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
    const run = lenses.find((l) => l.command?.command === 'comfyCloud.runModel');
    assert.ok(run, `no Run Model lens: ${JSON.stringify(lenses.map((l) => l.command?.title))}`);
    assert.equal(run.range.start.line, doc.positionAt(doc.getText().indexOf('"$schema"')).line);
    assert.equal((run.command!.arguments?.[0] as vscode.Uri).toString(), doc.uri.toString());
  });

  test('an invalid value gets a diagnostic from the JSON language service at its line', async function () {
    this.timeout(180_000);
    const editor = await vscode.window.showTextDocument(doc);
    const text = doc.getText();
    const start = text.indexOf('"steps": 20');
    assert.ok(start >= 0, text);
    await editor.edit((e) =>
      e.replace(new vscode.Range(doc.positionAt(start), doc.positionAt(start + '"steps": 20'.length)), '"steps": 500'),
    );
    const line = doc.positionAt(start).line;
    const diagnostic = await until(
      () =>
        `a diagnostic on line ${line}: ${JSON.stringify(vscode.languages.getDiagnostics(doc.uri).map((d) => [d.range.start.line, d.message]))}`,
      [vscode.languages.onDidChangeDiagnostics],
      () => vscode.languages.getDiagnostics(doc.uri).find((d) => d.range.start.line === line),
    );
    assert.match(diagnostic.message, /50/);
  });

  test("Refresh Schema revalidates the cached schema with If-None-Match, and the provider's change event updates the schema open editors validate with", async function () {
    this.timeout(180_000);
    await vscode.window.showTextDocument(doc);
    const schemaUri = 'comfy-router-schema:/emulator/strict.json';
    // The JSON language service opened the schema document to validate the input.
    const schemaDoc = await until(
      `the schema document ${schemaUri} open`,
      [vscode.workspace.onDidOpenTextDocument],
      () => vscode.workspace.textDocuments.find((d) => d.uri.toString() === schemaUri),
    );
    assert.doesNotMatch(schemaDoc.getText(), /revision 1/);
    const isSchemaGet = (r: { method: string; path: string }): boolean =>
      r.method === 'GET' && r.path.endsWith('/emulator/strict/openapi.json');
    const before = emu.routerRequests.length;
    emu.bumpRouterSchema('emulator/strict');
    const refreshed = await vscode.commands.executeCommand<number>('comfyCloud.refreshSchema');
    assert.ok(refreshed >= 1, `schema documents refreshed: ${refreshed}`);
    const changed = await until(
      () => `the schema document updated: ${schemaDoc.getText().slice(0, 200)}`,
      [vscode.workspace.onDidChangeTextDocument],
      () => /revision 1/.test(schemaDoc.getText()) && schemaDoc,
    );
    assert.ok(changed);
    const asked = emu.routerRequests.slice(before).filter(isSchemaGet);
    assert.ok(asked.length >= 1, 'the schema was asked again');
    assert.equal(typeof asked[0]!.headers['if-none-match'], 'string', 'revalidated with the cached ETag');
    // The input still validates against the new schema: the invalid value keeps its diagnostic.
    await until(
      'the diagnostic after the refresh',
      [vscode.languages.onDidChangeDiagnostics],
      () => vscode.languages.getDiagnostics(doc.uri).length > 0,
    );
  });
});
