// The Jobs view inside a real VS Code extension host, against the emulator started here: the view shows once its
// container is opened; a submitted job appears under Running and moves to Recent as succeeded with its output child,
// live, without any refresh command; Cancel from the view ends a running job as canceled; nothing is refreshed while
// the view is hidden. The other Jobs view suites: jobsViewItems.test.ts, jobsViewList.test.ts.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ComfyCloudApi } from '../../src/extension/api';
import { DEADLINE_MS, useJobsViewSuite, type Emulator } from './jobsViewSuite';
import { workspaceFile } from './workspace';

suite('Jobs view in a real VS Code extension host', () => {
  const jobsView = useJobsViewSuite();
  const { until, group, visibility } = jobsView;
  let emu: Emulator;
  let extension: ComfyCloudApi;
  suiteSetup(() => {
    emu = jobsView.emu;
    extension = jobsView.extension;
  });

  test('the view shows once its container is opened', async () => {
    const view = extension.jobsView.view;
    if (!view.visible) {
      // The workbench tells the extension host after the focus command resolves: wait for that (with a deadline).
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => (sub.dispose(), reject(new Error(`the Jobs view did not show within ${DEADLINE_MS} ms`))),
          DEADLINE_MS,
        );
        const sub = view.onDidChangeVisibility((e) => {
          if (!e.visible) return;
          clearTimeout(timer);
          sub.dispose();
          resolve();
        });
      });
    }
    assert.equal(view.visible, true);
    const roots = await extension.jobsView.provider.getChildren();
    const model = await extension.jobsView.provider.model();
    // Running and Recent when there is a job; no root at all otherwise, so the view's welcome content shows.
    const expected = model.running.length + model.recent.length > 0 ? ['Running', 'Recent'] : [];
    assert.deepEqual(
      roots.map((n) => extension.jobsView.provider.getTreeItem(n).label),
      expected,
    );
  });

  test('a submitted job appears under Running, then moves to Recent as succeeded with its output, with no refresh', async () => {
    // Held at its first node until seen under Running.
    emu.holdNodes({});
    let submitting: Thenable<{ jobId?: string; status: string } | undefined>;
    let running: Awaited<ReturnType<typeof group>>[number];
    try {
      submitting = vscode.commands.executeCommand<{ jobId?: string; status: string }>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const held = await emu.whenHeld();
      // Its label names the workflow once the job's record is read (before that it is "job <id>").
      running = await until('the job under Running, named for its workflow', async () =>
        (await group('running')).find((j) => j.jobId === held.jobId && String(j.item.label).startsWith('invert.json ')),
      );
      assert.equal(running.item.id, `${emu.baseUrl} ${held.jobId}`);
      assert.match(String(running.item.contextValue), /^job:(queued|running):cancellable/);
      assert.ok((extension.jobsView.view.badge?.value ?? 0) >= 1, 'the badge does not count the running job');
    } finally {
      emu.holdNodes(null);
    }
    const jobId = running.jobId!;
    const recent = await until('the job under Recent as succeeded', async () =>
      (await group('recent')).find((j) => j.jobId === jobId && /^job:succeeded:/.test(String(j.item.contextValue))),
    );
    // The same id: selection and expansion survive the move.
    assert.equal(recent.item.id, running.item.id);
    assert.equal((recent.item.iconPath as vscode.ThemeIcon).id, 'pass');
    assert.ok(!(await group('running')).some((j) => j.jobId === jobId), 'the job is still under Running');
    const children = await extension.jobsView.provider.getChildren(recent.node);
    assert.equal(children.filter((c) => c.kind === 'output').length, 1, 'not one output child');
    assert.equal(children[0]!.kind, 'output', 'the output is not the first child');
    const child = extension.jobsView.provider.getTreeItem(children[0]!);
    assert.equal(child.command?.command, 'comfyCloud.openOutput');
    const result = await submitting;
    assert.equal(result?.jobId, jobId);
    assert.equal(result?.status, 'succeeded');

    // Clicking the output opens it in an editor tab.
    const file = await vscode.commands.executeCommand<string | undefined>('comfyCloud.openOutput', children[0]);
    assert.ok(file, 'openOutput returned no file');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const input = tab?.input as { uri?: vscode.Uri } | undefined;
    assert.equal(input?.uri?.fsPath, file, `the active tab is not the output: ${tab?.label}`);
  });

  test('Cancel on a running job ends it as canceled, and the view shows it under Recent', async () => {
    // Held at its first node: it is still running when canceled, however long the view takes to show it.
    emu.holdNodes({});
    try {
      const submitting = vscode.commands.executeCommand<{ jobId?: string; status: string }>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const held = await emu.whenHeld();
      const running = await until('the job under Running, cancellable', async () =>
        (await group('running')).find((j) => j.jobId === held.jobId && /cancellable/.test(String(j.item.contextValue))),
      );
      const status = await vscode.commands.executeCommand<string | undefined>('comfyCloud.cancelJob', running.node);
      assert.ok(status === 'canceling' || status === 'canceled', `cancel answered ${status}`);
      const ended = await until('the job under Recent as canceled', async () =>
        (await group('recent')).find(
          (j) => j.jobId === running.jobId && /^job:canceled:/.test(String(j.item.contextValue)),
        ),
      );
      assert.equal((ended.item.iconPath as vscode.ThemeIcon).id, 'circle-slash');
      assert.equal((await submitting)?.status, 'canceled');
    } finally {
      emu.holdNodes(null);
    }
  });

  test('nothing is refreshed while the view is hidden; showing it again refreshes once', async () => {
    await vscode.commands.executeCommand('workbench.view.explorer');
    await visibility(false);
    let fired = 0;
    const sub = extension.jobsView.provider.onDidChangeTreeData(() => fired++);
    try {
      let changes = 0;
      const jobSub = extension.jobs.onDidChangeJob(() => changes++);
      const result = await vscode.commands.executeCommand<{ status: string }>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      jobSub.dispose();
      assert.equal(result?.status, 'succeeded');
      assert.ok(changes >= 2, `the job service announced ${changes} changes`);
      assert.equal(fired, 0, 'the tree was refreshed while hidden');
      const shown = new Promise<void>((resolve) => {
        const once = extension.jobsView.provider.onDidChangeTreeData(() => (once.dispose(), resolve()));
      });
      await vscode.commands.executeCommand('comfyCloud.jobs.focus');
      await visibility(true);
      await shown;
      assert.equal(fired, 1, 'showing the view again did not refresh exactly once');
    } finally {
      sub.dispose();
    }
  });
});
