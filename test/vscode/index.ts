// Entry point of the extension-host suite (`extensionTestsPath` = dist/test/vscode/index). The extension host calls
// run(); the suite's files are the sibling bundles *.test.js (esbuild.mjs builds test/vscode/*.ts into
// dist/test/vscode/). Used by test/e2e/exthost.mjs (code-server) and test/e2e/electron.mjs (@vscode/test-electron).
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 180_000, reporter: 'spec' });
  const grep = process.env.COMFY_EXTHOST_GREP;
  if (grep) mocha.grep(grep);
  for (const f of fs.readdirSync(__dirname).sort()) {
    if (f.endsWith('.test.js')) mocha.addFile(path.join(__dirname, f));
  }
  return new Promise((resolve, reject) => {
    try {
      const runner = mocha.run(() => {
        const { passes = 0, failures = 0, pending = 0 } = runner.stats ?? {};
        // A skipped test is not a passed one: pending tests count as failed (this suite never skips).
        const failed = failures + pending;
        if (pending > 0) console.log(`${pending} test(s) were pending (skipped); counted as failed`);
        // The line test/e2e/exthost.mjs reads the counts from.
        console.log(`comfy-exthost-result: ${passes} passed, ${failed} failed`);
        if (failed > 0 || passes === 0)
          reject(new Error(`${failed} of ${passes + failed} extension-host tests failed`));
        else resolve();
      });
    } catch (err) {
      console.error(err);
      reject(err);
    }
  });
}
