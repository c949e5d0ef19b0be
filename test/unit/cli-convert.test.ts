/**
 * `convert` and `submit` of UI-format workflows and of images, run as a user runs them: the shipped `dist/cli.js`
 * (`node esbuild.mjs --production` builds it) in a child process, against an in-process emulator whose recorded
 * requests say what was sent (and that nothing was, for every bad input). Rules: Job and Asset API v2, POST
 * /api/v2/jobs, rule 2 (the service runs API format only: nothing in UI format is ever sent, a UI-format workflow is
 * converted only with `--convert`); an image sends its `prompt` chunk, the exact graph that made it.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readImageWorkflow } from '../../src/core/convert/image';
import { assertSameGraph } from './convertBuilders';
import {
  TERMINAL,
  UUID,
  requestsDuring as requestsDuringAt,
  until,
  useEmulator,
  type CliRun,
  type Json,
} from './harness';
import { pngWith, tEXt, zTXt, zeroBomb } from './pngBuilders';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';

const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
const CORPUS = path.join(repositoryRoot(), 'test', 'fixtures', 'convert');
/** comfyanonymous/ComfyUI_examples `lora/lora.png` (test/fixtures/convert/README.md): `workflow` and `prompt` chunks. */
const LORA_PNG = path.join(CORPUS, 'ex-lora', 'input.png');
/** The node definitions of the engine that made it (rvion/comfy-ts, test/fixtures/object_info/README.md). */
const COMFY_TS = path.join(repositoryRoot(), 'test', 'fixtures', 'object_info', 'comfy-ts-object_info.json');

/**
 * A UI-format workflow (schema 0.4, as the editor saves it) of the emulator's nodes: EmptyImage (64×64 red) →
 * ImageInvert → SaveImage. `extra`: more nodes (their links not drawn).
 */
function uiWorkflow(prefix: string, extra: Json[] = []): Json {
  return {
    last_node_id: 3 + extra.length,
    last_link_id: 2,
    nodes: [
      {
        id: 1,
        type: 'EmptyImage',
        pos: [0, 0],
        size: [300, 130],
        flags: {},
        order: 0,
        mode: 0,
        inputs: [],
        outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1], slot_index: 0 }],
        properties: {},
        widgets_values: [64, 64, 1, 16711680],
      },
      {
        id: 2,
        type: 'ImageInvert',
        pos: [350, 0],
        size: [200, 30],
        flags: {},
        order: 1,
        mode: 0,
        inputs: [{ name: 'image', type: 'IMAGE', link: 1 }],
        outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [2], slot_index: 0 }],
        properties: {},
        widgets_values: [],
      },
      {
        id: 3,
        type: 'SaveImage',
        pos: [600, 0],
        size: [300, 300],
        flags: {},
        order: 2,
        mode: 0,
        inputs: [{ name: 'images', type: 'IMAGE', link: 2 }],
        outputs: [],
        properties: {},
        widgets_values: [prefix],
      },
      ...extra,
    ],
    links: [
      [1, 1, 0, 2, 0, 'IMAGE'],
      [2, 2, 0, 3, 0, 'IMAGE'],
    ],
    groups: [],
    config: {},
    extra: {},
    version: 0.4,
  };
}

/** The API-format graph {@link uiWorkflow} converts to. */
function apiOf(prefix: string): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 16711680 } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { filename_prefix: prefix, images: ['2', 0] } },
  };
}

/** A node of a class no engine has, as the editor saves one (a widget, no links). */
function unknownNode(id: number, type: string): Json {
  return {
    id,
    type,
    pos: [0, 400],
    size: [200, 60],
    flags: {},
    order: 3,
    mode: 0,
    inputs: [],
    outputs: [],
    properties: {},
    widgets_values: ['x'],
  };
}

