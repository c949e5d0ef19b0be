/**
 * Every submission outcome in one batch, from the command line, killed twice and resumed: a 60-variation batch
 * (`submit WF --set 1.color=1..60 --concurrency 8 --out DIR`) run as `node dist/cli.js` child processes against an
 * in-process emulator whose fault plan mixes, by `share` with a seed, every outcome POST /api/v2/jobs can come to (Job
 * and Asset API v2, POST /api/v2/jobs, rules 3–7; Errors): busy (429 `queue_full`, 402 `insufficient_credits`, each
 * with Retry-After; the key released), unknown without a job (503 `upstream_unreachable`, a reset: the key stays
 * claimed, no job), unknown with a job (created, then a 502, a reset, or a 201 after the client's timeout), a job the
 * listing shows late and whose GET answers 404 for a while; and reads and downloads failing now and then while jobs are
 * followed. The CLI is killed with SIGKILL once the emulator has seen
 * about 30 % of the batch's submissions, then again at about 70 % (during `batch resume`), and resumed with `batch
 * resume ID --out DIR`, which must exit 0. Then: each color is exactly one job on the server (its listing), each
 * variation's output saved once in its folder. Three seeds. The kills are triggered by the emulator's request log,
 * never by a timer; the settle window is short (`--settle`), the images small, the jobs quick.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { startEmulator, type Emulator, type FaultRule } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';
import { jobsByColor } from './serverJobs';
import { startCli, type CliRun } from './cliProcess';

const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
const TOKEN = 'batch-outcomes-token';
const COUNT = 60;
/** The CLI's request timeout (ms): a 201 held longer than this is a late answer, an unknown outcome with a job. */
const TIMEOUT_MS = 1500;
/** The settle window (s) given to the CLI; the listing's lag stays well under it. */
const SETTLE_S = '0.4';

