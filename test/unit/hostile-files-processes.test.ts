/**
 * Hostile files, rule 3, across processes: two CLI processes at once whose outputs have the same name and `hash: null`
 * (nothing verifies the bytes, so a swap would go unnoticed) each keep their own job's bytes, in process and through
 * the shipped CLI. The server holds each download until both processes are downloading, so they overlap.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invertWorkflow, job } from './builders';
import { output, sendJson, sendPaced } from './hostile-files.fixtures';
import { startServer, type TestServer } from './httpServer';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';

describe('hostile files, rule 3: two CLI processes at once, outputs of the same name with hash: null', () => {
  // The self-hosted companion answers outputs with `hash: null`: nothing verifies the bytes, so a swap would go
  // unnoticed. Each job's output is 256 KiB of its own random bytes. The server holds each download until both
  // processes are downloading, then sends both bodies in 4 KiB pieces, so the two downloads overlap whatever the
  // processes' start-up times.
  const PROCESSES = 2;
  const jobs = new Map<string, Record<string, unknown>>();
  const contents = new Map<string, Buffer>();
  const held: (() => void)[] = [];
  let server: TestServer;
  before(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', server.origin);
      if (req.method === 'POST' && url.pathname === '/api/v2/jobs') {
        req.resume();
        req.on('end', () => {
          const created = job('succeeded');
          const id = String(created.id);
          contents.set(id, randomBytes(256 * 1024));
          created.outputs = [
            output(`out-${id}`, 'ComfyUI_00001_.png', `/content/${id}`, { content_type: 'image/png', hash: null }),
          ];
          jobs.set(id, created);
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify(created));
        });
        return;
      }
      const id = /^\/api\/v2\/jobs\/([^/]+)$/.exec(url.pathname)?.[1];
      if (id !== undefined && jobs.has(id)) return sendJson(res, jobs.get(id));
      const content = /^\/content\/([^/]+)$/.exec(url.pathname)?.[1];
      if (content !== undefined && contents.has(content)) {
        held.push(() => sendPaced(res, contents.get(content)!, 4096, { 'content-type': 'image/png' }));
        if (held.length === PROCESSES) for (const send of held.splice(0)) send();
        return;
      }
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'not_found', message: 'not found' } }));
    });
  });
  after(async () => server.close());

  /** Runs `comfy-cloud` (the compiled CLI) as a process of its own; resolves with its exit code and output. */
  function cliProcess(args: string[], stateDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [path.join(__dirname, '..', '..', 'src', 'cli', 'main.js'), ...args],
        { env: { ...process.env, COMFY_CLOUD_STATE_DIR: stateDir } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it("two `submit --wait --out same/` processes at once: each prints a file of its own that holds its own job's bytes", async function () {
    this.timeout(60_000);
    const dir = tempDir('cc-cli-processes-');
    const out = path.join(dir, 'same');
    const workflow = path.join(dir, 'invert.json');
    fs.writeFileSync(workflow, JSON.stringify(invertWorkflow({ prefix: 'ComfyUI' })));
    const args = ['--base-url', server.origin, 'submit', workflow, '--wait', '--out', out, '--quiet'];
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => cliProcess(args, path.join(dir, 'state'))));
    const printed: string[] = [];
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      // stdout: the job id, then the file written.
      const [jobId, file, ...rest] = run.stdout.trim().split('\n');
      assert.deepEqual(rest, [], run.stdout);
      assert.ok(contents.has(jobId), `not a job of the server: ${jobId}`);
      assert.ok(
        fs.readFileSync(file).equals(contents.get(jobId)!),
        `${file}, printed by the process of job ${jobId}, does not hold that job's bytes`,
      );
      printed.push(file);
    }
    assert.notEqual(printed[0], printed[1]);
    assert.deepEqual(
      fs.readdirSync(out).sort(),
      ['ComfyUI_00001_-1.png', 'ComfyUI_00001_.png'],
      'the same name, one of them numbered; no partial file left',
    );
  });
});

