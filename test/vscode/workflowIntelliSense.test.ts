// Workflow IntelliSense inside a real VS Code extension host, against the emulator's
// object_info: Refresh Node Definitions fetches them; a `*.api.json` file gets `class_type` completion from the
// generated schema (through the jsonValidation contribution), a link-type mismatch becomes a Comfy Cloud diagnostic on
// its line, and Submit Workflow refuses such a file without sending it; a combo input completes its choices; hover on a
// `class_type` value shows the node's description; the `$schema` code action on a plain `*.json` workflow (not on other
// JSON); and with the definitions unknown, no Comfy Cloud diagnostic and the status says why.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { activateExtension, workspaceFile } from './workspace';
import { until } from './until';
import { startEmulator } from '../../src/emulator';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/** An IMAGE output (node 1's) linked into node 2's `width`, an INT input: a link-type mismatch on line 4. */
const MISMATCH = `{
  "1": { "class_type": "EmptyImage", "inputs": { "width": 64, "height": 64, "batch_size": 1, "color": 0 } },
  "2": { "class_type": "EmptyImage",
    "inputs": { "width": ["1", 0], "height": 64, "batch_size": 1, "color": 0 } },
  "3": { "class_type": "SaveImage", "inputs": { "images": ["2", 0], "filename_prefix": "mismatch" } }
}
`;

