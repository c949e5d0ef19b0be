/**
 * The shipped CLI: `dist/cli.js`, the file a user runs (`npm test` and `npm run package` build it with
 * `node esbuild.mjs --production`), run as a user runs it, `node dist/cli.js …` in a child process, against the
 * emulator the same file carries (`dist/cli.js emulator`): the program itself and the v2 commands, each checked by its
 * exit code, its stdout and the files it writes. The other CLI tests run the CLI in-process from tsc's output, which is
 * fast but is not what ships: a bundler can turn a working import into a crash only in the bundle.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashBytes } from '../../src/core/util';
import { invertWorkflow } from './builders';
import { BLAKE3, UUID, assertSolid, solidPng, type Json } from './harness';
import { repositoryRoot } from './repositoryRoot';

import { listed, useShippedCli } from './cli-dist.fixtures';

describe('the shipped CLI (node dist/cli.js, every command against its own emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle.
  this.timeout(60_000);
  const shipped = useShippedCli();
  const { cli, ok, write } = shipped;

  describe('the program', () => {
    it('--version prints the package version; --help lists the commands (exit 0); no command: the help on stderr, exit 2', async () => {
      const version = await ok(['--version']);
      assert.equal(
        version.stdout.trim(),
        (JSON.parse(fs.readFileSync(path.join(repositoryRoot(), 'package.json'), 'utf8')) as Json).version,
      );
      const help = await ok(['--help']);
      assert.ok(listed(help.stdout).includes('submit') && listed(help.stdout).includes('models'), help.stdout);
      const none = await cli([]);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /^Usage: comfy-cloud/m);
      assert.equal(none.stdout, '');
    });
  });

  describe('v2 commands', () => {
    const workflow = invertWorkflow({ prefix: 'dist' });
    let jobId: string;

    it('submit --wait --out: the job id, then the PNG written (64×64 cyan: red inverted); exit 0', async () => {
      const out = path.join(shipped.dir, 'submitted');
      const r = await ok(['submit', write('invert.json', workflow), '--wait', '--out', out]);
      const [id, file, ...rest] = r.stdout.trim().split('\n');
      assert.match(id!, UUID);
      assert.deepEqual(rest, []);
      assert.equal(path.dirname(file!), out);
      assertSolid(fs.readFileSync(file!), 64, 64, [0, 255, 255]);
    });

    it('submit --json: one JSON document, the job; watch --out follows it to its end and writes its output; status then says succeeded', async () => {
      const submitted = await ok(['submit', write('invert2.json', workflow), '--json']);
      const job = JSON.parse(submitted.stdout) as Json;
      assert.match(job.id, UUID);
      jobId = job.id;
      const out = path.join(shipped.dir, 'watched');
      const watched = await ok(['watch', jobId, '--out', out]);
      const file = watched.stdout.trim();
      assert.equal(path.dirname(file), out);
      assertSolid(fs.readFileSync(file), 64, 64, [0, 255, 255]);
      assert.match(watched.stderr, new RegExp(`job ${jobId} succeeded`));
      const status = await ok(['status', jobId]);
      assert.match(status.stdout, new RegExp(`^${jobId} succeeded`));
      const json = JSON.parse((await ok(['status', jobId, '--json'])).stdout) as Json;
      assert.equal(json.status, 'succeeded');
      assert.equal(json.outputs.length, 1);
    });

    it('workflow prints the workflow behind the job (its format on stderr)', async () => {
      const r = await ok(['workflow', jobId]);
      assert.deepEqual(JSON.parse(r.stdout), workflow);
      assert.match(r.stderr, /^format: api/m);
    });

    it('jobs lists the remembered jobs with their state; forget removes one from the list (the job itself stays)', async () => {
      const listing = await ok(['jobs']);
      assert.match(listing.stdout, new RegExp(`^${jobId}  succeeded  `, 'm'));
      const before = JSON.parse((await ok(['jobs', '--json'])).stdout) as Json;
      assert.ok(
        before.remembered.some((row: Json) => row.record.jobId === jobId),
        'the job is remembered',
      );
      await ok(['forget', jobId]);
      const after = JSON.parse((await ok(['jobs', '--json'])).stdout) as Json;
      assert.ok(!after.remembered.some((row: Json) => row.record.jobId === jobId), 'the job is still remembered');
      assert.match((await ok(['status', jobId])).stdout, /succeeded/, 'the job itself is untouched');
    });

    it('submit --set runs a batch (the batch id first, a line per job and its file); batch status lists its variations', async () => {
      const out = path.join(shipped.dir, 'batch');
      const r = await ok(['submit', write('invert-batch.json', workflow), '--set', '1.width=16..17', '--out', out]);
      const [id, ...rest] = r.stdout.trim().split('\n');
      assert.match(id!, /^b-[0-9a-f-]{36}$/);
      assert.equal(rest.filter((l) => / succeeded /.test(l)).length, 2);
      assert.deepEqual(fs.readdirSync(out).sort(), ['0-16', '1-17']);
      const status = await ok(['batch', 'status', id!]);
      assert.match(status.stdout, new RegExp(`^${id} 2 succeeded$`, 'm'));
    });

    it('upload prints the asset id; asset its record; download writes the same bytes; delete-asset deletes it (asset then exits 1, not_found)', async () => {
      const bytes = Buffer.from('the shipped CLI uploads these bytes\n');
      const assetId = (await ok(['upload', write('note.txt', bytes)])).stdout.trim();
      assert.match(assetId, UUID);
      const record = JSON.parse((await ok(['asset', assetId])).stdout) as Json;
      assert.equal(record.id, assetId);
      assert.equal(record.size_bytes, bytes.length);
      assert.match(record.hash, BLAKE3);
      assert.equal(record.hash, await hashBytes(bytes));
      const target = path.join(shipped.dir, 'downloaded.txt');
      const downloaded = await ok(['download', assetId, target]);
      assert.equal(downloaded.stdout.trim(), target);
      assert.deepEqual(fs.readFileSync(target), bytes);
      await ok(['delete-asset', assetId]);
      const gone = await cli(['asset', assetId]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /\[not_found\] HTTP 404/);
    });

    it('submit --input NODE.FIELD=@file uploads the file (hashed by dist/hashWorker.js) and runs LoadImage on it: a cyan PNG of its size', async () => {
      const red = write('red.png', solidPng(12, 7, [255, 0, 0]));
      const wf = write('load.json', {
        '1': { class_type: 'LoadImage', inputs: { image: 'replaced' } },
        '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
        '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'loaded' } },
      });
      const r = await ok([
        'submit',
        wf,
        '--input',
        `1.image=@${red}`,
        '--wait',
        '--out',
        path.join(shipped.dir, 'loaded'),
      ]);
      const [, file, ...rest] = r.stdout.trim().split('\n');
      assert.deepEqual(rest, []);
      assertSolid(fs.readFileSync(file!), 12, 7, [0, 255, 255]);
    });

    it('cancel cancels a running job (exit 0); watch of it then exits 1, saying canceled', async () => {
      const env = { COMFY_BASE_URL: shipped.slow.baseUrl };
      const job = JSON.parse(
        (await ok(['submit', write('slow.json', invertWorkflow({ prefix: 'slow' })), '--json'], { env })).stdout,
      ) as Json;
      assert.ok(['queued', 'running'].includes(job.status), job.status);
      await ok(['cancel', job.id], { env });
      const watched = await cli(['watch', job.id], { env });
      assert.equal(watched.code, 1);
      assert.match(watched.stderr, /canceled/);
    });

    it("convert converts a UI-format workflow with the server's node definitions (GET /api/object_info with the key); an API-format file is printed as it is", async () => {
      const ui = {
        last_node_id: 2,
        last_link_id: 1,
        nodes: [
          {
            id: 1,
            type: 'EmptyImage',
            mode: 0,
            inputs: [],
            outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }],
            widgets_values: [8, 8, 1, 0],
          },
          {
            id: 2,
            type: 'SaveImage',
            mode: 0,
            inputs: [{ name: 'images', type: 'IMAGE', link: 1 }],
            outputs: [],
            widgets_values: ['dist-ui'],
          },
        ],
        links: [[1, 1, 0, 2, 0, 'IMAGE']],
        version: 0.4,
      };
      const r = await ok(['convert', write('ui.json', ui)]);
      const api = JSON.parse(r.stdout) as Json;
      assert.deepEqual(Object.fromEntries(Object.entries(api).map(([id, n]) => [id, [n.class_type, n.inputs]])), {
        '1': ['EmptyImage', { width: 8, height: 8, batch_size: 1, color: 0 }],
        '2': ['SaveImage', { filename_prefix: 'dist-ui', images: ['1', 0] }],
      });
      assert.match(r.stderr, /converted UI-format workflow \(2 nodes\) to API format/);
      const text = JSON.stringify(workflow);
      assert.equal((await ok(['convert', write('api.json', text)])).stdout, `${text}\n`);
    });

    it('object-info is refused where the API serves no node definitions (v2): bad usage (exit 2)', async () => {
      const r = await cli(['object-info']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /the v2 API of this connection serves no node definitions/);
    });
  });
});
