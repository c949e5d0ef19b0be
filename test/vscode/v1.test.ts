// A connection that speaks the deprecated v1 API inside a real VS Code extension host, against
// the emulator's v1 surface started here: the status bar says v1 is deprecated and the notice is shown once on this
// machine; Submit Workflow opens the WebSocket before posting the prompt, follows the job to succeeded with progress and a
// preview in the monitor, and writes its output through /api/view; the Jobs view shows the job; no v2 job request is
// made. The user settings changed here are restored at the end.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { MonitorPanel } from '../../src/extension/monitor/monitorPanel';
import type { JobEndDecision } from '../../src/extension/jobs/notifications';

/** How long a job may take to show a state here (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
const KEY = 'v1-vscode-key';
const NAME = 'Engine (v1)';
type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type SubmitResult = { jobId?: string; status: string; files?: string[]; error?: unknown };

suite('A v1 connection in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  const saved: Record<string, unknown> = {};
  const KEYS = ['connections', 'activeConnection', 'openMonitorOnSubmit'];
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');
  const seen: string[] = [];
  const decisions: JobEndDecision[] = [];
  const subs: vscode.Disposable[] = [];

  /**
   * Resolves once every follow asked of the job service so far has joined its job's watch. A follow joins once it has
   * a lease, and a lease waits for the connection's identity, read from SecretStorage (one request per lease, answered
   * in the order asked): a lease asked now is granted after theirs. (The service does not hand a follower that joins
   * late the preview it missed.)
   */
  async function followsJoined(): Promise<void> {
    (await extension.jobs.service.lease()).release();
  }

  suiteSetup(async () => {
    // No node delay: the test that looks at a running job holds it at a node (emu.holdNodes) until it has looked.
    emu = await startEmulator({ port: 0, tokens: [KEY] });
    extension = await activateExtension();
    for (const key of KEYS) saved[key] = config().inspect(key)?.globalValue;
    subs.push(extension.jobs.onDidChangeJob((c) => void (seen.includes(c.job.id) || seen.push(c.job.id))));
    subs.push(extension.notifier.onDidDecide((d) => decisions.push(d)));
    await config().update(
      'connections',
      [{ name: NAME, surface: 'emulator', baseUrl: emu.baseUrl, api: 'v1' }],
      vscode.ConfigurationTarget.Global,
    );
    await config().update('activeConnection', NAME, vscode.ConfigurationTarget.Global);
    assert.equal(await vscode.commands.executeCommand<boolean>('comfyCloud.setApiKey', KEY), true);
  });

  suiteTeardown(async () => {
    for (const s of subs) s.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const key of KEYS) await config().update(key, saved[key], vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('the status bar says the connection speaks the deprecated v1 API, and the notice is shown once on this machine', async () => {
    await untilEvent(
      'the v1 connection is active',
      [extension.status.onDidChange],
      () => extension.status.connectionName === NAME,
      DEADLINE_MS,
    );
    assert.match(String(extension.status.item.tooltip), /API: v1 \(deprecated; to move to v2, remove "api": "v1"/);
    assert.match(extension.status.item.accessibilityInformation?.label ?? '', /v1 API \(deprecated\)/);
    await untilEvent(
      'the deprecation notice',
      [extension.status.onDidChange, extension.jobs.onDidChangeJob],
      () => extension.v1NoticesShown.length > 0,
      DEADLINE_MS,
    );
    assert.deepEqual(extension.v1NoticesShown, [NAME]);
    // Away and back: not again.
    await config().update('activeConnection', '', vscode.ConfigurationTarget.Global);
    await untilEvent(
      'the default connection',
      [extension.status.onDidChange],
      () => extension.status.connectionName === 'Default',
      DEADLINE_MS,
    );
    assert.doesNotMatch(String(extension.status.item.tooltip), /v1/);
    await config().update('activeConnection', NAME, vscode.ConfigurationTarget.Global);
    await untilEvent(
      'the v1 connection again',
      [extension.status.onDidChange],
      () => extension.status.connectionName === NAME,
      DEADLINE_MS,
    );
    assert.deepEqual(extension.v1NoticesShown, [NAME], 'the notice was shown again');
  });

  test('Submit Workflow runs the job over v1 (socket before the prompt, X-API-Key), the monitor shows progress and a preview, the output is written, the Jobs view shows it', async () => {
    await config().update('openMonitorOnSubmit', true, vscode.ConfigurationTarget.Global);
    const from = emu.requests.length;
    const seenFrom = seen.length;
    // Every node holds at its start: the first until the monitor is open (so no frame comes before it), the second
    // until the monitor has the preview the first one sent over the socket.
    emu.holdNodes({});
    let submitting: Thenable<SubmitResult>;
    let jobId: string;
    let monitor: MonitorPanel;
    try {
      submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      jobId = await untilEvent('a new job', [extension.jobs.onDidChangeJob], () => seen[seenFrom], DEADLINE_MS);
      const monitors = await untilEvent(
        'the monitors loaded',
        [extension.jobs.onDidChangeJob],
        () => extension.monitors,
        DEADLINE_MS,
      );
      monitor = await untilEvent(
        `the monitor of job ${jobId}`,
        [extension.jobs.onDidChangeJob, monitors.onDidOpen],
        () => monitors.panelOf(jobId),
        DEADLINE_MS,
      );
      await emu.whenHeld((n) => n.jobId === jobId && n.index === 0);
      // The monitor's follow has joined the job's watch: the previews sent after this reach it (one sent before would not).
      await followsJoined();
      emu.releaseNodes(jobId);
      await emu.whenHeld((n) => n.jobId === jobId && n.index === 1);
      await untilEvent(
        'a preview in the monitor while the job runs',
        [monitor.onDidPost, extension.jobs.onDidChangeJob],
        () => monitor.posted.some((m) => m.type === 'preview'),
        DEADLINE_MS,
      );
    } finally {
      emu.holdNodes(null);
    }
    const result = await submitting;
    assert.equal(result.status, 'succeeded', JSON.stringify(result));
    assert.equal(result.jobId, jobId);

    const mine = emu.requests.slice(from);
    const ws = mine.findIndex((r) => r.path.startsWith('/ws'));
    const post = mine.findIndex((r) => r.method === 'POST' && r.path === '/api/prompt');
    assert.ok(ws >= 0 && post > ws, `the socket (${ws}) opens before the prompt is posted (${post})`);
    assert.equal(
      mine.filter((r) => r.method === 'POST' && r.path === '/api/prompt').length,
      1,
      'the prompt is posted once',
    );
    assert.deepEqual(
      mine.filter((r) => r.path.startsWith('/api/v2/jobs')).map((r) => `${r.method} ${r.path}`),
      [],
      'a v2 job request on a v1 connection',
    );
    const posted = mine[post]!;
    assert.equal(posted.headers['x-api-key'], KEY);
    assert.equal(posted.headers.authorization, undefined, 'v1 never sends Authorization');
    assert.ok(
      mine.some((r) => r.method === 'GET' && r.path.startsWith('/api/view?')),
      'the output is not downloaded through /api/view',
    );

    // The monitor followed it: a preview from a binary frame (seen above, while it ran), then the end with the output saved.
    const state = await untilEvent(
      'the monitor shows the job succeeded with its output',
      [monitor.onDidPost],
      () => {
        const last = monitor.lastState;
        return last?.job.status === 'succeeded' && last.job.outputs.length === 1 ? last : undefined;
      },
      DEADLINE_MS,
    );
    assert.equal(state.job.workflowName, 'invert.json');
    const files = result.files ?? [];
    assert.equal(files.length, 1, `written: ${files.join(', ')}`);
    assert.ok(fs.statSync(files[0]!).size > 0, 'the output file is empty');

    // The Jobs view shows the job under Recent, succeeded.
    const provider = extension.jobsView.provider;
    const recent = await untilEvent(
      'the job under Recent',
      [provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      async () => {
        const nodes = await provider.getChildren({ kind: 'group', group: 'recent' });
        return nodes.find((n) => provider.entryOf(n)?.jobId === jobId);
      },
      DEADLINE_MS,
    );
    assert.match(String(provider.getTreeItem(recent).contextValue), /^job:succeeded:/);
  });

  test('with the monitor off, a v1 job ends with the end-of-job notification; Copy Job Id copies its prompt id', async () => {
    await config().update('openMonitorOnSubmit', false, vscode.ConfigurationTarget.Global);
    const result = await vscode.commands.executeCommand<SubmitResult>(
      'comfyCloud.submitWorkflow',
      workspaceFile('invert.json'),
    );
    assert.equal(result.status, 'succeeded', JSON.stringify(result));
    const decision = await untilEvent(
      'the end-of-job decision',
      [extension.notifier.onDidDecide],
      () => decisions.find((d) => d.jobId === result.jobId),
      DEADLINE_MS,
    );
    assert.equal(decision.notified, true, 'no end-of-job notification for the v1 job');
    const provider = extension.jobsView.provider;
    const node = await untilEvent(
      'the job in the Jobs view',
      [provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      async () => {
        await provider.model();
        return provider.nodeOfJob(result.jobId!);
      },
      DEADLINE_MS,
    );
    await vscode.env.clipboard.writeText('');
    assert.equal(await vscode.commands.executeCommand<string>('comfyCloud.copyJobId', node), result.jobId);
    assert.equal(await vscode.env.clipboard.readText(), result.jobId);
  });

  test("assets need v2: Upload on a v1 connection says so and sends nothing; a v1 job's outputs are not listed as assets", async () => {
    const from = emu.requests.length;
    const outcomes = await vscode.commands.executeCommand<{ file: string; error?: { code: string } }[]>(
      'comfyCloud.uploadAsset',
      workspaceFile('invert.json'),
    );
    assert.deepEqual(
      outcomes.map((o) => o.error?.code),
      ['no_assets'],
    );
    assert.deepEqual(
      emu.requests.slice(from).filter((r) => r.path.startsWith('/api/v2/assets')),
      [],
      'an asset request on a v1 connection',
    );
    // The records of this server (what the Assets view lists): none made of the v1 jobs' outputs.
    const records = await extension.assetsView.provider.store.list(emu.baseUrl);
    assert.ok(seen.length >= 2, 'no v1 jobs ran');
    assert.deepEqual(
      records.filter((r) => r.jobId && seen.includes(r.jobId)),
      [],
      'the outputs of v1 jobs are recorded as assets',
    );
  });
});
