/**
 * One format for the whole repository: every file git tracks that Prettier formats (.prettierrc.json, minus
 * .prettierignore) is already in Prettier's form. `npm run lint` runs the same check (`prettier --check .`); this test
 * puts it in CI, which runs the tests and not lint.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as prettier from 'prettier';

const root = path.resolve(__dirname, '../../..');

describe('format: every tracked file is in Prettier form', function () {
  // Prettier parses some 400 files.
  this.timeout(120_000);

  it('prettier --check finds nothing to change', async () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    const ignorePath = path.join(root, '.prettierignore');
    const unformatted: string[] = [];
    let checked = 0;
    for (const file of files) {
      const filepath = path.join(root, file);
      const info = await prettier.getFileInfo(filepath, { ignorePath });
      if (info.ignored || info.inferredParser === null) continue;
      const options = await prettier.resolveConfig(filepath);
      const text = await readFile(filepath, 'utf8');
      if (!(await prettier.check(text, { ...options, filepath }))) unformatted.push(file);
      checked++;
    }
    assert.ok(checked > 100, `only ${checked} files checked: is git listing the repository?`);
    assert.deepEqual(unformatted, [], `not in Prettier form; run: npx prettier --write ${unformatted.join(' ')}`);
  });
});
