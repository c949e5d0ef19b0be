import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository's root: the folder of esbuild.mjs above this compiled test (`out/test/unit/`). */
export function repositoryRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'esbuild.mjs'))) {
    const up = path.dirname(dir);
    assert.notEqual(up, dir, 'esbuild.mjs not found above the tests');
    dir = up;
  }
  return dir;
}