/** Every outcome of a submission, mixed by share (each rule draws from the plan's seeded PRNG). */
const OUTCOMES: FaultRule[] = [
  // Busy, no job, the key released: the whole batch waits the Retry-After, then the same key again.
  { on: 'submit', kind: 'status', code: 'queue_full', retryAfter: 1, share: 0.04 },
  { on: 'submit', kind: 'status', code: 'insufficient_credits', retryAfter: 1, share: 0.03 },
  // Unknown outcome without a job: the key stays claimed; two readings prove the absence, a new key is sent.
  { on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable', share: 0.06 },
  { on: 'submit', kind: 'reset', share: 0.05 },
  // Unknown outcome with a job: created, then the answer is lost (a 502, a reset, a 201 after the client gave up).
  { on: 'submit', kind: 'afterCreate', status: 502, share: 0.06 },
  { on: 'submit', kind: 'afterCreate', reset: true, share: 0.05 },
  { on: 'submit', kind: 'afterCreate', delayMs: TIMEOUT_MS + 1000, share: 0.04 },
  // The listing shows a new job late, and its own routes answer 404 for a while.
  { on: 'submit', kind: 'lag', listMs: 150, getMs: 600, share: 0.2 },
  // An outage while following: reads of a job and downloads of its output fail now and then (a job that exists is
  // followed to its end, its output saved, whatever happens to the others).
  { on: 'get', kind: 'status', status: 502, share: 0.05 },
  { on: 'content', kind: 'status', status: 503, share: 0.05 },
];

/** A CLI run: its stdout lines so far, its stderr, its exit. */
type Run = CliRun;

describe('batch: every submission outcome, two SIGKILLs and a resume that exits 0, each variation one job (node dist/cli.js)', function () {
  this.timeout(100_000);
  let emu: Emulator | undefined;
  /** The faults fired in the seeds' runs, as `on:kind`. */
  const fired = new Set<string>();
  /** Submissions the emulator answered (or cut) so far, and who waits for a count. */
  let posts = 0;
  let waiters: Array<{ at: number; then: () => void }> = [];

  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  function onLog(line: string): void {
    if (!/^POST \/api\/v2\/jobs /.test(line)) return;
    posts++;
    for (const w of waiters.filter((x) => posts >= x.at)) w.then();
    waiters = waiters.filter((x) => posts < x.at);
  }

  /** Starts `node dist/cli.js --timeout … <args>` against the emulator with the test's state dir. */
  function start(stateDir: string, cwd: string, args: string[]): Run {
    return startCli(['--timeout', String(TIMEOUT_MS), ...args], {
      cli: CLI,
      cwd,
      env: { COMFY_BASE_URL: emu!.baseUrl, COMFY_API_KEY: TOKEN, COMFY_CLOUD_STATE_DIR: stateDir },
    });
  }

  /** Runs the CLI until the emulator has seen `at` submissions in all, then kills it with SIGKILL (asserted: it was still running). */
  async function killAt(run: Run, at: number): Promise<void> {
    const reached = new Promise<void>((resolve) => (posts >= at ? resolve() : waiters.push({ at, then: resolve })));
    await Promise.race([reached.then(() => run.kill()), run.exited]);
    assert.equal(
      await run.exited,
      null,
      `the CLI ended before ${at} submissions (exit code, not SIGKILL):\n${run.stderr().slice(-3000)}`,
    );
  }

  async function get(p: string): Promise<unknown> {
    const res = await fetch(`${emu!.baseUrl}${p}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200, `GET ${p}`);
    return res.json();
  }

  for (const seed of [7, 19, 31]) {
    it(`seed ${seed}: exactly one job per variation, each output saved once, the last resume exits 0`, async () => {
      assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs)`);
      posts = 0;
      waiters = [];
      emu = await startEmulator({
        port: 0,
        tokens: [TOKEN],
        concurrency: 8,
        nodeDelayMs: 5,
        keepAliveMs: 500,
        faults: { seed, rules: OUTCOMES },
        log: onLog,
      });
      const dir = tempDir('cc-batch-outcomes-');
      const stateDir = tempDir('cc-batch-outcomes-state-');
      const workflowFile = path.join(dir, 'invert.json');
      fs.writeFileSync(workflowFile, JSON.stringify(invertWorkflow({ prefix: 'outcome' })));
      const out = path.join(dir, 'out');

      const first = start(stateDir, dir, [
        'submit',
        workflowFile,
        '--set',
        `1.color=1..${COUNT}`,
        '--concurrency',
        '8',
        '--out',
        out,
        '--settle',
        SETTLE_S,
      ]);
      await killAt(first, Math.round(COUNT * 0.3));
      const batchId = first.lines[0]!;
      assert.match(batchId, /^b-[0-9a-f-]{36}$/, first.stderr());
      const second = start(stateDir, dir, ['batch', 'resume', batchId, '--out', out, '--settle', SETTLE_S]);
      await killAt(second, Math.round(COUNT * 0.7));
      const last = start(stateDir, dir, ['batch', 'resume', batchId, '--out', out, '--settle', SETTLE_S]);
      const code = await last.exited;
      assert.equal(code, 0, `the last resume exited ${code}:\n${last.stderr().slice(-4000)}`);

      // What the server has, read without faults in the way.
      emu.setFaults({ rules: [] });
      const server = await jobsByColor(get, COUNT);
      assert.deepEqual(server.twice, [], `colors run more than once: ${server.twice.join(', ')}`);
      assert.deepEqual(server.never, [], `colors never run: ${server.never.join(', ')}`);
      assert.equal(server.total, COUNT);

      // Each variation's output saved once: its folder holds one whole PNG (a download cut by a kill leaves only its
      // hidden resumable part beside it, never a second file).
      const folders = fs.readdirSync(out).sort();
      assert.equal(folders.length, COUNT);
      for (const folder of folders) {
        const files = fs.readdirSync(path.join(out, folder)).filter((f) => !f.startsWith('.'));
        assert.equal(files.length, 1, `${folder}: ${files.join(', ')}`);
        assert.equal(
          PNG.sync.read(fs.readFileSync(path.join(out, folder, files[0]!))).width,
          64,
          `${folder}: the PNG is whole`,
        );
      }

      for (const f of emu.faultLog) fired.add(`${f.on}:${f.kind}`);
    });
  }

  it('every outcome of the mix happened in the three runs (which requests draw a fault depends on their order)', function () {
    if (fired.size === 0) this.skip(); // the seeds' runs were left out (--grep)
    for (const family of [
      'submit:status',
      'submit:reset',
      'submit:afterCreate',
      'submit:lag',
      'get:status',
      'content:status',
    ]) {
      assert.ok(fired.has(family), `no ${family} fault fired: ${[...fired].join(', ')}`);
    }
  });
});