suite('Workflow IntelliSense in a real VS Code extension host', () => {
  let emu: Emulator;

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    await activateExtension();
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test("Refresh Node Definitions fetches the active connection's object_info (GET /api/object_info) and caches it", async function () {
    this.timeout(180_000);
    const result = await vscode.commands.executeCommand<{
      classes?: number;
      file?: string;
      error?: string;
      status: string;
    }>('comfyCloud.refreshNodeDefinitions');
    assert.ok(result?.classes && result.classes >= 5, JSON.stringify(result));
    assert.ok(result.file, 'no cache file');
    await vscode.workspace.fs.stat(vscode.Uri.file(result.file));
    assert.ok(
      emu.requests.some((r) => r.method === 'GET' && r.path.endsWith('/api/object_info')),
      'no GET /api/object_info reached the emulator',
    );
  });

  test('in a *.api.json file, completion at "class_type" offers the engine\'s node classes', async function () {
    this.timeout(180_000);
    const uri = workspaceFile('completion.api.json');
    const text = '{\n  "1": { "class_type": "", "inputs": {} }\n}\n';
    await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const position = doc.positionAt(text.indexOf('"class_type": "') + '"class_type": "'.length);
    const labels = await until(
      'a completion item "EmptyImage"',
      [vscode.languages.onDidChangeDiagnostics, vscode.workspace.onDidChangeTextDocument],
      async () => {
        const list = await vscode.commands.executeCommand<vscode.CompletionList>(
          'vscode.executeCompletionItemProvider',
          doc.uri,
          position,
        );
        const names = list.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
        return names.some((n) => n.includes('EmptyImage')) ? names : undefined;
      },
    );
    for (const name of ['ImageInvert', 'SaveImage'])
      assert.ok(
        labels.some((n) => n.includes(name)),
        labels.join(', '),
      );
  });

  test('a link from an IMAGE output into an INT input is a Comfy Cloud diagnostic on that line', async function () {
    this.timeout(180_000);
    // Not mismatch.api.json: the refused submit above left its own Comfy Cloud entries (the server's words) there.
    const uri = workspaceFile('unknown.api.json');
    await vscode.workspace.fs.writeFile(uri, Buffer.from(MISMATCH));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const ours = await until(
      () =>
        `a Comfy Cloud diagnostic: ${JSON.stringify(vscode.languages.getDiagnostics(uri).map((d) => [d.range.start.line, d.source, d.message]))}`,
      [vscode.languages.onDidChangeDiagnostics],
      () => {
        const found = vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Comfy Cloud');
        return found.length > 0 ? found : undefined;
      },
    );
    assert.ok(
      ours.some((d) => d.range.start.line === 3 && /IMAGE/.test(d.message) && /INT/.test(d.message)),
      JSON.stringify(ours.map((d) => [d.range.start.line, d.message])),
    );
  });

  test("Submit Workflow refuses that file with the problem in the server's words, and sends nothing", async function () {
    this.timeout(180_000);
    const uri = workspaceFile('mismatch.api.json');
    const before = emu.requests.filter((r) => r.method === 'POST').length;
    const result = await vscode.commands.executeCommand<{ jobId?: string; status: string } | undefined>(
      'comfyCloud.submitWorkflow',
      uri,
    );
    assert.ok(!result?.jobId, `a job was made: ${JSON.stringify(result)}`);
    assert.equal(emu.requests.filter((r) => r.method === 'POST').length, before, 'a POST reached the emulator');
  });

  test('a combo input (ImageScale "crop") completes its choices from the node definitions', async function () {
    this.timeout(180_000);
    const uri = workspaceFile('combo.api.json');
    const text = '{\n  "1": { "class_type": "ImageScale", "inputs": { "crop": "" } }\n}\n';
    await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const position = doc.positionAt(text.indexOf('"crop": "') + '"crop": "'.length);
    const labels = await until(
      'completion items "disabled" and "center"',
      [vscode.languages.onDidChangeDiagnostics, vscode.workspace.onDidChangeTextDocument],
      async () => {
        const list = await vscode.commands.executeCommand<vscode.CompletionList>(
          'vscode.executeCompletionItemProvider',
          doc.uri,
          position,
        );
        const names = list.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
        return names.some((n) => n.includes('disabled')) ? names : undefined;
      },
    );
    assert.ok(
      labels.some((n) => n.includes('center')),
      labels.join(', '),
    );
    // Choices of this input only: no node class is offered as a value of "crop".
    assert.ok(!labels.some((n) => n.includes('EmptyImage')), labels.join(', '));
  });

  test("hover on a class_type value shows the node's description", async function () {
    this.timeout(180_000);
    const uri = workspaceFile('hover.api.json');
    const text = '{\n  "1": { "class_type": "ImageScale", "inputs": {} }\n}\n';
    await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const position = doc.positionAt(text.indexOf('ImageScale') + 3);
    const said = await until(
      "a hover with ImageScale's description",
      [vscode.languages.onDidChangeDiagnostics, vscode.workspace.onDidChangeTextDocument],
      async () => {
        const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
          'vscode.executeHoverProvider',
          doc.uri,
          position,
        );
        const all = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
        return all.includes('Resizes the images') ? all : undefined;
      },
    );
    assert.match(said, /Upscale Image/, 'the display name is not shown');
  });

  test('the code action inserts "$schema" as the first member of a plain *.json API-format workflow, and is not offered on other JSON', async function () {
    this.timeout(180_000);
    const title = 'Add the workflow schema ($schema)';
    const uri = workspaceFile('x.json');
    await vscode.workspace.fs.writeFile(uri, Buffer.from(MISMATCH));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const action = await until(
      `a code action "${title}"`,
      [vscode.languages.onDidChangeDiagnostics, vscode.workspace.onDidChangeTextDocument],
      async () => {
        const actions = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
          'vscode.executeCodeActionProvider',
          doc.uri,
          new vscode.Range(1, 4, 1, 4),
        );
        return actions.find((a): a is vscode.CodeAction => a.title === title && 'edit' in a && a.edit !== undefined);
      },
    );
    assert.ok(await vscode.workspace.applyEdit(action.edit!), 'the edit was not applied');
    // The text, not JSON.parse: a parsed object lists integer-like keys ("1") before "$schema" whatever the order.
    assert.match(
      doc.getText(),
      /^\{\n {2}"\$schema": "comfy-workflow-schema:\/\/schemas\/api-format\.json",\n {2}"1": \{/,
    );
    assert.deepEqual(Object.keys(JSON.parse(doc.getText()) as object).sort(), ['$schema', '1', '2', '3']);
    await doc.save();
    // Applied once: no second offer on the file that has a $schema now.
    const after = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
      'vscode.executeCodeActionProvider',
      doc.uri,
      new vscode.Range(1, 4, 1, 4),
    );
    assert.ok(!after.some((a) => a.title === title), 'offered again on a file with $schema');

    const other = workspaceFile('not-a-workflow.json');
    await vscode.workspace.fs.writeFile(
      other,
      Buffer.from('{\n  "name": "x",\n  "class_type": "EmptyImage",\n  "version": 1\n}\n'),
    );
    const otherDoc = await vscode.workspace.openTextDocument(other);
    await vscode.window.showTextDocument(otherDoc);
    const offered = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>(
      'vscode.executeCodeActionProvider',
      otherDoc.uri,
      new vscode.Range(1, 4, 1, 4),
    );
    assert.ok(!offered.some((a) => a.title === title), JSON.stringify(offered.map((a) => a.title)));
  });

  test('with node definitions unknown (a dead engine URL), a mismatched workflow gets no Comfy Cloud diagnostic and the status says why', async function () {
    this.timeout(180_000);
    // Not mismatch.api.json: the refused submit above left its own Comfy Cloud entries (the server's words) there.
    const uri = workspaceFile('unknown.api.json');
    await vscode.workspace.fs.writeFile(uri, Buffer.from(MISMATCH));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const ours = (): vscode.Diagnostic[] =>
      vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Comfy Cloud');
    // With the emulator's definitions the mismatch is flagged (so the quiet below is the unknown definitions' doing).
    await until(
      'the mismatch flagged with known definitions',
      [vscode.languages.onDidChangeDiagnostics],
      () => ours().length > 0,
    );
    // A loopback port that was free a moment ago: nothing listens there.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const config = vscode.workspace.getConfiguration('comfyCloud');
    try {
      await config.update('nodeDefinitionsUrl', `http://127.0.0.1:${deadPort}`, vscode.ConfigurationTarget.Global);
      const result = await vscode.commands.executeCommand<{
        classes?: number;
        error?: string;
        status: string;
        statusDetail?: string;
        statusCommand?: string;
        statusWarning?: boolean;
      }>('comfyCloud.refreshNodeDefinitions');
      assert.ok(result?.error && result.classes === undefined, JSON.stringify(result));
      // What is true, and the way on: not loaded, Load (a warning here: fetching them failed).
      assert.equal(result.status, 'Node definitions: not loaded', JSON.stringify(result));
      assert.equal(result.statusCommand, 'Load');
      assert.equal(result.statusWarning, true);
      assert.ok(
        result.statusDetail && result.statusDetail === result.error,
        `the status does not say why: ${JSON.stringify(result)}`,
      );
      // The refresh re-checked the open workflows before returning: the earlier diagnostic is gone, none replaced it.
      assert.deepEqual(
        ours().map((d) => d.message),
        [],
      );
    } finally {
      await config.update('nodeDefinitionsUrl', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
