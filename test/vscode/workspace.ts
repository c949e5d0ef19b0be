// The fixture workspace the suites run in, shared by them (not a suite itself: index.ts loads only *.test.js).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ComfyCloudApi } from '../../src/extension/api';

/**
 * The URI of `name` (a relative path) in the first workspace folder: the copy of test/fixtures/workspace the driver
 * (test/e2e/exthost.mjs or electron.mjs) opens. Throws an AssertionError when no folder is open.
 */
export function workspaceFile(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open (the driver opens a copy of test/fixtures/workspace)');
  return vscode.Uri.joinPath(folder.uri, name);
}

/** The id of the extension under test (the packaged .vsix the driver installs). */
export const EXTENSION_ID = 'comfy-cloud.comfy-cloud';

/** Activates the extension under test (once; later calls get the same API) and returns its API. */
export async function activateExtension(): Promise<ComfyCloudApi> {
  const ext = vscode.extensions.getExtension<ComfyCloudApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} not found`);
  return ext.activate();
}
