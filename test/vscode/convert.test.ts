// UI-format workflows and ComfyUI images inside a real VS Code extension host, against the emulator started here:
// "Convert to API Format" (CodeLens, quick fix) opens the API graph beside the file as an untitled *.api.json; a
// workflow that cannot be converted is refused naming each node, and nothing is opened; Submit Workflow on a UI file
// offers "Convert and Submit", which sends the converted graph (the job's workflow is that graph); "Open Workflow from
// Image" and "Run Again from Image" on a job's output PNG.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import extractChunks from 'png-chunks-extract';
import encodeChunks from 'png-chunks-encode';
import * as pngText from 'png-chunk-text';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent, DEADLINE_MS } from './until';
import { startEmulator } from '../../src/emulator';
import type { ShownNotice } from '../../src/extension/platform/display';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { OpenImageWorkflowResult, RunAgainResult } from '../../src/extension/workflow/imageWorkflows';
import type { OpenedJobDocument } from '../../src/extension/jobs/jobDocumentsProvider';
import type { JobsNode } from '../../src/extension/jobs/jobsView';
import type { SubmitResult } from '../../src/extension/workflow/submit';
import type { ConvertResult } from '../../src/extension/workflow/workflowConversion';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/** The API graph of test/fixtures/workspace/ui-convert.json: the Reroute passes its link through, the Note is dropped. */
const EXPECTED_API = {
  '1': {
    inputs: { width: 64, height: 64, batch_size: 1, color: 16711680 },
    class_type: 'EmptyImage',
    _meta: { title: 'Red canvas' },
  },
  '2': { inputs: { image: ['1', 0] }, class_type: 'ImageInvert', _meta: { title: 'Invert' } },
  '3': {
    inputs: { filename_prefix: 'converted', images: ['2', 0] },
    class_type: 'SaveImage',
    _meta: { title: 'Save' },
  },
};

/** A 1×1 PNG with no text chunk: an image that carries no workflow. */
const PLAIN_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** A UI-format workflow whose nodes 2 and 3 name classes the emulator does not run (SaveImage at node 9). */
function unconvertible(unknownNodes: number): string {
  const nodes: unknown[] = [
    {
      id: 1,
      type: 'EmptyImage',
      pos: [0, 0],
      size: [315, 130],
      flags: {},
      order: 0,
      mode: 0,
      inputs: [],
      outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1], slot_index: 0 }],
      properties: {},
      widgets_values: [64, 64, 1, 0],
    },
  ];
  for (let i = 0; i < unknownNodes; i++) {
    nodes.push({
      id: 2 + i,
      type: `NoSuchNode${i}`,
      title: `Mystery ${i}`,
      pos: [0, 0],
      size: [100, 30],
      flags: {},
      order: 1 + i,
      mode: 0,
      inputs: [],
      outputs: [],
      properties: {},
      widgets_values: [],
    });
  }
  nodes.push({
    id: 99,
    type: 'SaveImage',
    pos: [0, 0],
    size: [315, 270],
    flags: {},
    order: 50,
    mode: 0,
    inputs: [{ name: 'images', type: 'IMAGE', link: 1 }],
    outputs: [],
    properties: {},
    widgets_values: ['x'],
  });
  return JSON.stringify(
    {
      last_node_id: 99,
      last_link_id: 1,
      nodes,
      links: [[1, 1, 0, 99, 0, 'IMAGE']],
      groups: [],
      config: {},
      extra: {},
      version: 0.4,
    },
    null,
    2,
  );
}

