// The same extension-host suite (dist/test/vscode/index.js) in desktop VS Code, through @vscode/test-electron:
// for machines that can download VS Code (update.code.visualstudio.com). `npm test` does not use this; it runs the
// suite in code-server (test/e2e/exthost.mjs), which needs only npm and apt.
//
//   node esbuild.mjs && node test/e2e/electron.mjs          (on a headless Linux: xvfb-run -a node test/e2e/electron.mjs)
// env: VSCODE_VERSION (default 'stable'), WS_DIR (default: a temporary copy of test/fixtures/workspace)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, workspaceDir } from './launch.mjs';

const require = createRequire(import.meta.url);
const { runTests } = require('@vscode/test-electron');

const extensionTestsPath = path.join(ROOT, 'dist/test/vscode/index');
if (!fs.existsSync(`${extensionTestsPath}.js`)) {
  console.log(`electron: ${extensionTestsPath}.js is missing: run node esbuild.mjs first`);
  process.exit(1);
}
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfy-vscode-ud-'));
try {
  const code = await runTests({
    version: process.env.VSCODE_VERSION || 'stable',
    extensionDevelopmentPath: ROOT,
    extensionTestsPath,
    launchArgs: [
      workspaceDir(),
      '--disable-extensions',
      '--disable-workspace-trust',
      '--skip-welcome',
      '--skip-release-notes',
      `--user-data-dir=${userDataDir}`,
    ],
  });
  process.exitCode = code;
} catch (e) {
  console.log(`electron: the suite could not run in desktop VS Code: ${e instanceof Error ? e.message : e}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