describe('convert and submit of UI-format workflows and images (node dist/cli.js against the emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle.
  this.timeout(60_000);
  const emu = useEmulator();
  let dir: string;
  let stateDir: string;

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs --production)`);
    dir = tempDir('cc-convert-');
    stateDir = tempDir('cc-convert-state-');
  });

  /** Runs `node dist/cli.js <args>` against the emulator, with this suite's state folder. */
  function cli(args: string[]): Promise<CliRun> {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMFY_')));
    const env = { ...clean, COMFY_BASE_URL: emu().baseUrl, COMFY_CLOUD_STATE_DIR: stateDir };
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env, cwd: dir, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
    });
  }

  async function ok(args: string[]): Promise<CliRun> {
    const r = await cli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
    return r;
  }

  function write(name: string, content: string | Buffer | Json): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content));
    return file;
  }

  /** The requests the emulator received while `fn` ran. */
  const requestsDuring = <T>(fn: () => Promise<T>) => requestsDuringAt(emu(), fn);

  /** The job's workflow as the server recorded it (GET /api/v2/jobs/{id}/workflow: exactly as submitted). */
  async function received(jobId: string): Promise<Json> {
    const res = await fetch(`${emu().baseUrl}/api/v2/jobs/${jobId}/workflow`);
    assert.equal(res.status, 200);
    return (await res.json()) as Json;
  }

  describe('convert', () => {
    it("rule: a UI-format workflow is printed in API format (stdout, exit 0), with the server's node definitions (GET /api/object_info), said on stderr", async () => {
      const { result: r, requests } = await requestsDuring(() =>
        ok(['convert', write('ui.json', uiWorkflow('converted'))]),
      );
      assertSameGraph(JSON.parse(r.stdout), apiOf('converted'));
      assert.match(
        r.stderr,
        /^node definitions: fetched from http:\/\/\S+\/api\/object_info \(6 node classes\), cached in \S+node-definitions\S+\.json$/m,
      );
      assert.match(r.stderr, /^converted UI-format workflow \(3 nodes\) to API format$/m);
      assert.deepEqual(requests, [{ method: 'GET', path: '/api/object_info' }]);
    });

    it("rule: the server's node definitions are cached under the state folder (no request the next time, said so); --refresh-definitions fetches them again", async () => {
      const ui = write('ui-cached.json', uiWorkflow('cached'));
      const cached = await requestsDuring(() => ok(['convert', ui]));
      assert.deepEqual(cached.requests, []);
      assert.match(
        cached.result.stderr,
        /^node definitions: http:\/\/\S+, cached \S+ in \S+ \(6 node classes; --refresh-definitions fetches them again\)$/m,
      );
      assert.equal(
        fs.readdirSync(path.join(stateDir, 'node-definitions')).filter((f) => f.endsWith('.json')).length,
        1,
      );
      assertSameGraph(JSON.parse(cached.result.stdout), apiOf('cached'));
      const refreshed = await requestsDuring(() => ok(['convert', ui, '--refresh-definitions']));
      assert.deepEqual(refreshed.requests, [{ method: 'GET', path: '/api/object_info' }]);
      assert.match(refreshed.result.stderr, /^node definitions: fetched from /m);
    });

    it("rule: an image is converted from its workflow chunk (ex-lora with the engine's definitions, --object-info): the graph ComfyUI queued for it, no request", async () => {
      const { result: r, requests } = await requestsDuring(() => ok(['convert', LORA_PNG, '--object-info', COMFY_TS]));
      const chunk = readImageWorkflow(fs.readFileSync(LORA_PNG));
      // The prompt chunk is what the frontend queued from the workflow chunk, written into the same image.
      assertSameGraph(JSON.parse(r.stdout), chunk.prompt as Parameters<typeof assertSameGraph>[1]);
      assert.match(r.stderr, /^input\.png: converting the image's workflow chunk \(UI format\)$/m);
      assert.match(r.stderr, /^node definitions: \S+comfy-ts-object_info\.json \(1017 node classes\)$/m);
      assert.match(r.stderr, /^converted UI-format workflow \(8 nodes\) to API format$/m);
      assert.deepEqual(requests, []);
    });

    it('rule: --out writes the graph (its path on stdout) and nothing else; a refused conversion leaves the file as it was and no temporary file', async () => {
      const out = path.join(dir, 'out', 'api.json');
      fs.mkdirSync(path.dirname(out));
      const r = await ok(['convert', write('ui-out.json', uiWorkflow('to-file')), '--out', out]);
      assert.equal(r.stdout, `${out}\n`);
      assertSameGraph(JSON.parse(fs.readFileSync(out, 'utf8')), apiOf('to-file'));
      const before = fs.readFileSync(out);
      const refused = await cli([
        'convert',
        write('ui-bad-out.json', uiWorkflow('x', [unknownNode(4, 'NoSuchNode')])),
        '--out',
        out,
      ]);
      assert.equal(refused.code, 2);
      assert.deepEqual(fs.readFileSync(out), before);
      assert.deepEqual(fs.readdirSync(path.dirname(out)), ['api.json']);
      // A write that fails (the target is a folder: the rename fails) leaves no temporary file behind.
      const folder = path.join(dir, 'out', 'a-folder');
      fs.mkdirSync(folder);
      const failed = await cli(['convert', write('ui-folder.json', uiWorkflow('to-folder')), '--out', folder]);
      assert.equal(failed.code, 1, failed.stderr);
      assert.deepEqual(fs.readdirSync(path.dirname(out)).sort(), ['a-folder', 'api.json']);
      assert.deepEqual(fs.readdirSync(folder), []);
      const same = await cli(['convert', out, '--out', out]);
      assert.equal(same.code, 2);
      assert.match(same.stderr, /--out names the input file/);
    });

    it('rule: a workflow that cannot be converted exactly: exit 2, one line per node on stderr (id and class), nothing on stdout', async () => {
      const ui = write(
        'ui-refused.json',
        uiWorkflow('refused', [unknownNode(4, 'NoSuchNode'), unknownNode(5, 'SetNode')]),
      );
      const r = await cli(['convert', ui]);
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      const head = lines.findIndex((l) =>
        l.startsWith('error [workflow_not_convertible] 2 nodes of the UI-format workflow cannot be converted'),
      );
      assert.ok(head >= 0, r.stderr);
      const nodeLines = lines.slice(head + 1);
      assert.equal(nodeLines.length, 2, r.stderr);
      assert.match(nodeLines[0]!, /^ {2}.*\b4\b.*NoSuchNode/);
      assert.match(nodeLines[1]!, /^ {2}.*\b5\b.*SetNode/);
    });

    it('--json: the refusal is one JSON document listing each node (id, class, reason, fix)', async () => {
      const r = await cli([
        '--json',
        'convert',
        write('ui-refused-json.json', uiWorkflow('refused', [unknownNode(4, 'NoSuchNode')])),
      ]);
      assert.equal(r.code, 2);
      const { error } = JSON.parse(r.stdout) as Json;
      assert.equal(error.code, 'workflow_not_convertible');
      assert.deepEqual(
        error.problems.map((p: Json) => [p.node_id, p.class_type]),
        [['4', 'NoSuchNode']],
      );
      assert.ok(error.problems.every((p: Json) => typeof p.reason === 'string' && typeof p.fix === 'string'));
    });

    it('rule: an API-format file is printed as it is (byte for byte; stderr says so), with no request', async () => {
      const text =
        '{\n\t"1": {"class_type": "EmptyImage", "inputs": {"width": 8.50, "height": 8, "batch_size": 1, "color": 0}},\n\t"2": {"class_type": "SaveImage", "inputs": {"images": ["1", 0]}}\n}\n';
      const { result: r, requests } = await requestsDuring(() => ok(['convert', write('api.json', text)]));
      assert.equal(r.stdout, text);
      assert.match(r.stderr, /api\.json is already in API format: printed as it is/);
      assert.deepEqual(requests, []);
    });
  });

  describe('submit', () => {
    let outputPng: string;
    let converted: Json;

    it('rule: a UI-format workflow without --convert: exit 2 naming --convert as the fix, nothing sent', async () => {
      const { result: r, requests } = await requestsDuring(() =>
        cli(['submit', write('ui-submit.json', uiWorkflow('nope'))]),
      );
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        /^error \[workflow_format_ui\] ui-submit\.json is a UI-format workflow .*run again with --convert/m,
      );
      assert.deepEqual(requests, []);
    });

    it('rule: submit --convert converts first (stderr says so) and the server receives the API-format graph; the job remembers the file given', async () => {
      const ui = write('ui-convert.json', uiWorkflow('submitted-ui'));
      const { result: r, requests } = await requestsDuring(() =>
        ok(['submit', ui, '--convert', '--wait', '--out', path.join(dir, 'converted-out')]),
      );
      assert.match(r.stderr, /^converted UI-format workflow \(3 nodes\) to API format$/m);
      const [jobId, file] = r.stdout.trim().split('\n');
      assert.match(jobId!, UUID);
      assert.equal(requests.filter((q) => q.method === 'POST' && q.path === '/api/v2/jobs').length, 1);
      const server = await received(jobId!);
      assert.equal(server.format, 'api');
      assertSameGraph(server.workflow, apiOf('submitted-ui'));
      converted = server.workflow;
      outputPng = file!;
      const jobs = JSON.parse((await ok(['jobs', '--json'])).stdout) as Json;
      assert.equal(jobs.remembered.find((row: Json) => row.record.jobId === jobId).record.workflowFile, ui);
    });

    it("rule: the job's output PNG carries the graph as run; convert of it prints that graph (its prompt chunk: no workflow chunk to convert)", async () => {
      assert.deepEqual(readImageWorkflow(fs.readFileSync(outputPng)), { prompt: converted });
      const r = await ok(['convert', outputPng]);
      assert.deepEqual(JSON.parse(r.stdout), converted);
      assert.match(r.stderr, /carries no workflow chunk, only its prompt chunk/);
    });

    it('rule: submit image.png sends its prompt chunk, the exact graph that made the image (stderr says so): Run Again from Image', async () => {
      const r = await ok(['submit', outputPng]);
      assert.match(r.stderr, /^sending the image's prompt chunk: the API-format graph that made it \(3 nodes\)$/m);
      const server = await received(r.stdout.trim());
      assert.deepEqual(server.workflow, readImageWorkflow(fs.readFileSync(outputPng)).prompt);
      const done = await until(emu(), r.stdout.trim(), (j) => TERMINAL.includes(j.status));
      assert.equal(done.status, 'succeeded');
    });

    it('rule: a PNG with both chunks sends its prompt chunk, with --convert too (the exact graph; its workflow chunk is not converted)', async () => {
      const png = write(
        'both.png',
        pngWith(
          tEXt('prompt', JSON.stringify(apiOf('from-prompt'))),
          tEXt('workflow', JSON.stringify(uiWorkflow('from-workflow'))),
        ),
      );
      for (const args of [
        ['submit', png],
        ['submit', png, '--convert'],
      ]) {
        const r = await ok(args);
        assert.doesNotMatch(r.stderr, /converted UI-format workflow/);
        assert.deepEqual((await received(r.stdout.trim())).workflow, apiOf('from-prompt'));
      }
    });

    it('rule: a PNG with only a workflow chunk needs --convert (exit 2, nothing sent); with it, its workflow is converted and sent', async () => {
      const png = write('ui-only.png', pngWith(tEXt('workflow', JSON.stringify(uiWorkflow('from-png')))));
      const refused = await requestsDuring(() => cli(['submit', png]));
      assert.equal(refused.result.code, 2);
      assert.match(refused.result.stderr, /ui-only\.png carries only a UI-format workflow .*--convert/);
      assert.deepEqual(refused.requests, []);
      const r = await ok(['submit', png, '--convert']);
      assert.match(r.stderr, /converted UI-format workflow \(3 nodes\) to API format/);
      assertSameGraph((await received(r.stdout.trim())).workflow, apiOf('from-png'));
    });

    it('--object-info without --convert is bad usage (exit 2), nothing sent', async () => {
      const { result: r, requests } = await requestsDuring(() =>
        cli(['submit', write('api-only.json', apiOf('x')), '--object-info', COMFY_TS]),
      );
      assert.equal(r.code, 2);
      assert.match(r.stderr, /need --convert/);
      assert.deepEqual(requests, []);
    });
  });

  describe('bad input: exit 2, a clear error, nothing sent (convert and submit --convert alike)', () => {
    const cases: { name: string; file: () => string; error: RegExp }[] = [
      {
        name: 'not JSON',
        file: () => write('broken.json', '{"nodes": ['),
        error: /\[bad_json\] broken\.json is not valid JSON/,
      },
      {
        name: 'a malformed UI file',
        file: () => write('malformed.json', { nodes: [{ type: 'EmptyImage' }], links: [] }),
        error: /\[ui_workflow_malformed\]/,
      },
      {
        name: 'not a workflow',
        file: () => write('other.json', { hello: 'world' }),
        error: /\[(not_a_workflow|not_api_format)\]/,
      },
      {
        name: 'a PNG without a workflow',
        file: () => write('plain.png', pngWith()),
        error:
          /\[png_no_workflow\] plain\.png: this image carries no workflow: ComfyUI writes it into the PNGs it saves/,
      },
      {
        name: 'a truncated PNG',
        file: () => write('cut.png', fs.readFileSync(LORA_PNG).subarray(0, 5000)),
        error: /\[png_corrupt\] cut\.png: the PNG is truncated or corrupt/,
      },
      {
        name: 'a zTXt bomb (4 GiB of text)',
        file: () => write('bomb.png', pngWith(zTXt('workflow', '', zeroBomb(4096)))),
        error: /\[png_text_too_large\] bomb\.png: .*"workflow" text chunk holds more than 16 MiB/,
      },
      {
        name: 'an --object-info file that is not JSON',
        file: () => write('ui-badinfo.json', uiWorkflow('x')),
        error: /\[bad_json\] --object-info/,
      },
    ];
    for (const c of cases) {
      it(`rule: ${c.name}`, async () => {
        const file = c.file();
        const extra = c.name.includes('--object-info')
          ? ['--object-info', write('info.txt', 'not json')]
          : ['--object-info', COMFY_TS];
        for (const args of [
          ['convert', file, ...extra],
          ['submit', file, '--convert', ...extra],
        ]) {
          const { result: r, requests } = await requestsDuring(() => cli(args));
          assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
          assert.equal(r.stdout, '');
          assert.match(r.stderr, c.error);
          assert.deepEqual(requests, [], 'nothing sent');
        }
      });
    }

    it("rule: an unknown class (the server's definitions): exit 2 naming the node, and the only request was the definitions' GET", async () => {
      const ui = write('ui-unknown.json', uiWorkflow('x', [unknownNode(4, 'KSampler')]));
      for (const args of [
        ['convert', ui],
        ['submit', ui, '--convert'],
      ]) {
        const { result: r, requests } = await requestsDuring(() => cli(args));
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /^ {2}.*\b4\b.*KSampler/m);
        assert.ok(
          requests.every((q) => q.method === 'GET' && q.path === '/api/object_info'),
          JSON.stringify(requests),
        );
      }
    });
  });
});
