/**
 * Every source file stays readable whole: at most 500 lines (after Prettier) for the code, tests, scripts, styles and
 * pages git tracks. Data is exempt: JSON (schemas, the manifest, locale bundles), the byte-exact fixtures of tests and
 * the samples users open. A file that grows past the bound is split by responsibility, not trimmed.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const MAX_LINES = 500;
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|css|html|sh)$/;
/** Data, not code: byte-exact inputs of tests and the samples users open. */
const DATA = [/^test\/fixtures\//, /^media\/samples\//];

describe('file size: every source file is at most 500 lines', () => {
  it('no tracked source file is longer than 500 lines', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
      .split('\0')
      .filter((f) => SOURCE.test(f) && !DATA.some((d) => d.test(f)));
    assert.ok(files.length > 100, `only ${files.length} files listed: is git listing the repository?`);
    const long = files
      .map((f) => ({ f, lines: readFileSync(path.join(root, f), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    assert.deepEqual(long, [], `longer than ${MAX_LINES} lines; split each by responsibility`);
  });
});
