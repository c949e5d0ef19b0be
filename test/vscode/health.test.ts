// The status bar's health inside a real VS Code extension host, against an emulator started here that first answers
// nothing (every connection reset, the probe's too): the item says "unreachable". Then every route answers again but
// the probe, which stays unanswered: the item turns back to reachable on the first answer of any request of the
// connection (here the Jobs view's listing), which no probe could do.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite('Connection health in the status bar in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;

  /** A state of the status bar, waited for on its changes (until.ts). */
  const until = (what: string, check: () => boolean): Promise<boolean> =>
    untilEvent(
      () => `${what} (status bar: ${extension.status.item.text}; ${JSON.stringify(extension.status.currentHealth)})`,
      [extension.status.onDidChange],
      check,
    );

  suiteSetup(async () => {
    // Every connection is reset: no answer, as a server that is away.
    emu = await startEmulator({
      port: 0,
      faults: {
        rules: [
          { on: 'health', kind: 'reset' },
          { on: 'any', kind: 'reset' },
        ],
      },
    });
    extension = await activateExtension();
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('the first answer of any request of the connection turns an "unreachable" status bar back to reachable, before the next probe', async () => {
    await until(
      'the probe says the emulator is unreachable',
      () => extension.status.currentHealth?.state === 'unreachable',
    );
    assert.match(String(extension.status.item.tooltip), /Health: unreachable/);
    // The text says what it is and how it is, not "Default" on an amber ground.
    assert.match(extension.status.item.text, /^\$\(cloud\) Comfy Cloud: Default — unreachable$/);
    // The server is back, but its probe still gets no answer: only a request's answer can show it reachable.
    emu.setFaults({ rules: [{ on: 'health', kind: 'reset' }] });
    // One request of the connection: the Jobs view's Refresh reads the server's listing.
    await vscode.commands.executeCommand('comfyCloud.refreshJobs');
    assert.ok(
      emu.requests.some((r) => r.method === 'GET' && r.path.split('?')[0] === '/api/v2/jobs'),
      `the refresh made no request of the connection: ${emu.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`,
    );
    await until('the status bar says reachable', () => extension.status.currentHealth?.state === 'ok');
    assert.match(String(extension.status.item.tooltip), /Health: reachable \(last request: 200\)/);
    assert.equal(extension.status.item.backgroundColor, undefined, 'the item still has the warning background');
    assert.match(extension.status.item.text, /^\$\(cloud\) Comfy Cloud: Default$/);
  });
});
