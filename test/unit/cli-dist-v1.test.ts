/**
 * The shipped CLI (`node dist/cli.js` in a child process, against the emulator it carries) with `--api v1`: the
 * commands of a job's life on the deprecated v1 API, and those refused by capability, each checked by its exit code,
 * its stdout and the files it writes.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invertWorkflow } from './builders';
import { UUID, assertSolid, solidPng, type Json } from './harness';

import { useShippedCli } from './cli-dist.fixtures';

describe('the shipped CLI (node dist/cli.js, every command against its own emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle.
  this.timeout(60_000);
  const shipped = useShippedCli();
  const { cli, ok, write } = shipped;

  describe('--api v1 commands', () => {
    let promptId: string;
    let uploaded: string;

    it('submit --wait --out: the prompt id, then the PNG written; one deprecation note on stderr', async () => {
      const r = await ok(
        [
          'submit',
          write('v1.json', invertWorkflow({ prefix: 'v1dist' })),
          '--wait',
          '--out',
          path.join(shipped.dir, 'v1-out'),
        ],
        { v1: true },
      );
      const [id, file, ...rest] = r.stdout.trim().split('\n');
      assert.match(id!, UUID);
      assert.deepEqual(rest, []);
      assertSolid(fs.readFileSync(file!), 64, 64, [0, 255, 255]);
      assert.equal(r.stderr.match(/v1 API is deprecated/g)?.length, 1);
      promptId = id!;
    });

    it("status prints the job's summary line as on v2; watch --out writes the outputs of a finished prompt", async () => {
      const status = await ok(['status', promptId], { v1: true });
      assert.equal(status.stdout, `${promptId} succeeded · 1 output(s)\n`);
      const out = path.join(shipped.dir, 'v1-watched');
      const watched = await ok(['watch', promptId, '--out', out], { v1: true });
      const file = watched.stdout.trim();
      assert.equal(path.dirname(file), out);
      assertSolid(fs.readFileSync(file), 64, 64, [0, 255, 255]);
    });

    it('upload prints the name to use in a workflow; upload --mask --original-ref uploads a mask of it', async () => {
      uploaded = (await ok(['upload', write('v1-red.png', solidPng(4, 4, [255, 0, 0]))], { v1: true })).stdout.trim();
      assert.match(uploaded, /\.png$/);
      const mask = await ok(
        [
          'upload',
          write('v1-mask.png', solidPng(4, 4, [0, 0, 0])),
          '--mask',
          '--original-ref',
          JSON.stringify({ filename: uploaded, subfolder: '', type: 'input' }),
        ],
        { v1: true },
      );
      assert.match(mask.stdout.trim(), /\.png$/);
    });

    it('object-info --class C prints `class_type  display name  category`; --json the node definitions map', async () => {
      const one = await ok(['object-info', '--class', 'SaveImage'], { v1: true });
      assert.equal(one.stdout, 'SaveImage  Save Image  image\n');
      const all = JSON.parse((await ok(['object-info', '--json'], { v1: true })).stdout) as Json;
      assert.ok(
        ['EmptyImage', 'ImageInvert', 'SaveImage', 'LoadImage'].every((c) => c in all),
        Object.keys(all).join(', '),
      );
    });

    it('convert converts with the node definitions v1 serves (GET /api/object_info, X-API-Key)', async () => {
      const ui = {
        nodes: [{ id: 1, type: 'EmptyImage', mode: 0, inputs: [], outputs: [], widgets_values: [4, 4, 1, 255] }],
        links: [],
        version: 0.4,
      };
      const r = await ok(['convert', write('v1-ui.json', ui), '--refresh-definitions'], { v1: true });
      assert.deepEqual(JSON.parse(r.stdout)['1'].inputs, { width: 4, height: 4, batch_size: 1, color: 255 });
      assert.match(r.stderr, /node definitions: fetched from http:\/\/\S+\/api\/object_info/);
    });

    it('jobs runs under --api v1 as under v2: the remembered prompt, with its status', async () => {
      const r = await ok(['jobs'], { v1: true });
      assert.match(r.stdout, new RegExp(`^${promptId}  succeeded  `, 'm'));
    });

    it("what v1 cannot do is refused by capability in the core's words (exit 2): a job's stored workflow", async () => {
      const r = await cli(['workflow', promptId], { v1: true });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /the v1 API of this connection keeps no workflow of a job \(drop --api v1\)/);
    });
  });
});
