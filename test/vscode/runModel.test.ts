// Run Model inside a real VS Code extension host, against the emulator's router: the echo
// model's native output opens in an editor; emulator/strict's 422 lands in Problems at the line of the bad field;
// emulator/solid-png's base64 PNG is found and previewed / saved; a 504 without Retry-After is collected with the
// SAME Idempotency-Key through the command's argument form; the router key never reaches a message.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until } from './until';
import { TEST_ROUTER_KEY, startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { ShownNotice } from '../../src/extension/platform/display';
import type { RunModelOutcome } from '../../src/extension/models/runModel';

const EXTENSION_ID = 'comfy-cloud.comfy-cloud';
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite('Run Model in a real VS Code extension host', () => {
  let emu: Emulator;

  suiteSetup(async () => {
    // The slow model finishes 500 ms after the router's deadline: the second call (collect) is answered before its own.
    emu = await startEmulator({ port: 0, router: { deadlineMs: 1500, slowMs: 2000 } });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('routerUrl', emu.routerUrl, vscode.ConfigurationTarget.Global);
    const extension = await activateExtension();
    await extension.modelsView().storeKey(new URL(emu.routerUrl!).origin, TEST_ROUTER_KEY);
  });

  teardown(() => emu.setFaults({ rules: [] }));

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('routerUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('Run Model sends the input without $schema and opens the native output of emulator/echo as JSON', async function () {
    this.timeout(180_000);
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content:
        '{\n  "$schema": "comfy-router-schema:/emulator/echo.json",\n  "big": 12345678901234567890,\n  "text": "hi"\n}\n',
    });
    await vscode.window.showTextDocument(doc);
    const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(outcome?.output, `no output: ${String(outcome?.error)}`);
    assert.equal(outcome.output.languageId, 'json');
    // An untitled document named after the model: the tab says what it is, Save proposes that name.
    assert.equal(outcome.output.uri.scheme, 'untitled');
    assert.match(outcome.output.uri.path, /emulator-echo-output-\d+\.json$/);
    const out = outcome.output.getText();
    assert.match(out, /12345678901234567890/);
    assert.doesNotMatch(out, /comfy-router-schema/);
  });

  test("Run Model and the model schemas use the router service's one client: the same client before and after two runs and a schema read", async function () {
    this.timeout(180_000);
    const extension = vscode.extensions.getExtension<ComfyCloudApi>(EXTENSION_ID)!.exports;
    const before = await extension.router().lease();
    assert.ok(before, 'no router client: the router URL or key is missing');
    before.release();
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: '{\n  "$schema": "comfy-router-schema:/emulator/echo.json",\n  "text": "again"\n}\n',
    });
    for (let i = 0; i < 2; i++) {
      const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
      assert.ok(outcome?.output, `no output: ${String(outcome?.error)}`);
    }
    const schema = await vscode.workspace.openTextDocument(
      vscode.Uri.parse('comfy-router-schema:/emulator/strict.json'),
    );
    assert.match(schema.getText(), /"steps"/);
    const after = await extension.router().lease();
    after?.release();
    assert.equal(after?.client, before.client);
    assert.equal(extension.router().openClients, 1);
  });

  test('a 422 from emulator/strict becomes a Problems entry at the line of the field its loc names', async function () {
    this.timeout(180_000);
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content:
        '{\n  "$schema": "comfy-router-schema:/emulator/strict.json",\n  "prompt": "a cat",\n  "steps": 500\n}\n',
    });
    await vscode.window.showTextDocument(doc);
    const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(outcome?.error, 'the strict model accepted steps 500');
    const ours = await until('a Comfy Cloud diagnostic', [vscode.languages.onDidChangeDiagnostics], () => {
      const found = vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'Comfy Cloud');
      return found.length > 0 ? found : undefined;
    });
    assert.ok(
      ours.some((d) => d.range.start.line === 3 && /steps/.test(d.message)),
      JSON.stringify(ours.map((d) => [d.range.start.line, d.message])),
    );
    // The entries belong to the text that was sent: an edit takes them away.
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, doc.lineAt(3).range, '  "steps": 20');
    assert.ok(await vscode.workspace.applyEdit(edit));
    await until('the Comfy Cloud diagnostics gone after the edit', [vscode.languages.onDidChangeDiagnostics], () =>
      vscode.languages.getDiagnostics(doc.uri).every((d) => d.source !== 'Comfy Cloud') ? true : undefined,
    );
  });

  const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

  test("images in the output: emulator/solid-png's base64 PNG is found, Preview writes a PNG file and opens it, Save writes it atomically", async function () {
    this.timeout(180_000);
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content:
        '{\n  "$schema": "comfy-router-schema:/emulator/solid-png.json",\n  "color": "#33aa55",\n  "width": 8,\n  "height": 6\n}\n',
    });
    await vscode.window.showTextDocument(doc);
    const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(outcome?.output, `no output: ${String(outcome?.error)}`);
    // The output document stays the bytes received (the base64 string in it), whatever was found.
    assert.match(outcome.output.getText(), /"b64_json":"iVBORw0KGgo/);
    assert.equal(outcome.images?.length, 1);
    const image = outcome.images[0]!;
    assert.ok(
      image.kind === 'base64' && image.format === 'png' && image.path.join('.') === 'data.0.b64_json',
      JSON.stringify(image.path),
    );

    const preview = await outcome.previewImage!(0);
    assert.ok(preview && preview.scheme === 'file', String(preview));
    assert.equal(path.basename(preview.fsPath), 'emulator-solid-png-1.png');
    assert.ok(fs.readFileSync(preview.fsPath).subarray(0, 8).equals(PNG_SIGNATURE), 'the preview file is a PNG');
    const opened = await until(
      () => `a tab showing ${preview.fsPath}`,
      [vscode.window.tabGroups.onDidChangeTabs as vscode.Event<unknown>],
      () =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .find((t) => (t.input as { uri?: vscode.Uri } | undefined)?.uri?.fsPath === preview.fsPath),
    );
    assert.ok(opened.input instanceof vscode.TabInputCustom, 'opened in the image preview (a custom editor)');

    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'run-model-save-'));
    const target = vscode.Uri.file(path.join(folder, 'cat.png'));
    const saved = await outcome.saveImage!(0, target);
    assert.equal(saved?.fsPath, target.fsPath);
    assert.ok(fs.readFileSync(target.fsPath).equals(image.bytes));
    assert.deepEqual(fs.readdirSync(folder), ['cat.png'], 'no temporary file is left beside it');
  });

  test('an output without images offers none', async function () {
    this.timeout(180_000);
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: '{"$schema": "comfy-router-schema:/emulator/echo.json", "prompt": "a cat"}',
    });
    const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(outcome?.output, String(outcome?.error));
    assert.deepEqual(outcome.images, []);
  });

  test('Collect Result: a 504 without Retry-After reports the key; running again with it (comfyCloud.runModel <uri> <key>) gets the output, the SAME Idempotency-Key sent twice', async function () {
    this.timeout(180_000);
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: '{\n  "$schema": "comfy-router-schema:/emulator/slow/no-retry.json",\n  "prompt": "collect me"\n}\n',
    });
    await vscode.window.showTextDocument(doc);
    const before = emu.routerRequests.length;
    const first = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(first?.error, 'the slow model answered within the deadline');
    const key = first.idempotencyKey;
    assert.ok(key, `no key reported: ${first.message}`);
    assert.ok(first.message?.includes(key), first.message);
    assert.match(first.message!, /deadline_exceeded/);

    const second = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri, key);
    assert.ok(second?.output, `not collected: ${second?.message}`);
    assert.match(second.output.getText(), /"generation":/);
    assert.match(second.output.getText(), /collect me/);
    const posts = emu.routerRequests
      .slice(before)
      .filter((r) => r.method === 'POST' && r.path.includes('/emulator/slow/no-retry'));
    assert.deepEqual(
      posts.map((r) => r.headers['idempotency-key']),
      [key, key],
    );
  });

  test('a rate_limited answer is retried by Run Model (the retry told in its progress) and then gives the output', async function () {
    this.timeout(180_000);
    emu.setFaults({ rules: ['router:invoke:bucket=rate_limited:retryAfter=0:times=1'] });
    const before = emu.routerRequests.length;
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: '{"$schema": "comfy-router-schema:/emulator/echo.json", "n": 1}',
    });
    const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(outcome?.output, String(outcome?.error));
    assert.equal(emu.routerRequests.slice(before).filter((r) => r.method === 'POST').length, 2);
    assert.deepEqual(
      outcome.retries,
      ['rate_limited: retrying in 0 s (attempt 2)'],
      'the progress message told for the retry',
    );
  });

  test('the router key is redacted: a refusal whose detail echoes it is shown without it', async function () {
    this.timeout(180_000);
    emu.setFaults({
      rules: [
        {
          on: 'router:invoke',
          kind: 'bucket',
          bucket: 'forbidden',
          message: `the key ${TEST_ROUTER_KEY} may not run this model`,
          times: 1,
        },
      ],
    });
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: '{"$schema": "comfy-router-schema:/emulator/echo.json"}',
    });
    const outcome = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
    assert.ok(outcome?.error);
    assert.match(outcome.message ?? '', /forbidden/);
    assert.match(outcome.message ?? '', /«redacted»/);
    assert.ok(!(outcome.message ?? '').includes(TEST_ROUTER_KEY), outcome.message);
  });

  test('a refusal says "Comfy Cloud:" and is taken down when the model runs again (it does not stay beside the success)', async function () {
    this.timeout(180_000);
    const extension = vscode.extensions.getExtension<ComfyCloudApi>(EXTENSION_ID)!.exports;
    const shown: ShownNotice[] = [];
    const sub = extension.display.onDidShow((n) => shown.push(n));
    try {
      emu.setFaults({
        rules: [
          {
            on: 'router:invoke',
            kind: 'bucket',
            bucket: 'forbidden',
            message: 'this key may not run this model',
            times: 1,
          },
        ],
      });
      const doc = await vscode.workspace.openTextDocument({
        language: 'json',
        content: '{"$schema": "comfy-router-schema:/emulator/echo.json", "text": "refused, then run"}',
      });
      const refused = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
      assert.ok(refused?.error, 'the run was not refused');
      const notice = shown.find((n) => /forbidden/.test(n.message));
      assert.ok(notice, `no refusal shown: ${JSON.stringify(shown)}`);
      assert.match(notice.message, /^Comfy Cloud: /);
      assert.ok(notice.closed, 'the refusal is a toast that cannot be taken down');
      let closed = false;
      void notice.closed.then(() => (closed = true));
      const ran = await vscode.commands.executeCommand<RunModelOutcome>('comfyCloud.runModel', doc.uri);
      assert.ok(ran?.output, `the second run failed: ${String(ran?.error)}`);
      await notice.closed;
      assert.ok(closed);
      for (const n of shown) assert.match(n.message, /^Comfy Cloud: /);
    } finally {
      sub.dispose();
    }
  });
});
