/**
 * The `comfy-cloud` CLI's asset commands, run in-process against the emulator (Job and Asset API v2, Asset and its
 * endpoints): `upload` (with blake3 dedup: identical bytes are sent once), `asset`, `delete-asset` (404 not_found, 409
 * asset_in_use while a job uses the asset), `download` (a cut download leaves only a hidden .part and resumes
 * with Range to a byte-identical file) and `submit --input NODE.FIELD=@file` (LoadImage of an uploaded PNG).
 * Exit codes and the stdout/stderr contract as in cli.test.ts. No sleeps as synchronisation.
 */
import * as assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashBytes } from '../../src/core/util';
import { partialPaths } from '../../src/core/http/download';
import { startEmulator, type Emulator, type RecordedRequest } from '../../src/emulator';
import { BLAKE3, UUID, assertSolid, cliRunner, solidPng, type CliRun, type Json } from './harness';
import { tempDir } from './tmp';

/** The remembered-jobs store of these tests: a temporary folder, never the user's own. */
const stateDir = tempDir('cc-state-');

/** Runs the CLI in-process with this file's state folder. */
const cli = cliRunner(stateDir);

/** Runs against `emu` and insists on exit 0 (the message is the run's stderr). */
async function ok(emu: Emulator, args: string[]): Promise<CliRun> {
  const r = await cli(['--base-url', emu.baseUrl, ...args]);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r;
}

