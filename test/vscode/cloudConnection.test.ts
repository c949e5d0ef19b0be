// A cloud connection inside a real VS Code extension host, its address a loopback port nothing listens on: without an
// API key, Submit sends nothing and offers Set API Key, and the status bar's tooltip says the key is not set; with a
// key, the failure to reach it points to the network and VS Code's proxy setting, not to a server to start or to
// comfyCloud.baseUrl.
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import * as vscode from 'vscode';
import { activateExtension, workspaceFile } from './workspace';
import { until as untilEvent } from './until';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { SubmitResult } from '../../src/extension/workflow/submit';

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');

suite('A cloud connection: its API key and its first failure, in a real VS Code extension host', () => {
  let extension: ComfyCloudApi;
  let port: number;
  const notices: { message: string; actions: string[] }[] = [];
  let sub: vscode.Disposable | undefined;

  const until = <T>(what: string, check: () => T | undefined | false): Promise<T> =>
    untilEvent(
      () => `${what} (status bar: ${extension.status.item.text}; ${String(extension.status.item.tooltip)})`,
      [extension.status.onDidChange, extension.display.onDidShow],
      check,
    );
  const submit = () =>
    vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', workspaceFile('invert.json'));

  suiteSetup(async () => {
    extension = await activateExtension();
    sub = extension.display.onDidShow((n) => notices.push(n));
    port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as net.AddressInfo;
        server.close(() => resolve(free));
      });
    });
    await config().update(
      'connections',
      [{ name: 'Cloud test', surface: 'cloud', baseUrl: `http://127.0.0.1:${port}` }],
      vscode.ConfigurationTarget.Global,
    );
    await config().update('activeConnection', 'Cloud test', vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('comfyCloud.clearApiKey');
  });

  suiteTeardown(async () => {
    sub?.dispose();
    await vscode.commands.executeCommand('comfyCloud.clearApiKey');
    await config().update('connections', undefined, vscode.ConfigurationTarget.Global);
    await config().update('activeConnection', undefined, vscode.ConfigurationTarget.Global);
  });

  test('without a key: the tooltip says "API key: not set"; Submit sends nothing and offers Set API Key', async () => {
    await until('noKey', () => extension.status.readiness === 'noKey');
    assert.match(String(extension.status.item.tooltip), /API key: not set/);
    const from = notices.length;
    const result = await submit();
    assert.equal(result?.status, 'refused', JSON.stringify(result));
    assert.equal(result.error?.code, 'no_api_key');
    const offer = await until('the offer', () => notices.slice(from).find((n) => n.actions.includes('Set API Key')));
    assert.match(offer.message, /the connection "Cloud test" needs an API key, and none is set: nothing was sent/);
  });

  test('with a key: "API key: set"; a server not reached points to the network and the proxy setting', async () => {
    assert.equal(await vscode.commands.executeCommand<boolean>('comfyCloud.setApiKey', 'cloud-test-key'), true);
    await until('ready', () => extension.status.readiness === 'ready');
    assert.match(String(extension.status.item.tooltip), /API key: set/);
    const from = notices.length;
    const result = await submit();
    assert.equal(result?.status, 'error', JSON.stringify(result));
    const failure = await until('the failure', () =>
      notices.slice(from).find((n) => /nothing was sent/.test(n.message)),
    );
    assert.match(
      failure.message,
      /No network, or a proxy in the way\? VS Code reaches the internet through the setting http\.proxy/,
    );
    assert.doesNotMatch(failure.message, /is the server running|comfyCloud\.baseUrl/);
    assert.deepEqual(failure.actions, ['Open Settings']);
  });
});
