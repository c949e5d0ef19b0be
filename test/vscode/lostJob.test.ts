// A job its server no longer knows, inside a real VS Code extension host: the emulator is stopped while a job runs
// (held at a node) and a new one, which never heard of the job, is started on the same port. The job becomes lost: out
// of Running, out of the badge and the status bar's count, with Re-run and Remove from List but no Cancel, in the Jobs
// view and in the monitor; the submission's toast is a sentence, not a bare not_found. And the counts are the active
// connection's: a job still running on another server is counted by neither the badge nor the status bar.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobsNode } from '../../src/extension/jobs/jobsView';
import type { MonitorPanel } from '../../src/extension/monitor/monitorPanel';
import type { SubmitResult } from '../../src/extension/workflow/submit';

/** How long a job may take to show a state here (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite('A job the server no longer knows (lost), and counts of the active connection', () => {
  let emu: Emulator | undefined;
  let extension: ComfyCloudApi;

  /** A state, waited for on the events that change it (until.ts). */
  const until = <T>(
    what: string | (() => string),
    check: () => Promise<T | undefined | false> | T | undefined | false,
  ): Promise<T> =>
    untilEvent(
      what,
      [
        extension.jobsView.provider.onDidChangeTreeData,
        extension.jobs.onDidChangeJob,
        extension.jobsView.provider.onDidChangeBadge,
        extension.status.onDidChange,
      ],
      check,
      DEADLINE_MS,
    );

  /** The job nodes of a group, with their tree items. */
  async function group(
    name: 'running' | 'recent',
  ): Promise<{ node: JobsNode; item: vscode.TreeItem; jobId: string | undefined }[]> {
    const provider = extension.jobsView.provider;
    const nodes = await provider.getChildren({ kind: 'group', group: name });
    return nodes.map((node) => ({ node, item: provider.getTreeItem(node), jobId: provider.entryOf(node)?.jobId }));
  }

  /** What the counts say now: the view's badge, the status bar's count and its text. */
  function counts(): string {
    return `badge ${extension.jobsView.view.badge?.value ?? 0}, status bar ${extension.status.runningCount} (${extension.status.item.text})`;
  }

  async function useBaseUrl(baseUrl: string | undefined): Promise<void> {
    await vscode.workspace.getConfiguration('comfyCloud').update('baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
  }

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await useBaseUrl(emu.baseUrl);
    extension = await activateExtension();
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await useBaseUrl(undefined);
    await emu?.close();
  });

  test('a server restarted without a running job: the job becomes lost (out of Running, badge and status bar 0, Re-run and Remove, no Cancel), and the monitor says so with no Cancel', async () => {
    emu!.holdNodes({});
    const submitting = vscode.commands.executeCommand<SubmitResult>(
      'comfyCloud.submitWorkflow',
      workspaceFile('invert.json'),
    );
    const held = await emu!.whenHeld();
    await until(
      'the job under Running, counted by the badge and the status bar',
      async () =>
        (await group('running')).some((j) => j.jobId === held.jobId) &&
        extension.jobsView.view.badge?.value === 1 &&
        extension.status.runningCount === 1,
    );
    assert.match(extension.status.item.text, /sync~spin/);

    // The server goes away and another, which never heard of the job, answers on the same port.
    const port = Number(new URL(emu!.baseUrl).port);
    await emu!.close();
    emu = await startEmulator({ port });

    const lost = await until(
      () => `the job lost under Recent (${counts()})`,
      async () =>
        (await group('recent')).find((j) => j.jobId === held.jobId && /^job:lost:/.test(String(j.item.contextValue))),
    );
    assert.ok(!(await group('running')).some((j) => j.jobId === held.jobId), 'the lost job is still under Running');
    const flags = String(lost.item.contextValue);
    assert.match(flags, /:rerunnable(:|$)/, flags);
    assert.match(flags, /:removable(:|$)/, flags);
    assert.doesNotMatch(flags, /cancellable/, flags);
    await until(
      () => `badge and status bar at 0 (${counts()})`,
      () => extension.jobsView.view.badge === undefined && extension.status.runningCount === 0,
    );
    assert.doesNotMatch(extension.status.item.text, /sync~spin/, 'the status bar still spins');

    // The submission ends with a sentence, not a bare not_found.
    const result = await submitting;
    assert.equal(result?.status, 'error');
    assert.equal(result?.error?.code, 'job_lost');
    assert.match(result?.error?.message ?? '', /no longer knows job .*Re-run it/);

    // The monitor of the lost job: no Cancel, and why.
    const monitor = await vscode.commands.executeCommand<MonitorPanel>('comfyCloud.openJobMonitor', held.jobId);
    const state = await untilEvent(
      'the monitor shows the job lost',
      [monitor.onDidPost],
      () => {
        const last = monitor.lastState;
        return last?.job.status === 'lost' ? last : undefined;
      },
      DEADLINE_MS,
    );
    assert.equal(state.job.can.cancel, false);
    assert.match(state.job.retrying ?? '', /no longer knows this job.*Re-run it/);

    // Remove from List takes it out.
    const removed = await vscode.commands.executeCommand<number>('comfyCloud.removeJob', lost.node);
    assert.equal(removed, 1);
    assert.ok(!(await group('recent')).some((j) => j.jobId === held.jobId), 'the removed job is still listed');
  });

  test("the badge and the status bar count the active connection's running jobs only, and agree", async () => {
    const other = await startEmulator({ port: 0 });
    try {
      emu!.holdNodes({});
      const submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const held = await emu!.whenHeld();
      await until(
        () => `one running job counted (${counts()})`,
        () => extension.jobsView.view.badge?.value === 1 && extension.status.runningCount === 1,
      );

      // Another connection made active: the job still runs on the first server, and is counted by neither.
      await useBaseUrl(other.baseUrl);
      await until(
        () => `no running job counted on the other connection (${counts()})`,
        () => extension.jobsView.view.badge === undefined && extension.status.runningCount === 0,
      );
      assert.doesNotMatch(extension.status.item.text, /sync~spin/);

      // Back: counted again by both, then let go to its end.
      await useBaseUrl(emu!.baseUrl);
      await until(
        () => `the running job counted again (${counts()})`,
        () => extension.jobsView.view.badge?.value === 1 && extension.status.runningCount === 1,
      );
      emu!.holdNodes(null);
      assert.equal((await submitting)?.status, 'succeeded');
      assert.equal(held.jobId.length > 0, true);
      await until(
        () => `nothing running (${counts()})`,
        () => extension.jobsView.view.badge === undefined && extension.status.runningCount === 0,
      );
    } finally {
      emu!.holdNodes(null);
      await other.close();
    }
  });
});
