// First-run guidance and connection polish inside a real VS Code extension host: the end-of-job
// notification honours comfyCloud.notifyOnJobEnd; "Open Sample Workflow" opens an untitled document that "Submit
// Workflow" accepts; the welcome views' context key follows the connection state; a "Local emulator" connection
// whose emulator is gone is shown stale with a one-click start. Every setting and key changed here is restored.
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobEndDecision } from '../../src/extension/jobs/notifications';

/** How long a state may take to be reached (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
const KEYS = ['baseUrl', 'connections', 'activeConnection', 'notifyOnJobEnd'];

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
interface SubmitResult {
  jobId?: string;
  status: string;
  files: string[];
}

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

suite('First-run guidance and connection polish in a real VS Code extension host', () => {
  let extension: ComfyCloudApi;
  let emu: Emulator;
  let dead: string;
  const saved: Record<string, unknown> = {};
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');
  const set = (key: string, value: unknown): Thenable<void> =>
    config().update(key, value, vscode.ConfigurationTarget.Global);

  /** A state, waited for on the events that change it (until.ts). */
  const until = (what: string, check: () => boolean): Promise<boolean> =>
    untilEvent(
      () => `${what} (state ${extension.welcome.state}, status bar: ${extension.status.item.text})`,
      [extension.status.onDidChange],
      check,
      DEADLINE_MS,
    );

  /** Runs Submit Workflow and returns its result with the notifier's decisions made meanwhile. */
  async function submitAndWatch(arg?: vscode.Uri): Promise<{ result: SubmitResult; decisions: JobEndDecision[] }> {
    const decisions: JobEndDecision[] = [];
    const sub = extension.notifier.onDidDecide((d) => decisions.push(d));
    try {
      const result = (await vscode.commands.executeCommand('comfyCloud.submitWorkflow', arg)) as SubmitResult;
      return { result, decisions };
    } finally {
      sub.dispose();
    }
  }

  suiteSetup(async () => {
    extension = await activateExtension();
    assert.ok(
      extension.notifier && extension.welcome,
      'activate() did not return the notifier and the welcome context',
    );
    for (const key of KEYS) saved[key] = config().inspect(key)?.globalValue;
    emu = await startEmulator({ port: 0, nodeDelayMs: 5 });
    dead = `http://127.0.0.1:${await deadPort()}`;
    await set('connections', undefined);
    await set('activeConnection', undefined);
    await set('baseUrl', emu.baseUrl);
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await extension?.emulator.stop();
    for (const key of KEYS) await set(key, saved[key]);
    await emu?.close();
  });

  test('the end of a job submitted here is notified when comfyCloud.notifyOnJobEnd is on (the default), and not when off', async () => {
    assert.equal(config().inspect('notifyOnJobEnd')?.defaultValue, true);
    await set('notifyOnJobEnd', false);
    const off = await submitAndWatch(workspaceFile('invert.json'));
    assert.equal(off.result.status, 'succeeded');
    assert.deepEqual(off.decisions, [{ jobId: off.result.jobId, status: 'succeeded', notified: false }]);
    await set('notifyOnJobEnd', undefined);
    const on = await submitAndWatch(workspaceFile('invert.json'));
    assert.equal(on.result.status, 'succeeded');
    assert.deepEqual(on.decisions, [
      {
        jobId: on.result.jobId,
        status: 'succeeded',
        notified: true,
        // Named by its workflow, as every notice names a job.
        message: `Comfy Cloud: invert.json (job ${on.result.jobId!.slice(0, 8)}) succeeded — 1 output saved.`,
      },
    ]);
  });

  test('Open Sample Workflow opens the bundled sample as an untitled JSON editor that Submit Workflow accepts as it is', async () => {
    const uri = (await vscode.commands.executeCommand('comfyCloud.openSample')) as vscode.Uri | undefined;
    assert.ok(uri, 'Open Sample Workflow returned no document');
    assert.equal(uri.scheme, 'untitled');
    const editor = vscode.window.activeTextEditor;
    assert.equal(editor?.document.uri.toString(), uri.toString(), 'the sample is not the active editor');
    assert.equal(editor.document.languageId, 'json');
    const workflow = JSON.parse(editor.document.getText()) as Record<string, { class_type: string }>;
    assert.ok(
      Object.values(workflow).some((n) => n.class_type === 'SaveImage'),
      'the sample has no SaveImage node',
    );
    const before = emu.requests.length;
    const { result } = await submitAndWatch();
    assert.equal(result.status, 'succeeded', JSON.stringify(result));
    assert.equal(result.files.length, 1);
    const posts = emu.requests.slice(before).filter((r) => r.method === 'POST' && r.path === '/api/v2/jobs');
    assert.equal(posts.length, 1, 'the sample was not submitted to the emulator');
  });

  test('the welcome context key follows the connection: noKey for a cloud connection without a key, ready with one, invalid for an unknown name', async () => {
    await until('ready on the configured default connection', () => extension.welcome.state === 'ready');
    await set('connections', [{ name: 'Guide cloud', surface: 'cloud', baseUrl: dead }]);
    await set('activeConnection', 'Guide cloud');
    await until('noKey on a cloud connection without a key', () => extension.welcome.state === 'noKey');
    assert.equal(await vscode.commands.executeCommand('comfyCloud.setApiKey', 'guide-test-key'), true);
    try {
      await until('ready once the key is stored', () => extension.welcome.state === 'ready');
    } finally {
      await vscode.commands.executeCommand('comfyCloud.clearApiKey');
    }
    await until('noKey again once the key is cleared', () => extension.welcome.state === 'noKey');
    await set('activeConnection', 'No such connection');
    await until('invalid for an unknown connection name', () => extension.welcome.state === 'invalid');
    await set('activeConnection', undefined);
    await set('connections', undefined);
    await until('ready on the default connection again', () => extension.welcome.state === 'ready');
  });

  test('nothing configured and nothing answering at the default address is "unconfigured"', async () => {
    await set('baseUrl', undefined);
    try {
      await until('unconfigured', () => extension.welcome.state === 'unconfigured');
    } finally {
      await set('baseUrl', emu.baseUrl);
    }
    await until('ready once a base URL is set', () => extension.welcome.state === 'ready');
  });

  test('a "Local emulator" connection whose emulator is gone shows stopped, and one click starts a new emulator', async () => {
    await extension.emulator.stop();
    // What a window reload leaves: the connection of the last session's emulator, whose port nothing serves now.
    await set('connections', [{ name: 'Local emulator', surface: 'emulator', baseUrl: dead }]);
    await set('activeConnection', 'Local emulator');
    await until('stale', () => extension.welcome.state === 'stale');
    const item = extension.status.item;
    assert.match(item.text, /Local emulator \(stopped\)/);
    assert.equal(item.command, 'comfyCloud.startEmulator');
    assert.match(
      item.accessibilityInformation?.label ?? '',
      /Local emulator, stopped: its local emulator is not running; no jobs running/,
    );
    const url = (await vscode.commands.executeCommand(String(item.command))) as string | undefined;
    assert.ok(url, 'Start Local Emulator did not return a base URL');
    await until(
      'ready on the new emulator',
      () => extension.welcome.state === 'ready' && extension.status.currentHealth?.state === 'ok',
    );
    assert.equal(extension.config.surface().baseUrl, url);
    assert.equal(item.command, 'comfyCloud.switchConnection');
    assert.match(
      item.accessibilityInformation?.label ?? '',
      /^Comfy Cloud connection Local emulator, reachable, no jobs running$/,
    );
    // The child dying (not only a reload) makes the connection stale again.
    await extension.emulator.stop();
    await until('stale again once the child stopped', () => extension.welcome.state === 'stale');
    await set('activeConnection', undefined);
    await set('connections', undefined);
  });
});
