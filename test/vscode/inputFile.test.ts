// The extension reads a workflow file from disk (not open in an editor) with the core's rules (src/core/util/inputFile.ts):
// a file that is not UTF-8 is refused with the CLI's words before any request, instead of being submitted with
// replacement characters. Runs in the fixture workspace (test/fixtures/workspace, copied by the drivers).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';

interface SubmitResult {
  jobId?: string;
  status: string;
  error?: { code: string; message: string };
}

/** Writes `bytes` as `name` in the workspace folder (a fresh name, so no editor has it open). */
function writeWorkspaceFile(name: string, bytes: Buffer): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the driver opens a copy of test/fixtures/workspace)');
  const uri = vscode.Uri.joinPath(folder.uri, name);
  fs.writeFileSync(uri.fsPath, bytes);
  return uri;
}

const WORKFLOW = '{"1": {"class_type": "LoadImage", "inputs": {"image": "café.png"}}}';

suite('Workflow files read from disk by the extension', () => {
  test('a Latin-1 workflow file is refused with not_utf8 and the offset of the bad byte; no job is created', async () => {
    const uri = writeWorkspaceFile('latin1-workflow.json', Buffer.from(WORKFLOW, 'latin1'));
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', uri);
    assert.equal(result?.status, 'refused', JSON.stringify(result));
    assert.equal(result.jobId, undefined);
    assert.equal(result.error?.code, 'not_utf8', JSON.stringify(result));
    assert.match(
      result.error?.message ?? '',
      /^latin1-workflow\.json: the file is not UTF-8 \(invalid UTF-8 at byte \d+\): save it as UTF-8$/,
    );
  });

  test('a UTF-16 workflow file is refused with not_utf8 (looks like UTF-16)', async () => {
    const uri = writeWorkspaceFile('utf16-workflow.json', Buffer.from('\ufeff' + WORKFLOW, 'utf16le'));
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', uri);
    assert.equal(result?.error?.code, 'not_utf8', JSON.stringify(result));
    assert.match(result.error?.message ?? '', /looks like UTF-16/);
  });
});
