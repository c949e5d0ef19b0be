// The extension inside a real VS Code extension host (code-server's Node extension host, or desktop VS Code via
// @vscode/test-electron), against the emulator started in-process here. Runs in the fixture workspace
// (test/fixtures/workspace, copied to a temporary folder by the drivers).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceFile } from './workspace';
import { PNG } from 'pngjs';
import { startEmulator } from '../../src/emulator';
import { Commands } from '../../src/extension/platform/constants';

const EXTENSION_ID = 'comfy-cloud.comfy-cloud';
// The ids the code registers (constants.ts), checked against what is registered and what package.json contributes.
const COMMANDS = Object.values(Commands);

interface SubmitResult {
  jobId?: string;
  status: string;
  files: string[];
  error?: { code: string; message: string };
}
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/** Method and path of every request the emulator saw since `from`. */
function requestsSince(emu: Emulator, from: number): string[] {
  return emu.requests.slice(from).map((r) => `${r.method} ${r.path}`);
}

/** Checks a PNG file: signature, IHDR 64×64, every pixel `rgb`. */
function assertPng(file: string, rgb: [number, number, number]): void {
  assert.ok(fs.existsSync(file), `output file ${file} does not exist`);
  const bytes = fs.readFileSync(file);
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'not a PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR', 'first chunk is not IHDR');
  assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [64, 64], 'IHDR size is not 64×64');
  const png = PNG.sync.read(bytes);
  const want = rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
  for (let i = 0; i < png.data.length; i += 4) {
    const got = [png.data[i], png.data[i + 1], png.data[i + 2]].map((v) => v!.toString(16).padStart(2, '0')).join('');
    if (got !== want) assert.fail(`pixel ${i / 4} of ${path.basename(file)} is #${got}, expected #${want}`);
  }
}

