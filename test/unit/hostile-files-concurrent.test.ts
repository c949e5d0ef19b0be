/**
 * Hostile files, rule 3: downloads into one folder at once never share a partial file, never swap bytes, never fail
 * because of each other; in the client against a hostile server, and two CLI submits into one folder against the
 * in-process emulator. No sleeps: the server paces bodies with setImmediate.
 */
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { Transport } from '../../src/core/http';
import { V2Client, type DownloadedOutput } from '../../src/core/v2/client';
import { downloadToFile, partialPathsIn } from '../../src/core/http/download';
import { invertWorkflow, job } from './builders';
import { assertSolid, cliRunner, useEmulator } from './harness';
import { Handler, output, sendJson, sendPaced } from './hostile-files.fixtures';
import { useServerAndClient, type TestServer } from './httpServer';
import { tempDir } from './tmp';

describe('hostile files, rule 3: concurrent downloads into one folder never share a partial file or swap bytes', () => {
  let server: TestServer;
  let route: Handler = (_req, res) => res.writeHead(500).end();
  let client: V2Client;
  useServerAndClient(
    (req, res) => route(req, res),
    (s, c) => ((server = s), (client = c)),
  );

  it("2 jobs × 10 parallel downloadOutputs into one folder, outputs with the same name and hash: null, bodies interleaved in small chunks: every path holds its own job's bytes, no .part left, no call fails", async () => {
    const bytes = { a: randomBytes(64 * 1024), b: randomBytes(64 * 1024) };
    const jobs = {
      a: job('succeeded', {
        outputs: [output('out-a', 'same.png', '/content/a', { content_type: 'image/png', hash: null })],
      }),
      b: job('succeeded', {
        outputs: [output('out-b', 'same.png', '/content/b', { content_type: 'image/png', hash: null })],
      }),
    };
    route = (req, res) => {
      const url = new URL(req.url ?? '/', server.origin);
      for (const k of ['a', 'b'] as const) {
        if (url.pathname === `/api/v2/jobs/${String(jobs[k].id)}`) return sendJson(res, jobs[k]);
        if (url.pathname === `/content/${k}`) return sendPaced(res, bytes[k], 256);
      }
      res.writeHead(404).end();
    };
    const snapshots = { a: await client.getJob(String(jobs.a.id)), b: await client.getJob(String(jobs.b.id)) };
    const out = tempDir('cc-concurrent-');
    const runs: { job: 'a' | 'b'; files: Promise<DownloadedOutput[]> }[] = [];
    for (let i = 0; i < 10; i++) {
      for (const k of ['a', 'b'] as const) runs.push({ job: k, files: client.downloadOutputs(snapshots[k], out) });
    }
    const settled = await Promise.allSettled(runs.map((r) => r.files));
    const failures = settled
      .filter((s) => s.status === 'rejected')
      .map((s) => String((s as PromiseRejectedResult).reason));
    assert.deepEqual(failures, [], 'no call fails');
    const paths: string[] = [];
    settled.forEach((s, i) => {
      const files = (s as PromiseFulfilledResult<DownloadedOutput[]>).value;
      assert.equal(files.length, 1);
      assert.deepEqual(
        fs.readFileSync(files[0].path),
        bytes[runs[i].job],
        `run ${i} (job ${runs[i].job}): ${files[0].path} holds its own job's bytes`,
      );
      paths.push(files[0].path);
    });
    assert.equal(new Set(paths).size, 20, 'twenty distinct files');
    const names = fs.readdirSync(out).sort();
    assert.deepEqual(
      names,
      paths.map((p) => path.basename(p)).sort(),
      'only the twenty files: no .part, .part.json or lock left',
    );
    assert.ok(names.includes('same.png') && names.includes('same-19.png'), names.join(' '));
  });

  it("a download whose content's partial file is locked by another download does not resume or touch it: it downloads into a part of its own and succeeds", async () => {
    const bytes = randomBytes(50_000);
    route = (req, res) => {
      const start = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1];
      if (start === undefined) return sendPaced(res, bytes, 8192);
      res.writeHead(206, {
        'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        'content-length': String(bytes.length - Number(start)),
      });
      res.end(bytes.subarray(Number(start)));
    };
    const dir = tempDir('cc-locked-');
    const { part, note, lock } = partialPathsIn(fs.realpathSync(dir), 'asset-L');
    const kept = bytes.subarray(0, 10_000);
    fs.writeFileSync(part, kept);
    fs.writeFileSync(note, JSON.stringify({ key: 'asset-L' }));
    const release = await lockfile.lock(part, { realpath: false, lockfilePath: lock }); // the other download
    const transport = new Transport({ baseUrl: server.origin });
    try {
      server.seen.length = 0;
      const done = await downloadToFile(transport, transport.url('/content'), path.join(dir, 'l.bin'), {
        resumeKey: 'asset-L',
      });
      assert.equal(server.seen[0].headers.range, undefined, 'no resume from a part another download holds');
      assert.equal(done.resumedFrom, 0);
      assert.deepEqual(fs.readFileSync(done.path), bytes);
      assert.deepEqual(fs.readFileSync(part), kept, "the other download's part is untouched");
      assert.deepEqual(
        fs.readdirSync(dir).sort(),
        ['l.bin', path.basename(part), path.basename(note), path.basename(lock)].sort(),
        'its own part is gone',
      );
    } finally {
      await release();
      await transport.close();
    }
    // Once the other download let go (or crashed: a stale lock is taken over), the part is resumed.
    const stale = Date.now() / 1000 - 120;
    fs.mkdirSync(lock);
    fs.utimesSync(lock, stale, stale);
    const again = new Transport({ baseUrl: server.origin });
    try {
      server.seen.length = 0;
      const done = await downloadToFile(again, again.url('/content'), path.join(dir, 'm.bin'), {
        resumeKey: 'asset-L',
      });
      assert.equal(
        server.seen[0].headers.range,
        'bytes=10000-',
        'a stale lock (a crashed download) does not block the resume',
      );
      assert.deepEqual(fs.readFileSync(done.path), bytes);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['l.bin', 'm.bin']);
    } finally {
      await again.close();
    }
  });

  it('two outputs of different jobs with the same name keep different partial files (named for the content, not the target)', () => {
    const dir = tempDir('cc-partnames-');
    const a = partialPathsIn(dir, 'output:job-a:out-1');
    const b = partialPathsIn(dir, 'output:job-b:out-1');
    assert.notEqual(a.part, b.part);
    assert.match(path.basename(a.part), /^\.[0-9a-f]{16}\.part$/);
    assert.equal(a.note, `${a.part}.json`);
  });

  describe('the CLI: two `submit --wait --out same/` at once', () => {
    const emu = useEmulator();
    it("both succeed; their files differ in name and each holds its own job's image", async () => {
      const dir = tempDir('cc-cli-concurrent-');
      const cli = cliRunner(path.join(dir, 'state'));
      const out = path.join(dir, 'same');
      // The same prefix (so the same output name) and different colours (so different bytes): red and blue, inverted.
      const red = path.join(dir, 'red.json');
      const blue = path.join(dir, 'blue.json');
      fs.writeFileSync(red, JSON.stringify(invertWorkflow({ color: 0xff0000, prefix: 'same' })));
      fs.writeFileSync(blue, JSON.stringify(invertWorkflow({ color: 0x0000ff, prefix: 'same' })));
      const [r, b] = await Promise.all([
        cli(['--base-url', emu().baseUrl, 'submit', red, '--wait', '--out', out, '--quiet']),
        cli(['--base-url', emu().baseUrl, 'submit', blue, '--wait', '--out', out, '--quiet']),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(b.code, 0, b.stderr);
      // stdout: the job id, then the files written.
      const [redFile, blueFile] = [r, b].map((run) => run.stdout.trim().split('\n').slice(1));
      assert.equal(redFile.length, 1, r.stdout);
      assert.equal(blueFile.length, 1, b.stdout);
      assert.notEqual(redFile[0], blueFile[0]);
      assert.equal(
        path.basename(redFile[0]).replace(/-1(?=\.png$)/, ''),
        path.basename(blueFile[0]).replace(/-1(?=\.png$)/, ''),
        'the same name, one of them numbered',
      );
      assertSolid(fs.readFileSync(redFile[0]), 64, 64, [0, 255, 255]);
      assertSolid(fs.readFileSync(blueFile[0]), 64, 64, [255, 255, 0]);
      assert.deepEqual(
        fs.readdirSync(out).sort(),
        [path.basename(redFile[0]), path.basename(blueFile[0])].sort(),
        'no partial file left',
      );
    });
  });
});
