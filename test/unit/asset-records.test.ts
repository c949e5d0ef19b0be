/**
 * The remembered assets (the Assets view shows uploaded assets and outputs known to this machine): the record store
 * shared by the CLI and the extension (state/assetRecords.ts), the CLI's `upload` writing to it, and the upload that
 * tells its phases (V2Client.uploadFile's onPhase), against the in-process emulator.
 */
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  AssetRecords,
  downloadedRecord,
  outputRecord,
  parseAssetRecord,
  savedOutputRecord,
  uploadRecord,
  type AssetRecord,
} from '../../src/core/state';
import { V2Client, type UploadPhase } from '../../src/core/v2/client';
import { buildAssetTree } from '../../src/core/views';
import { untranslated } from '../../src/core/util';
import type { Job } from '../../src/core';
import { invertWorkflow } from './builders';
import { BLAKE3, cliRunner, useEmulator } from './harness';
import { tempDir } from './tmp';

function record(extra: Partial<AssetRecord> = {}): AssetRecord {
  return { baseUrl: 'http://a', assetId: 'id-1', origin: 'upload', recordedAt: '2026-11-22T10:00:00.000Z', ...extra };
}

describe('asset records: the store shared by the CLI and the extension', () => {
  it('a record put is read back by base URL and asset id, and listed per server, newest first', async () => {
    const store = new AssetRecords(tempDir('cc-assets-'));
    await store.put(record({ assetId: 'old', recordedAt: '2026-11-22T09:00:00.000Z' }));
    await store.put(record({ assetId: 'new', recordedAt: '2026-11-22T11:00:00.000Z' }));
    await store.put(record({ baseUrl: 'http://b', assetId: 'other' }));
    assert.equal((await store.get('http://a', 'new'))?.assetId, 'new');
    assert.equal(await store.get('http://b', 'new'), undefined);
    assert.deepEqual(
      (await store.list('http://a')).map((r) => r.assetId),
      ['new', 'old'],
    );
    assert.equal((await store.list()).length, 3);
  });

  it('one plain JSON file per asset under <state dir>/assets, named by a digest: a hostile asset id never becomes a path', async () => {
    const dir = tempDir('cc-assets-');
    const store = new AssetRecords(dir);
    const hostile = '../../../etc/passwd\u0000\u202e';
    await store.put(record({ assetId: hostile }));
    const names = fs.readdirSync(path.join(dir, 'assets'));
    assert.equal(names.length, 1);
    assert.match(names[0]!, /^[0-9a-f]{32}\.json$/);
    const text = fs.readFileSync(path.join(dir, 'assets', names[0]!), 'utf8');
    assert.equal(JSON.parse(text).assetId, hostile, 'the record is plain JSON another tool can read');
    assert.equal((await store.get('http://a', hostile))?.assetId, hostile);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['assets', 'tmp']);
  });

  it('a record past its expires_at is not listed and is removed; one without expiry stays', async () => {
    const dir = tempDir('cc-assets-');
    const store = new AssetRecords(dir, { now: () => Date.parse('2026-11-23T00:00:00Z') });
    await store.put(record({ assetId: 'gone', expiresAt: '2026-11-22T23:59:59Z' }));
    await store.put(record({ assetId: 'kept', expiresAt: '2026-11-23T00:00:01Z' }));
    await store.put(record({ assetId: 'forever' }));
    assert.deepEqual((await store.list()).map((r) => r.assetId).sort(), ['forever', 'kept']);
    assert.equal(fs.readdirSync(path.join(dir, 'assets')).length, 2);
  });

  it("remove drops a record; update merges into it; neither touches another server's record of the same id", async () => {
    const store = new AssetRecords(tempDir('cc-assets-'));
    await store.put(record());
    await store.put(record({ baseUrl: 'http://b' }));
    const updated = await store.update('http://a', 'id-1', { localPath: '/tmp/x.png' });
    assert.equal(updated?.localPath, '/tmp/x.png');
    assert.equal((await store.get('http://b', 'id-1'))?.localPath, undefined);
    await store.remove('http://a', 'id-1');
    assert.equal(await store.get('http://a', 'id-1'), undefined);
    assert.ok(await store.get('http://b', 'id-1'));
    assert.equal(await store.update('http://a', 'id-1', { dedup: true }), undefined);
  });

  it("unreadable files, foreign files and a record copied under another record's name are not listed", async () => {
    const dir = tempDir('cc-assets-');
    const store = new AssetRecords(dir);
    await store.put(record());
    const [name] = fs.readdirSync(path.join(dir, 'assets'));
    const forged = record({ assetId: 'forged' });
    fs.writeFileSync(path.join(dir, 'assets', `${'0'.repeat(32)}.json`), JSON.stringify(forged));
    fs.writeFileSync(path.join(dir, 'assets', `${'1'.repeat(32)}.json`), '{not json');
    fs.writeFileSync(path.join(dir, 'assets', 'notes.txt'), 'hello');
    assert.deepEqual(
      (await store.list()).map((r) => r.assetId),
      ['id-1'],
    );
    assert.ok(name);
  });

  it('records are read tolerantly: unknown fields kept, an unknown origin read as upload, a record without its ids refused', () => {
    const r = parseAssetRecord(JSON.stringify({ ...record(), origin: 'mystery', future: 1 }));
    assert.equal(r?.origin, 'upload');
    assert.equal((r as unknown as { future: number }).future, 1);
    assert.equal(parseAssetRecord(JSON.stringify({ baseUrl: 'http://a', recordedAt: 'x' })), undefined);
    assert.equal(parseAssetRecord('[]'), undefined);
  });

  it("an output record carries the job, its expiry and the output's name, type, size and hash", () => {
    const r = outputRecord(
      'http://a',
      'job-1',
      {
        id: 'out-1',
        nodeId: '3',
        name: 'x_00001_.png',
        type: 'image',
        contentType: 'image/png',
        sizeBytes: 10,
        hash: null,
        url: null,
      },
      '2026-12-01T00:00:00Z',
      'vscode',
      0,
    );
    assert.deepEqual(
      {
        origin: r.origin,
        jobId: r.jobId,
        expiresAt: r.expiresAt,
        fileName: r.fileName,
        contentType: r.contentType,
        sizeBytes: r.sizeBytes,
        hash: r.hash,
      },
      {
        origin: 'output',
        jobId: 'job-1',
        expiresAt: '2026-12-01T00:00:00Z',
        fileName: 'x_00001_.png',
        contentType: 'image/png',
        sizeBytes: 10,
        hash: null,
      },
    );
  });
});