suite('Comfy Cloud in a real VS Code extension host', () => {
  let emu: Emulator;

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0, nodeDelayMs: 20 });
    // comfyCloud.baseUrl is machine-scoped: the extension reads only the user's own value. The fixture workspace's
    // .vscode/settings.json points it at a dead port on purpose; that value must be ignored.
    const config = vscode.workspace.getConfiguration('comfyCloud');
    await config.update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    const seen = vscode.workspace.getConfiguration('comfyCloud').inspect<string>('baseUrl');
    assert.equal(
      seen?.globalValue,
      emu.baseUrl,
      `the user value of comfyCloud.baseUrl did not take: ${JSON.stringify(seen)}`,
    );
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('the extension is installed and activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} not found`);
    await ext.activate();
    assert.equal(ext.isActive, true);
    console.log(
      `    (VS Code ${vscode.version}, ${vscode.env.appName}, Node ${process.version}, extension at ${ext.extensionPath})`,
    );
  });

  test('every command in constants.ts is registered', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const id of COMMANDS) assert.ok(all.includes(id), `command ${id} is not registered`);
  });

  test("package.json's contributed commands are exactly the registered ones", async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const contributed = ext.packageJSON.contributes.commands as Array<{
      command: string;
      title: string;
      category?: string;
    }>;
    // VS Code adds `<view id>.focus`, `.open`, … for each contributed view: those are the views', not ours.
    const views = Object.values(ext.packageJSON.contributes.views as Record<string, Array<{ id: string }>>)
      .flat()
      .map((v) => v.id);
    const all = await vscode.commands.getCommands(true);
    for (const view of views)
      assert.ok(all.includes(`${view}.focus`), `view ${view} is not contributed (no ${view}.focus)`);
    const registered = all.filter((c) => c.startsWith('comfyCloud.') && !views.some((v) => c.startsWith(`${v}.`)));
    assert.deepEqual(contributed.map((c) => c.command).sort(), [...registered].sort());
    assert.deepEqual(contributed.map((c) => c.command).sort(), [...COMMANDS].sort());
    const submit = contributed.find((c) => c.command === 'comfyCloud.submitWorkflow')!;
    assert.equal(`${submit.category}: ${submit.title}`, 'Comfy Cloud: Submit Workflow');
    const props = ext.packageJSON.contributes.configuration.properties;
    assert.equal(props['comfyCloud.baseUrl'].scope, 'machine');
    assert.equal(props['comfyCloud.baseUrl'].default, 'http://127.0.0.1:8189');
    assert.equal(props['comfyCloud.outputDirectory'].default, '');
  });

  test('Submit Workflow on invert.json produces the inverted PNG in .comfy/outputs/<job-id>/', async () => {
    const from = emu.requests.length;
    const uri = workspaceFile('invert.json');
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', uri);
    assert.ok(result, 'the command returned nothing');
    assert.equal(result.status, 'succeeded', `job did not succeed: ${JSON.stringify(result)}`);
    assert.ok(result.jobId, 'no job id');
    assert.equal(result.files.length, 1, `expected one output: ${JSON.stringify(result.files)}`);
    const file = result.files[0]!;
    assert.ok(path.isAbsolute(file), `not an absolute path: ${file}`);
    const expectedDir = path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, '.comfy', 'outputs');
    assert.ok(file.startsWith(expectedDir + path.sep), `output ${file} is not under ${expectedDir}`);
    assert.ok(file.includes(result.jobId), `output ${file} is not in the job's folder ${result.jobId}`);
    assertPng(file, [0x00, 0xff, 0xff]);
    // The job went to the user's (emulator) URL, not to the workspace settings' dead port.
    const seen = requestsSince(emu, from);
    assert.ok(
      seen.some((r) => /^POST .*\/jobs/.test(r)),
      `the emulator saw no job submission: ${JSON.stringify(seen)}`,
    );
  });

  test("Submit Workflow without an argument submits the active editor's unsaved text", async () => {
    const doc = await vscode.workspace.openTextDocument(workspaceFile('invert.json'));
    const editor = await vscode.window.showTextDocument(doc);
    const at = doc.getText().indexOf('16711680');
    assert.ok(at >= 0, 'fixture invert.json has no color 16711680');
    // Green canvas instead of red: the inverted output is magenta. Not saved.
    await editor.edit((e) => e.replace(new vscode.Range(doc.positionAt(at), doc.positionAt(at + 8)), '65280'));
    assert.equal(doc.isDirty, true);
    try {
      const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow');
      assert.equal(result?.status, 'succeeded', `job did not succeed: ${JSON.stringify(result)}`);
      assert.equal(result.files.length, 1);
      assertPng(result.files[0]!, [0xff, 0x00, 0xff]);
    } finally {
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    }
  });

  test('a UI-format workflow is refused with a message naming API format, and nothing is sent', async () => {
    const from = emu.requests.length;
    const result = await vscode.commands.executeCommand<SubmitResult>(
      'comfyCloud.submitWorkflow',
      workspaceFile('ui-format.json'),
    );
    assert.ok(result, 'the command returned nothing');
    assert.notEqual(result.status, 'succeeded');
    assert.equal(result.jobId, undefined, `a job was created: ${JSON.stringify(result)}`);
    assert.equal(result.error?.code, 'workflow_format_ui', JSON.stringify(result));
    assert.match(result.error?.message ?? '', /API/, 'the message does not name API format');
    assert.deepEqual(requestsSince(emu, from), [], 'requests reached the emulator');
  });

  test("a 422 invalid_workflow puts a missing input's Problem on its node's key, not on a later node's field of that name", async () => {
    const uri = workspaceFile('missing-input.json');
    const text = [
      '{',
      '  "1": { "class_type": "EmptyImage", "inputs": { "width": 64, "height": 64, "batch_size": 1, "color": 0 } },',
      '  "2": { "class_type": "ImageInvert", "inputs": {} },',
      '  "3": { "class_type": "ImageInvert", "inputs": { "image": ["1", 0] } },',
      '  "4": { "class_type": "SaveImage", "inputs": { "images": ["3", 0], "filename_prefix": "missing" } }',
      '}',
    ].join('\n');
    fs.writeFileSync(uri.fsPath, text);
    const shown = new Promise<vscode.Diagnostic[]>((resolve) => {
      const sub = vscode.languages.onDidChangeDiagnostics((e) => {
        const found = e.uris.some((u) => u.toString() === uri.toString()) ? vscode.languages.getDiagnostics(uri) : [];
        if (found.length === 0) return;
        sub.dispose();
        resolve(found);
      });
    });
    try {
      const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', uri);
      assert.equal(result?.error?.code, 'invalid_workflow', JSON.stringify(result));
      const [problem, ...more] = await shown;
      assert.deepEqual(more, []);
      assert.match(problem!.message, /^image: /);
      // Line 2 (0-based) is node "2": the Problem covers its key `"2"`.
      assert.deepEqual(
        [problem!.range.start.line, problem!.range.start.character, problem!.range.end.character],
        [2, 2, 5],
      );
    } finally {
      fs.rmSync(uri.fsPath, { force: true });
    }
  });

  test('Set API Key / Clear API Key: the key kept in SecretStorage is what a token-protected server gets', async () => {
    const secured = await startEmulator({ port: 0, tokens: ['test-key-123'] });
    const config = () => vscode.workspace.getConfiguration('comfyCloud');
    const submit = () =>
      vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', workspaceFile('invert.json'));
    try {
      await config().update('baseUrl', secured.baseUrl, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('comfyCloud.clearApiKey');
      const without = await submit();
      assert.equal(without?.status, 'error', JSON.stringify(without));
      assert.equal(without.error?.code, 'unauthorized', JSON.stringify(without));

      assert.equal(await vscode.commands.executeCommand<boolean>('comfyCloud.setApiKey', 'test-key-123'), true);
      const withKey = await submit();
      assert.equal(withKey?.status, 'succeeded', JSON.stringify(withKey));
      const auth = secured.requests.filter((r) => r.method === 'POST').map((r) => r.headers.authorization);
      assert.ok(auth.includes('Bearer test-key-123'), `the submission did not carry the key: ${JSON.stringify(auth)}`);

      await vscode.commands.executeCommand('comfyCloud.clearApiKey');
      const cleared = await submit();
      assert.equal(cleared?.error?.code, 'unauthorized', JSON.stringify(cleared));
    } finally {
      await vscode.commands.executeCommand('comfyCloud.clearApiKey');
      await config().update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
      await secured.close();
    }
  });

  test('Show Log runs', async () => {
    await vscode.commands.executeCommand('comfyCloud.showLog');
  });

  test('with no file and no editor, Submit Workflow says what to open and sends nothing', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const from = emu.requests.length;
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow');
    assert.equal(result?.status, 'refused', JSON.stringify(result));
    assert.match(result.error?.message ?? '', /workflow/i);
    assert.deepEqual(requestsSince(emu, from), []);
  });

  test("jobs are shared with the CLI: one submitted from either is in the other's list", async () => {
    const { V2Client } = await import('../../src/core/v2/client');
    const { StateStore, defaultStateDir } = await import('../../src/core/state');
    // A job submitted the CLI's way (a durable run through the core into the shared state store)…
    const client = new V2Client({ baseUrl: emu.baseUrl });
    const store = new StateStore(defaultStateDir(process.env));
    const workflow = JSON.parse(fs.readFileSync(workspaceFile('invert.json').fsPath, 'utf8'));
    workflow['3'].inputs.filename_prefix = 'from-cli';
    const cliRun = await client.run(workflow, { store, clientName: 'cli' });
    await client.close();
    // …and one from the extension.
    const ext = (await vscode.commands.executeCommand(
      'comfyCloud.submitWorkflow',
      workspaceFile('invert.json'),
    )) as SubmitResult;
    assert.equal(ext.status, 'succeeded');
    const listed = (await vscode.commands.executeCommand('comfyCloud.showJobs', { list: true })) as {
      record: { jobId?: string; client?: string };
      status: string;
    }[];
    const fromCli = listed.find((j) => j.record.jobId === cliRun.final.job.id);
    const fromExt = listed.find((j) => j.record.jobId === ext.jobId);
    assert.ok(fromCli, `the CLI's job is not listed: ${JSON.stringify(listed)}`);
    assert.equal(fromCli.status, 'succeeded');
    assert.equal(fromCli.record.client, 'cli');
    assert.ok(fromExt, "the extension's job is not listed");
    assert.equal(fromExt.record.client, 'vscode');
    // The CLI reads the same records.
    assert.ok(
      (await store.list()).some((r) => r.jobId === ext.jobId),
      "the extension's job is not in the shared store",
    );
  });
});
