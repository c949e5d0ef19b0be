// The Jobs view's items inside a real VS Code extension host, against the emulator started here: a job's workflow
// child opens a read-only document; an output's Save As, Reveal and Copy Asset Reference; Re-run makes a new job;
// a failed job's error child; a finished job's logs child on a serverless deployment.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { RerunResult } from '../../src/extension/jobs/jobActions';
import type { OpenedJobDocument } from '../../src/extension/jobs/jobDocumentsProvider';
import { useJobsViewSuite, type Emulator } from './jobsViewSuite';
import { workspaceFile } from './workspace';

suite('Jobs view in a real VS Code extension host', () => {
  const jobsView = useJobsViewSuite();
  const { until, group, childrenOf, finished } = jobsView;
  let emu: Emulator;
  let extension: ComfyCloudApi;
  suiteSetup(() => {
    emu = jobsView.emu;
    extension = jobsView.extension;
  });

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