describe('asset records: uploads from the CLI and the extension land in the same store', () => {
  const emu = useEmulator();

  it('comfy-cloud upload remembers the asset (id, hash, size, type, file, dedup) in the state dir the extension reads', async () => {
    const stateDir = tempDir('cc-state-');
    const cli = cliRunner(stateDir);
    const file = path.join(tempDir('cc-up-'), 'photo.bin');
    fs.writeFileSync(file, randomBytes(2048));
    const first = await cli(['--base-url', emu().baseUrl, 'upload', file, '--json']);
    assert.equal(first.code, 0, first.stderr);
    const asset = JSON.parse(first.stdout) as { id: string; hash: string };
    // What the extension does: the same folder, the client's base URL.
    const client = new V2Client({ baseUrl: emu().baseUrl });
    const baseUrl = client.http.baseUrl;
    await client.close();
    const store = new AssetRecords(stateDir);
    const one = await store.get(baseUrl, asset.id);
    assert.ok(one, `the CLI's upload is not in the store: ${JSON.stringify(await store.list())}`);
    assert.deepEqual(
      {
        origin: one.origin,
        fileName: one.fileName,
        hash: one.hash,
        sizeBytes: one.sizeBytes,
        dedup: one.dedup,
        localPath: one.localPath,
        client: one.client,
      },
      {
        origin: 'upload',
        fileName: 'photo.bin',
        hash: asset.hash,
        sizeBytes: 2048,
        dedup: false,
        localPath: file,
        client: 'cli',
      },
    );
    assert.match(one.hash!, BLAKE3);
    assert.deepEqual(
      (await store.list(baseUrl)).map((r) => r.assetId),
      [asset.id],
    );

    // The same bytes again: a dedup hit, remembered as one (the record of the asset the server answered with).
    const second = await cli(['--base-url', emu().baseUrl, 'upload', file, '--json']);
    assert.equal(second.code, 0, second.stderr);
    const again = JSON.parse(second.stdout) as { id: string };
    assert.equal(
      (await store.get(baseUrl, again.id))?.dedup,
      true,
      'the second upload is not remembered as a dedup hit',
    );
  });

  it("uploadRecord keeps the uploaded file's absolute path and the hash computed when the server gives none", () => {
    const r = uploadRecord(
      'http://a',
      {
        asset: {
          id: 'x',
          hash: null,
          size_bytes: 1,
          content_type: 'text/plain',
          created_at: null,
          url: null,
          url_expires_at: null,
          file_path: null,
        },
        dedup: false,
        hash: 'blake3:ab',
      },
      'rel/f.txt',
      'core',
      0,
    );
    assert.equal(r.hash, 'blake3:ab');
    assert.equal(r.fileName, 'f.txt');
    assert.equal(r.localPath, path.resolve('rel/f.txt'));
  });
});

