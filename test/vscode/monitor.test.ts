// The job monitor inside a real VS Code extension host, against the emulator started here: the panel opens
// on submit with comfyCloud.openMonitorOnSubmit on (not with it off); the job's one watch is shared (one event stream);
// the page has a nonce CSP and local resources limited to dist/webview and the job's output folder; an invalid message
// from the page is dropped; Cancel through the panel ends a running job as canceled; the end-of-job notification is not
// shown while the monitor is visible. A job looked at while it runs is held at a node (emu.holdNodes) until then.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { MonitorPanel } from '../../src/extension/monitor/monitorPanel';
import type { JobEndDecision } from '../../src/extension/jobs/notifications';

const EXTENSION_ID = 'comfy-cloud.comfy-cloud';
/** How long a job may take to show a state here (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type SubmitResult = { jobId?: string; status: string };

// The monitor opens on every submission by default, which takes the notifications' place; the other suites test the
// notifications (progress, end of job) of a submission, so for them the setting is off: a root hook (run before every
// suite of the run, this file's included), undone after the last.
suiteSetup(async () => {
  await vscode.workspace
    .getConfiguration('comfyCloud')
    .update('openMonitorOnSubmit', false, vscode.ConfigurationTarget.Global);
});
suiteTeardown(async () => {
  await vscode.workspace
    .getConfiguration('comfyCloud')
    .update('openMonitorOnSubmit', undefined, vscode.ConfigurationTarget.Global);
});

suite('Job monitor in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  /** Every job id seen on onDidChangeJob, in order. */
  const seen: string[] = [];
  const decisions: JobEndDecision[] = [];
  const subs: vscode.Disposable[] = [];

  const setting = (value: boolean | undefined): Thenable<void> =>
    vscode.workspace
      .getConfiguration('comfyCloud')
      .update('openMonitorOnSubmit', value, vscode.ConfigurationTarget.Global);

  /** The first job submitted after `from` jobs were seen. */
  const newJob = (from: number): Promise<string> =>
    untilEvent('a new job', [extension.jobs.onDidChangeJob], () => seen[from], DEADLINE_MS);

  /** The monitor of a job, once open. */
  const monitorOf = async (jobId: string): Promise<MonitorPanel> => {
    // The monitors are loaded at first use (a submission with the setting on): then their onDidOpen tells.
    const monitors = await untilEvent(
      'the monitors loaded',
      [extension.jobs.onDidChangeJob],
      () => extension.monitors,
      DEADLINE_MS,
    );
    return untilEvent(
      `the monitor of job ${jobId}`,
      [extension.jobs.onDidChangeJob, monitors.onDidOpen],
      () => monitors.panelOf(jobId),
      DEADLINE_MS,
    );
  };

  const eventStreams = (jobId: string): number =>
    emu.requests.filter((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${jobId}/events`).length;

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    subs.push(extension.jobs.onDidChangeJob((c) => void (seen.includes(c.job.id) || seen.push(c.job.id))));
    subs.push(extension.notifier.onDidDecide((d) => decisions.push(d)));
  });

  suiteTeardown(async () => {
    for (const s of subs) s.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await setting(false);
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('Submit Workflow opens the monitor (setting on); the job has one watch (one event stream) shared by all; no end-of-job notification while it is visible', async () => {
    await setting(true);
    const from = seen.length;
    // Held at its first node until its monitor is open and visible: the job ends while it is.
    emu.holdNodes({});
    let submitting: Thenable<SubmitResult>;
    let monitor: MonitorPanel;
    let jobId: string;
    try {
      submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      jobId = await newJob(from);
      monitor = await monitorOf(jobId);
      await untilEvent('the monitor visible', [monitor.panel.onDidChangeViewState], () => monitor.visible, DEADLINE_MS);
    } finally {
      emu.holdNodes(null);
    }
    const result = await submitting;
    assert.equal(result.status, 'succeeded');
    assert.equal(monitor.visible, true, 'the monitor is not visible');
    // The submission's watch, the Jobs view's follow and the monitor's follow: one stream.
    assert.equal(eventStreams(jobId), 1, 'not one event stream for the job');
    const decision = decisions.find((d) => d.jobId === jobId);
    assert.ok(decision, 'no end-of-job decision');
    assert.equal(decision.notified, false, 'the end-of-job notification was shown while the monitor was visible');
    // The monitor shows the job's end and its output.
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
    assert.equal(state.job.can.cancel, false);
  });

  test('with comfyCloud.openMonitorOnSubmit off, no monitor opens and the end-of-job notification is shown', async () => {
    await setting(false);
    const from = seen.length;
    const result = await vscode.commands.executeCommand<SubmitResult>(
      'comfyCloud.submitWorkflow',
      workspaceFile('invert.json'),
    );
    assert.equal(result.status, 'succeeded');
    const jobId = seen[from];
    assert.equal(jobId, result.jobId);
    assert.equal(extension.monitors?.panelOf(jobId!), undefined, 'a monitor opened with the setting off');
    assert.equal(decisions.find((d) => d.jobId === jobId)?.notified, true);
  });

  test('the page has a nonce CSP without unsafe-inline or remote origins; local resources only from dist/webview and the output folder', async () => {
    await setting(true);
    const from = seen.length;
    const result = await vscode.commands.executeCommand<SubmitResult>(
      'comfyCloud.submitWorkflow',
      workspaceFile('invert.json'),
    );
    const jobId = seen[from]!;
    assert.equal(result.jobId, jobId);
    const monitor = await monitorOf(jobId);
    const webview = monitor.panel.webview;
    // The page is written once the server has said something of the job (a monitor of a job not watched any more
    // reads it first): then the page says `ready` and gets a snapshot.
    const html = await untilEvent(
      'the page written',
      [monitor.onDidPost],
      () => webview.html || undefined,
      DEADLINE_MS,
    );
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1];
    assert.ok(csp, 'no CSP');
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    assert.ok(nonce && nonce.length >= 16, `no nonce in the CSP: ${csp}`);
    assert.match(csp, /^default-src 'none';/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:\/\/(?!\S*vscode)/);
    // Every script runs by the nonce; every resource comes from the extension through asWebviewUri.
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    for (const s of scripts)
      assert.ok(
        /type="application\/json"/.test(s) || s.includes(`nonce="${nonce}"`),
        `a script without the nonce: ${s}`,
      );
    const root = webview
      .asWebviewUri(vscode.Uri.joinPath(vscode.extensions.getExtension(EXTENSION_ID)!.extensionUri, 'dist', 'webview'))
      .toString();
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]*)"/g))
      assert.ok(url!.startsWith(root), `a resource from elsewhere: ${url}`);
    const options = webview.options;
    assert.equal(options.enableScripts, true);
    assert.ok(!options.enableCommandUris, 'command URIs are enabled');
    const roots = (options.localResourceRoots ?? []).map((u) => u.fsPath);
    assert.equal(roots.length, 2, `roots: ${roots.join(', ')}`);
    assert.ok(roots[0]!.endsWith(`dist${path.sep}webview`), `not dist/webview: ${roots[0]}`);
    assert.ok(roots[1]!.includes(jobId), `not the job's output folder: ${roots[1]}`);
    // One panel per job: opening it again reveals the same one.
    const again = await vscode.commands.executeCommand<MonitorPanel>('comfyCloud.openJobMonitor', jobId);
    assert.equal(again, monitor, 'a second panel for the same job');
  });

  test("the page's actions on a succeeded job: Download all saves every output, Open opens one in a tab, Reveal Outputs shows the folder, Open Workflow the file", async () => {
    const jobId = seen[seen.length - 1]!;
    const monitor = await vscode.commands.executeCommand<MonitorPanel>('comfyCloud.openJobMonitor', jobId);
    const state = await untilEvent(
      'the monitor shows the succeeded job',
      [monitor.onDidPost],
      () => {
        const last = monitor.lastState;
        return last?.job.status === 'succeeded' && last.job.outputs.length === 1 ? last : undefined;
      },
      DEADLINE_MS,
    );
    const files = (await monitor.receive({ type: 'downloadAll' })) as string[];
    assert.equal(files.length, 1);
    assert.ok(fs.statSync(files[0]!).size > 0, 'the downloaded output is empty');
    const opened = await monitor.receive({ type: 'openOutput', outputId: state.job.outputs[0]!.id });
    assert.equal(opened, files[0]);
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as { uri?: vscode.Uri } | undefined;
    assert.equal(input?.uri?.fsPath, files[0], 'the output is not the active tab');
    const folder = (await monitor.receive({ type: 'revealOutputs' })) as string;
    assert.equal(path.dirname(files[0]!), folder);
    const workflow = await monitor.receive({ type: 'openWorkflow' });
    assert.equal(workflow, workspaceFile('invert.json').fsPath);
    assert.equal(
      vscode.window.activeTextEditor?.document.uri.fsPath,
      workspaceFile('invert.json').fsPath,
      'the workflow file is not the active editor',
    );
  });

  test('an invalid message from the page is dropped: nothing is asked of the server', async () => {
    const jobId = seen[seen.length - 1]!;
    const monitor = extension.monitors!.panelOf(jobId)!;
    const before = emu.requests.length;
    for (const bad of [
      { type: 'explode' },
      { type: 'openOutput', outputId: '' },
      { type: 'saveOutput' },
      'cancel',
      null,
      { type: 'ready', version: 'x' },
    ]) {
      assert.equal(await monitor.receive(bad), undefined);
    }
    assert.equal(emu.requests.length, before, 'an invalid message made a request');
  });

  test('Cancel in the monitor ends a running job as canceled; closing the monitor never cancels', async () => {
    await setting(true);
    // Every node holds at its start: each job below is running, at its first node, while it is canceled or its
    // monitor closed.
    emu.holdNodes({});
    try {
      const from = seen.length;
      const submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const jobId = await newJob(from);
      const monitor = await monitorOf(jobId);
      await untilEvent(
        'the job running',
        [extension.jobs.onDidChangeJob],
        () => monitor.current?.status === 'running',
        DEADLINE_MS,
      );
      const answered = await monitor.receive({ type: 'cancel' });
      assert.ok(answered === 'canceling' || answered === 'canceled', `cancel answered ${String(answered)}`);
      assert.equal((await submitting).status, 'canceled');

      // Closing a running job's monitor leaves the job alone.
      const other = seen.length;
      const second = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const secondId = await newJob(other);
      const secondMonitor = await monitorOf(secondId);
      await untilEvent(
        'the second job running',
        [extension.jobs.onDidChangeJob],
        () => secondMonitor.current?.status === 'running',
        DEADLINE_MS,
      );
      secondMonitor.panel.dispose();
      emu.holdNodes(null);
      assert.equal((await second).status, 'succeeded');
      assert.ok(
        !emu.requests.some((r) => r.path === `/api/v2/jobs/${secondId}/cancel`),
        'closing the monitor canceled the job',
      );
    } finally {
      emu.holdNodes(null);
    }
  });

  /** The node statuses of the monitor's last snapshot, once `accept` takes them. */
  const nodeStatuses = (
    monitor: MonitorPanel,
    what: string,
    accept: (s: Record<string, string>, status: string) => boolean,
  ): Promise<Record<string, string>> =>
    untilEvent(
      what,
      [monitor.onDidPost],
      () => {
        const last = monitor.lastState;
        if (!last) return undefined;
        const statuses = Object.fromEntries(Object.entries(last.nodeStates).map(([id, st]) => [id, st.status]));
        return accept(statuses, last.job.status) ? statuses : undefined;
      },
      DEADLINE_MS,
    );

  test('the graph of a held job: node 1 done, node 2 running, node 3 waiting; then every node done', async () => {
    await setting(true);
    const from = seen.length;
    emu.holdNodes({ nodeIds: ['2'] });
    let submitting: Thenable<SubmitResult> | undefined;
    try {
      submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const jobId = await newJob(from);
      const monitor = await monitorOf(jobId);
      await emu.whenHeld((n) => n.jobId === jobId && n.nodeId === '2');
      const held = await nodeStatuses(monitor, 'node 2 running in the graph', (s) => s['2'] === 'running');
      assert.deepEqual(held, { '1': 'done', '2': 'running', '3': 'waiting' });
      // The graph was posted once, read from the submitted file (its nodes can be shown in it).
      const graphs = monitor.posted.filter((m) => m.type === 'graph');
      assert.equal(graphs.length, 1, 'not one graph message');
      const graph = monitor.workflowGraph;
      assert.ok(graph?.model, `no graph: ${graph?.unavailable}`);
      assert.deepEqual(graph.model.root.nodes.map((n) => n.id).sort(), ['1', '2', '3']);
      assert.equal(graph.canReveal, true);
      // Snapshots carry the states, never the model.
      assert.ok(monitor.posted.every((m) => m.type !== 'snapshot' || !('model' in m.state)));
      emu.holdNodes(null);
      assert.equal((await submitting).status, 'succeeded');
      const done = await nodeStatuses(monitor, 'every node done', (_s, status) => status === 'succeeded');
      assert.deepEqual(done, { '1': 'done', '2': 'done', '3': 'done' });
      monitor.panel.dispose();
    } finally {
      emu.holdNodes(null);
      await submitting;
    }
  });

  test("the graph of a failed job has its node failed; Go to node (the error's, or a node chosen in the graph) selects the node's JSON", async () => {
    await setting(true);
    const file = workspaceFile('graph-too-large.json');
    const workflow = JSON.parse(
      Buffer.from(await vscode.workspace.fs.readFile(workspaceFile('invert.json'))).toString('utf8'),
    );
    workflow['1'].inputs.width = 16384;
    workflow['1'].inputs.height = 16384; // beyond the emulator's pixel cap: fails while executing
    await vscode.workspace.fs.writeFile(file, Buffer.from(JSON.stringify(workflow, null, 2)));
    try {
      const from = seen.length;
      const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', file);
      assert.equal(result.status, 'failed');
      const monitor = await monitorOf(seen[from]!);
      const states = await nodeStatuses(
        monitor,
        'node 1 failed in the graph',
        (s, status) => status === 'failed' && s['1'] === 'failed',
      );
      assert.deepEqual(states, { '1': 'failed' }, 'nodes after the failed one are not known to have run');
      assert.ok(monitor.lastState?.nodeStates['1']!.error, 'the failed node carries no error');
      const selected = await monitor.receive({ type: 'goToNode' });
      assert.equal(selected, '"1"');
      const editor = vscode.window.activeTextEditor;
      assert.equal(editor?.document.uri.fsPath, file.fsPath);
      assert.equal(editor?.document.getText(editor.selection), '"1"');
      // A node chosen in the graph.
      assert.equal(await monitor.receive({ type: 'goToNode', nodeId: '3' }), '"3"');
      assert.equal(vscode.window.activeTextEditor?.document.getText(vscode.window.activeTextEditor.selection), '"3"');
      // A node the graph does not have is not gone to.
      assert.equal(await monitor.receive({ type: 'goToNode', nodeId: '99' }), undefined);
      monitor.panel.dispose();
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.workspace.fs.delete(file).then(undefined, () => undefined);
    }
  });
});
