// Connections and the status bar inside a real VS Code extension host: "Start Local
// Emulator" starts the bundled emulator as the extension's child process and makes it the active connection; a
// workflow then runs on it; switching back to the default connection works; starting again stops the running one,
// Stop Local Emulator stops it, and disposing lets go of it (the next window holds it). Restarting it keeps its jobs (its data folder in the extension's storage) and its port when that port is free.
// The user settings changed here are restored at the end (the suites after this one use them).
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import type { ComfyCloudApi } from '../../src/extension/api';
import { askToStop, holdEmulator, readRecord } from '../../src/extension/connection/emulatorOwner';
import { isProcessAlive as isAlive } from '../../src/core/state';

/** How long the child or a job may take to reach a state (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail

suite('Connections and the status bar in a real VS Code extension host', () => {
  let extension: ComfyCloudApi;
  const saved: Record<string, unknown> = {};
  const KEYS = ['connections', 'activeConnection'];

  /** A state, waited for on the events that change it (until.ts). */
  const until = (what: string, check: () => boolean): Promise<boolean> =>
    untilEvent(
      () => `${what} (status bar: ${extension.status.item.text})`,
      [extension.status.onDidChange],
      check,
      DEADLINE_MS,
    );

  suiteSetup(async () => {
    extension = await activateExtension();
    assert.ok(
      extension?.status && extension.emulator,
      'activate() did not return the extension with its status and emulator',
    );
    const config = vscode.workspace.getConfiguration('comfyCloud');
    for (const key of KEYS) saved[key] = config.inspect(key)?.globalValue;
  });

  suiteTeardown(async () => {
    await extension?.emulator.stop();
    const config = vscode.workspace.getConfiguration('comfyCloud');
    for (const key of KEYS) await config.update(key, saved[key], vscode.ConfigurationTarget.Global);
  });

  test('the status bar shows the default connection (comfyCloud.baseUrl) when none is chosen, with an accessible label', async () => {
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('activeConnection', undefined, vscode.ConfigurationTarget.Global);
    assert.equal(extension.status.connectionName, 'Default');
    assert.match(extension.status.item.text, /Default/);
    assert.match(extension.status.item.accessibilityInformation?.label ?? '', /^Comfy Cloud connection Default/);
    assert.equal(extension.status.item.command, 'comfyCloud.switchConnection');
  });

  let emulatorUrl: string;
  /** The job the emulator ran before any restart. */
  let firstJobId: string;
  test('Start Local Emulator starts a child emulator, makes "Local emulator" active, and its health probe answers ok', async () => {
    const url = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string | undefined;
    assert.ok(url, 'Start Local Emulator did not return a base URL (see the log)');
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    emulatorUrl = url;
    const pid = extension.emulator.pid;
    assert.ok(pid && isAlive(pid), 'no child emulator runs');
    assert.notEqual(pid, process.pid);
    await until(
      'the active connection is "Local emulator"',
      () => extension.status.connectionName === 'Local emulator',
    );
    assert.match(extension.status.item.text, /Local emulator/);
    const connections = vscode.workspace
      .getConfiguration('comfyCloud')
      .inspect<{ name: string; baseUrl?: string }[]>('connections')?.globalValue;
    assert.deepEqual(
      connections?.find((c) => c.name === 'Local emulator'),
      { name: 'Local emulator', surface: 'emulator', baseUrl: url },
    );
    await until('the emulator is healthy', () => extension.status.currentHealth?.state === 'ok');
    assert.match(String(extension.status.item.tooltip), /Health: reachable \(health probe: 200\)/);
    const health = await fetch(`${url}/api/v2/health`);
    assert.equal(health.status, 200);
  });

  test('a workflow submitted then runs on the emulator, with a spinner and a count in the status bar while it runs', async () => {
    const seen: string[] = [];
    // Registered after the status item's listener: each change is seen once the item has shown it.
    const sub = extension.jobs.onDidChangeJob(({ baseUrl, job }) => {
      if (baseUrl === emulatorUrl && job.status !== 'succeeded') seen.push(extension.status.item.text);
    });
    let result: { jobId?: string; status: string };
    try {
      result = (await vscode.commands.executeCommand('comfyCloud.submitWorkflow', workspaceFile('invert.json'))) as {
        jobId?: string;
        status: string;
      };
    } finally {
      sub.dispose();
    }
    assert.equal(result.status, 'succeeded');
    assert.ok(seen.length > 0, 'no running state was announced');
    assert.ok(
      seen.every((text) => /^\$\(sync~spin\) Local emulator \d+$/.test(text)),
      `status bar while running: ${JSON.stringify(seen)}`,
    );
    const job = (await (await fetch(`${emulatorUrl}/api/v2/jobs/${result.jobId}`)).json()) as {
      id: string;
      status: string;
    };
    assert.equal(job.id, result.jobId, 'the job is not on the child emulator');
    firstJobId = job.id;
    await until('no job runs', () => extension.status.runningCount === 0);
    assert.doesNotMatch(extension.status.item.text, /sync~spin/);
  });

  test('switching back to the default connection changes the base URL everything uses', async () => {
    assert.equal(await vscode.commands.executeCommand('comfyCloud.switchConnection', ''), true);
    await until('the active connection is Default', () => extension.status.connectionName === 'Default');
    assert.notEqual(extension.config.surface().baseUrl, emulatorUrl);
    assert.equal(await vscode.commands.executeCommand('comfyCloud.switchConnection', 'No such connection'), false);
    assert.equal(extension.status.connectionName, 'Default');
    assert.equal(await vscode.commands.executeCommand('comfyCloud.switchConnection', 'Local emulator'), true);
    await until(
      'the active connection is "Local emulator" again',
      () => extension.status.connectionName === 'Local emulator',
    );
    assert.equal(extension.config.surface().baseUrl, emulatorUrl);
  });

  /** The job `jobId` under Recent as succeeded in the Jobs view, waited for on the view's and the jobs' events. */
  async function listedAsSucceeded(jobId: string): Promise<void> {
    const provider = extension.jobsView.provider;
    await untilEvent(
      `job ${jobId} under Recent as succeeded in the Jobs view`,
      [provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      async () =>
        (await provider.getChildren({ kind: 'group', group: 'recent' })).some(
          (n) =>
            provider.entryOf(n)?.jobId === jobId &&
            /^job:succeeded:/.test(String(provider.getTreeItem(n).contextValue)),
        ),
      DEADLINE_MS,
    );
  }

  test('restarting the built-in emulator gets the same port back and keeps its jobs: the Jobs view lists the job again', async () => {
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
    const first = extension.emulator.pid!;
    const url = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string | undefined;
    assert.ok(url, 'the restart did not return a base URL (see the log)');
    assert.notEqual(extension.emulator.pid, first, 'no new child');
    assert.equal(url, emulatorUrl, 'the restarted emulator is on another port');
    const answer = await fetch(`${url}/api/v2/jobs/${firstJobId}`);
    assert.equal(answer.status, 200, 'the restarted emulator forgot the job');
    const job = (await answer.json()) as { status: string; outputs: { url: string }[] };
    assert.equal(job.status, 'succeeded');
    assert.equal(job.outputs.length, 1);
    assert.equal((await fetch(job.outputs[0]!.url)).status, 200, "its output's bytes are gone");
    await until(
      'the connection is still "Local emulator" at the same URL',
      () => extension.status.connectionName === 'Local emulator' && extension.config.surface().baseUrl === emulatorUrl,
    );
    await listedAsSucceeded(firstJobId);
  });

  test('a Stable Diffusion workflow on the emulator is refused with one sentence: what it runs, each class once, use a cloud connection', async () => {
    const result = (await vscode.commands.executeCommand(
      'comfyCloud.submitWorkflow',
      workspaceFile('stable-diffusion.json'),
    )) as { status: string; error?: { code: string; message: string } };
    assert.notEqual(result.status, 'succeeded');
    const message = result.error?.message ?? '';
    assert.match(
      message,
      /^the local emulator runs only its demo nodes \(EmptyImage, ImageInvert, [^)]*\), not [^;]+; use a cloud connection for this workflow$/,
    );
    for (const c of ['KSampler', 'CheckpointLoaderSimple', 'EmptyLatentImage', 'CLIPTextEncode', 'VAEDecode']) {
      assert.equal(message.split(new RegExp(`\\b${c}\\b`)).length - 1, 1, `${c} is named once: ${message}`);
    }
    assert.doesNotMatch(message, /more\)|this service runs|node \d/, 'no per-node list, no cut');
  });

  test('when another program holds the remembered port, the emulator starts on a free one, with its jobs, and remembers that port', async () => {
    await extension.emulator.stop();
    const port = Number(new URL(emulatorUrl).port);
    // It hangs up at once: the status bar's health probe of the stopped emulator's URL must not keep it open.
    const blocker = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) =>
      blocker.once('error', reject).listen(port, '127.0.0.1', () => resolve()),
    );
    try {
      const url = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string | undefined;
      assert.ok(url, 'the emulator did not start beside the program holding its port (see the log)');
      assert.notEqual(url, emulatorUrl);
      assert.equal((await fetch(`${url}/api/v2/jobs/${firstJobId}`)).status, 200, 'the job is gone');
      await until('the connection follows the new port', () => extension.config.surface().baseUrl === url);
      emulatorUrl = url;
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    const again = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string | undefined;
    assert.equal(again, emulatorUrl, 'the port taken last was not remembered');
  });

  test('comfyCloud.emulator.nodeDelayMs starts the local emulator with that delay per node (jobs slow enough to watch)', async () => {
    const config = vscode.workspace.getConfiguration('comfyCloud');
    await config.update('emulator.nodeDelayMs', 400, vscode.ConfigurationTarget.Global);
    try {
      const url = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string | undefined;
      assert.ok(url, 'the emulator did not start with a node delay (see the log)');
      const args = extension.emulator.args;
      assert.equal(args[args.indexOf('--node-delay-ms') + 1], '400', args.join(' '));
      assert.equal((await fetch(`${url}/api/v2/jobs?limit=1`)).status, 200);
    } finally {
      await config.update('emulator.nodeDelayMs', undefined, vscode.ConfigurationTarget.Global);
    }
    const plain = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string | undefined;
    assert.ok(plain);
    assert.ok(!extension.emulator.args.includes('--node-delay-ms'), 'the delay stayed after the setting went');
  });

  test('Stop Local Emulator stops it (whichever window started it): its record gone, the connection shown stopped', async () => {
    const pid = extension.emulator.pid!;
    assert.ok(isAlive(pid));
    const file = extension.emulator.recordFile!;
    assert.equal((await readRecord(file))?.pid, pid, 'the running emulator is not recorded for the other windows');
    assert.equal(await vscode.commands.executeCommand('comfyCloud.stopEmulator'), true);
    assert.equal(isAlive(pid), false, 'the emulator still runs');
    assert.equal(await readRecord(file), undefined, 'the record of a stopped emulator is left');
    assert.equal(extension.emulator.baseUrl, undefined);
    await until('the status bar says the connection is stopped', () => extension.status.stale);
    assert.equal(await vscode.commands.executeCommand('comfyCloud.stopEmulator'), false, 'stopped twice');
    assert.ok(await vscode.commands.executeCommand('comfyCloud.startEmulator'));
  });

  test('starting the emulator again stops the previous one; disposing (a window reload, the window closed) lets go of it without stopping it: the next window holds it from its record, and it stops when asked', async () => {
    const first = extension.emulator.pid!;
    const url = (await vscode.commands.executeCommand('comfyCloud.startEmulator')) as string;
    assert.ok(url);
    const second = extension.emulator.pid!;
    assert.notEqual(second, first);
    assert.equal(isAlive(first), false, 'the first emulator still runs');
    await until('the connection follows the new port', () => extension.config.surface().baseUrl === url);
    const record = await readRecord(extension.emulator.recordFile!);
    assert.equal(record?.pid, second);
    assert.equal(record?.baseUrl, url);
    extension.emulator.dispose();
    assert.equal(extension.emulator.baseUrl, undefined);
    // The next window (after a reload) holds it where the record says: the same process, its jobs still answered.
    const next = await holdEmulator(record.baseUrl, record.token, DEADLINE_MS);
    assert.equal(next.pid, second);
    assert.ok(isAlive(second), 'disposing stopped the emulator');
    assert.equal((await fetch(`${url}/api/v2/jobs?limit=1`)).status, 200);
    assert.equal(await askToStop(record.baseUrl, record.token, DEADLINE_MS), true);
    await next.ended;
    await extension.emulator.whenExited();
    assert.equal(isAlive(second), false, 'the emulator runs on after it was asked to stop');
  });
});
