// The fixture workspace the suites run in, shared by them (not a suite itself: index.ts loads only *.test.js).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

/**
 * The URI of `name` (a relative path) in the first workspace folder: the copy of test/fixtures/workspace the driver
 * (test/e2e/exthost.mjs or electron.mjs) opens. Throws an AssertionError when no folder is open.
 */
export function workspaceFile(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the driver opens a copy of test/fixtures/workspace)');
  return vscode.Uri.joinPath(folder.uri, name);
}
