/** The `comfy-cloud` CLI, run in-process against the emulator (exit codes, stdout/stderr contract). */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { runCli } from '../../src/cli/cli';
import { startEmulator, type Emulator } from '../../src/emulator';
import { invertWorkflow, uiWorkflowLegacy } from './builders';
import { Buffered, abortingWhen, cliRunner } from './harness';
import { tempDir } from './tmp';
import { repositoryRoot } from './repositoryRoot';

/** The remembered-jobs store of these tests: a temporary folder, never the user's own. */
const stateDir = tempDir('cc-state-');

/** Runs the CLI in-process with this file's state folder. */
const cli = cliRunner(stateDir);

function writeJson(dir: string, name: string, value: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('CLI comfy-cloud', () => {
  let emu: Emulator;
  let dir: string;
  before(async () => {
    emu = await startEmulator({ port: 0 });
    dir = tempDir('cc-cli-');
  });
  after(async () => {
    await emu.close();
  });

  it('submit --wait --out writes the output PNG (64×64 #00FFFF); stdout: the job id on its first line, then the path written; exits 0', async () => {
    const wf = writeJson(dir, 'invert.json', invertWorkflow({ prefix: 'cli' }));
    const out = path.join(dir, 'out');
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const [jobId, file, ...rest] = r.stdout.trim().split('\n');
    assert.match(jobId, /^[0-9a-f-]{36}$/, r.stdout);
    assert.deepEqual(rest, [], r.stdout);
    assert.ok(file.startsWith(out), r.stdout);
    const png = PNG.sync.read(fs.readFileSync(file));
    assert.equal(png.width, 64);
    assert.deepEqual([...png.data.subarray(0, 3)], [0, 255, 255]);
    assert.match(r.stderr, /status: /, 'progress lines on stderr');
  });

  it('submit --wait --json: stdout carries exactly one JSON document, the final job', async () => {
    const wf = writeJson(dir, 'invert2.json', invertWorkflow({ prefix: 'json' }));
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const job = JSON.parse(r.stdout);
    assert.equal(job.status, 'succeeded');
    assert.equal(job.outputs.length, 1);
  });

  it('submit: a workflow file with a top-level $schema (workflow IntelliSense) runs; the key is not sent (the server would refuse it as a node)', async () => {
    const wf = writeJson(dir, 'schema.api.json', {
      $schema: 'comfy-workflow-schema://schemas/api-format.json',
      ...invertWorkflow({ prefix: 'schema' }),
    });
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).status, 'succeeded');
  });

  it('a second --out run never overwrites: it picks a free name', async () => {
    const wf = writeJson(dir, 'same.json', invertWorkflow({ prefix: 'same' }));
    const out = path.join(dir, 'same-out');
    const a = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--out', out]);
    const b = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--out', out]);
    assert.equal(a.code, 0);
    assert.equal(b.code, 0);
    assert.notEqual(a.stdout.trim(), b.stdout.trim());
    assert.equal(fs.readdirSync(out).length, 2);
  });

  it('a file that is not JSON exits 2 with a clear message, before any request', async () => {
    const before = emu.requests.length;
    const r = await cli(['--base-url', emu.baseUrl, 'submit', writeJson(dir, 'bad.json', '{"1": {')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.json is not valid JSON/);
    assert.equal(emu.requests.length, before);
  });

  it('a UI-format file exits 2 with workflow_format_ui and how to export API format, before any request', async () => {
    const before = emu.requests.length;
    const r = await cli(['--base-url', emu.baseUrl, 'submit', writeJson(dir, 'ui.json', uiWorkflowLegacy())]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /workflow_format_ui/);
    assert.match(r.stderr, /Export \(API\)/);
    assert.equal(emu.requests.length, before);
  });

  it('a missing file and bad usage exit 2', async () => {
    assert.equal((await cli(['--base-url', emu.baseUrl, 'submit', path.join(dir, 'nope.json')])).code, 2);
    assert.equal((await cli(['submit'])).code, 2);
    assert.equal((await cli(['no-such-command'])).code, 2);
    assert.equal((await cli(['--base-url', 'ftp://x', 'status', 'x'])).code, 2);
  });

  it('an API error exits 1 and prints its code and request id: invalid workflow names node and field', async () => {
    const r = await cli(['--base-url', emu.baseUrl, 'submit', writeJson(dir, 'w0.json', invertWorkflow({ width: 0 }))]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\[invalid_workflow\]/);
    assert.match(r.stderr, /node 1 input width/);
    assert.match(r.stderr, /request-id /);
  });

  it("a workflow of classes the emulator does not run: one line, the emulator's one sentence naming each class once, no line per node", async () => {
    const sd = JSON.parse(
      fs.readFileSync(path.join(repositoryRoot(), 'test', 'fixtures', 'workspace', 'stable-diffusion.json'), 'utf8'),
    ) as unknown;
    const r = await cli(['--base-url', emu.baseUrl, 'submit', writeJson(dir, 'sd.json', sd)]);
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0],
      /^error \[invalid_workflow\] the local emulator runs only its demo nodes \(EmptyImage, ImageInvert, .*\), not .*; use a cloud connection for this workflow \(request-id \S+\)$/,
    );
    for (const c of ['KSampler', 'CheckpointLoaderSimple', 'EmptyLatentImage', 'CLIPTextEncode', 'VAEDecode']) {
      assert.equal(r.stderr.split(new RegExp(`\\b${c}\\b`)).length - 1, 1, `${c} is named once`);
    }
  });

  it('status, workflow and cancel of a job; status of an unknown job exits 1 with not_found', async () => {
    const wf = writeJson(dir, 'st.json', invertWorkflow({ prefix: 'st' }));
    const sub = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--json']);
    const id = JSON.parse(sub.stdout).id as string;
    const st = await cli(['--base-url', emu.baseUrl, 'status', id, '--json']);
    assert.equal(st.code, 0);
    assert.equal(JSON.parse(st.stdout).id, id);
    const w = await cli(['--base-url', emu.baseUrl, 'workflow', id]);
    assert.equal(w.code, 0);
    assert.match(w.stderr, /format: api/);
    assert.deepEqual(JSON.parse(w.stdout), invertWorkflow({ prefix: 'st' }));
    const c = await cli(['--base-url', emu.baseUrl, 'cancel', id]);
    assert.equal(c.code, 0);
    const missing = await cli(['--base-url', emu.baseUrl, 'status', '00000000-0000-4000-8000-000000000000']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not_found/);
  });

  it('watch of a job that ends other than succeeded exits 1', async () => {
    const slow = await startEmulator({ port: 0, nodeDelayMs: 60_000 });
    try {
      const wf = writeJson(dir, 'slow.json', invertWorkflow({ prefix: 'slow' }));
      const sub = await cli(['--base-url', slow.baseUrl, 'submit', wf, '--json']);
      const id = JSON.parse(sub.stdout).id as string;
      assert.equal((await cli(['--base-url', slow.baseUrl, 'cancel', id])).code, 0);
      const w = await cli(['--base-url', slow.baseUrl, 'watch', id]);
      assert.equal(w.code, 1);
      assert.match(w.stderr, /cancel/);
    } finally {
      await slow.close();
    }
  });

  it('Ctrl-C during submit --wait exits 130; with --cancel-on-interrupt the job is canceled on the server', async () => {
    const slow = await startEmulator({ port: 0, nodeDelayMs: 60_000 });
    try {
      const wf = writeJson(dir, 'int.json', invertWorkflow({ prefix: 'int' }));
      const ac = new AbortController();
      // Interrupt once the job exists: the first progress line on stderr says so.
      const stderr = abortingWhen(/submitted job/, ac);
      const stdout = new Buffered();
      const code = await runCli(['--base-url', slow.baseUrl, 'submit', wf, '--wait', '--cancel-on-interrupt'], {
        stdout,
        stderr,
        env: { COMFY_CLOUD_STATE_DIR: stateDir },
        signal: ac.signal,
      });
      assert.equal(code, 130);
      assert.ok(
        slow.requests.some((r) => r.method === 'POST' && r.path.endsWith('/cancel')),
        'POST cancel sent',
      );
    } finally {
      await slow.close();
    }
  });

  it('download <asset-id> <file> refuses to overwrite an existing file (exit 2)', async () => {
    const wf = writeJson(dir, 'dl.json', invertWorkflow({ prefix: 'dl' }));
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--json']);
    const assetId = JSON.parse(r.stdout).outputs[0].id as string;
    const target = path.join(dir, 'asset.png');
    const d1 = await cli(['--base-url', emu.baseUrl, 'download', assetId, target]);
    assert.equal(d1.code, 0, d1.stderr);
    assert.equal(PNG.sync.read(fs.readFileSync(target)).width, 64);
    const d2 = await cli(['--base-url', emu.baseUrl, 'download', assetId, target]);
    assert.equal(d2.code, 2);
    assert.match(d2.stderr, /already exists/);
  });

  it('jobs lists what was submitted from this machine, with its current state', async () => {
    const wf = writeJson(dir, 'remember.json', invertWorkflow({ prefix: 'remember' }));
    const sub = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--json']);
    const id = JSON.parse(sub.stdout).id as string;
    const r = await cli(['--base-url', emu.baseUrl, 'jobs']);
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => l.startsWith(id));
    assert.ok(line, r.stdout);
    assert.match(line, /succeeded/);
    assert.match(line, /remember\.json/);
  });

  it("jobs also shows the surface's own listing: a job submitted elsewhere is listed as the server's", async () => {
    const elsewhere = await fetch(`${emu.baseUrl}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: invertWorkflow({ prefix: 'elsewhere' }) }),
    });
    assert.equal(elsewhere.status, 201);
    const id = ((await elsewhere.json()) as { id: string }).id;
    const r = await cli(['--base-url', emu.baseUrl, 'jobs']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${id} .*listed by the server`, 'm'));
    const j = await cli(['--base-url', emu.baseUrl, 'jobs', '--json']);
    const doc = JSON.parse(j.stdout) as { remembered: { record: { jobId: string } }[]; server: { id: string }[] };
    assert.ok(doc.server.some((s) => s.id === id));
    assert.ok(
      !doc.remembered.some((x) => x.record.jobId === id),
      'a job not submitted from here is not among the remembered ones',
    );
  });

  it('rule: --deployment <id> reaches the deployment at its own host, <id>.<--deployment-domain> (the URL the extension builds); a bad id is bad usage', async () => {
    const dep = await startEmulator({ port: 0, deploymentDomain: 'localhost' });
    try {
      const domain = `localhost:${new URL(dep.origin).port}`;
      const wf = writeJson(dir, 'dep.json', invertWorkflow({ prefix: 'dep' }));
      const r = await cli(['--deployment', 'dep-x', '--deployment-domain', domain, 'submit', wf, '--wait', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).status, 'succeeded');
      assert.equal(r.stderr.includes('note:'), false, r.stderr);
      // The environment says the same: COMFY_DEPLOYMENT and COMFY_DEPLOYMENT_DOMAIN.
      const s = await cli(['status', JSON.parse(r.stdout).id], {
        COMFY_DEPLOYMENT: 'dep-x',
        COMFY_DEPLOYMENT_DOMAIN: domain,
      });
      assert.equal(s.code, 0, s.stderr);
      assert.deepEqual([...new Set(dep.requests.map((q) => q.headers.host))], [`dep-x.${domain}`]);
      assert.equal((await cli(['--deployment', 'Bad_Id', 'status', 'x'])).code, 2);
      assert.equal(
        (await cli(['--deployment', 'dep-x', '--deployment-domain', 'https://run.comfy.app', 'status', 'x'])).code,
        2,
      );
    } finally {
      await dep.close();
    }
  });

  it('rule: the old forms keep working with a note: --base-url URL --deployment <id> (the base URL is not used), --base-url https://cloud.comfy.org/deployment/<id> (moved to the deployment host)', async () => {
    const dep = await startEmulator({ port: 0, deploymentDomain: 'localhost' });
    try {
      const domain = `localhost:${new URL(dep.origin).port}`;
      const wf = writeJson(dir, 'dep-old.json', invertWorkflow({ prefix: 'dep' }));
      const r = await cli(['--base-url', 'https://cloud.example', '--deployment', 'dep-x', 'submit', wf, '--wait'], {
        COMFY_DEPLOYMENT_DOMAIN: domain,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /^note: a deployment has a host of its own: requests go to http:\/\/dep-x\.localhost:\d+; the base URL https:\/\/cloud\.example is not used \(an earlier version sent them to https:\/\/cloud\.example\/deployment\/dep-x\)/m,
      );
      assert.equal(r.stderr.match(/^note:/gm)?.length, 1, r.stderr);
      // The cloud's URL plus /deployment/<id>, which the public cloud does not serve: moved to the deployment's host.
      const moved = await cli(['--base-url', 'https://cloud.comfy.org/deployment/dep-x', 'submit', wf, '--wait'], {
        COMFY_DEPLOYMENT_DOMAIN: domain,
      });
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(
        moved.stderr,
        /^note: https:\/\/cloud\.comfy\.org\/deployment\/dep-x is not an address of the public service: a deployment has a host of its own; requests go to http:\/\/dep-x\.localhost:\d+/m,
      );
      assert.deepEqual([...new Set(dep.requests.map((q) => q.headers.host))], [`dep-x.${domain}`]);
    } finally {
      await dep.close();
    }
  });

  it('a gateway mounting a deployment under /deployment/<id> is reached by giving that whole URL as --base-url', async () => {
    const dep = await startEmulator({ port: 0, mountPrefix: '/deployment/dep-x' });
    try {
      const wf = writeJson(dir, 'dep-mounted.json', invertWorkflow({ prefix: 'dep' }));
      const r = await cli(['--base-url', dep.baseUrl, 'submit', wf, '--wait', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr.includes('note:'), false, r.stderr);
      assert.ok(dep.requests.every((q) => q.path.startsWith('/deployment/dep-x/')));
    } finally {
      await dep.close();
    }
  });

  it('without --base-url, finds a running self-hosted companion from its state file', async () => {
    const xdg = tempDir('cc-xdg-');
    fs.mkdirSync(path.join(xdg, 'comfy-api-proxy'));
    const origin = new URL(emu.baseUrl);
    fs.writeFileSync(
      path.join(xdg, 'comfy-api-proxy', 'proxy.json'),
      JSON.stringify({ pid: process.pid, host: origin.hostname, port: Number(origin.port), url: emu.baseUrl }),
    );
    const wf = writeJson(dir, 'found.json', invertWorkflow({ prefix: 'found' }));
    const before = emu.requests.length;
    const r = await cli(['submit', wf, '--json'], { XDG_STATE_HOME: xdg });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      emu.requests.slice(before).map((q) => `${q.method} ${q.path}`),
      ['POST /api/v2/jobs'],
    );
  });

  it('--help works on every command', async () => {
    for (const c of ['submit', 'status', 'watch', 'cancel', 'workflow', 'download', 'emulator', 'jobs']) {
      const r = await cli([c, '--help']);
      assert.equal(r.code, 0, c);
      assert.match(r.stdout, /Usage: comfy-cloud/);
    }
  });
});