describe('asset records: outputs the CLI saves land in the store the Assets view lists', () => {
  const emu = useEmulator();

  /** The base URL as a client writes it (what the extension's Assets view lists by). */
  async function clientBaseUrl(): Promise<string> {
    const client = new V2Client({ baseUrl: emu().baseUrl });
    const baseUrl = client.http.baseUrl;
    await client.close();
    return baseUrl;
  }

  it('comfy-cloud submit --wait --out remembers each saved output (job id, name, hash, size, type, path) in the state dir, and the Assets view lists it', async () => {
    const stateDir = tempDir('cc-state-');
    const cli = cliRunner(stateDir);
    const dir = tempDir('cc-out-');
    const wf = path.join(dir, 'invert.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'rec' })));
    const r = await cli([
      '--base-url',
      emu().baseUrl,
      '--json',
      'submit',
      wf,
      '--wait',
      '--out',
      path.join(dir, 'out'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const job = JSON.parse(r.stdout) as Job;
    assert.equal(job.outputs.length, 1);
    const output = job.outputs[0];
    const [saved] = fs.readdirSync(path.join(dir, 'out'));
    const baseUrl = await clientBaseUrl();
    // What the extension's Assets view does: list the shared folder's records of its connection's base URL.
    const listed = await new AssetRecords(stateDir).list(baseUrl);
    assert.deepEqual(
      listed.map((x) => ({
        assetId: x.assetId,
        origin: x.origin,
        jobId: x.jobId,
        fileName: x.fileName,
        hash: x.hash,
        sizeBytes: x.sizeBytes,
        contentType: x.contentType,
        localPath: x.localPath,
        client: x.client,
      })),
      [
        {
          assetId: output.id,
          origin: 'output',
          jobId: job.id,
          fileName: output.name,
          hash: output.hash,
          sizeBytes: fs.statSync(path.join(dir, 'out', saved)).size,
          contentType: 'image/png',
          localPath: path.join(dir, 'out', saved),
          client: 'cli',
        },
      ],
    );
    assert.match(listed[0].hash!, BLAKE3);
    const [item] = buildAssetTree(listed, { t: untranslated });
    assert.equal(item.label, output.name);
  });

  it('comfy-cloud watch --out remembers the outputs it saves; without --out nothing is recorded', async () => {
    const stateDir = tempDir('cc-state-');
    const cli = cliRunner(stateDir);
    const dir = tempDir('cc-out-');
    const wf = path.join(dir, 'invert.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'watched' })));
    const submitted = await cli(['--base-url', emu().baseUrl, 'submit', wf, '--wait']);
    assert.equal(submitted.code, 0, submitted.stderr);
    const jobId = submitted.stdout.trim().split('\n')[0];
    const store = new AssetRecords(stateDir);
    assert.deepEqual(await store.list(), [], 'submit --wait without --out saved nothing, so recorded nothing');
    const watched = await cli(['--base-url', emu().baseUrl, 'watch', jobId, '--out', path.join(dir, 'out')]);
    assert.equal(watched.code, 0, watched.stderr);
    const file = watched.stdout.trim();
    const listed = await store.list(await clientBaseUrl());
    assert.deepEqual(
      listed.map((x) => [x.origin, x.jobId, x.localPath]),
      [['output', jobId, file]],
    );
  });

  it('comfy-cloud download of a remembered output records where it was saved; a download of an upload keeps the file it came from', async () => {
    const stateDir = tempDir('cc-state-');
    const cli = cliRunner(stateDir);
    const dir = tempDir('cc-out-');
    const wf = path.join(dir, 'invert.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'again' })));
    const r = await cli([
      '--base-url',
      emu().baseUrl,
      '--json',
      'submit',
      wf,
      '--wait',
      '--out',
      path.join(dir, 'out'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    const output = (JSON.parse(r.stdout) as Job).outputs[0];
    fs.mkdirSync(path.join(dir, 'elsewhere'));
    const d = await cli(['--base-url', emu().baseUrl, 'download', output.id, path.join(dir, 'elsewhere')]);
    assert.equal(d.code, 0, d.stderr);
    const baseUrl = await clientBaseUrl();
    const store = new AssetRecords(stateDir);
    assert.equal((await store.get(baseUrl, output.id))?.localPath, d.stdout.trim());
    assert.ok(d.stdout.trim().startsWith(path.join(dir, 'elsewhere')), d.stdout);

    const file = path.join(dir, 'mine.bin');
    fs.writeFileSync(file, randomBytes(512));
    const up = await cli(['--base-url', emu().baseUrl, '--json', 'upload', file]);
    assert.equal(up.code, 0, up.stderr);
    const assetId = (JSON.parse(up.stdout) as { id: string }).id;
    const d2 = await cli(['--base-url', emu().baseUrl, 'download', assetId, path.join(dir, 'copy.bin')]);
    assert.equal(d2.code, 0, d2.stderr);
    assert.equal((await store.get(baseUrl, assetId))?.localPath, file);
  });

  it("savedOutputRecord is the output record with the absolute path it was saved to; downloadedRecord moves an output's path, never an upload's", () => {
    const output = {
      id: 'out-1',
      nodeId: '3',
      name: 'x_00001_.png',
      type: 'image',
      contentType: 'image/png',
      sizeBytes: 10,
      hash: 'blake3:00',
      url: null,
    };
    const saved = savedOutputRecord(
      'http://a',
      { id: 'job-1', expiresAt: null },
      { output, path: 'rel/x.png' },
      'cli',
      0,
    );
    assert.deepEqual(saved, {
      ...outputRecord('http://a', 'job-1', output, null, 'cli', 0),
      localPath: path.resolve('rel/x.png'),
    });
    assert.equal(downloadedRecord(saved, 'b/x.png')?.localPath, path.resolve('b/x.png'));
    assert.equal(downloadedRecord(record({ localPath: '/from/here' }), 'b/x.png'), undefined);
    assert.equal(downloadedRecord(record(), 'b/x.png')?.localPath, path.resolve('b/x.png'));
  });
});

describe('upload phases: hashing, then sending (or minting for a dedup hit)', () => {
  const emu = useEmulator();

  it('a new file goes hashing → checking → sending; the same bytes again go hashing → checking → minting, with no multipart upload', async () => {
    const file = path.join(tempDir('cc-up-'), 'phases.bin');
    fs.writeFileSync(file, randomBytes(4096));
    const client = new V2Client({ baseUrl: emu().baseUrl });
    try {
      const phases: UploadPhase[] = [];
      const first = await client.uploadFile(file, {}, { onPhase: (p) => phases.push(p) });
      assert.deepEqual(phases, ['hashing', 'checking', 'sending']);
      assert.equal(first.dedup, false);
      const before = emu().requests.length;
      const again: UploadPhase[] = [];
      const second = await client.uploadFile(file, {}, { onPhase: (p) => again.push(p) });
      assert.deepEqual(again, ['hashing', 'checking', 'minting']);
      assert.equal(second.dedup, true);
      assert.equal(second.hash, first.hash);
      assert.deepEqual(
        emu()
          .requests.slice(before)
          .filter((r) => r.method === 'POST' && r.path === '/api/v2/assets'),
        [],
        'bytes were sent again',
      );
      // Without onPhase nothing changes.
      assert.equal((await client.uploadFile(file)).dedup, true);
    } finally {
      await client.close();
    }
  });
});
