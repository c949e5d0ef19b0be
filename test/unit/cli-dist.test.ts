/**
 * The shipped CLI: `dist/cli.js`, the file a user runs (`npm test` and `npm run package` build it with
 * `node esbuild.mjs --production`), run as a user runs it, `node dist/cli.js …` in a child process, against the
 * emulator the same file carries (`dist/cli.js emulator`). Every command and subcommand its `--help` lists runs here
 * at least once (the last test checks that none was left out), each checked by its exit code, its stdout and the
 * files it writes. The other CLI tests run the CLI in-process from tsc's output, which is fast but is not what
 * ships: a bundler can turn a working import into a crash only in the bundle.
 */
import * as assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashBytes } from '../../src/core/util';
import { TEST_ROUTER_KEY } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { BLAKE3, UUID, assertSolid, solidPng, type CliRun, type Json } from './harness';
import { tempDir } from './tmp';
import { repositoryRoot } from './repositoryRoot';

const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
/** The API key the emulator of these tests requires (its `--token`). */
const KEY = 'dist-cli-key';

/** The end of a child's stderr: a crash of a minified bundle prints its whole first line before the error. */
function tail(text: string): string {
  return text.length > 2000 ? `…${text.slice(-2000)}` : text;
}

/** The environment of every run: no COMFY_* variable of the person running the tests, plus `env`. */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMFY_')));
  return { ...clean, ...env };
}

/** A running `node dist/cli.js emulator …`: its two result lines (base URL, router URL) and the child. */
interface ShippedEmulator {
  baseUrl: string;
  routerUrl: string;
  child: ChildProcess;
  /** stderr so far. */
  stderr(): string;
  /** Resolves with the exit code once the child has exited. */
  exited: Promise<number | null>;
}

/** Starts `node dist/cli.js emulator --port 0 <args>` and resolves once it printed its base URL and router URL. */
function startShippedEmulator(args: string[]): Promise<ShippedEmulator> {
  const child = spawn(process.execPath, [CLI, 'emulator', '--port', '0', ...args], {
    env: childEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.once('exit', () => child.kill());
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const lines = stdout.split('\n');
      if (lines.length > 2) resolve({ baseUrl: lines[0]!, routerUrl: lines[1]!, child, stderr: () => stderr, exited });
    });
    void exited.then((code) =>
      reject(new Error(`dist/cli.js emulator exited (${code}) before printing its URLs: ${tail(stderr)}`)),
    );
  });
}

