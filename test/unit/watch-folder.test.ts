/**
 * Watching a folder that may not exist yet (core util/watchFolder.ts): a job's output folder is made only when its
 * first output is written, and the monitor, opened before, must still see the output arrive.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { watchFolderToBe } from '../../src/core/util';
import { tempDir } from './tmp';

describe('watchFolderToBe: a folder watched before it exists', () => {
  let watcher: { close(): void } | undefined;
  // Closed whatever the test did: a watch left open would keep the run from ending.
  afterEach(() => watcher?.close());

  it('a folder made later, three levels below the nearest existing one: a file written into it is seen', async function () {
    // Without the watch of the folders above, nothing is ever seen: the test fails by its timeout.
    this.timeout(5000);
    const root = tempDir('cc-watch-');
    const dir = path.join(root, '.comfy', 'outputs', 'job-1');
    const file = path.join(dir, 'ComfyUI_00001_.png');
    let seen!: () => void;
    const written = new Promise<void>((resolve) => (seen = resolve));
    watcher = watchFolderToBe(dir, () => fs.existsSync(file) && seen());
    await fs.promises.mkdir(dir, { recursive: true });
    await fs.promises.writeFile(file, 'png');
    await written;
  });
});
