// The first minutes of a user, in a real VS Code extension host against the emulator started here: the job monitor
// reuses one tab for the latest job unless the user pinned it (comfyCloud.monitor.reuseTab, default on; off: a tab per
// job); Re-run from a monitor opens the new job's monitor in that tab, and its toast offers the monitor; Cancel from
// the Jobs view tells each event once ("being canceled" closes itself when the job ends; the end is told once).
// Toasts are read through the extension's Display (every notification passes there), tabs through window.tabGroups.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import { MONITOR_VIEW_TYPE } from '../../src/extension/platform/constants';
import type { ShownNotice } from '../../src/extension/platform/display';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { MonitorPanel } from '../../src/extension/monitor/monitorPanel';

/** How long a state may take to show here (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type SubmitResult = { jobId?: string; status: string };

suite('First run: one monitor tab, one toast per event', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  const shown: ShownNotice[] = [];
  const subs: vscode.Disposable[] = [];
  let monitorOnSubmit: boolean | undefined;
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');

  /** The monitor tabs VS Code shows, in every group. */
  const monitorTabs = (): vscode.Tab[] =>
    vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith(MONITOR_VIEW_TYPE));

  /** A finished job of the emulator (submitted with the monitor off: no tab of its own). */
  const finishedJob = async (): Promise<string> => {
    const result = await vscode.commands.executeCommand<SubmitResult>(
      'comfyCloud.submitWorkflow',
      workspaceFile('invert.json'),
    );
    assert.equal(result.status, 'succeeded');
    return result.jobId!;
  };

  /** Opens a job's monitor as "Open Job Monitor" does, and waits for VS Code to show its tab. */
  const openMonitor = async (jobId: string): Promise<MonitorPanel> => {
    const monitor = await vscode.commands.executeCommand<MonitorPanel>('comfyCloud.openJobMonitor', jobId);
    assert.ok(monitor, `no monitor opened for job ${jobId}`);
    await untilEvent(
      `the tab of job ${jobId}'s monitor`,
      [vscode.window.tabGroups.onDidChangeTabs],
      () => extension.monitors?.tabOf(jobId),
      DEADLINE_MS,
    );
    return monitor;
  };

  /** Waits until exactly `count` monitor tabs show (a closed panel's tab leaves on VS Code's next turn). */
  const tabsSettle = (count: number): Promise<unknown> =>
    untilEvent(
      () =>
        `${count} monitor tab(s); there are ${monitorTabs()
          .map((t) => t.label)
          .join(', ')}`,
      [vscode.window.tabGroups.onDidChangeTabs],
      () => monitorTabs().length === count,
      DEADLINE_MS,
    );

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await config().update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    // Put back as found: a root hook of the monitor suite turns the monitor off for the whole run.
    monitorOnSubmit = config().inspect<boolean>('openMonitorOnSubmit')?.globalValue;
    await config().update('openMonitorOnSubmit', false, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    subs.push(extension.display.onDidShow((n) => shown.push(n)));
  });

  setup(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // A tab left pinned by a failed test is closed too.
    await vscode.window.tabGroups.close(monitorTabs());
    await tabsSettle(0);
  });

  suiteTeardown(async () => {
    for (const s of subs) s.dispose();
    await vscode.window.tabGroups.close(monitorTabs());
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await config().update('monitor.reuseTab', undefined, vscode.ConfigurationTarget.Global);
    await config().update('openMonitorOnSubmit', monitorOnSubmit, vscode.ConfigurationTarget.Global);
    await config().update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('the monitor reuses one tab for the latest job (comfyCloud.monitor.reuseTab, default on): three jobs opened, one tab, the latest', async () => {
    const [a, b, c] = [await finishedJob(), await finishedJob(), await finishedJob()];
    const first = await openMonitor(a);
    const column = first.panel.viewColumn;
    await openMonitor(b);
    await openMonitor(c);
    await tabsSettle(1);
    assert.equal(extension.monitors!.panelOf(a), undefined, 'the first job kept its monitor');
    assert.equal(extension.monitors!.panelOf(b), undefined, 'the second job kept its monitor');
    assert.equal(
      extension.monitors!.panelOf(c)?.panel.viewColumn,
      column,
      'the latest monitor is not where the first was',
    );
  });

  test('a pinned monitor tab keeps its job: the next job opens a tab of its own, and the one after takes that one', async () => {
    const [a, b, c] = [await finishedJob(), await finishedJob(), await finishedJob()];
    const pinned = await openMonitor(a);
    pinned.panel.reveal(undefined, false);
    await untilEvent('the monitor active', [pinned.panel.onDidChangeViewState], () => pinned.panel.active, DEADLINE_MS);
    await vscode.commands.executeCommand('workbench.action.pinEditor');
    await untilEvent(
      'the tab pinned',
      [vscode.window.tabGroups.onDidChangeTabs],
      () => extension.monitors!.tabOf(a)?.isPinned,
      DEADLINE_MS,
    );
    await openMonitor(b);
    await tabsSettle(2);
    assert.ok(extension.monitors!.panelOf(a), 'the pinned monitor was replaced');
    await openMonitor(c);
    await tabsSettle(2);
    assert.ok(extension.monitors!.panelOf(a), 'the pinned monitor was replaced');
    assert.equal(extension.monitors!.panelOf(b), undefined, 'the unpinned monitor kept its job');
  });

  test('with comfyCloud.monitor.reuseTab off, every job gets a monitor tab of its own', async () => {
    await config().update('monitor.reuseTab', false, vscode.ConfigurationTarget.Global);
    try {
      const [a, b] = [await finishedJob(), await finishedJob()];
      await openMonitor(a);
      await openMonitor(b);
      await tabsSettle(2);
      assert.ok(extension.monitors!.panelOf(a) && extension.monitors!.panelOf(b));
    } finally {
      await config().update('monitor.reuseTab', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  test('Re-run from the monitor opens the new job\'s monitor in the same tab, and its toast offers "Open Monitor"', async () => {
    const old = await finishedJob();
    const monitor = await openMonitor(old);
    const column = monitor.panel.viewColumn;
    const from = shown.length;
    const result = await monitor.rerun({ confirm: false });
    assert.equal(result?.status, 'submitted');
    const fresh = result!.jobId!;
    assert.notEqual(fresh, old);
    const now = extension.monitors!.panelOf(fresh);
    assert.ok(now, 'the new job has no monitor');
    assert.equal(now.panel.viewColumn, column);
    await tabsSettle(1);
    assert.equal(extension.monitors!.panelOf(old), undefined, "the old job's monitor stayed beside the new one");
    const toast = shown
      .slice(from)
      .find((n) => n.message.includes(fresh.slice(0, 8)) && /submitted again/.test(n.message));
    assert.ok(toast, `no Re-run toast: ${JSON.stringify(shown.slice(from))}`);
    assert.deepEqual(toast.actions, ['Open Monitor']);
  });

  test('Cancel from the Jobs view tells each event once: "being canceled" closes itself when the job ends, and its end is told once', async () => {
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
    emu.holdNodes({});
    let submitting: Thenable<SubmitResult> | undefined;
    let jobId: string;
    const from = shown.length;
    try {
      submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      jobId = await untilEvent(
        'the job running',
        [extension.jobs.onDidChangeJob],
        () => extension.jobsView.provider.allEntries().find((e) => e.job?.status === 'running')?.jobId,
        DEADLINE_MS,
      );
      const answer = await vscode.commands.executeCommand<string>('comfyCloud.cancelJob', jobId);
      assert.equal(answer, 'canceling', 'the emulator answers canceling for a running job');
    } finally {
      emu.holdNodes(null);
    }
    assert.equal((await submitting).status, 'canceled');
    const short = jobId.slice(0, 8);
    const about = (): ShownNotice[] => shown.slice(from).filter((n) => n.message.includes(short));
    const being = about().filter((n) => /being canceled/.test(n.message));
    assert.equal(being.length, 1, JSON.stringify(about()));
    assert.equal(
      being[0]!.severity,
      'lasting',
      'the "being canceled" message is a toast that cannot be closed when the job ends',
    );
    // Closed once the job ended (the submission saw it end: the same watch).
    await being[0]!.closed;
    const ended = await untilEvent(
      'the end told',
      [extension.notifier.onDidDecide],
      () => {
        const told = about().filter((n) => /was canceled/.test(n.message));
        return told.length > 0 ? told : undefined;
      },
      DEADLINE_MS,
    );
    assert.equal(ended.length, 1, `the end was told ${ended.length} times: ${JSON.stringify(about())}`);
  });
});
