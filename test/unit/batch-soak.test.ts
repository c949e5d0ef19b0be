/**
 * Soak of a batch from the command line: 200 variations (`--set 1.color=1..200`) at `--concurrency 8` with `--out`, run
 * as `node dist/cli.js` child processes against an in-process emulator with a fault plan (submissions answered 502 or
 * cut after their job was created, reset before, 500, 429 `queue_full`; job reads and event streams failing too). The
 * CLI is killed with SIGKILL twice, each time after it printed some job lines, and `batch resume` is run until it
 * exits 0. Then: the emulator created exactly one job per color 1..200 (none twice, none missing), every variation has
 * its output folder with its complete file and no partial file, and every job record of the batch is `created` with
 * the server's job id. Rules: Job and Asset API v2, POST /api/v2/jobs, rules 3–5 (a key presented again never makes a
 * second job; after an unknown outcome the client looks instead of resubmitting), Errors (429 with Retry-After).
 * Deterministic fault schedules (counts, a seed); waits on stdout lines, never on time.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { BatchStore, StateStore } from '../../src/core/state';
import { startEmulator, type Emulator } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';
import { jobsByColor } from './serverJobs';
import { startCli, type CliRun } from './cliProcess';

const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
const TOKEN = 'batch-soak-token';
const COUNT = 200;

/** A CLI run: its exit code and its stdout's lines so far. */
type Run = CliRun;

/** A job result line of the CLI (`<label> <status> <job id>`), not a batch id nor a file path. */
const RESULT = /^\d+-\S* \S+ \S+$/;