describe('the shipped CLI (node dist/cli.js, every command against its own emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle.
  this.timeout(60_000);
  let emu: ShippedEmulator;
  /** An emulator whose every node takes a minute: its jobs stay queued or running until canceled. */
  let slow: ShippedEmulator;
  let dir: string;
  let stateDir: string;
  /** The commands run so far: `submit`, `models run`, `v1 submit`, … */
  const ran = new Set<string>();

  before(async () => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs --production)`);
    dir = tempDir('cc-dist-cli-');
    stateDir = tempDir('cc-dist-state-');
    [emu, slow] = await Promise.all([
      startShippedEmulator(['--token', KEY]),
      startShippedEmulator(['--token', KEY, '--node-delay-ms', '60000']),
    ]);
  });
  after(() => {
    for (const e of [emu, slow]) e?.child.kill();
  });

  /**
   * Runs `node dist/cli.js <args>` with the emulator, the key, the router and this suite's state folder in the
   * environment (`v1`: COMFY_API=v1) and records the command it ran.
   */
  function cli(args: string[], options: { env?: NodeJS.ProcessEnv; v1?: boolean; cwd?: string } = {}): Promise<CliRun> {
    const command = args[0] === 'models' ? `models ${args[1]}` : args[0]!;
    ran.add(options.v1 ? `v1 ${command}` : command);
    const env = childEnv({
      COMFY_BASE_URL: emu.baseUrl,
      COMFY_API_KEY: KEY,
      COMFY_ROUTER_URL: emu.routerUrl,
      COMFY_ROUTER_KEY: TEST_ROUTER_KEY,
      COMFY_CLOUD_STATE_DIR: stateDir,
      ...(options.v1 ? { COMFY_API: 'v1' } : {}),
      ...options.env,
    });
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env, cwd: options.cwd ?? dir, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** `cli`, insisting on exit 0. */
  async function ok(args: string[], options: { env?: NodeJS.ProcessEnv; v1?: boolean } = {}): Promise<CliRun> {
    const r = await cli(args, options);
    assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code}\n${tail(r.stderr)}`);
    return r;
  }

  function write(name: string, content: string | Buffer | Json): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content));
    return file;
  }

  /** GET of the emulator's model router with its key: the JSON as served. */
  async function served(pathAndQuery: string): Promise<Json> {
    const res = await fetch(`${emu.routerUrl}${pathAndQuery}`, {
      headers: { authorization: `Bearer ${TEST_ROUTER_KEY}` },
    });
    assert.equal(res.status, 200, pathAndQuery);
    return (await res.json()) as Json;
  }

  /** The commands a `--help` lists (the lines under "Commands:"), without `help`. */
  function listed(help: string): string[] {
    const section = help.split(/^Commands:$/m)[1] ?? '';
    return [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
  }

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
      const out = path.join(dir, 'submitted');
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
      const out = path.join(dir, 'watched');
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
      const out = path.join(dir, 'batch');
      const r = await ok(['submit', write('invert-batch.json', workflow), '--set', '1.width=16..17', '--out', out]);
      const [id, ...rest] = r.stdout.trim().split('\n');
      assert.match(id!, /^b-[0-9a-f-]{36}$/);
      assert.equal(rest.filter((l) => / succeeded /.test(l)).length, 2);
      assert.deepEqual(fs.readdirSync(out).sort(), ['0-16', '1-17']);
      const status = await ok(['batch', 'status', id!]);
      assert.match(status.stdout, new RegExp(`^${id} 2/2 done$`, 'm'));
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
      const target = path.join(dir, 'downloaded.txt');
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
      const r = await ok(['submit', wf, '--input', `1.image=@${red}`, '--wait', '--out', path.join(dir, 'loaded')]);
      const [, file, ...rest] = r.stdout.trim().split('\n');
      assert.deepEqual(rest, []);
      assertSolid(fs.readFileSync(file!), 12, 7, [0, 255, 255]);
    });

    it('cancel cancels a running job (exit 0); watch of it then exits 1, saying canceled', async () => {
      const env = { COMFY_BASE_URL: slow.baseUrl };
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

  describe('--api v1 commands', () => {
    let promptId: string;
    let uploaded: string;

    it('submit --wait --out: the prompt id, then the PNG written; one deprecation note on stderr', async () => {
      const r = await ok(
        ['submit', write('v1.json', invertWorkflow({ prefix: 'v1dist' })), '--wait', '--out', path.join(dir, 'v1-out')],
        { v1: true },
      );
      const [id, file, ...rest] = r.stdout.trim().split('\n');
      assert.match(id!, UUID);
      assert.deepEqual(rest, []);
      assertSolid(fs.readFileSync(file!), 64, 64, [0, 255, 255]);
      assert.equal(r.stderr.match(/v1 API is deprecated/g)?.length, 1);
      promptId = id!;
    });

    it("status prints the job's summary line as on v2; watch --out writes the outputs of a finished prompt", async () => {
      const status = await ok(['status', promptId], { v1: true });
      assert.equal(status.stdout, `${promptId} succeeded · 1 output(s)\n`);
      const out = path.join(dir, 'v1-watched');
      const watched = await ok(['watch', promptId, '--out', out], { v1: true });
      const file = watched.stdout.trim();
      assert.equal(path.dirname(file), out);
      assertSolid(fs.readFileSync(file), 64, 64, [0, 255, 255]);
    });

    it('upload prints the name to use in a workflow; upload --mask --original-ref uploads a mask of it', async () => {
      uploaded = (await ok(['upload', write('v1-red.png', solidPng(4, 4, [255, 0, 0]))], { v1: true })).stdout.trim();
      assert.match(uploaded, /\.png$/);
      const mask = await ok(
        [
          'upload',
          write('v1-mask.png', solidPng(4, 4, [0, 0, 0])),
          '--mask',
          '--original-ref',
          JSON.stringify({ filename: uploaded, subfolder: '', type: 'input' }),
        ],
        { v1: true },
      );
      assert.match(mask.stdout.trim(), /\.png$/);
    });

    it('object-info --class C prints `class_type  display name  category`; --json the node definitions map', async () => {
      const one = await ok(['object-info', '--class', 'SaveImage'], { v1: true });
      assert.equal(one.stdout, 'SaveImage  Save Image  image\n');
      const all = JSON.parse((await ok(['object-info', '--json'], { v1: true })).stdout) as Json;
      assert.ok(
        ['EmptyImage', 'ImageInvert', 'SaveImage', 'LoadImage'].every((c) => c in all),
        Object.keys(all).join(', '),
      );
    });

    it('convert converts with the node definitions v1 serves (GET /api/object_info, X-API-Key)', async () => {
      const ui = {
        nodes: [{ id: 1, type: 'EmptyImage', mode: 0, inputs: [], outputs: [], widgets_values: [4, 4, 1, 255] }],
        links: [],
        version: 0.4,
      };
      const r = await ok(['convert', write('v1-ui.json', ui), '--refresh-definitions'], { v1: true });
      assert.deepEqual(JSON.parse(r.stdout)['1'].inputs, { width: 4, height: 4, batch_size: 1, color: 255 });
      assert.match(r.stderr, /node definitions: fetched from http:\/\/\S+\/api\/object_info/);
    });

    it('jobs runs under --api v1 as under v2: the remembered prompt, with its status', async () => {
      const r = await ok(['jobs'], { v1: true });
      assert.match(r.stdout, new RegExp(`^${promptId}  succeeded  `, 'm'));
    });

    it("what v1 cannot do is refused by capability in the core's words (exit 2): a job's stored workflow", async () => {
      const r = await cli(['workflow', promptId], { v1: true });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /the v1 API of this connection keeps no workflow of a job \(drop --api v1\)/);
    });
  });

  describe('models (the model router)', () => {
    it('models list prints one `id  billing` line per entry of the first page, in the order served', async () => {
      const r = await ok(['models', 'list']);
      const page = await served('/v1/models');
      assert.deepEqual(
        r.stdout
          .trimEnd()
          .split('\n')
          .map((l) => l.split('  ')[0]),
        page.data.map((e: Json) => e.id),
      );
      assert.ok(
        r.stdout
          .trimEnd()
          .split('\n')
          .every((l) => /^\S+ {2}(yes|no|unknown)$/.test(l)),
        r.stdout,
      );
    });

    it('rule: models list --json prints the page as served: every entry with the fields the client does not know, and odd values as they are', async () => {
      const r = await ok(['models', 'list', '--json', '--limit', '100']);
      const page = JSON.parse(r.stdout) as Json;
      const expected = await served('/v1/models?limit=100');
      // The cursor is new at each request (it carries a nonce); everything else is the same document.
      assert.equal(typeof page.next_cursor, 'string');
      assert.deepEqual({ ...page, next_cursor: 'any' }, { ...expected, next_cursor: 'any' });
      assert.ok(
        page.data.some((e: Json) => 'modality' in e && 'tags' in e),
        'the emulator serves entries with extra fields: none was seen',
      );
    });

    it('rule: models list --all --json prints every entry as served, in the order served (the odd billing note `sometimes` too)', async () => {
      const r = await ok(['models', 'list', '--all', '--json', '--limit', '100']);
      const entries: Json[] = [];
      for (let cursor: string | undefined, more = true; more;) {
        const page = await served(`/v1/models?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        entries.push(...page.data);
        more = page.has_more === true;
        cursor = page.next_cursor;
      }
      assert.deepEqual(JSON.parse(r.stdout), entries);
      assert.ok(
        entries.some((e) => e.billing?.charges_on_policy_rejection === 'sometimes'),
        'the emulator serves one odd billing note: none was seen',
      );
    });

    it('rule: models get --json prints the detail as served (fields the client does not know included); plain, its lines', async () => {
      const withExtras = ((await served('/v1/models?limit=100')).data as Json[]).find((e) => 'modality' in e)!;
      const json = await ok(['models', 'get', withExtras.id, '--json']);
      assert.deepEqual(JSON.parse(json.stdout), await served(`/v1/models/${withExtras.id}`));
      assert.equal(JSON.parse(json.stdout).modality, withExtras.modality);
      const plain = await ok(['models', 'get', 'emulator/echo']);
      assert.match(plain.stdout, /^id: emulator\/echo$/m);
      assert.match(plain.stdout, /^charges on policy rejection: no$/m);
      assert.match(plain.stdout, /^input schema: http:\/\/\S+\/router\/v1\/models\/emulator\/echo\/openapi\.json$/m);
    });

    it('models schema prints the openapi.json byte for byte as served', async () => {
      const r = await ok(['models', 'schema', 'emulator/echo']);
      const res = await fetch(`${emu.routerUrl}/v1/models/emulator/echo/openapi.json`, {
        headers: { authorization: `Bearer ${TEST_ROUTER_KEY}` },
      });
      assert.equal(r.stdout, await res.text());
    });

    it('models run POSTs the input with its top-level $schema removed and prints the output byte for byte; --out writes it to the file', async () => {
      const input = write(
        'echo.json',
        '{ "$schema": "comfy-router-schema:/emulator/echo", "seed": 12345678901234567890123, "z": 1.50 }\n',
      );
      const sent = '{  "seed": 12345678901234567890123, "z": 1.50 }\n';
      const r = await ok(['models', 'run', 'emulator/echo', input]);
      assert.equal(r.stdout, sent);
      assert.match(r.stderr, /idempotency key \S+/);
      const out = path.join(dir, 'echo-out.json');
      const toFile = await ok(['models', 'run', 'emulator/echo', input, '--out', out]);
      assert.equal(toFile.stdout, `${out}\n`);
      assert.equal(fs.readFileSync(out, 'utf8'), sent);
    });

    it('models run of an input the model refuses: exit 1, one line per field of the 422', async () => {
      const r = await cli(['models', 'run', 'emulator/strict', write('strict.json', '{"prompt": "", "steps": 99}')]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[invalid_input\] HTTP 422/);
      assert.match(r.stderr, /^ {2}\S*steps: .+ \(\S+\)$/m);
    });
  });

  describe('a serverless deployment by id (--deployment)', () => {
    /** `dist/cli.js emulator --deployment-domain localhost`: deployments on hosts of their own, `<id>.localhost:<port>`. */
    let hosted: ShippedEmulator;
    let domain: string;
    before(async () => {
      hosted = await startShippedEmulator(['--token', KEY, '--deployment-domain', 'localhost']);
      domain = `localhost:${new URL(hosted.baseUrl).port}`;
    });
    after(() => hosted?.child.kill());

    it('rule: --help says a deployment is https://<id>.run.comfy.app, its own host, and how to change the domain', async () => {
      const help = (await ok(['--help'])).stdout;
      assert.match(
        help,
        /--deployment <id> +a serverless deployment by its id, at its own\s+host https:\/\/<id>\.run\.comfy\.app \(env COMFY_DEPLOYMENT\)/,
      );
      assert.match(help, /--deployment-domain <host>[\s\S]*stg\.run\.comfy\.app[\s\S]*COMFY_DEPLOYMENT_DOMAIN/);
    });

    it('rule: --deployment ID submit --wait and status reach the deployment at ID.<domain> (COMFY_DEPLOYMENT_DOMAIN), as the extension builds it', async () => {
      assert.match(
        hosted.stderr(),
        new RegExp(`serverless deployments at http://<id>\\.${domain.replace('.', '\\.')}`),
      );
      const env = { COMFY_BASE_URL: '', COMFY_DEPLOYMENT_DOMAIN: domain };
      const out = path.join(dir, 'deployment');
      const r = await ok(
        [
          '--deployment',
          'dep-1',
          'submit',
          write('deployment.json', invertWorkflow({ prefix: 'dep' })),
          '--wait',
          '--out',
          out,
        ],
        { env },
      );
      const [id, file] = r.stdout.trim().split('\n');
      assert.match(id!, UUID);
      assertSolid(fs.readFileSync(file!), 64, 64, [0, 255, 255]);
      assert.doesNotMatch(r.stderr, /note:/);
      const status = await ok(['status', id!], { env: { ...env, COMFY_DEPLOYMENT: 'dep-1' } });
      assert.match(status.stdout, new RegExp(`^${id} succeeded`));
      // The same emulator at its bare address names no deployment: 404, so the runs above used the deployment's host.
      const bare = await cli(['status', id!, '--base-url', hosted.baseUrl]);
      assert.equal(bare.code, 1, bare.stderr);
      assert.match(bare.stderr, /not_found/);
    });
  });

  describe('emulator', () => {
    it('a port out of range is bad usage (exit 2), nothing started', async () => {
      const r = await cli(['emulator', '--port', '70000']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--port/);
      assert.equal(r.stdout, '');
    });

    it('--data-dir keeps a job across a restart: the next emulator over the same folder still has it, succeeded, with its output; --retention-ms sets expires_at', async () => {
      const data = tempDir('cc-dist-emu-data-');
      const day = 24 * 60 * 60 * 1000;
      const first = await startShippedEmulator(['--data-dir', data, '--retention-ms', String(day)]);
      let job: Json;
      try {
        const created = await fetch(`${first.baseUrl}/api/v2/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: invertWorkflow() }),
        });
        assert.equal(created.status, 201);
        job = (await created.json()) as Json;
        for (let i = 0; i < 5000 && !['succeeded', 'failed'].includes(job.status); i++)
          job = (await (await fetch(`${first.baseUrl}/api/v2/jobs/${job.id}`)).json()) as Json;
        assert.equal(job.status, 'succeeded');
        assert.equal(Date.parse(job.expires_at) - Date.parse(job.created_at), day);
      } finally {
        first.child.kill('SIGINT');
      }
      assert.equal(await first.exited, 0);
      const second = await startShippedEmulator(['--data-dir', data]);
      try {
        const again = (await (await fetch(`${second.baseUrl}/api/v2/jobs/${job.id}`)).json()) as Json;
        assert.equal(again.status, 'succeeded');
        assert.deepEqual(
          again.outputs.map((o: Json) => o.hash),
          job.outputs.map((o: Json) => o.hash),
        );
      } finally {
        second.child.kill('SIGINT');
      }
      assert.equal(await second.exited, 0);
    });

    it('a --retention-ms out of range is bad usage (exit 2), nothing started', async () => {
      const r = await cli(['emulator', '--port', '0', '--retention-ms', '0']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--retention-ms/);
      assert.equal(r.stdout, '');
    });

    it('--data-dir over a folder written by a newer emulator is bad usage (exit 2) that says so; nothing started', async () => {
      const data = tempDir('cc-dist-emu-newer-');
      fs.writeFileSync(
        path.join(data, 'state.json'),
        JSON.stringify({ format: 'comfy-cloud-emulator-state', version: 999 }),
      );
      const r = await cli(['emulator', '--port', '0', '--data-dir', data]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /written by a newer emulator/);
      assert.equal(r.stdout, '');
    });

    it('prints its base URL then its router URL on stdout; Ctrl-C stops it: exit 0, "emulator stopped"', async () => {
      assert.match(emu.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(emu.routerUrl, `${emu.baseUrl}/router`);
      emu.child.kill('SIGINT');
      assert.equal(await emu.exited, 0);
      assert.match(emu.stderr(), /^emulator stopped$/m);
    });
  });

  // Last: mocha runs a suite's own tests before its nested suites, so this check is a suite of its own.
  describe('coverage', () => {
    it("every command and subcommand of the shipped --help ran above, and the commands of a job's life ran under --api v1", async () => {
      const help = await ok(['--help']);
      const models = await ok(['models', '--help']);
      const commands = [
        ...listed(help.stdout).filter((c) => c !== 'models'),
        ...listed(models.stdout).map((c) => `models ${c}`),
      ];
      assert.ok(commands.length >= 17, commands.join(', '));
      // Every command runs on either API; these are the ones whose v1 path does something of its own.
      const v1Commands = ['submit', 'status', 'watch', 'upload', 'object-info', 'convert', 'jobs', 'workflow'].map(
        (c) => `v1 ${c}`,
      );
      assert.deepEqual(
        [...commands, ...v1Commands].filter((c) => !ran.has(c)),
        [],
      );
    });
  });
});
