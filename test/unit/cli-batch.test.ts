/**
 * Batches from the command line, run as a user runs them: the shipped `dist/cli.js` (`node esbuild.mjs` builds it) in
 * a child process, against an in-process emulator whose recorded requests say what was sent (and that nothing was,
 * for every bad input). Rules: Job and Asset API v2, POST /api/v2/jobs, rules 3–5 (each variation one job under the
 * Idempotency-Key its batch record fixed before anything was sent), and the CLI's batch rules (src/cli/batchRun.ts,
 * src/cli/commands/batch.ts, `submit --set`).
 */
import * as assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BatchStore, StateStore } from '../../src/core/state';
import { invertWorkflow } from './builders';
import { requestsDuring as requestsDuringAt, solidPng, useEmulator, type CliRun, type Json } from './harness';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';

const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');

/** The lines of a text, without the empty last one. */
function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

describe('batches from the command line (node dist/cli.js against the emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle; a batch runs several jobs.
  this.timeout(120_000);
  const emu = useEmulator({ concurrency: 4 });
  let dir: string;
  let stateDir: string;
  let workflowFile: string;

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs)`);
    dir = tempDir('cc-cli-batch-');
    workflowFile = write('invert.json', invertWorkflow({ prefix: 'batch' }));
  });
  beforeEach(() => {
    // A state dir per test: each test's batches and job records are its own.
    stateDir = tempDir('cc-cli-batch-state-');
    emu().setFaults({ rules: [] });
    emu().holdNodes(null);
  });

  function env(): NodeJS.ProcessEnv {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMFY_')));
    return { ...clean, COMFY_BASE_URL: emu().baseUrl, COMFY_CLOUD_STATE_DIR: stateDir };
  }

  /** Runs `node dist/cli.js <args>` to its end. */
  function cli(args: string[]): Promise<CliRun> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env: env(), cwd: dir, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
    });
  }

  async function ok(args: string[], code = 0): Promise<CliRun> {
    const r = await cli(args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
    return r;
  }

  function write(name: string, content: string | Buffer | Json): string {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content));
    return file;
  }

  /** The requests the emulator received while `fn` ran. */
  const requestsDuring = <T>(fn: () => Promise<T>) => requestsDuringAt(emu(), fn);

  /** The job submissions (POST /api/v2/jobs) among `requests`. */
  function posts(requests: { method: string; path: string }[]): number {
    return requests.filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.path)).length;
  }

  /** The workflow the server recorded for a job (exactly as submitted). */
  async function received(jobId: string): Promise<Json> {
    const res = await fetch(`${emu().baseUrl}/api/v2/jobs/${jobId}/workflow`);
    assert.equal(res.status, 200);
    return ((await res.json()) as Json).workflow as Json;
  }

  /** The color of every job the emulator created, sorted (GET /api/v2/jobs, then each job's workflow). */
  async function createdColors(): Promise<number[]> {
    const { jobs } = (await (await fetch(`${emu().baseUrl}/api/v2/jobs?limit=1000`)).json()) as {
      jobs: { id: string }[];
    };
    const colors: number[] = [];
    for (const j of jobs) colors.push((await received(j.id))['1'].inputs.color as number);
    return colors.sort((a, b) => a - b);
  }

  /** The batch records of this test's state dir. */
  async function batches(): Promise<string[]> {
    return (await new BatchStore(stateDir).list()).map((b) => b.batchId);
  }

  /** Text results: `<label> <status> <job id>` lines, each followed by its files. */
  function results(stdout: string): { label: string; status: string; jobId: string; files: string[] }[] {
    const out: { label: string; status: string; jobId: string; files: string[] }[] = [];
    for (const line of lines(stdout).slice(1)) {
      const m = /^(\S+) (\S+) (\S+)$/.exec(line);
      if (m && !line.startsWith('/')) out.push({ label: m[1]!, status: m[2]!, jobId: m[3]!, files: [] });
      else out.at(-1)!.files.push(line);
    }
    return out;
  }

  it('rule: a grid of 2×3 --set values is 6 jobs, one per variation, each output in its folder named by its label; exit 0', async () => {
    write('prefixes.txt', 'cat\n\ndog\n');
    const out = path.join(dir, 'grid-out');
    const { result: r, requests } = await requestsDuring(() =>
      ok([
        'submit',
        workflowFile,
        '--set',
        '3.filename_prefix=@prefixes.txt',
        '--set',
        '1.color=1..3',
        '--out',
        out,
        '--concurrency',
        '3',
      ]),
    );
    const [id, ...rest] = lines(r.stdout);
    assert.match(id!, /^b-[0-9a-f-]{36}$/);
    assert.ok(rest.length > 0);
    const got = results(r.stdout);
    const labels = ['0-cat_1', '1-cat_2', '2-cat_3', '3-dog_1', '4-dog_2', '5-dog_3'];
    assert.deepEqual(got.map((g) => g.label).sort(), labels);
    assert.ok(got.every((g) => g.status === 'succeeded'));
    assert.equal(posts(requests), 6);
    assert.deepEqual(fs.readdirSync(out).sort(), labels);
    for (const g of got) {
      assert.equal(g.files.length, 1, `${g.label}: one file`);
      assert.equal(path.dirname(g.files[0]!), path.join(out, g.label));
      assert.ok(fs.statSync(g.files[0]!).size > 0);
      const index = Number(g.label.split('-')[0]);
      const wf = await received(g.jobId);
      assert.equal(wf['1'].inputs.color, (index % 3) + 1);
      assert.equal(wf['3'].inputs.filename_prefix, index < 3 ? 'cat' : 'dog');
    }
    assert.match(r.stderr, new RegExp(`^batch ${id} 6 succeeded$`, 'm'));
    // The saved outputs are remembered in the asset records, as a single job's are.
    const assets = fs.readdirSync(path.join(stateDir, 'assets')).filter((f) => f.endsWith('.json'));
    assert.equal(assets.length, 6);
    // The job records name their batch, and every one is created with its job id.
    const records = (await new StateStore(stateDir).list()).filter((rec) => rec.batchId === id);
    assert.equal(records.length, 6);
    assert.ok(records.every((rec) => rec.state === 'created' && rec.jobId && got.some((g) => g.jobId === rec.jobId)));
  });

  it('rule: --zip pairs the i-th values of every --set (3 jobs, not 9)', async () => {
    write('zip-prefixes.txt', 'a\nb\nc\n');
    const { result: r, requests } = await requestsDuring(() =>
      ok(['submit', workflowFile, '--zip', '--set', '1.color=10..12', '--set', '3.filename_prefix=@zip-prefixes.txt']),
    );
    const got = results(r.stdout);
    assert.deepEqual(got.map((g) => g.label).sort(), ['0-10_a', '1-11_b', '2-12_c']);
    assert.equal(posts(requests), 3);
    for (const g of got) {
      const wf = await received(g.jobId);
      assert.equal(
        `${wf['1'].inputs.color}-${wf['3'].inputs.filename_prefix}`,
        g.label.replace(/^\d+-/, '').replace('_', '-'),
      );
    }
  });

  it('rule: @folder/ values upload each distinct file once, its core/ASSET reference in the job', async () => {
    write('images/a.png', solidPng(8, 8, [255, 0, 0]));
    write('images/b.png', solidPng(8, 8, [0, 255, 0]));
    const loadWorkflow = write('load.json', {
      '1': { class_type: 'LoadImage', inputs: { image: 'placeholder.png' } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'load' } },
    });
    // Two files × two prefixes: 4 jobs, 2 uploads.
    write('two-prefixes.txt', 'p\nq\n');
    const { result: r, requests } = await requestsDuring(() =>
      ok([
        'submit',
        loadWorkflow,
        '--set',
        '1.image=@images/',
        '--set',
        '3.filename_prefix=@two-prefixes.txt',
        '--concurrency',
        '2',
      ]),
    );
    assert.equal(posts(requests), 4);
    const uploads = requests.filter((q) => q.method === 'POST' && /\/api\/v2\/assets$/.test(q.path));
    assert.equal(uploads.length, 2, 'one upload per distinct file');
    // Each file's upload asked once (one by-hash question each): not once per variation, even deduplicated.
    assert.equal(
      requests.filter((q) => /\/api\/v2\/assets\/by-hash\//.test(q.path)).length,
      2,
      'each file uploaded once, not once per variation',
    );
    const got = results(r.stdout);
    assert.deepEqual(got.map((g) => g.label).sort(), ['0-a.png_p', '1-a.png_q', '2-b.png_p', '3-b.png_q']);
    const references = new Map<string, string>();
    for (const g of got) {
      const image = (await received(g.jobId))['1'].inputs.image as Json;
      assert.equal(image.__type, 'core/ASSET', JSON.stringify(image));
      const file = g.label.replace(/^\d+-/, '').split('_')[0]!;
      assert.equal(
        references.get(file) ?? JSON.stringify(image),
        JSON.stringify(image),
        `${file}: one asset for its variations`,
      );
      references.set(file, JSON.stringify(image));
    }
    assert.equal(new Set(references.values()).size, 2);
    // A second batch of the same files sends none of them again (deduplicated by hash).
    const again = await requestsDuring(() =>
      ok(['submit', loadWorkflow, '--set', '1.image=@images/', '--set', '3.filename_prefix=xy']),
    );
    assert.equal(posts(again.requests), 2);
    assert.equal(
      again.requests.filter((q) => q.method === 'POST' && /\/api\/v2\/assets$/.test(q.path)).length,
      0,
      'a file already uploaded is not sent again',
    );
  });

  it('rule: with --json, the first line is {"batchId"} and every other stdout line one JSON object per job', async () => {
    const r = await ok(['--json', 'submit', workflowFile, '--set', '1.color=1..3']);
    const docs = lines(r.stdout).map((l) => JSON.parse(l) as Json);
    assert.deepEqual(Object.keys(docs[0]!), ['batchId']);
    const id = docs[0]!.batchId as string;
    assert.equal(docs.length, 4);
    for (const d of docs.slice(1)) {
      assert.deepEqual(Object.keys(d).sort(), [
        'batchId',
        'error',
        'files',
        'index',
        'inputs',
        'jobId',
        'label',
        'status',
      ]);
      assert.equal(d.batchId, id);
      assert.equal(d.status, 'succeeded');
      assert.deepEqual(d.inputs, { '1.color': d.index + 1 });
      assert.equal(d.error, null);
    }
    assert.deepEqual(
      docs
        .slice(1)
        .map((d) => d.index)
        .sort(),
      [0, 1, 2],
    );
  });

  it('rule: every bad input exits 2 before anything is sent or recorded', async () => {
    write('empty.txt', '\n\n');
    fs.mkdirSync(path.join(dir, 'empty-folder'), { recursive: true });
    write('three.txt', 'a\nb\nc\n');
    write('bad.batch.json', { workflow: 'invert.json', set: { '1.color': '1..2' }, variations: [{ '1.color': 1 }] });
    write('nowf.batch.json', { workflow: 'missing.json', set: { '1.color': '1..2' } });
    const cases: { args: string[]; says: RegExp }[] = [
      { args: ['submit', path.join(dir, 'missing.json'), '--set', '1.color=1..2'], says: /missing\.json/ },
      { args: ['submit', workflowFile, '--set', '9.color=1..2'], says: /no node "9"/ },
      { args: ['submit', workflowFile, '--set', '1.nope=1..2'], says: /nope/ },
      { args: ['submit', workflowFile, '--set', '2.image=1..2'], says: /link/ },
      { args: ['submit', workflowFile, '--set', '1.color=5..1'], says: /no values/ },
      { args: ['submit', workflowFile, '--set', '1.color=@empty.txt'], says: /no values/ },
      { args: ['submit', workflowFile, '--set', '1.color=@empty-folder/'], says: /has no file/ },
      { args: ['submit', workflowFile, '--set', 'color=1..2'], says: /NODE\.FIELD/ },
      {
        args: ['submit', workflowFile, '--zip', '--set', '1.color=1..2', '--set', '3.filename_prefix=@three.txt'],
        says: /--zip needs as many values/,
      },
      {
        args: ['submit', workflowFile, '--set', '1.color=1..2', '--concurrency', '0'],
        says: /--concurrency must be a whole number from 1 to 64/,
      },
      { args: ['submit', workflowFile, '--set', '1.color=1..2', '--concurrency', '65'], says: /--concurrency/ },
      { args: ['submit', workflowFile, '--set', '1.color=1..2', '--concurrency', '2.5'], says: /--concurrency/ },
      {
        args: ['submit', workflowFile, '--set', '1.color=1..2', '--idempotency-key', 'k-1'],
        says: /--idempotency-key does not go with --set: each variation .* Idempotency-Key of its own/,
      },
      {
        args: ['submit', workflowFile, '--set', '1.color=1..2', '--input', '1.color=@three.txt'],
        says: /--input does not go with --set/,
      },
      {
        args: ['--api', 'v1', 'submit', workflowFile, '--set', '1.color=1..2'],
        says: /a batch needs the v2 API: .*Idempotency-Key/,
      },
      { args: ['submit', workflowFile, '--concurrency', '2'], says: /go with --set/ },
      { args: ['batch', 'run', path.join(dir, 'bad.batch.json')], says: /exactly one of "set" and "variations"/ },
      { args: ['batch', 'run', path.join(dir, 'nowf.batch.json')], says: /missing\.json/ },
      { args: ['batch', 'status', '../../etc/passwd'], says: /is not a batch id/ },
      { args: ['batch', 'resume', 'b-no-such-batch'], says: /no batch b-no-such-batch is recorded/ },
      { args: ['batch', 'cancel', 'b-no-such-batch'], says: /no batch b-no-such-batch is recorded/ },
    ];
    for (const c of cases) {
      const { result: r, requests } = await requestsDuring(() => cli(c.args));
      assert.equal(r.code, 2, `${c.args.join(' ')}: exit ${r.code}\n${r.stderr}`);
      assert.match(r.stderr, c.says, c.args.join(' '));
      assert.deepEqual(requests, [], `${c.args.join(' ')}: nothing is sent`);
      assert.equal(r.stdout, '', `${c.args.join(' ')}: no batch id printed`);
      assert.deepEqual(await batches(), [], `${c.args.join(' ')}: nothing is recorded`);
    }
  });

  it("rule: the batch id is stdout's first line, written once the batch is recorded and before any answer to a submission", async () => {
    // Every submission is held: the id must come out while no POST has been answered.
    emu().setFaults({ rules: [{ on: 'submit', kind: 'delay', ms: 60_000 }] });
    const child = spawn(process.execPath, [CLI, 'submit', workflowFile, '--set', '1.color=1..2'], {
      env: env(),
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          if (text.includes('\n')) resolve(text.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code} before printing the batch id`)));
      });
      assert.match(first, /^b-[0-9a-f-]{36}$/);
      // Recorded whole before it was printed: every variation with its own key.
      const batch = await new BatchStore(stateDir).get(first);
      assert.ok(batch);
      assert.equal(new Set(batch.variations.map((v) => v.idempotencyKey)).size, 2);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('rule: batch run runs a batch file (workflow relative to it) as submit --set does; list and status show it', async () => {
    write('files/sub/wf.json', invertWorkflow({ prefix: 'file' }));
    const batchFile = write('files/sub/colors.batch.json', {
      workflow: 'wf.json',
      variations: [{ '1.color': 7 }, { '1.color': 8, '3.filename_prefix': 'eight' }],
    });
    const out = path.join(dir, 'file-out');
    const r = await ok(['batch', 'run', batchFile, '--out', out]);
    const id = lines(r.stdout)[0]!;
    const got = results(r.stdout);
    assert.deepEqual(got.map((g) => g.label).sort(), ['0-7', '1-8_eight']);
    assert.deepEqual(fs.readdirSync(out).sort(), ['0-7', '1-8_eight']);
    const list = await ok(['batch', 'list']);
    assert.match(list.stdout, new RegExp(`^${id}  \\S+  2 succeeded  wf\\.json$`, 'm'));
    const status = await ok(['batch', 'status', id]);
    assert.deepEqual(lines(status.stdout), [
      `${id} 2 succeeded`,
      ...got.sort((a, b) => a.label.localeCompare(b.label)).map((g) => `${g.label} succeeded ${g.jobId}`),
    ]);
    const json = JSON.parse((await ok(['--json', 'batch', 'status', id])).stdout) as Json;
    assert.equal(json.counts.succeeded, 2);
    assert.equal(json.finished, true);
  });

  it('rule: a variation that does not succeed makes exit 1, named with its count and how to resume', async () => {
    // Width 0 is refused by the server (422): that variation has no job; the other succeeds.
    const r = await cli(['submit', workflowFile, '--set', '1.width=0..1']);
    assert.equal(r.code, 1, r.stderr);
    const got = results(r.stdout);
    assert.deepEqual(got.map((g) => `${g.label} ${g.status}`).sort(), ['0-0 refused', '1-1 succeeded']);
    const id = lines(r.stdout)[0]!;
    assert.match(
      r.stderr,
      new RegExp(`batch ${id}: 1 of 2 variations did not succeed \\(1 refused\\); comfy-cloud batch resume ${id}`),
    );
  });

  it('rule: batch cancel cancels every job not ended and the batch sends nothing more; resume then sends nothing', async () => {
    // Every node held: the jobs stay running until canceled.
    emu().holdNodes({});
    const child = spawn(
      process.execPath,
      [CLI, 'submit', workflowFile, '--set', '1.color=1..3', '--concurrency', '2'],
      { env: env(), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Concurrency 2: two jobs held; the third is not sent while they run.
      const held = new Set<string>();
      while (held.size < 2) held.add((await emu().whenHeld((n) => !held.has(n.jobId))).jobId);
      const id = (await new BatchStore(stateDir).list())[0]!.batchId;
      const { result: cancel, requests } = await requestsDuring(() => ok(['batch', 'cancel', id]));
      assert.deepEqual(
        lines(cancel.stdout)
          .map((l) => l.split(' ')[2])
          .sort(),
        [...held].sort(),
      );
      assert.equal(requests.filter((q) => q.method === 'POST' && /\/cancel$/.test(q.path)).length, 2);
      assert.equal(await exited, 1);
      const got = results(stdout);
      assert.deepEqual(got.map((g) => g.status).sort(), ['canceled', 'canceled', 'not_sent']);
      const resumed = await requestsDuring(() => cli(['batch', 'resume', id]));
      assert.equal(resumed.result.code, 1);
      assert.equal(posts(resumed.requests), 0, 'a canceled batch sends nothing more');
      assert.equal(lines(resumed.result.stdout)[0], id);
      assert.match((await ok(['batch', 'list'])).stdout, new RegExp(`^${id} .*  canceled$`, 'm'));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('rule: Ctrl-C stops following (exit 130) and says the truth: the jobs keep running, resume with batch resume <id> --out DIR', async () => {
    emu().holdNodes({});
    const out = path.join(dir, 'interrupted-out');
    const child = spawn(
      process.execPath,
      [CLI, 'submit', workflowFile, '--set', '1.color=30..49', '--concurrency', '2', '--out', out],
      { env: env(), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const held = await emu().whenHeld();
      child.kill('SIGINT');
      assert.equal(await exited, 130, stderr);
      const id = lines(stdout)[0]!;
      assert.ok(
        stderr.includes(
          `interrupted: the jobs of batch ${id} already submitted keep running on the server; resume with: comfy-cloud batch resume ${id} --out ${out}`,
        ),
        stderr,
      );
      assert.doesNotMatch(stderr, /MaxListenersExceeded/);
      // Not canceled: the held job is still running.
      const job = (await (await fetch(`${emu().baseUrl}/api/v2/jobs/${held.jobId}`)).json()) as Json;
      assert.equal(job.status, 'running');
    } finally {
      child.kill('SIGKILL');
      emu().holdNodes(null);
    }
  });

  it('rule: batch resume follows what the first run left (after SIGKILL), under the same keys: no second job for a variation', async () => {
    const child = spawn(
      process.execPath,
      [CLI, 'submit', workflowFile, '--set', '1.color=20..25', '--concurrency', '2'],
      { env: env(), cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        // Killed once two jobs ended: the rest is sent, or not, when it dies.
        if (results(stdout).length >= 2) resolve();
      });
    });
    child.kill('SIGKILL');
    await exited;
    const id = lines(stdout)[0]!;
    const batch = (await new BatchStore(stateDir).get(id))!;
    const out = path.join(dir, 'resume-out');
    const r = await ok(['batch', 'resume', id, '--out', out]);
    assert.equal(lines(r.stdout)[0], id);
    assert.equal(results(r.stdout).length, 6);
    assert.equal(fs.readdirSync(out).length, 6);
    const keys = emu()
      .requests.filter((q) => q.method === 'POST' && /\/api\/v2\/jobs$/.test(q.path))
      .map((q) => q.headers['idempotency-key'] as string)
      .filter((k) => batch.variations.some((v) => v.idempotencyKey === k));
    assert.equal(new Set(keys).size, 6, 'every variation sent under its own recorded key');
    // The server made exactly one job per color: none twice, none missing.
    assert.deepEqual(
      (await createdColors()).filter((c) => c >= 20 && c <= 25),
      [20, 21, 22, 23, 24, 25],
    );
  });
});
