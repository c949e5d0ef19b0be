/**
 * Temporary folders of the unit tests: all under one root per test run, removed when the process exits, so a run
 * leaves nothing behind in the OS temp folder (a failed run too; a killed one leaves a single `cc-test-*` folder).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

let root: string | undefined;

/** A new empty folder named `<prefix>XXXXXX` under the run's root. */
export function tempDir(prefix: string): string {
  if (root === undefined) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-test-'));
    root = made;
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
  }
  return fs.mkdtempSync(path.join(root, prefix));
}

/**
 * A writer of test files into one new temporary folder (made at the first write, named `<prefix>XXXXXX`):
 * `write(name, content)` writes the file and returns its path; `write.dir()` is the folder.
 */
export function fileWriter(prefix: string): ((name: string, content: string | Buffer) => string) & { dir(): string } {
  let dir: string | undefined;
  const folder = (): string => (dir ??= tempDir(prefix));
  const write = (name: string, content: string | Buffer): string => {
    const file = path.join(folder(), name);
    fs.writeFileSync(file, content);
    return file;
  };
  return Object.assign(write, { dir: folder });
}
