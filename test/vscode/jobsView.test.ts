// The Jobs view inside a real VS Code extension host, against the emulator started here: a submitted job
// appears under Running and moves to Recent as succeeded with its output child, live, without any refresh command;
// Cancel from the view ends a running job as canceled; an output opens in an editor tab.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { RerunResult } from '../../src/extension/jobs/jobActions';
import type { OpenedJobDocument } from '../../src/extension/jobs/jobDocumentsProvider';
import type { JobsNode } from '../../src/extension/jobs/jobsView';

/** How long a job may take to show a state here (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite('Jobs view in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;

  /** A state, waited for on the events that change it (until.ts). */
  const until = <T>(what: string, check: () => Promise<T | undefined>): Promise<T> =>
    untilEvent(
      what,
      [extension.jobsView.provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      check,
      DEADLINE_MS,
    );

  /** The job nodes of a group, with their tree items. */
  async function group(
    name: 'running' | 'recent',
  ): Promise<{ node: JobsNode; item: vscode.TreeItem; jobId: string | undefined }[]> {
    const provider = extension.jobsView.provider;
    // A group node by value: the root is empty while there is no job (the welcome content shows then).
    const nodes = await provider.getChildren({ kind: 'group', group: name });
    return nodes.map((node) => ({ node, item: provider.getTreeItem(node), jobId: provider.entryOf(node)?.jobId }));
  }

  /**
   * The server accepts the remembered pending submission `key` (invert.json, that Idempotency-Key), its record gets
   * the job id as the submitter writes it, and the job is followed to its end. Returns the job id.
   */
  async function acceptPending(key: string): Promise<string> {
    const workflow = JSON.parse(fs.readFileSync(workspaceFile('invert.json').fsPath, 'utf8')) as unknown;
    const res = await fetch(`${emu.baseUrl}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ workflow }),
    });
    const { id } = (await res.json()) as { id: string };
    await extension.jobs.store.update(key, { state: 'created', jobId: id });
    const follow = extension.jobs.service.follow(id);
    try {
      await follow.done;
    } finally {
      follow.dispose();
    }
    return id;
  }

  /** A group's jobs as `<id> <description>` lines, for a failure's message. */
  async function shown(name: 'running' | 'recent'): Promise<string[]> {
    return (await group(name)).map((j) => `${j.jobId ?? '(no id)'} ${String(j.item.description ?? '')}`);
  }

  suiteSetup(async () => {
    // No node delay: a test that looks at a running job holds it at a node (emu.holdNodes), looks, then lets it go.
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    assert.ok(extension?.jobsView, 'activate() did not return the extension with its jobsView');
    // Show the view, as a user clicking the activity-bar icon would: a hidden view is never refreshed.
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
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
  /** Resolves when the Jobs view's visibility becomes `visible` (at once if it is), rejects at the deadline. */
  function visibility(visible: boolean): Promise<void> {
    const view = extension.jobsView.view;
    if (view.visible === visible) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => (
          sub.dispose(),
          reject(new Error(`the Jobs view's visibility did not become ${visible} within ${DEADLINE_MS} ms`))
        ),
        DEADLINE_MS,
      );
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
  /** The children of a job node, with their tree items. */
  async function childrenOf(node: JobsNode): Promise<{ node: JobsNode; item: vscode.TreeItem }[]> {
    const provider = extension.jobsView.provider;
    return (await provider.getChildren(node)).map((child) => ({ node: child, item: provider.getTreeItem(child) }));
  }

  /** Submits a workspace file and resolves with the job's node under Recent once it ended as `status`. */
  async function finished(
    file: vscode.Uri,
    status = 'succeeded',
  ): Promise<{ node: JobsNode; item: vscode.TreeItem; jobId: string | undefined }> {
    const result = await vscode.commands.executeCommand<{ jobId?: string; status: string }>(
      'comfyCloud.submitWorkflow',
      file,
    );
    assert.equal(result?.status, status, JSON.stringify(result));
    return until(`job ${result.jobId} under Recent as ${status}`, async () =>
      (await group('recent')).find(
        (j) => j.jobId === result.jobId && new RegExp(`^job:${status}:`).test(String(j.item.contextValue)),
      ),
    );
  }

  test('the workflow child opens a read-only document (own scheme) holding the submitted workflow, named for its format', async () => {
    const job = await finished(workspaceFile('invert.json'));
    assert.equal(job.item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    const kids = await childrenOf(job.node);
    assert.deepEqual(
      kids.map((k) => k.item.contextValue),
      ['output:png', 'jobChild:workflow'],
    );
    const workflow = kids[1]!;
    assert.equal(workflow.item.command?.command, 'comfyCloud.openJobWorkflow');
    const opened = await vscode.commands.executeCommand<OpenedJobDocument | undefined>(
      workflow.item.command!.command,
      ...(workflow.item.command!.arguments ?? []),
    );
    assert.ok(opened, 'no document opened');
    assert.equal(opened.document.uri.scheme, 'comfy-cloud-job');
    assert.equal(opened.format, 'api');
    assert.equal(opened.source, 'server');
    assert.equal(opened.document.languageId, 'json');
    assert.match(opened.document.uri.path, /\/workflow\.api\.json$/);
    const submitted = JSON.parse(
      Buffer.from(await vscode.workspace.fs.readFile(workspaceFile('invert.json'))).toString('utf8'),
    );
    assert.deepEqual(JSON.parse(opened.document.getText()), submitted);
    assert.equal(
      vscode.window.activeTextEditor?.document.uri.toString(),
      opened.document.uri.toString(),
      'the document is not the active editor',
    );
  });

  test("an output's Save As writes a copy where asked, Reveal shows it in the Explorer, Copy Asset Reference puts its core/ASSET JSON on the clipboard", async () => {
    const job = await finished(workspaceFile('invert.json'));
    const output = (await childrenOf(job.node)).find((k) => k.item.contextValue === 'output:png');
    assert.ok(output, 'no output child');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-save-as-'));
    const target = path.join(dir, 'copy.png');
    const saved = await vscode.commands.executeCommand<string | undefined>('comfyCloud.saveOutputAs', output.node, {
      target,
    });
    assert.equal(saved, target);
    const bytes = fs.readFileSync(target);
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'not a PNG');
    const revealed = await vscode.commands.executeCommand<string | undefined>('comfyCloud.revealOutput', output.node);
    assert.ok(revealed && fs.existsSync(revealed), `reveal returned ${revealed}`);
    assert.deepEqual(fs.readFileSync(revealed), bytes, 'Save As did not copy the output');
    await vscode.env.clipboard.writeText('');
    await vscode.commands.executeCommand('comfyCloud.copyOutputAssetReference', output.node);
    const reference = JSON.parse(await vscode.env.clipboard.readText()) as { __type?: string; info?: { id?: string } };
    assert.equal(reference.__type, 'core/ASSET');
    assert.equal(typeof reference.info?.id, 'string');
    assert.ok(reference.info!.id!.length > 0, 'no asset id in the reference');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('Re-run makes a NEW job with a NEW Idempotency-Key (the old job unchanged), and the new job shows live', async () => {
    const old = await finished(workspaceFile('invert.json'));
    const oldKey = extension.jobsView.provider.entryOf(old.node)?.record?.idempotencyKey;
    assert.ok(oldKey, 'the old job has no remembered Idempotency-Key');
    const posts = (): string[] =>
      emu.requests
        .filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path))
        .map((r) => String(r.headers['idempotency-key']));
    assert.ok(posts().includes(oldKey));
    const before = posts().length;
    // The new job holds at its first node until the view shows it with its record (the view reads the record once, when
    // it first hears of the job; a job that ended meanwhile was seen to keep none).
    emu.holdNodes({});
    let result: RerunResult;
    try {
      // `{confirm: false}`: the modal confirmation is skipped, as a test cannot answer it.
      result = await vscode.commands.executeCommand<RerunResult>('comfyCloud.rerunJob', old.node, { confirm: false });
      assert.equal(result.status, 'submitted', JSON.stringify(result));
      assert.ok(result.jobId && result.jobId !== old.jobId, 'no new job');
      assert.ok(result.idempotencyKey && result.idempotencyKey !== oldKey, 'the Idempotency-Key was reused');
      assert.deepEqual(posts().slice(before), [result.idempotencyKey], 'not exactly one new POST with the new key');
      await until('the new job under Running, with its record', async () =>
        (await group('running')).find(
          (j) => j.jobId === result.jobId && extension.jobsView.provider.entryOf(j.node)?.record !== undefined,
        ),
      );
    } finally {
      emu.holdNodes(null);
    }
    const fresh = await until('the new job under Recent as succeeded', async () =>
      (await group('recent')).find(
        (j) => j.jobId === result.jobId && /^job:succeeded:/.test(String(j.item.contextValue)),
      ),
    );
    assert.equal(extension.jobsView.provider.entryOf(fresh.node)?.record?.idempotencyKey, result.idempotencyKey);
    assert.match(String(fresh.item.label), /^invert\.json /);
    // The old job is as it was.
    assert.ok(
      (await group('recent')).some((j) => j.jobId === old.jobId && /^job:succeeded:/.test(String(j.item.contextValue))),
    );
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

  test('a failed job has an error child (code, node and class) that opens the error with its details', async () => {
    const file = workspaceFile('too-large.json');
    const workflow = JSON.parse(
      Buffer.from(await vscode.workspace.fs.readFile(workspaceFile('invert.json'))).toString('utf8'),
    );
    workflow['1'].inputs.width = 16384;
    workflow['1'].inputs.height = 16384; // beyond the emulator's pixel cap: fails while executing
    await vscode.workspace.fs.writeFile(file, Buffer.from(JSON.stringify(workflow)));
    const job = await finished(file, 'failed');
    const kids = await childrenOf(job.node);
    assert.deepEqual(
      kids.map((k) => k.item.contextValue),
      ['jobChild:error', 'jobChild:workflow'],
    );
    const error = kids[0]!;
    assert.match(String(error.item.label), /^node_execution_error: /);
    assert.equal(error.item.description, 'node 1 · EmptyImage');
    const opened = await vscode.commands.executeCommand<OpenedJobDocument | undefined>(
      error.item.command!.command,
      ...(error.item.command!.arguments ?? []),
    );
    assert.ok(opened);
    assert.match(
      opened.document.getText(),
      /^Code: node_execution_error\nMessage: .+\nNode: 1\nNode class: EmptyImage\n/,
    );
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

  test('on a serverless deployment (emulator under a mount prefix) a finished job has a logs child that opens its log', async () => {
    const deployment = await startEmulator({ port: 0, mountPrefix: '/deployment/dep-vscode' });
    const config = vscode.workspace.getConfiguration('comfyCloud');
    try {
      await config.update('baseUrl', deployment.baseUrl, vscode.ConfigurationTarget.Global);
      const result = await vscode.commands.executeCommand<{ jobId?: string; status: string }>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      assert.equal(result?.status, 'succeeded');
      assert.ok(
        deployment.requests.some((r) => r.path.startsWith('/deployment/dep-vscode/api/v2/jobs')),
        'the job was not sent to the deployment',
      );
      const job = await until('the job under Recent with a logs child', async () => {
        const found = (await group('recent')).find((j) => j.jobId === result.jobId);
        return found && (await childrenOf(found.node)).some((k) => k.item.contextValue === 'jobChild:logs')
          ? found
          : undefined;
      });
      const kids = await childrenOf(job.node);
      assert.deepEqual(
        kids.map((k) => k.item.contextValue),
        ['output:png', 'jobChild:logs', 'jobChild:workflow'],
      );
      const logs = kids[1]!;
      assert.equal(logs.item.command?.command, 'comfyCloud.openJobLogs');
      const opened = await vscode.commands.executeCommand<OpenedJobDocument | undefined>(
        logs.item.command!.command,
        ...(logs.item.command!.arguments ?? []),
      );
      assert.ok(opened);
      assert.equal(opened.document.uri.scheme, 'comfy-cloud-job');
      assert.equal(opened.document.languageId, 'log');
      assert.match(opened.document.getText(), /INFO executing node 1 \(EmptyImage\), 1 of 3\n/);
      assert.match(opened.document.getText(), /INFO job succeeded\n$/);
    } finally {
      await config.update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
      await deployment.close();
    }
  });
});
