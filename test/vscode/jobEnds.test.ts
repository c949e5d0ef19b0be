// The one owner of a job's end inside a real VS Code extension host: a job that ends while no window watches it (its
// submitter's services disposed as deactivation disposes them, the job held on the emulator until then) is found when
// the job-end service starts as activation starts it: its outputs in its output folder, its record terminal, exactly
// one end-of-job decision; a job still running then is followed to its end. An untitled sample workflow's outputs go
// to the same folder as a file's, where the monitor shows them as thumbnails. Against a server replaying the
// self-hosted companion's answers: "Started: unknown", the bytes on disk for a size of 0, the thumbnail.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until } from './until';
import { startEmulator } from '../../src/emulator';
import { JobService } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { initialView, present } from '../../src/core/views/monitor/viewModel';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobEndDecision } from '../../src/extension/jobs/notifications';
import { startCompanion, type Companion } from '../unit/companionServer';

const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type SubmitResult = { jobId?: string; status: string; files: string[] };

suite('Job ends in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  const decisions: JobEndDecision[] = [];
  const subs: vscode.Disposable[] = [];
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await config().update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    subs.push(extension.notifier.onDidDecide((d) => decisions.push(d)));
  });

  // A test that failed with a job held must not hold the tests after it.
  teardown(() => {
    emu.holdNodes(null);
    emu.releaseNodes();
  });

  suiteTeardown(async () => {
    for (const s of subs) s.dispose();
    emu.holdNodes(null);
    // The sample's untitled editor is closed without its save prompt.
    for (const doc of vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'untitled')) {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await config().update('openMonitorOnSubmit', false, vscode.ConfigurationTarget.Global);
    await config().update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  /**
   * Submits invert.json as the window that goes away would have (a job service of the core, its records marked
   * `vscode`, in the extension's store), with the job held at its first node; then that service is disposed as
   * deactivation disposes it (its watch aborted) while the job is still held. Returns the job id.
   */
  async function submitFromAWindowThatGoesAway(): Promise<string> {
    emu.holdNodes({});
    const service = new JobService({
      clients: {
        identity: async () => emu.baseUrl,
        create: async () => ({ backend: new V2JobBackend(new V2Client({ baseUrl: emu.baseUrl })) }),
      },
      store: new StateStore(extension.jobs.store.dir),
      log: { info: () => undefined, warn: () => undefined },
      clientName: 'vscode',
    });
    const lease = await service.lease();
    const workflow = JSON.parse(fs.readFileSync(workspaceFile('invert.json').fsPath, 'utf8')) as unknown;
    // A varying width: engines cache identical prompts.
    (workflow as { '1': { inputs: { width: number } } })['1'].inputs.width = 64 + Math.floor(Math.random() * 64);
    const jobId = await new Promise<string>((resolve, reject) => {
      // The submission's own wait ends with AbortError when the service is disposed below: that is the window going away.
      service
        .submit(lease, workflow, {
          workflowFile: workspaceFile('invert.json').fsPath,
          onSubmitted: (s) => resolve(s.job.id),
        })
        .catch(reject);
    });
    await emu.whenHeld((n) => n.jobId === jobId);
    lease.release();
    service.dispose();
    return jobId;
  }

  /** The job's end on the emulator, read by a client of the test's own (nothing of the extension watches it). */
  async function endOnTheEmulator(jobId: string): Promise<string> {
    const backend = new V2JobBackend(new V2Client({ baseUrl: emu.baseUrl }));
    try {
      return (await backend.watch(jobId)).job.status;
    } finally {
      await backend.close();
    }
  }

  const recordOf = async (jobId: string) =>
    (await new StateStore(extension.jobs.store.dir).list()).find((r) => r.jobId === jobId);
  const outputFolder = (jobId: string): string =>
    path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, '.comfy', 'outputs', jobId);

  test('a job that ends while the extension is down: at start-up its outputs are in its folder, its record terminal, one end-of-job decision', async () => {
    const jobId = await submitFromAWindowThatGoesAway();
    assert.notEqual((await recordOf(jobId))?.lastStatus, 'succeeded');
    emu.releaseNodes(jobId);
    emu.holdNodes(null);
    assert.equal(await endOnTheEmulator(jobId), 'succeeded');
    // Start-up: the job-end service reads the remembered jobs as activation has it do. A read the service started in
    // the background meanwhile (the connection back after a slow health probe) may find the job first: either way its
    // end is handled once, by one of them.
    const told = until(
      "the job's end told",
      [extension.jobEnds.onDidTell],
      () => decisions.find((d) => d.jobId === jobId),
      DEADLINE_MS,
    );
    const ends = await extension.jobEnds.resume();
    assert.ok(
      ends.every((e) => e.job.id === jobId),
      `another job's end: ${JSON.stringify(ends.map((e) => e.job.id))}`,
    );
    await told;
    const files = fs.readdirSync(outputFolder(jobId)).filter((f) => f.endsWith('.png'));
    assert.equal(files.length, 1, `not one output in ${outputFolder(jobId)}: ${files.join(', ')}`);
    if (ends.length > 0) assert.deepEqual(ends[0]!.files, [path.join(outputFolder(jobId), files[0]!)]);
    assert.equal((await recordOf(jobId))?.lastStatus, 'succeeded');
    const mine = decisions.filter((d) => d.jobId === jobId);
    assert.equal(mine.length, 1, 'not exactly one end-of-job decision');
    assert.equal(mine[0]!.notified, true);
    // Named as every notice names a job: by its workflow, then its id.
    assert.match(mine[0]!.message ?? '', /^Comfy Cloud: invert\.json \(job \w{8}\) succeeded — 1 output saved\.$/);
    // Read again (a connection back): nothing more.
    await extension.jobEnds.resume();
    assert.equal(decisions.filter((d) => d.jobId === jobId).length, 1);
  });

  test('a job still running at start-up is followed to its end: outputs, record, one end-of-job decision', async () => {
    const jobId = await submitFromAWindowThatGoesAway();
    assert.deepEqual(await extension.jobEnds.resume(), []);
    assert.ok(
      extension.jobEnds.core.followed.some((k) => k.endsWith(` ${jobId}`)),
      'the running job is not followed',
    );
    const told = until(
      "the job's end told",
      [extension.jobEnds.onDidTell],
      () => decisions.find((d) => d.jobId === jobId),
      DEADLINE_MS,
    );
    emu.releaseNodes(jobId);
    emu.holdNodes(null);
    const decision = await told;
    assert.equal(decision.notified, true);
    assert.equal(fs.readdirSync(outputFolder(jobId)).filter((f) => f.endsWith('.png')).length, 1);
    assert.equal((await recordOf(jobId))?.lastStatus, 'succeeded');
    assert.equal(decisions.filter((d) => d.jobId === jobId).length, 1);
  });

  test("an untitled sample workflow's outputs go to the one output folder (the workspace's), where its monitor shows the image", async () => {
    await config().update('openMonitorOnSubmit', true, vscode.ConfigurationTarget.Global);
    const uri = await vscode.commands.executeCommand<vscode.Uri>('comfyCloud.openSample');
    assert.equal(uri?.scheme, 'untitled');
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow');
    assert.equal(result.status, 'succeeded');
    const jobId = result.jobId!;
    assert.equal(result.files.length, 1);
    assert.equal(
      path.dirname(result.files[0]!),
      outputFolder(jobId),
      "the untitled workflow's output is not in the workspace's output folder",
    );
    const monitor = await until(
      'the monitor of the job',
      [extension.jobs.onDidChangeJob],
      () => extension.monitors?.panelOf(jobId),
      DEADLINE_MS,
    );
    const state = await until(
      'the monitor shows the output saved, with a thumbnail',
      [monitor.onDidPost],
      () => monitor.lastState?.job.outputs.find((o) => o.saved && o.thumbnail !== null) && monitor.lastState,
      DEADLINE_MS,
    );
    assert.match(
      state.job.outputs[0]!.thumbnail!,
      /^(https?|vscode-[a-z-]+):/,
      'the thumbnail is not a webview URI of the downloaded file',
    );
    assert.equal(present(initialView(state)).outputs.cards[0]!.kind, 'image');
    // Clicking the output in the monitor opens the file already there: no second download, no second copy.
    const contentReads = (): number =>
      emu.requests.filter((r) => r.method === 'GET' && /\/content(\?|$)/.test(r.path)).length;
    const before = contentReads();
    assert.ok(before >= 1, 'the download of the output was not seen at the emulator');
    const opened = await monitor.receive({ type: 'openOutput', outputId: state.job.outputs[0]!.id });
    assert.equal(opened, result.files[0]);
    assert.equal(contentReads(), before, 'the output was downloaded again');
    assert.deepEqual(
      fs.readdirSync(outputFolder(jobId)).filter((f) => !f.startsWith('.')),
      [path.basename(result.files[0]!)],
    );
  });

  test('a failed job leaves no output folder behind, though its monitor was open from the start', async () => {
    await config().update('openMonitorOnSubmit', true, vscode.ConfigurationTarget.Global);
    // Valid by the node limits, beyond the emulator's pixel cap: the job fails while executing.
    const workflow = JSON.parse(fs.readFileSync(workspaceFile('invert.json').fsPath, 'utf8')) as {
      '1': { inputs: { width: number; height: number } };
    };
    workflow['1'].inputs.width = 16384;
    workflow['1'].inputs.height = 16384;
    const file = workspaceFile('fails.json');
    fs.writeFileSync(file.fsPath, JSON.stringify(workflow));
    try {
      const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', file);
      assert.equal(result.status, 'failed', JSON.stringify(result));
      const jobId = result.jobId!;
      const monitor = await until(
        'the monitor of the job',
        [extension.jobs.onDidChangeJob],
        () => extension.monitors?.panelOf(jobId),
        DEADLINE_MS,
      );
      await until(
        'the monitor shows the job failed',
        [monitor.onDidPost],
        () => monitor.lastState?.job.status === 'failed' || undefined,
        DEADLINE_MS,
      );
      await until(
        "the job's end decided",
        [extension.notifier.onDidDecide],
        () => decisions.find((d) => d.jobId === jobId),
        DEADLINE_MS,
      );
      assert.equal(fs.existsSync(outputFolder(jobId)), false, `a failed job left ${outputFolder(jobId)}`);
    } finally {
      fs.rmSync(file.fsPath, { force: true });
    }
  });

  suite("against the self-hosted companion's answers", () => {
    let companion: Companion;
    suiteSetup(async () => {
      companion = await startCompanion({ autoRun: true });
      await config().update('baseUrl', companion.origin, vscode.ConfigurationTarget.Global);
      await config().update('openMonitorOnSubmit', true, vscode.ConfigurationTarget.Global);
    });
    suiteTeardown(async () => {
      await config().update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
      await companion.close();
    });

    test('a finished job with started_at null shows "Started: unknown"; its output of size 0 shows the bytes on disk, as a thumbnail', async () => {
      const result = await vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      assert.equal(result.status, 'succeeded', JSON.stringify(result));
      assert.deepEqual(fs.readFileSync(result.files[0]!), companion.png);
      const monitor = await until(
        'the monitor of the job',
        [extension.jobs.onDidChangeJob],
        () => extension.monitors?.panelOf(result.jobId!),
        DEADLINE_MS,
      );
      const state = await until(
        'the monitor shows the output saved',
        [monitor.onDidPost],
        () => {
          const s = monitor.lastState;
          return s?.job.status === 'succeeded' && s.job.outputs[0]?.saved ? s : undefined;
        },
        DEADLINE_MS,
      );
      const shown = present(initialView(state));
      assert.deepEqual(
        shown.header.times.slice(1).map((t) => t.text),
        ['unknown', 'unknown'],
      );
      assert.equal(shown.outputs.cards[0]!.kind, 'image');
      assert.equal(shown.outputs.cards[0]!.sizeLabel, `${companion.png.length} B`);
      assert.equal(
        companion.seen.filter((s) => s.method === 'GET' && s.path.endsWith('/content')).length,
        1,
        'the output was downloaded more than once',
      );
    });
  });
});