/** LoadImage → ImageInvert → SaveImage; LoadImage's `image` is what `--input 1.image=@file` fills in. */
function loadInvertSave(prefix: string): Json {
  return {
    '1': { class_type: 'LoadImage', inputs: { image: 'to be replaced' } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

function write(dir: string, name: string, content: Buffer | string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

/** The multipart uploads among `requests` (not from-hash, not HEAD by-hash). */
function multipartUploads(requests: RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.method === 'POST' && r.path === '/api/v2/assets');
}

describe('CLI comfy-cloud: asset commands', () => {
  let emu: Emulator;
  let dir: string;
  before(async () => {
    emu = await startEmulator({ port: 0 });
    dir = tempDir('cc-cli-assets-');
  });
  afterEach(() => emu.setFaults({ rules: [] }));
  after(async () => {
    await emu.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('upload --json prints exactly one JSON document, the asset record; the same file again is a dedup hit and its bytes are sent once', async () => {
    const bytes = randomBytes(100_000);
    const file = write(dir, 'data.bin', bytes);
    const before = emu.requests.length;
    const first = await ok(emu, ['upload', file, '--json']);
    const asset = JSON.parse(first.stdout) as Json;
    assert.match(asset.id, UUID);
    assert.match(asset.hash, BLAKE3);
    assert.equal(asset.hash, await hashBytes(bytes));
    assert.equal(asset.size_bytes, bytes.length);
    assert.equal(asset.file_path, 'data.bin', 'the file name by default');
    assert.match(first.stderr, /^uploaded blake3:/m);

    const second = await ok(emu, ['upload', file, '--json']);
    const again = JSON.parse(second.stdout) as Json;
    assert.match(second.stderr, /already there \(blake3:[0-9a-f]{64}\): no bytes sent/);
    assert.equal(again.created_new, false, 'the record says it was a dedup hit');
    assert.equal(again.id, asset.id, 'the asset already there');
    assert.equal(again.hash, asset.hash);
    assert.equal(multipartUploads(emu.requests.slice(before)).length, 1, 'one multipart POST /api/v2/assets in total');

    const plain = await ok(emu, ['upload', file]);
    assert.equal(plain.stdout, `${asset.id}\n`, 'without --json: the id alone on stdout');
  });

  it('upload --file-path P --tag a --tag b: the record carries the file_path and the tags', async () => {
    const file = write(dir, 'local-name.bin', randomBytes(5_000));
    const r = await ok(emu, ['upload', file, '--file-path', 'inputs/photo.bin', '--tag', 'a', '--tag', 'b', '--json']);
    const asset = JSON.parse(r.stdout) as Json;
    assert.equal(asset.file_path, 'inputs/photo.bin');
    assert.deepEqual(asset.tags, ['a', 'b']);
    const upload = multipartUploads(emu.requests).at(-1)!;
    assert.deepEqual(
      upload.parts?.filter((p) => p === 'tags'),
      ['tags', 'tags'],
      'one tags part per --tag',
    );
    const got = JSON.parse((await ok(emu, ['asset', asset.id])).stdout) as Json;
    assert.equal(got.file_path, 'inputs/photo.bin');
    assert.deepEqual(got.tags, ['a', 'b']);
  });

  it('asset <id> prints the record with a url that serves the bytes; asset <unknown id> exits 1 with not_found', async () => {
    const bytes = randomBytes(20_000);
    const id = JSON.parse((await ok(emu, ['upload', write(dir, 'record.bin', bytes), '--json'])).stdout).id as string;
    const before = emu.requests.length;
    const r = await ok(emu, ['asset', id]);
    const record = JSON.parse(r.stdout) as Json;
    assert.equal(record.id, id);
    assert.equal(record.size_bytes, bytes.length);
    assert.match(record.hash, BLAKE3);
    assert.ok(
      emu.requests.slice(before).some((q) => q.method === 'GET' && q.path === `/api/v2/assets/${id}`),
      'the record was read from the server (so its url is fresh)',
    );
    assert.equal(typeof record.url, 'string');
    const content = await fetch(record.url as string);
    assert.equal(content.status, 200);
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), bytes);

    const missing = await cli(['--base-url', emu.baseUrl, 'asset', randomUUID()]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /\[not_found\]/);
  });

  it('delete-asset <id> exits 0; deleting it again exits 1 with not_found', async () => {
    const id = JSON.parse((await ok(emu, ['upload', write(dir, 'doomed.bin', randomBytes(3_000)), '--json'])).stdout)
      .id as string;
    const del = await ok(emu, ['delete-asset', id]);
    assert.match(del.stderr, new RegExp(`deleted asset ${id}`));
    assert.equal((await cli(['--base-url', emu.baseUrl, 'asset', id])).code, 1, 'the record is gone');
    const again = await cli(['--base-url', emu.baseUrl, 'delete-asset', id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /\[not_found\]/);
  });

  it('download <asset-id> <file> cut after N bytes exits 1 leaving no file (only a hidden .part); the same command again resumes with Range to a byte-identical file', async () => {
    const bytes = randomBytes(1_000_000);
    const id = JSON.parse((await ok(emu, ['upload', write(dir, 'big.bin', bytes), '--json'])).stdout).id as string;
    const outDir = fs.mkdtempSync(path.join(dir, 'dl-'));
    const target = path.join(outDir, 'copy.bin');
    emu.setFaults({ rules: [{ on: 'content', kind: 'cutAfterBytes', bytes: 300_000, times: 1 }] });
    const before = emu.requests.length;

    const cut = await cli(['--base-url', emu.baseUrl, 'download', id, target]);
    assert.equal(cut.code, 1, cut.stderr);
    assert.equal(cut.stdout, '', 'no path printed for a download that did not finish');
    assert.match(cut.stderr, /broke off|ended after/);
    assert.equal(emu.faultLog.filter((f) => f.kind === 'cutAfterBytes').length, 1, 'the fault fired');
    assert.ok(!fs.existsSync(target), 'nothing at the target');
    assert.ok(fs.existsSync(partialPaths(target, id).part), 'a hidden .part is kept');
    assert.deepEqual(
      fs.readdirSync(outDir).filter((f) => !f.startsWith('.')),
      [],
      'only hidden files in the folder',
    );

    const done = await ok(emu, ['download', id, target]);
    assert.equal(done.stdout.trim(), path.resolve(target));
    assert.deepEqual(fs.readFileSync(target), bytes, 'byte-identical');
    assert.ok(!fs.existsSync(partialPaths(target, id).part), 'the .part became the file');
    const content = emu.requests
      .slice(before)
      .filter((q) => q.method === 'GET' && q.path === `/api/v2/assets/${id}/content`);
    assert.equal(content.length, 2);
    assert.equal(content[0].headers.range, undefined, 'the first run starts from 0');
    const resumed = /^bytes=(\d+)-$/.exec(String(content[1].headers.range));
    assert.ok(resumed, `the second run asks for the rest (Range: ${String(content[1].headers.range)})`);
    assert.ok(Number(resumed[1]) > 0 && Number(resumed[1]) <= 300_000, `resumed from ${resumed[1]}`);
  });

  it('submit --input 1.image=@red.png --wait --out DIR: LoadImage of the uploaded PNG, inverted: a cyan PNG of the same size', async () => {
    const red = write(dir, 'red.png', solidPng(12, 7, [255, 0, 0]));
    const wf = write(dir, 'load.json', JSON.stringify(loadInvertSave('loaded')));
    const out = path.join(dir, 'loaded-out');
    const r = await ok(emu, ['submit', wf, '--input', `1.image=@${red}`, '--wait', '--out', out]);
    const assetId = /uploaded .*red\.png as asset ([0-9a-f-]{36})/.exec(r.stderr)?.[1];
    assert.ok(assetId, r.stderr);
    const [, ...files] = r.stdout.trim().split('\n'); // the job id, then the files written
    assert.equal(files.length, 1, r.stdout);
    assert.ok(files[0].startsWith(out), files[0]);
    assertSolid(fs.readFileSync(files[0]), 12, 7, [0, 255, 255]);

    const jobId = /submitted job ([0-9a-f-]{36})/.exec(r.stderr)?.[1];
    assert.ok(jobId, r.stderr);
    const sent = JSON.parse((await ok(emu, ['workflow', jobId])).stdout) as Json;
    assert.deepEqual(sent['1'].inputs.image, {
      __type: 'core/ASSET',
      info: { id: assetId, hash: await hashBytes(fs.readFileSync(red)), file_path: 'red.png' },
    });
  });

  it('submit --input naming a node the workflow lacks exits 2 with a clear message, before any request', async () => {
    const x = write(dir, 'x.png', solidPng(2, 2, [0, 0, 255]));
    const wf = write(dir, 'nine.json', JSON.stringify(loadInvertSave('nine')));
    const before = emu.requests.length;
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--input', `9.image=@${x}`]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no_such_node/);
    assert.match(r.stderr, /no node "9" \(its nodes: 1, 2, 3\)/);
    assert.equal(r.stdout, '');
    assert.deepEqual(emu.requests.slice(before), [], 'no upload, no job');
  });

  it('submit --input without =@ exits 2 naming the expected form, before any request', async () => {
    const x = write(dir, 'y.png', solidPng(2, 2, [0, 0, 255]));
    const wf = write(dir, 'bad-input.json', JSON.stringify(loadInvertSave('bad')));
    const before = emu.requests.length;
    for (const value of [`1.image=${x}`, `image=@${x}`, '1.image=@']) {
      const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--input', value]);
      assert.equal(r.code, 2, value);
      assert.match(r.stderr, /--input takes NODE\.FIELD=@file/, value);
    }
    assert.deepEqual(emu.requests.slice(before), [], 'no upload, no job');
  });
});

describe('CLI comfy-cloud: delete-asset of an asset a job uses', () => {
  let emu: Emulator;
  let dir: string;
  before(async () => {
    // Each node takes a minute: the job stays queued or running until it is canceled.
    emu = await startEmulator({ port: 0, nodeDelayMs: 60_000 });
    dir = tempDir('cc-cli-in-use-');
  });
  after(async () => {
    await emu.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('exits 1 with asset_in_use and advice to delete it once the job has finished or to cancel the job; after cancel it deletes', async () => {
    const red = write(dir, 'red.png', solidPng(2, 2, [255, 0, 0]));
    const wf = write(dir, 'load.json', JSON.stringify(loadInvertSave('busy')));
    const sub = await ok(emu, ['submit', wf, '--input', `1.image=@${red}`, '--json']);
    const job = JSON.parse(sub.stdout) as Json;
    assert.ok(['queued', 'running'].includes(job.status), job.status);
    const assetId = /as asset ([0-9a-f-]{36})/.exec(sub.stderr)?.[1];
    assert.ok(assetId, sub.stderr);

    const refused = await cli(['--base-url', emu.baseUrl, 'delete-asset', assetId]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /\[asset_in_use\] HTTP 409/);
    assert.match(refused.stderr, /once the job .* finished/, 'when to delete it');
    assert.match(refused.stderr, /cancel/, 'or what else to do');
    assert.doesNotMatch(refused.stderr, /expired/, 'the emulator refuses only while a job is queued or running');

    await ok(emu, ['cancel', job.id]);
    const watched = await cli(['--base-url', emu.baseUrl, 'watch', job.id, '--quiet']);
    assert.equal(watched.code, 1, 'a canceled job');
    assert.match(watched.stderr, /canceled/);
    await ok(emu, ['delete-asset', assetId]);
  });
});
