// The Models view inside a real VS Code extension host, against the emulator's router: the
// whole catalog (about 250 entries) arrives through several pages, shown as providers → models in the order served;
// the filter narrows it; the billing note is in the tooltip.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until } from './until';
import { RouterClient } from '../../src/core/router';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { ModelNode } from '../../src/extension/models/modelsView';

const ROUTER_KEY = 'test-router-key';
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite('Models view in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    assert.ok(emu.routerUrl, 'the emulator serves no router');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('routerUrl', emu.routerUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    await vscode.commands.executeCommand('comfyCloud.models.focus');
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('comfyCloud.filterModels', '');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('routerUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('the whole catalog loads through several pages, shown as providers → models in the order served', async function () {
    this.timeout(180_000);
    const models = extension.modelsView();
    await models.storeKey(new URL(emu.routerUrl!).origin, ROUTER_KEY);
    await vscode.commands.executeCommand('comfyCloud.refreshModels');
    await until(
      () => `state ${models.state}, ${models.loaded.length} loaded`,
      [models.onDidChange],
      () => models.state === 'done' || models.state === 'failed',
    );
    assert.equal(models.state, 'done');

    let pages = 0;
    const served: string[] = [];
    for await (const entry of new RouterClient({ baseUrl: emu.routerUrl!, apiKey: ROUTER_KEY }).models({
      onPage: () => pages++,
    }))
      served.push(entry.id);
    assert.ok(pages > 1 && served.length >= 200, `${pages} pages, ${served.length} entries`);
    assert.deepEqual(
      models.loaded.map((e) => e.id),
      served,
    );

    const providers = models.getChildren() as ModelNode[];
    const firstSeen = [...new Set(served.map((id) => id.split('/')[0]!))];
    assert.deepEqual(
      providers.map((p) => (p.kind === 'provider' ? p.group.provider : '')),
      firstSeen,
    );
    const shown = providers.flatMap((p) =>
      (models.getChildren(p) as ModelNode[]).map((m) => (m.kind === 'model' ? m.entry.id : '')),
    );
    assert.deepEqual([...shown].sort(), [...served].sort());
  });

  test('the filter narrows the view to the ids containing its text; the billing note is in the tooltip', async () => {
    const models = extension.modelsView();
    await vscode.commands.executeCommand('comfyCloud.filterModels', 'emulator/ech');
    const providers = models.getChildren() as ModelNode[];
    assert.equal(providers.length, 1);
    const children = models.getChildren(providers[0]) as ModelNode[];
    assert.deepEqual(
      children.map((m) => (m.kind === 'model' ? m.entry.id : '')),
      ['emulator/echo'],
    );
    const tooltip = models.getTreeItem(children[0]).tooltip as vscode.MarkdownString;
    assert.match(tooltip.value, /content\\: no/);
    await vscode.commands.executeCommand('comfyCloud.filterModels', '');
    assert.ok((models.getChildren() as ModelNode[]).length > 1);
  });
});
