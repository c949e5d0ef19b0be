/**
 * An unknown outcome from the command line, as a user meets it: the shipped `dist/cli.js` against an in-process
 * emulator whose faults give each outcome of POST /api/v2/jobs (Job and Asset API v2, POST /api/v2/jobs, rules 3–5: a
 * 5xx answered before anything was queued leaves the key claimed and no job; a job made whose answer was lost).
 * `submit` resolves it before it ends, with or without `--wait` (the job id printed is the one that exists); a batch on
 * a server that lists no jobs ends `unknown`, names the variations and the command that sends them again on the user's
 * word (`batch resume ID --resubmit-unknown`); `batch status` shows retired keys; `--settle` is checked.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StateStore } from '../../src/core/state';
import { invertWorkflow } from './builders';
import { useEmulator, type CliRun } from './harness';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';

const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

describe('an unknown outcome from the command line (node dist/cli.js against the emulator)', function () {
  this.timeout(90_000);
  const emu = useEmulator({ concurrency: 4 });
  let dir: string;
  let stateDir: string;

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs)`);
    dir = tempDir('cc-cli-unknown-');
  });
  beforeEach(() => {
    stateDir = tempDir('cc-cli-unknown-state-');
    emu().setFaults({ rules: [] });
  });

  function cli(args: string[]): Promise<CliRun> {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMFY_')));
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          env: { ...clean, COMFY_BASE_URL: emu().baseUrl, COMFY_CLOUD_STATE_DIR: stateDir },
          cwd: dir,
          maxBuffer: 16 * 1024 * 1024,
        },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
    });
  }

  function workflowFile(prefix: string): string {
    const file = path.join(dir, `${prefix}.json`);
    fs.writeFileSync(file, JSON.stringify(invertWorkflow({ prefix })));
    return file;
  }

  /** The submissions the emulator received since `from` (their Idempotency-Keys). */
  function postedKeys(from: number): string[] {
    return emu()
      .requests.slice(from)
      .filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path))
      .map((r) => r.headers['idempotency-key'] as string);
  }

  it('rule: submit --wait whose first answer was a 503 (no job, the key left claimed) proves the absence, sends once more under a new key, prints the job that exists; exit 0', async () => {
    emu().setFaults({ rules: [{ on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable', times: 1 }] });
    const from = emu().requests.length;
    const r = await cli(['submit', workflowFile('absent'), '--wait', '--settle', '0.2']);
    assert.equal(r.code, 0, r.stderr);
    const keys = postedKeys(from);
    assert.equal(keys.length, 2);
    assert.notEqual(keys[0], keys[1], 'the claimed key is never presented again');
    assert.match(
      r.stderr,
      new RegExp(
        `no job was made under Idempotency-Key ${keys[0]} \\(two readings of the job listing found none\\); submitting again under Idempotency-Key ${keys[1]}`,
      ),
    );
    const jobId = lines(r.stdout)[0]!;
    const records = await new StateStore(stateDir).list();
    assert.deepEqual(
      records.map((rec) => [rec.idempotencyKey, rec.jobId, rec.lastStatus]),
      [[keys[1], jobId, 'succeeded']],
      'one record shown: the job that exists',
    );
  });

  it("rule: submit without --wait whose answer was lost after its job was made finds that job before it ends: the id printed is that job's; nothing sent again", async () => {
    emu().setFaults({ rules: [{ on: 'submit', kind: 'afterCreate', status: 502, times: 1 }] });
    const from = emu().requests.length;
    const r = await cli(['submit', workflowFile('found'), '--settle', '0.2']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(postedKeys(from).length, 1);
    const jobId = lines(r.stdout)[0]!;
    assert.match(r.stderr, new RegExp(`found job ${jobId}`));
    const { jobs } = (await (await fetch(`${emu().baseUrl}/api/v2/jobs?limit=1000`)).json()) as {
      jobs: { id: string }[];
    };
    assert.ok(
      jobs.some((j) => j.id === jobId),
      'the job printed exists',
    );
  });

  it('rule: a batch on a server that lists no jobs ends the unheard variation unknown, naming it and the command that sends it again (a duplicate possible); --resubmit-unknown then sends it under a new key; batch status shows the retired key', async () => {
    emu().setFaults({
      rules: [
        { on: 'list', kind: 'status', status: 404, code: 'not_found' },
        { on: 'submit', kind: 'status', status: 503, code: 'upstream_unreachable', times: 1 },
      ],
    });
    const from = emu().requests.length;
    const first = await cli([
      'submit',
      workflowFile('nolisting'),
      '--set',
      '1.color=1..3',
      '--concurrency',
      '1',
      '--settle',
      '0.2',
    ]);
    assert.equal(first.code, 1, first.stderr);
    const id = lines(first.stdout)[0]!;
    assert.match(first.stdout, /^0-1 unknown -$/m);
    assert.ok(
      first.stderr.includes(
        `batch ${id}: the outcome of variation 0 is unknown (this server does not list its jobs, so whether they were created cannot be decided); to send it again under new keys: comfy-cloud batch resume ${id} --resubmit-unknown (a duplicate job is possible)`,
      ),
      first.stderr,
    );
    assert.equal(postedKeys(from).length, 3, 'the unknown one is not sent again');
    const resumed = await cli(['batch', 'resume', id, '--resubmit-unknown', '--settle', '0.2']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(
      resumed.stderr,
      /variation 0 \(0-1\): sent again under a new Idempotency-Key \S+, on your word; its key \S+ may have made a job \(a duplicate is possible\)/,
    );
    assert.equal(postedKeys(from).length, 4);
    const status = await cli(['batch', 'status', id]);
    assert.match(
      status.stdout,
      /^0-1 succeeded \S+\n {2}retired key \S+ sent \S+: sent again on your word: a duplicate is possible$/m,
    );
  });

  it('rule: --settle takes a number of seconds from 0.1 to 600, else exit 2 before anything is sent', async () => {
    const from = emu().requests.length;
    for (const args of [
      ['submit', workflowFile('settle'), '--settle', '0'],
      ['submit', workflowFile('settle'), '--settle', 'soon'],
      ['submit', workflowFile('settle'), '--set', '1.color=1..2', '--settle', '601'],
    ]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /--settle must be a number of seconds from 0.1 to 600/);
    }
    assert.deepEqual(postedKeys(from), []);
  });
});