suite('UI-format workflows and images in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  /** The notifications shown through the extension's display since the suite began. */
  const shown: ShownNotice[] = [];
  const subs: vscode.Disposable[] = [];
  /** The converted job of "Convert and Submit" (its output is the image the image tests read). */
  let convertedJobId: string | undefined;

  const until = <T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> =>
    untilEvent(
      what,
      [
        extension.jobsView.provider.onDidChangeTreeData,
        extension.jobs.onDidChangeJob,
        extension.display.onDidShow,
        vscode.workspace.onDidOpenTextDocument,
      ],
      check,
      DEADLINE_MS,
    );

  /** Closes every editor, reverting untitled ones (no "save changes?" left behind). */
  async function closeAll(): Promise<void> {
    for (const doc of vscode.workspace.textDocuments.filter((d) => d.isUntitled && d.isDirty)) {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  }

  /** The output child of the job `jobId` under Recent, once there. */
  async function outputOf(jobId: string): Promise<JobsNode> {
    const provider = extension.jobsView.provider;
    return until(`the output of job ${jobId} under Recent`, async () => {
      const jobs = await provider.getChildren({ kind: 'group', group: 'recent' });
      const job = jobs.find((n) => provider.entryOf(n)?.jobId === jobId);
      return job && (await provider.getChildren(job)).find((c) => c.kind === 'output');
    });
  }

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    subs.push(extension.display.onDidShow((n) => shown.push(n)));
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
    // The emulator's node definitions (a conversion would fetch them itself when none are cached).
    const refreshed = await vscode.commands.executeCommand<{ classes?: number; error?: string }>(
      'comfyCloud.refreshNodeDefinitions',
    );
    assert.ok(refreshed?.classes, `no node definitions: ${JSON.stringify(refreshed)}`);
  });

  suiteTeardown(async () => {
    for (const s of subs) s.dispose();
    await closeAll();
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  /** `promise`, its rejection named for `what` (an error from the workbench side comes without a stack). */
  const labelled = <T>(what: string, promise: Thenable<T>): Promise<T> =>
    Promise.resolve(promise).catch((err: unknown) => {
      throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    });

  test('a UI-format file has the CodeLens and the quick fix "Convert to API Format"; an API-format file has neither', async () => {
    const ui = workspaceFile('ui-convert.json');
    await vscode.window.showTextDocument(ui);
    const lenses = await labelled(
      'the CodeLenses',
      vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', ui),
    );
    const lens = lenses.find((l) => l.command?.command === 'comfyCloud.convertToApiFormat');
    assert.ok(lens, `no Convert CodeLens: ${JSON.stringify(lenses.map((l) => l.command?.title))}`);
    assert.equal(lens.command?.title, 'Convert to API Format');
    assert.equal(lens.range.start.line, 0, 'the CodeLens is not at the top of the file');
    // The quick fix on the `nodes` key (line 3: `  "nodes": [`).
    const doc = await vscode.workspace.openTextDocument(ui);
    const line = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('"nodes"'));
    const actions = await labelled(
      'the code actions on the nodes key',
      vscode.commands.executeCommand<vscode.CodeAction[]>(
        'vscode.executeCodeActionProvider',
        ui,
        new vscode.Range(line, 3, line, 3),
      ),
    );
    const fix = actions.find((a) => a.title === 'Convert to API Format');
    assert.ok(fix, `no quick fix on the nodes key: ${JSON.stringify(actions.map((a) => a.title))}`);
    assert.equal(fix.kind?.value, vscode.CodeActionKind.QuickFix.value);
    assert.equal(fix.command?.command, 'comfyCloud.convertToApiFormat');
    // Elsewhere in the file (a node's position): not offered.
    const elsewhere = await labelled(
      'the code actions elsewhere',
      vscode.commands.executeCommand<vscode.CodeAction[]>(
        'vscode.executeCodeActionProvider',
        ui,
        new vscode.Range(line + 5, 8, line + 5, 8),
      ),
    );
    assert.ok(
      !elsewhere.some((a) => a.title === 'Convert to API Format'),
      'the quick fix is offered away from the nodes key',
    );
    const api = workspaceFile('invert.json');
    // The workbench answers for a document it holds: opened first.
    await vscode.window.showTextDocument(api);
    const apiLenses = await labelled(
      'the CodeLenses of an API-format file',
      vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', api),
    );
    assert.ok(
      !apiLenses.some((l) => l.command?.command === 'comfyCloud.convertToApiFormat'),
      'an API-format file has the Convert CodeLens',
    );
  });

  test('Convert to API Format opens the API graph beside the file, as the untitled <name>.api.json, with workflow IntelliSense', async () => {
    const ui = workspaceFile('ui-convert.json');
    const source = await vscode.window.showTextDocument(ui, { viewColumn: vscode.ViewColumn.One });
    const result = await vscode.commands.executeCommand<ConvertResult>('comfyCloud.convertToApiFormat', ui);
    assert.equal(result?.status, 'converted', JSON.stringify(result?.error));
    const doc = result.document!;
    assert.equal(doc.uri.scheme, 'untitled');
    assert.equal(doc.uri.path.split('/').pop(), 'ui-convert.api.json');
    assert.equal(doc.languageId, 'json');
    const parsed = JSON.parse(doc.getText()) as unknown;
    assert.deepEqual(parsed, EXPECTED_API);
    assert.equal(doc.getText(), `${JSON.stringify(parsed, null, 2)}\n`);
    // Beside the UI file, which stays open and unchanged.
    const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
    assert.ok(editor, 'the converted document is not visible');
    assert.notEqual(editor.viewColumn, source.viewColumn, 'the converted document is not beside the UI file');
    assert.equal(source.document.isDirty, false);
    // Workflow IntelliSense applies to it (its name is *.api.json): an IMAGE output linked into EmptyImage's INT width
    // is a Comfy Cloud diagnostic (beyond the schema), and a string width breaks the workflow schema.
    const edit = new vscode.WorkspaceEdit();
    const at = doc.getText().indexOf('"width": 64');
    edit.replace(
      doc.uri,
      new vscode.Range(doc.positionAt(at), doc.positionAt(at + '"width": 64'.length)),
      '"width": ["2", 0]',
    );
    const hAt = doc.getText().indexOf('"height": 64');
    edit.replace(
      doc.uri,
      new vscode.Range(doc.positionAt(hAt), doc.positionAt(hAt + '"height": 64'.length)),
      '"height": "tall"',
    );
    await vscode.workspace.applyEdit(edit);
    const diagnostics = await untilEvent(
      () =>
        `the diagnostics of the converted document: ${JSON.stringify(vscode.languages.getDiagnostics(doc.uri).map((d) => `${d.source}: ${d.message}`))}`,
      [vscode.languages.onDidChangeDiagnostics],
      () => {
        const all = vscode.languages.getDiagnostics(doc.uri);
        const link = all.find((d) => d.source === 'Comfy Cloud' && /IMAGE/.test(d.message));
        const schema = all.find((d) => d.source !== 'Comfy Cloud' && d.range.start.line === doc.positionAt(hAt).line);
        return link && schema ? [link, schema] : undefined;
      },
    );
    assert.equal(diagnostics.length, 2);
    await closeAll();
  });

  test('a workflow that cannot be converted is refused naming each node (id, title, class, why, fix), and nothing is opened', async () => {
    const before = vscode.workspace.textDocuments.filter((d) => d.uri.path.endsWith('.api.json')).length;
    const from = shown.length;
    const doc = await vscode.workspace.openTextDocument({ language: 'json', content: unconvertible(1) });
    const result = await vscode.commands.executeCommand<ConvertResult>('comfyCloud.convertToApiFormat', doc.uri);
    assert.equal(result?.status, 'refused');
    assert.equal(result.document, undefined);
    const problem = result.error?.problems?.find((p) => p.nodeId === '2');
    assert.ok(problem, `node 2 is not named: ${JSON.stringify(result.error)}`);
    assert.equal(problem.classType, 'NoSuchNode0');
    assert.ok(problem.reason && problem.fix, 'a problem without its reason or fix');
    const message = await until('the refusal', () => shown.slice(from).find((n) => n.severity === 'error'));
    assert.match(message.message, /node 2 “Mystery 0” \(NoSuchNode0\)/);
    assert.ok(
      message.message.includes(problem.fix.trim().replace(/\.$/, '')),
      `the message does not give the fix: ${message.message}`,
    );
    assert.deepEqual(message.actions, [], 'one problem needs no "Show All"');
    assert.equal(
      vscode.workspace.textDocuments.filter((d) => d.uri.path.endsWith('.api.json')).length,
      before,
      'a document was opened',
    );

    // A long list: the first few in the message, the rest counted, every one in the log ("Show All").
    const many = await vscode.workspace.openTextDocument({ language: 'json', content: unconvertible(6) });
    const from2 = shown.length;
    const refused = await vscode.commands.executeCommand<ConvertResult>('comfyCloud.convertToApiFormat', many.uri);
    assert.equal(refused?.status, 'refused');
    assert.ok((refused.error?.problems?.length ?? 0) >= 6, JSON.stringify(refused.error));
    const long = await until('the long refusal', () => shown.slice(from2).find((n) => n.severity === 'error'));
    assert.deepEqual(long.actions, ['Show All']);
    assert.match(long.message, /\(\+\d+ more: Show All\)/);
    assert.doesNotMatch(long.message, /NoSuchNode5/, 'the whole list is in the message');
    await closeAll();
  });

  test('on the local emulator, nodes it lacks are blamed on the emulator (its demo nodes only), with the ways out, in one sentence', async () => {
    const config = vscode.workspace.getConfiguration('comfyCloud');
    await config.update(
      'connections',
      [{ name: 'Local emulator', surface: 'emulator', baseUrl: emu.baseUrl }],
      vscode.ConfigurationTarget.Global,
    );
    await config.update('activeConnection', 'Local emulator', vscode.ConfigurationTarget.Global);
    try {
      await until('the emulator connection active', () => extension.config.connection().kind === 'emulator');
      const from = shown.length;
      const doc = await vscode.workspace.openTextDocument({ language: 'json', content: unconvertible(2) });
      const result = await vscode.commands.executeCommand<ConvertResult>('comfyCloud.convertToApiFormat', doc.uri);
      assert.equal(result?.status, 'refused');
      const message = await until('the refusal', () => shown.slice(from).find((n) => n.severity === 'error'));
      assert.match(
        message.message,
        /the local emulator defines only its demo nodes \(.*EmptyImage.*\), not NoSuchNode0, NoSuchNode1\. Connect to a server that has these nodes, or give node definitions with the setting comfyCloud\.nodeDefinitionsUrl/,
      );
      assert.doesNotMatch(message.message, /Install the custom node|custom node that is not installed/);
    } finally {
      await config.update('connections', undefined, vscode.ConfigurationTarget.Global);
      await config.update('activeConnection', undefined, vscode.ConfigurationTarget.Global);
      await closeAll();
    }
  });

  test('Submit Workflow on a UI-format file offers "Convert and Submit"; that sends the API graph, and the job\'s workflow is that graph', async () => {
    const ui = workspaceFile('ui-convert.json');
    const from = shown.length;
    const refused = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', ui);
    assert.equal(refused?.status, 'refused');
    assert.equal(refused.error?.code, 'workflow_format_ui');
    const offer = await until('the refusal with its buttons', () =>
      shown.slice(from).find((n) => /UI-format workflow/.test(n.message)),
    );
    assert.deepEqual(offer.actions, ['Convert and Submit', 'Convert to API Format']);

    // The button runs the command again with the option (the emulator refuses UI format: a success means API format).
    const requests = emu.requests.length;
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', ui, {
      convertUiFormat: true,
    });
    assert.equal(result?.status, 'succeeded', JSON.stringify(result));
    assert.ok(result.jobId);
    convertedJobId = result.jobId;
    assert.equal(
      emu.requests.slice(requests).filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path)).length,
      1,
      'not one submission',
    );
    assert.equal(result.files.length, 1, 'not one output');
    // The job's record names the converted graph, not the UI file.
    await extension.jobsView.provider.model();
    const workflowFile = extension.jobsView.provider.allEntries().find((e) => e.jobId === result.jobId)
      ?.record?.workflowFile;
    assert.ok(
      workflowFile && workflowFile.endsWith('ui-convert.api.json'),
      `the record's workflow file: ${workflowFile}`,
    );
    assert.deepEqual(JSON.parse(fs.readFileSync(workflowFile, 'utf8')), EXPECTED_API);
    // The Jobs view's "workflow" child: the graph the server received.
    const opened = await vscode.commands.executeCommand<OpenedJobDocument | undefined>(
      'comfyCloud.openJobWorkflow',
      result.jobId,
    );
    assert.ok(opened, 'the job workflow did not open');
    assert.equal(opened.format, 'api');
    assert.deepEqual(JSON.parse(opened.document.getText()), EXPECTED_API);
    await closeAll();
  });

  test('Open Workflow from Image on a job\'s output opens the graph that made it (its "prompt" chunk); a PNG without a workflow says so', async () => {
    assert.ok(convertedJobId, 'no job from the previous test');
    const output = await outputOf(convertedJobId);
    const result = await vscode.commands.executeCommand<OpenImageWorkflowResult>(
      'comfyCloud.openWorkflowFromImage',
      output,
    );
    assert.equal(result?.status, 'opened', JSON.stringify(result?.error));
    assert.equal(result.promptFrom, 'prompt');
    const prompt = result.prompt!;
    assert.equal(prompt.uri.scheme, 'untitled');
    assert.match(prompt.uri.path, /converted_\d+_\.api\.json$/);
    assert.deepEqual(JSON.parse(prompt.getText()), EXPECTED_API);
    await closeAll();

    const plain = workspaceFile('plain.png');
    fs.writeFileSync(plain.fsPath, PLAIN_PNG);
    try {
      const from = shown.length;
      const none = await vscode.commands.executeCommand<OpenImageWorkflowResult>(
        'comfyCloud.openWorkflowFromImage',
        plain,
      );
      assert.equal(none?.status, 'refused');
      assert.equal(none.workflow, undefined);
      assert.equal(none.prompt, undefined);
      const said = await until('the message', () => shown.slice(from).find((n) => n.severity === 'error'));
      assert.match(said.message, /workflow/i);
      // Not a PNG at all.
      const notPng = await vscode.commands.executeCommand<OpenImageWorkflowResult>(
        'comfyCloud.openWorkflowFromImage',
        workspaceFile('invert.json'),
      );
      assert.equal(notPng?.status, 'refused');
      assert.equal(notPng.error?.code, 'not_png');
    } finally {
      fs.rmSync(plain.fsPath, { force: true });
    }
  });

  test('Open Workflow from Image on a PNG with a workflow but no "prompt" chunk opens the workflow and its conversion', async () => {
    // A PNG saved with only the UI workflow (a `workflow` tEXt chunk, before IEND), as an editor export can be.
    const chunks = extractChunks(PLAIN_PNG);
    const ui = fs.readFileSync(workspaceFile('ui-convert.json').fsPath, 'utf8');
    chunks.splice(chunks.length - 1, 0, pngText.encode('workflow', JSON.stringify(JSON.parse(ui))));
    const image = workspaceFile('workflow-only.png');
    fs.writeFileSync(image.fsPath, encodeChunks(chunks));
    try {
      const result = await vscode.commands.executeCommand<OpenImageWorkflowResult>(
        'comfyCloud.openWorkflowFromImage',
        image,
      );
      assert.equal(result?.status, 'opened', JSON.stringify(result?.error));
      assert.equal(result.promptFrom, 'converted');
      assert.equal(result.workflow?.uri.path.split('/').pop(), 'workflow-only.ui.json');
      assert.deepEqual(JSON.parse(result.workflow!.getText()), JSON.parse(ui));
      assert.equal(result.prompt?.uri.path.split('/').pop(), 'workflow-only.api.json');
      assert.deepEqual(JSON.parse(result.prompt!.getText()), EXPECTED_API);
      // Run Again needs the graph that made the image: refused, nothing sent.
      const requests = emu.requests.length;
      const again = await vscode.commands.executeCommand<RunAgainResult>('comfyCloud.runAgainFromImage', image, {
        confirm: false,
      });
      assert.equal(again?.status, 'refused');
      assert.equal(again.error?.code, 'png_no_prompt');
      assert.equal(emu.requests.length, requests, 'a request was sent');
    } finally {
      await closeAll();
      fs.rmSync(image.fsPath, { force: true });
    }
  });

  test('Run Again from Image submits the image\'s "prompt" as a new job with a new Idempotency-Key, followed to its end', async () => {
    assert.ok(convertedJobId, 'no job from the previous tests');
    const output = await outputOf(convertedJobId);
    const requests = emu.requests.length;
    const result = await vscode.commands.executeCommand<RunAgainResult>('comfyCloud.runAgainFromImage', output, {
      confirm: false,
    });
    assert.equal(result?.status, 'succeeded', JSON.stringify(result));
    assert.ok('jobId' in result && result.jobId && result.jobId !== convertedJobId, 'not a new job');
    const posts = emu.requests.slice(requests).filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path));
    assert.equal(posts.length, 1, 'not one submission');
    const firstKey = emu.requests
      .slice(0, requests)
      .filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path))
      .map((r) => r.headers['idempotency-key']);
    assert.ok(posts[0]!.headers['idempotency-key'], 'no Idempotency-Key');
    assert.ok(!firstKey.includes(posts[0]!.headers['idempotency-key'] as string), 'an Idempotency-Key was reused');
    // The new job's workflow is the image's prompt: the graph of the first job.
    const opened = await vscode.commands.executeCommand<OpenedJobDocument | undefined>(
      'comfyCloud.openJobWorkflow',
      result.jobId,
    );
    assert.deepEqual(JSON.parse(opened!.document.getText()), EXPECTED_API);
    await closeAll();
  });
});
