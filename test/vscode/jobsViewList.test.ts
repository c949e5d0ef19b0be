// Which jobs the Jobs view lists, inside a real VS Code extension host, against the emulator started here: a pending
// submission gives way to its job (no ghost under Running); accessibility information; "Show Job" reveals a job;
// Remove from List and Clear Finished; after a switch of connection the old connection's jobs never show.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobsNode } from '../../src/extension/jobs/jobsView';
import { DEADLINE_MS, useJobsViewSuite, type Emulator } from './jobsViewSuite';
import { until as untilEvent } from './until';
import { workspaceFile } from './workspace';

suite('Jobs view in a real VS Code extension host', () => {
  const jobsView = useJobsViewSuite();
  const { group, acceptPending, shown, visibility } = jobsView;
  let emu: Emulator;
  let extension: ComfyCloudApi;
  suiteSetup(() => {
    emu = jobsView.emu;
    extension = jobsView.extension;
  });

  test('a submission read while still pending (no job id yet) gives way to its job once its record has the id: no ghost left under Running', async () => {
    const provider = extension.jobsView.provider;
    const store = extension.jobs.store;
    const key = `pending-ghost-${Date.now()}`;
    // The store read while the submission is pending, as a reload or a connection switch can catch it.
    await store.put({
      idempotencyKey: key,
      baseUrl: emu.baseUrl,
      state: 'pending',
      submittedAt: new Date().toISOString(),
      client: 'vscode',
    });
    await provider.refresh();
    assert.ok(
      (await group('running')).some((j) => j.jobId === undefined),
      'the pending submission is not under Running',
    );
    // The server accepts it, and its record gets the job id, as the submitter writes it.
    const id = await acceptPending(key);
    // Waited for on the badge too: a hidden view's tree does not fire, its count does.
    await untilEvent(
      'the job under Recent, and nothing left under Running',
      [provider.onDidChangeTreeData, extension.jobs.onDidChangeJob, provider.onDidChangeBadge],
      async () => {
        const running = await group('running');
        const recent = await group('recent');
        return running.length === 0 && recent.some((j) => j.jobId === id) ? true : undefined;
      },
      DEADLINE_MS,
    ).catch(async (err: unknown) => {
      throw new Error(
        `${String(err)}; job ${id}; Running: ${JSON.stringify(await shown('running'))}; Recent: ${JSON.stringify((await shown('recent')).slice(0, 3))}`,
      );
    });
    assert.equal(extension.status.runningCount, 0, 'the status bar still counts a running job');
  });

  test('a submission read while pending whose job ends before the read is done gives way to its job too (no later event needed)', async () => {
    const provider = extension.jobsView.provider;
    const store = extension.jobs.store;
    const key = `pending-ghost-late-${Date.now()}`;
    await store.put({
      idempotencyKey: key,
      baseUrl: emu.baseUrl,
      state: 'pending',
      submittedAt: new Date().toISOString(),
      client: 'vscode',
    });
    // The view's read of the store catches the pending record, then is held until the job has ended: every event of
    // the job arrives while the read is still under way, as on a busy machine.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    let readPending!: () => void;
    const caught = new Promise<void>((resolve) => (readPending = resolve));
    const list = store.list.bind(store);
    store.list = async (...args: Parameters<typeof store.list>) => {
      const records = await list(...args);
      if (!held && records.some((r) => r.idempotencyKey === key && !r.jobId)) {
        held = true;
        readPending();
        await gate;
      }
      return records;
    };
    let id: string;
    try {
      const refreshed = provider.refresh();
      await caught;
      id = await acceptPending(key);
      release();
      await refreshed;
    } finally {
      release();
      store.list = list;
    }
    await untilEvent(
      'nothing left under Running, the job under Recent',
      [provider.onDidChangeTreeData, extension.jobs.onDidChangeJob, provider.onDidChangeBadge],
      async () => {
        const running = await group('running');
        const recent = await group('recent');
        return running.length === 0 && recent.some((j) => j.jobId === id) && extension.status.runningCount === 0
          ? true
          : undefined;
      },
      DEADLINE_MS,
    ).catch(async (err: unknown) => {
      throw new Error(
        `${String(err)}; job ${id}; Running: ${JSON.stringify(await shown('running'))}; status bar count ${extension.status.runningCount}`,
      );
    });
  });

  test('group and job items carry accessibility information (name and count; label and status spelled out)', async () => {
    const provider = extension.jobsView.provider;
    const [running, recent] = await provider.getChildren();
    assert.match(provider.getTreeItem(running!).accessibilityInformation?.label ?? '', /^Running, \d+ jobs?$/);
    assert.match(provider.getTreeItem(recent!).accessibilityInformation?.label ?? '', /^Recent, \d+ jobs?$/);
    const [first] = await group('recent');
    assert.match(first!.item.accessibilityInformation?.label ?? '', /^\S+ [0-9a-f]{8}, (succeeded|failed|canceled), /);
  });

  test('"Show Job" (revealJob) shows the hidden Jobs view and selects the job\'s item', async () => {
    const [first] = await group('recent');
    assert.ok(first?.jobId, 'no job under Recent');
    // From a hidden view (the Explorer shown instead), as when the notification's button is pressed.
    await vscode.commands.executeCommand('workbench.view.explorer');
    await visibility(false);
    assert.equal(await extension.jobsView.revealJob(first.jobId), true);
    // The selection comes back from the workbench as an event, which may follow reveal()'s own resolution.
    const view = extension.jobsView.view;
    const selectedIds = (): (string | undefined)[] =>
      view.selection.map((n) => extension.jobsView.provider.entryOf(n)?.jobId);
    await untilEvent(
      () => `the job selected (selection: ${JSON.stringify(selectedIds())})`,
      [view.onDidChangeSelection],
      () => selectedIds().includes(first.jobId),
    );
    assert.deepEqual(selectedIds(), [first.jobId]);
    assert.equal(await extension.jobsView.revealJob('no-such-job'), false);
  });

  test('"Show Job" reveals again when VS Code could not resolve the item (the tree refreshed meanwhile)', async () => {
    const [first] = await group('recent');
    assert.ok(first?.jobId, 'no job under Recent');
    const view = extension.jobsView.view as { reveal: vscode.TreeView<JobsNode>['reveal'] };
    const reveal = view.reveal;
    let calls = 0;
    view.reveal = (element, options) => {
      calls++;
      // What the workbench answers when the item's parent was refreshed while it resolved it.
      return calls === 1
        ? Promise.reject(new Error('Cannot resolve tree item for element 1/x'))
        : reveal.call(extension.jobsView.view, element, options);
    };
    try {
      assert.equal(await extension.jobsView.revealJob(first.jobId), true);
      assert.equal(calls, 2);
    } finally {
      view.reveal = reveal;
    }
  });

  test('Show Jobs shows the Jobs view; Copy Job Id from the Command Palette asks which job and copies its id', async () => {
    await vscode.commands.executeCommand('workbench.view.explorer');
    await visibility(false);
    await vscode.commands.executeCommand('comfyCloud.showJobs');
    await visibility(true);
    assert.ok(extension.jobsView.view.visible);

    const recent = await group('recent');
    const target = recent.find((j) => j.jobId);
    assert.ok(target?.jobId, 'no job with an id');
    const window = vscode.window as { showQuickPick: typeof vscode.window.showQuickPick };
    const showQuickPick = window.showQuickPick;
    const asked: { placeHolder?: string; labels: string[] }[] = [];
    window.showQuickPick = (async (
      items: readonly (vscode.QuickPickItem & { job: { record: { jobId?: string } } })[] | Thenable<never>,
      options?: vscode.QuickPickOptions,
    ) => {
      const shown = [...(await items)];
      asked.push({ placeHolder: options?.placeHolder, labels: shown.map((i) => i.label) });
      return shown.find((i) => i.job.record.jobId === target.jobId);
    }) as unknown as typeof vscode.window.showQuickPick;
    try {
      await vscode.env.clipboard.writeText('');
      const copied = await vscode.commands.executeCommand<string>('comfyCloud.copyJobId');
      assert.equal(copied, target.jobId);
      assert.equal(await vscode.env.clipboard.readText(), target.jobId);
      assert.equal(asked.length, 1, 'no job was asked for');
      assert.match(asked[0]!.placeHolder ?? '', /copy its id/);
    } finally {
      window.showQuickPick = showQuickPick;
    }
  });

  test('Remove from List takes one job out (its record forgotten, hidden from the listing too); Clear Finished every ended job', async () => {
    const recent = await group('recent');
    const target = recent.find((j) => j.jobId && /:removable(:|$)/.test(String(j.item.contextValue)));
    assert.ok(target, 'no removable job');
    const removed = await vscode.commands.executeCommand<number>('comfyCloud.removeJob', target.node);
    assert.equal(removed, 1);
    const after = await group('recent');
    assert.equal(after.length, recent.length - 1);
    assert.ok(!after.some((j) => j.jobId === target.jobId));
    const remembered = (await vscode.commands.executeCommand('comfyCloud.showJobs', { list: true })) as {
      record: { jobId?: string };
    }[];
    assert.ok(!remembered.some((r) => r.record.jobId === target.jobId), 'the record is still in the state store');
    // The emulator still lists it: a refresh does not bring it back.
    await vscode.commands.executeCommand('comfyCloud.refreshJobs');
    assert.ok(
      !(await group('recent')).some((j) => j.jobId === target.jobId),
      'the removed job came back with the listing',
    );

    const cleared = await vscode.commands.executeCommand<number>('comfyCloud.clearFinishedJobs');
    assert.equal(cleared, after.length);
    assert.deepEqual(await group('recent'), []);
    await vscode.commands.executeCommand('comfyCloud.refreshJobs');
    assert.deepEqual(await group('recent'), [], 'cleared jobs came back with the listing');
  });

  test("after a switch to another connection, the old connection's jobs never show, even those still ending", async () => {
    const other = await startEmulator({ port: 0 });
    const config = vscode.workspace.getConfiguration('comfyCloud');
    try {
      // Hidden, the view does not reload at the switch: the old job's last changes arrive before any load.
      await vscode.commands.executeCommand('workbench.view.explorer');
      await visibility(false);
      const ended = new Promise<string>((resolve) => {
        const sub = extension.jobs.onDidChangeJob((change) => {
          if (change.baseUrl !== emu.baseUrl || change.job.status !== 'succeeded') return;
          sub.dispose();
          resolve(change.job.id);
        });
      });
      // Held at its first node: it is still running at the switch, and ends after it.
      emu.holdNodes({});
      const submitting = vscode.commands.executeCommand<{ jobId?: string; status: string }>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      await new Promise<void>((resolve) => {
        const sub = extension.jobs.onDidChangeJob((change) => {
          if (change.baseUrl !== emu.baseUrl || change.job.status !== 'running') return;
          sub.dispose();
          resolve();
        });
      });
      await config.update('baseUrl', other.baseUrl, vscode.ConfigurationTarget.Global);
      emu.holdNodes(null);
      const jobId = await ended;
      assert.equal((await submitting)?.status, 'succeeded');
      const model = await extension.jobsView.provider.model();
      const shown = [...model.running, ...model.recent].map((item) => item.id);
      assert.ok(
        !shown.some((id) => id.includes(jobId)),
        `the old connection's job ${jobId} shows under the new one: ${shown.join(', ')}`,
      );
      assert.equal(extension.jobsView.provider.entryOf(jobId), undefined);
    } finally {
      emu.holdNodes(null);
      await config.update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('comfyCloud.jobs.focus');
      await other.close();
    }
  });
});
