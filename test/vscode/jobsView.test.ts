// The Jobs view (issue 9) inside a real VS Code extension host, against the emulator started here: a submitted job
// appears under Running and moves to Recent as succeeded with its output child, live, without any refresh command;
// Cancel from the view ends a running job as canceled; an output opens in an editor tab.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudExtension } from '../../src/extension/extension';
import type { JobsNode } from '../../src/extension/jobsView';

const EXTENSION_ID = 'comfy-cloud.comfy-cloud';
/** How long a job may take to show a state here (ms): a deadline, not a wait. */
const DEADLINE_MS = 20_000;
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

function workspaceFile(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open');
  return vscode.Uri.joinPath(folder.uri, name);
}

suite('Jobs view (issue 9) in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudExtension;

  /**
   * Resolves with `check()`'s value once it is defined, checked now and again on every change the view or the job
   * service announces; rejects at the deadline with `what`.
   */
  function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const subs: vscode.Disposable[] = [];
      const finish = (err: Error | undefined, value?: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        for (const s of subs) s.dispose();
        if (err) reject(err);
        else resolve(value as T);
      };
      const timer = setTimeout(() => finish(new Error(`not within ${DEADLINE_MS} ms: ${what}`)), DEADLINE_MS);
      const test = (): void => {
        check().then(
          (v) => {
            if (v !== undefined) finish(undefined, v);
          },
          (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
        );
      };
      subs.push(extension.jobsView.provider.onDidChangeTreeData(test));
      subs.push(extension.jobs.onDidChangeJob(test));
      test();
    });
  }

  /** The job nodes of a group, with their tree items. */
  async function group(name: 'running' | 'recent'): Promise<{ node: JobsNode; item: vscode.TreeItem; jobId: string | undefined }[]> {
    const provider = extension.jobsView.provider;
    const groups = await provider.getChildren();
    const g = groups.find((n) => n.kind === 'group' && n.group === name);
    assert.ok(g, `no group ${name}`);
    const nodes = await provider.getChildren(g);
    return nodes.map((node) => ({ node, item: provider.getTreeItem(node), jobId: provider.entryOf(node)?.jobId }));
  }

  suiteSetup(async () => {
    // 3 nodes of 700 ms: the job is seen running for about 2 s.
    emu = await startEmulator({ port: 0, nodeDelayMs: 700 });
    await vscode.workspace.getConfiguration('comfyCloud').update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    const ext = vscode.extensions.getExtension<ComfyCloudExtension>(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} not found`);
    extension = await ext.activate();
    assert.ok(extension?.jobsView, 'activate() did not return the extension with its jobsView');
    // Show the view, as a user clicking the activity-bar icon would: a hidden view is never refreshed.
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.getConfiguration('comfyCloud').update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('the view shows once its container is opened', async () => {
    const view = extension.jobsView.view;
    if (!view.visible) {
      // The workbench tells the extension host after the focus command resolves: wait for that (with a deadline).
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => (sub.dispose(), reject(new Error(`the Jobs view did not show within ${DEADLINE_MS} ms`))), DEADLINE_MS);
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
    assert.deepEqual(roots.map((n) => extension.jobsView.provider.getTreeItem(n).label), ['Running', 'Recent']);
  });

  test('a submitted job appears under Running, then moves to Recent as succeeded with its output, with no refresh', async () => {
    const submitting = vscode.commands.executeCommand<{ jobId?: string; status: string }>('comfyCloud.submitWorkflow', workspaceFile('invert.json'));
    const running = await until('the job under Running', async () => (await group('running')).find((j) => typeof j.item.label === 'string' && j.item.label.startsWith('invert.json ') && j.jobId));
    const jobId = running.jobId!;
    assert.equal(running.item.id, `${emu.baseUrl} ${jobId}`);
    assert.match(String(running.item.contextValue), /^job:(queued|running):cancellable/);
    assert.ok((extension.jobsView.view.badge?.value ?? 0) >= 1, 'the badge does not count the running job');
    const recent = await until('the job under Recent as succeeded', async () => (await group('recent')).find((j) => j.jobId === jobId && /^job:succeeded:/.test(String(j.item.contextValue))));
    // The same id: selection and expansion survive the move.
    assert.equal(recent.item.id, running.item.id);
    assert.equal((recent.item.iconPath as vscode.ThemeIcon).id, 'pass');
    assert.ok(!(await group('running')).some((j) => j.jobId === jobId), 'the job is still under Running');
    const children = await extension.jobsView.provider.getChildren(recent.node);
    assert.equal(children.length, 1, 'no output child');
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
    const submitting = vscode.commands.executeCommand<{ jobId?: string; status: string }>('comfyCloud.submitWorkflow', workspaceFile('invert.json'));
    const running = await until('the job under Running', async () => (await group('running')).find((j) => j.jobId && j.item.label !== undefined && /cancellable/.test(String(j.item.contextValue)) && !emu.requests.some((r) => r.path.includes(`${j.jobId}/cancel`))));
    const status = await vscode.commands.executeCommand<string | undefined>('comfyCloud.cancelJob', running.node);
    assert.ok(status === 'canceling' || status === 'canceled', `cancel answered ${status}`);
    const ended = await until('the job under Recent as canceled', async () => (await group('recent')).find((j) => j.jobId === running.jobId && /^job:canceled:/.test(String(j.item.contextValue))));
    assert.equal((ended.item.iconPath as vscode.ThemeIcon).id, 'circle-slash');
    assert.equal((await submitting)?.status, 'canceled');
  });
  /** Resolves when the Jobs view's visibility becomes `visible` (at once if it is), rejects at the deadline. */
  function visibility(visible: boolean): Promise<void> {
    const view = extension.jobsView.view;
    if (view.visible === visible) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (sub.dispose(), reject(new Error(`the Jobs view's visibility did not become ${visible} within ${DEADLINE_MS} ms`))), DEADLINE_MS);
      const sub = view.onDidChangeVisibility((e) => {
        if (e.visible !== visible) return;
        clearTimeout(timer);
        sub.dispose();
        resolve();
      });
    });
  }

  test('nothing is refreshed while the view is hidden; showing it again refreshes once', async () => {
    await vscode.commands.executeCommand('workbench.view.explorer');
    await visibility(false);
    let fired = 0;
    const sub = extension.jobsView.provider.onDidChangeTreeData(() => fired++);
    try {
      let changes = 0;
      const jobSub = extension.jobs.onDidChangeJob(() => changes++);
      const result = await vscode.commands.executeCommand<{ status: string }>('comfyCloud.submitWorkflow', workspaceFile('invert.json'));
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
