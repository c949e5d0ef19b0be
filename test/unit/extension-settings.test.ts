/**
 * The extension's settings are read, written and followed in one module, src/extension/platform/config.ts (`Config`): a rule
 * there (machine-scoped settings read from the user's own values only) then holds everywhere. A source scan: any other
 * module under src/extension reaching for the configuration itself fails here.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const extensionDir = path.resolve(__dirname, '../../../src/extension');
/** The one module that reads and writes the settings, relative to src/extension. */
const CONFIG = path.join('platform', 'config.ts');

/** Every TypeScript file under `dir`, relative to src/extension. */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : p.endsWith('.ts') ? [path.relative(extensionDir, p)] : [];
  });
}

/** The files under src/extension, other than config.ts, whose code names `api` (the file and the first line naming it). */
function usesOutsideConfig(api: RegExp): string[] {
  const files = sources(extensionDir);
  assert.ok(
    files.length >= 20 && files.includes(CONFIG) && files.some((f) => f.startsWith('monitor')),
    `the scan found ${files.join(', ')}`,
  );
  assert.match(
    fs.readFileSync(path.join(extensionDir, CONFIG), 'utf8'),
    api,
    'config.ts itself does not use it: the pattern is wrong',
  );
  return files
    .filter((f) => f !== CONFIG)
    .flatMap((f) => {
      const line = fs
        .readFileSync(path.join(extensionDir, f), 'utf8')
        .split('\n')
        .findIndex((l) => api.test(l));
      return line < 0 ? [] : [`${f}:${line + 1}`];
    });
}

describe('extension settings: read only through Config', () => {
  it('rule: no module under src/extension except config.ts calls getConfiguration (every setting is read and written through Config)', () => {
    assert.deepEqual(usesOutsideConfig(/\bgetConfiguration\b/), []);
  });

  it('rule: no module under src/extension except config.ts listens to onDidChangeConfiguration (Config.onDidChange names the settings)', () => {
    assert.deepEqual(usesOutsideConfig(/\bonDidChangeConfiguration\b/), []);
  });
});