describe('batch soak: 200 variations through faults, two SIGKILLs and resumes, each one job', function () {
  this.timeout(240_000);
  let emu: Emulator;
  let dir: string;
  let stateDir: string;

  before(async () => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs)`);
    dir = tempDir('cc-batch-soak-');
    stateDir = tempDir('cc-batch-soak-state-');
    emu = await startEmulator({
      port: 0,
      tokens: [TOKEN],
      concurrency: 8,
      faults: {
        seed: 11,
        rules: [
          // The job is created, the answer lost: a 502, or the connection cut.
          { on: 'submit', kind: 'afterCreate', status: 502, every: 9 },
          { on: 'submit', kind: 'afterCreate', reset: true, every: 13 },
          // Nothing created, the key left claimed (Job and Asset API v2, POST /api/v2/jobs, rule 5): the connection cut,
          // or a 500; the job is looked for in the listing, its absence proven, and the variation sent under a new key.
          { on: 'submit', kind: 'reset', every: 11 },
          { on: 'submit', kind: 'status', status: 500, every: 17 },
          // The same by a proxy in front of the service: nothing claimed.
          { on: 'submit', kind: 'reset', every: 23, claims: false },
          // A busy server: the whole batch waits the Retry-After, a few times.
          { on: 'submit', kind: 'status', code: 'queue_full', retryAfter: 1, every: 19, times: 4 },
          { on: 'get', kind: 'status', status: 500, every: 23 },
          { on: 'get', kind: 'reset', every: 31 },
          { on: 'events', kind: 'dropStream', afterFrames: 1, every: 5 },
          { on: 'events', kind: 'status', status: 502, every: 7 },
        ],
      },
    });
  });
  after(async () => emu?.close());

  /** Starts `node dist/cli.js <args>`; `onLine` sees each stdout line. */
  function start(args: string[], onLine?: (line: string, lines: string[]) => void): Run {
    return startCli(args, {
      cli: CLI,
      cwd: dir,
      onLine,
      env: { COMFY_BASE_URL: emu.baseUrl, COMFY_API_KEY: TOKEN, COMFY_CLOUD_STATE_DIR: stateDir },
    });
  }

  /** Runs until `count` job lines were printed (then SIGKILL), or it exits first; resolves once it is gone. */
  async function killAfter(args: string[], count: number): Promise<Run> {
    let seen = 0;
    const run: Run = start(args, (line) => {
      if (RESULT.test(line) && ++seen === count) run.kill();
    });
    await run.exited;
    return run;
  }

  async function get(p: string): Promise<unknown> {
    const res = await fetch(`${emu.baseUrl}${p}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200, `GET ${p}`);
    return res.json();
  }

  it('every color is exactly one job, every output complete in its folder, every job record created', async () => {
    const workflowFile = path.join(dir, 'invert.json');
    fs.writeFileSync(workflowFile, JSON.stringify(invertWorkflow({ prefix: 'soak' })));
    const out = path.join(dir, 'out');

    const first = await killAfter(
      ['submit', workflowFile, '--set', `1.color=1..${COUNT}`, '--concurrency', '8', '--out', out, '--settle', '1'],
      30,
    );
    const batchId = first.lines[0]!;
    assert.match(batchId, /^b-[0-9a-f-]{36}$/, first.stderr());
    const second = await killAfter(['batch', 'resume', batchId, '--out', out, '--settle', '1'], 50);
    assert.equal(second.lines[0], batchId);
    let code: number | null = null;
    const stderrs: string[] = [];
    for (let attempt = 0; attempt < 5 && code !== 0; attempt++) {
      const run = start(['batch', 'resume', batchId, '--out', out, '--settle', '1']);
      code = await run.exited;
      stderrs.push(run.stderr());
    }
    assert.equal(code, 0, `batch resume never exited 0:\n${stderrs.map((s) => s.slice(-3000)).join('\n---\n')}`);

    // What the server has, read without faults in the way.
    emu.setFaults({ rules: [] });
    const server = await jobsByColor(get, COUNT);
    assert.deepEqual(server.twice, [], `colors run more than once: ${server.twice.join(', ')}`);
    assert.deepEqual(server.never, [], `colors never run: ${server.never.join(', ')}`);
    assert.equal(server.total, COUNT);

    // 200 output folders, each with its complete PNG and no partial file.
    const batch = (await new BatchStore(stateDir).get(batchId))!;
    const folders = fs.readdirSync(out).sort();
    assert.equal(folders.length, COUNT);
    let resumableParts = 0;
    for (const folder of folders) {
      const all = fs.readdirSync(path.join(out, folder));
      // A download cut by SIGKILL leaves its hidden, resumable partial file (`.<hash>.part` with its note and lock,
      // core/v2/download.ts): never under an output's name. A saved output has its hidden proof beside it
      // (`.<hash>.output.json`, core/jobs/savedOutputs.ts). Anything else is one output, whole.
      const parts = all.filter((f) => /^\.[0-9a-f]{16}(-[0-9a-f]{12})?\.part(\.json|\.lock)?$/.test(f));
      resumableParts += parts.length;
      const files = all.filter((f) => !parts.includes(f) && !/^\.[0-9a-f]{32}\.output\.json$/.test(f));
      assert.equal(files.length, 1, `${folder}: ${all.join(', ')}`);
      assert.match(files[0]!, /\.png$/, `${folder}: ${files[0]} is not a finished output`);
      const png = PNG.sync.read(fs.readFileSync(path.join(out, folder, files[0]!)));
      assert.equal(png.width, 64, `${folder}: the PNG is whole`);
    }
    // At most the downloads the two kills cut (each of 8 in flight) left a hidden part.
    assert.ok(resumableParts <= 2 * 8 * 3, `${resumableParts} partial files left`);

    // Every variation's job record (of its key, or of the successor of its retired key) is created, with the server's
    // one job of its color; a list of jobs shows one record per variation.
    const store = new StateStore(stateDir);
    const records = (await store.list()).filter((r) => r.batchId === batchId);
    assert.equal(records.length, COUNT);
    for (const v of batch.variations) {
      const record = (await store.chain(v.idempotencyKey)).current;
      assert.ok(record, `variation ${v.index} has no job record`);
      assert.equal(record.state, 'created', `variation ${v.index}: ${record.state}`);
      assert.deepEqual(
        server.byColor.get((v.inputs[0]!.value as { value: number }).value),
        [record.jobId],
        `variation ${v.index}: its record's job is not the server's`,
      );
    }
    // The faults really fired, of every family.
    const fired = new Set(emu.faultLog.map((f) => `${f.on}:${f.kind}`));
    for (const family of ['submit:afterCreate', 'submit:reset', 'submit:status', 'get:status', 'events:dropStream'])
      assert.ok(fired.has(family), `no ${family} fault fired: ${[...fired].join(', ')}`);
  });
});