describe("hostile files, rule 3: two shipped CLI processes at once, one output name, hash: null, the same size: each printed path holds its own job's bytes", () => {
  // What is "saved already" is proven by the proof written when a download completed (job id + output id), never by
  // name and size: both jobs' outputs are `ComfyUI_00001_.png`, `hash: null`, 256 KiB, sent in 16 KiB pieces. The
  // server forces the interleaving that showed the swap: the second job's read (the watch's GET, before its outputs
  // are looked for in the folder) waits until the first job's output is complete in the shared folder. Rounds
  // alternate `submit --wait --out` and a one-variation batch `submit --set … --out` (whose outputs go to
  // `<out>/<label>/`, the same folder for both, and are looked for before they are downloaded).
  const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
  const SIZE = 256 * 1024;
  const ROUNDS = 10;
  const jobs = new Map<string, Record<string, unknown>>();
  const contents = new Map<string, Buffer>();
  /** The job ids in the order the server created them, and the shared output folder of the round. */
  let created: string[] = [];
  let out = '';
  let server: TestServer;

  /**
   * True once a complete `ComfyUI_00001_.png` (of any job) is in the round's folder or a folder under it. A folder that
   * goes while it is listed (a download's lock, removed as it ends) makes this look again at the next turn.
   */
  const firstSaved = (): boolean => {
    try {
      return (
        fs.existsSync(out) &&
        (fs.readdirSync(out, { recursive: true }) as string[]).some((f) => path.basename(f) === 'ComfyUI_00001_.png')
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  };
  /** Calls `then` once the first job's output is saved (looked at on each turn of the server's event loop, bounded). */
  function afterFirstSaved(then: () => void, turns = 0): void {
    if (firstSaved() || turns > 20_000) then();
    else setTimeout(() => afterFirstSaved(then, turns + 1), 1);
  }

  before(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', server.origin);
      if (req.method === 'POST' && url.pathname === '/api/v2/jobs') {
        req.resume();
        req.on('end', () => {
          const made = job('succeeded');
          const id = String(made.id);
          contents.set(id, randomBytes(SIZE));
          made.outputs = [
            output(`out-${id}`, 'ComfyUI_00001_.png', `/content/${id}`, {
              content_type: 'image/png',
              size_bytes: SIZE,
              hash: null,
            }),
          ];
          jobs.set(id, made);
          created.push(id);
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify(made));
        });
        return;
      }
      const id = /^\/api\/v2\/jobs\/([^/]+)$/.exec(url.pathname)?.[1];
      if (id !== undefined && jobs.has(id)) {
        if (created.indexOf(id) === 1) afterFirstSaved(() => sendJson(res, jobs.get(id)));
        else sendJson(res, jobs.get(id));
        return;
      }
      const content = /^\/content\/([^/]+)$/.exec(url.pathname)?.[1];
      if (content !== undefined && contents.has(content))
        return sendPaced(res, contents.get(content)!, 16 * 1024, { 'content-type': 'image/png' });
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'not_found', message: 'not found' } }));
    });
  });
  after(async () => server.close());

  /** Runs the shipped CLI; resolves with its exit code and output. */
  function shippedCli(args: string[], stateDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env: { ...process.env, COMFY_CLOUD_STATE_DIR: stateDir } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  /** The job id and the file a run printed: `--quiet` prints the job id, then the file; a batch's `--json` its job's line. */
  function printed(run: { stdout: string }, batch: boolean): { jobId: string; file: string } {
    const lines = run.stdout.trim().split('\n');
    if (!batch) {
      assert.equal(lines.length, 2, run.stdout);
      return { jobId: lines[0]!, file: lines[1]! };
    }
    const result = lines
      .map((l) => JSON.parse(l) as { jobId?: string; files?: string[] })
      .find((l) => l.jobId !== undefined);
    assert.equal(result?.files?.length, 1, run.stdout);
    return { jobId: result!.jobId!, file: result!.files![0]! };
  }

  it(`${ROUNDS} rounds of two processes at once, the second looking for its output once the first saved its own: no process prints the other's file`, async function () {
    this.timeout(120_000);
    for (let round = 0; round < ROUNDS; round++) {
      const batch = round % 2 === 1;
      const dir = tempDir('cc-cli-same-output-');
      out = path.join(dir, 'same');
      created = [];
      const workflow = path.join(dir, 'invert.json');
      fs.writeFileSync(workflow, JSON.stringify(invertWorkflow({ prefix: 'ComfyUI' })));
      const args = batch
        ? ['--base-url', server.origin, 'submit', workflow, '--set', '1.color=7', '--out', out, '--json']
        : ['--base-url', server.origin, 'submit', workflow, '--wait', '--out', out, '--quiet'];
      const runs = await Promise.all([0, 1].map(() => shippedCli(args, path.join(dir, 'state'))));
      const files: string[] = [];
      for (const run of runs) {
        assert.equal(run.code, 0, `round ${round}: ${run.stderr}`);
        const { jobId, file } = printed(run, batch);
        assert.ok(contents.has(jobId), `round ${round}: not a job of the server: ${jobId}`);
        assert.ok(
          fs.readFileSync(file).equals(contents.get(jobId)!),
          `round ${round} (${batch ? 'submit --set' : 'submit --wait'}): ${path.basename(file)}, printed by the process of job ${jobId}, does not hold that job's bytes`,
        );
        files.push(file);
      }
      assert.equal(created.length, 2, `round ${round}: not two jobs`);
      assert.notEqual(files[0], files[1], `round ${round}: both processes printed one file`);
      assert.deepEqual(
        files.map((f) => path.basename(f)).sort(),
        ['ComfyUI_00001_-1.png', 'ComfyUI_00001_.png'],
        `round ${round}`,
      );
    }
  });
});
