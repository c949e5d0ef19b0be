/**
 * The shipped CLI against a REAL ComfyUI server (ComfyUI server API (observed)), when one is given: set
 * `COMFYUI_URL` (e.g. http://127.0.0.1:8188) to a running ComfyUI whose image nodes work (EmptyImage, ImageInvert,
 * ImageBlur, LoadImage, SaveImage). Without it the suite says it was skipped: CI has no ComfyUI, and relies on the
 * emulator answering as such a server does (emulator-comfyui.test.ts, cli-comfyui-emulator.test.ts).
 * Waits are on process exits and on the server's answers, never on sleeps.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, tail } from './cli-dist.fixtures';
import { startCli } from './cliProcess';
import { call, solidPng, UUID, type Json } from './harness';

const BASE = process.env.COMFYUI_URL?.replace(/\/+$/, '');

/** EmptyImage → ImageInvert → SaveImage; `color` varies it (an identical prompt is answered from the cache). */
function workflow(color: number): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 16, height: 16, batch_size: 1, color } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'cc-real' } },
  };
}

/** A job of a few seconds: a large image blurred several times (each node short: interrupts land between nodes). */
function slow(color: number): Json {
  const graph: Json = {
    '1': { class_type: 'EmptyImage', inputs: { width: 2048, height: 2048, batch_size: 1, color } },
  };
  for (let i = 2; i <= 7; i++)
    graph[String(i)] = {
      class_type: 'ImageBlur',
      inputs: { image: [String(i - 1), 0], blur_radius: 3, sigma: 1 },
    };
  graph['9'] = { class_type: 'SaveImage', inputs: { images: ['7', 0], filename_prefix: 'cc-real-slow' } };
  return graph;
}

// Without a server the suite registers no test at all (a pending test counts as failed in scripts/test.sh): it says
// so in one line when the file loads.
if (!BASE)
  console.log('(the real-ComfyUI CLI suite is skipped: set COMFYUI_URL to a running ComfyUI server to run it)');
if (BASE)
  describe('the shipped CLI with --api comfyui against a real ComfyUI (COMFYUI_URL)', function () {
    this.timeout(180_000);
    let dir: string;

    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-comfyui-real-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    async function cli(...args: string[]): Promise<{ code: number | null; lines: string[]; stderr: string }> {
      const run = startCli(['--api', 'comfyui', '--base-url', BASE!, ...args], {
        cli: CLI,
        env: { COMFY_CLOUD_STATE_DIR: path.join(dir, 'state') },
        cwd: dir,
      });
      const code = await run.exited;
      return { code, lines: run.lines, stderr: run.stderr() };
    }
    function file(graph: Json): string {
      const target = path.join(dir, `wf-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(target, JSON.stringify(graph));
      return target;
    }
    async function submit(graph: Json): Promise<string> {
      const ran = await cli('submit', file(graph));
      assert.equal(ran.code, 0, tail(ran.stderr));
      assert.match(ran.lines[0]!, UUID);
      return ran.lines[0]!;
    }
    async function status(id: string): Promise<string> {
      const ran = await cli('--json', 'status', id);
      return (JSON.parse(ran.lines.join('\n')) as { status: string }).status;
    }
    /** Reads the queue until `id` runs (or has ended). */
    async function running(id: string): Promise<void> {
      for (;;) {
        const { body } = await call(`${BASE}/queue`);
        const runningIds = (body.queue_running as unknown[][]).map((e) => e[1]);
        if (runningIds.includes(id)) return;
        if (id in (await call(`${BASE}/history/${id}`)).body) return;
      }
    }
    /** Reads the history until `id` is in it (it ended). */
    async function ended(id: string): Promise<void> {
      while (!(id in (await call(`${BASE}/history/${id}`)).body));
    }

    it('submit --wait --out saves the output; the same prompt again is answered from the cache and saves it too; status --json says succeeded', async () => {
      const wf = file(workflow(Math.floor(Math.random() * 0xffffff)));
      for (const round of ['first', 'cached']) {
        const out = path.join(dir, round);
        const ran = await cli('submit', wf, '--wait', '--out', out);
        assert.equal(ran.code, 0, `${round}: ${tail(ran.stderr)}`);
        assert.match(ran.lines[0]!, UUID);
        assert.equal(fs.readdirSync(out).filter((f) => f.endsWith('.png')).length, 1, round);
        assert.equal(await status(ran.lines[0]!), 'succeeded');
      }
    });

    it('cancel removes a queued prompt and interrupts a running one: both read canceled, from a later process too', async () => {
      const first = await submit(slow(Math.floor(Math.random() * 0xffffff)));
      const second = await submit(slow(Math.floor(Math.random() * 0xffffff)));
      await running(first);
      assert.equal((await cli('cancel', second)).code, 0);
      assert.equal((await cli('cancel', first)).code, 0);
      await ended(first);
      assert.equal(await status(first), 'canceled');
      assert.equal(await status(second), 'canceled');
    });

    it('a bad value and an unknown class exit non-zero naming the node, input and class', async () => {
      const bad = workflow(1);
      (bad['1'] as { inputs: { width: number } }).inputs.width = 999999;
      const refused = await cli('submit', file(bad));
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /node 1 input width/);
      const unknown = workflow(2);
      (unknown['2'] as { class_type: string }).class_type = 'NoSuchNode';
      const unknownRun = await cli('submit', file(unknown));
      assert.notEqual(unknownRun.code, 0);
      assert.match(unknownRun.stderr, /NoSuchNode/);
    });

    it('upload prints the name a LoadImage workflow runs with; jobs lists a prompt another program posted; object-info lists the classes', async () => {
      const png = path.join(dir, 'in.png');
      fs.writeFileSync(png, solidPng(4, 4, [10, 20, Math.floor(Math.random() * 255)]));
      const up = await cli('upload', png);
      assert.equal(up.code, 0, tail(up.stderr));
      const out = path.join(dir, 'loaded');
      const loaded = await cli(
        'submit',
        file({
          '1': { class_type: 'LoadImage', inputs: { image: up.lines[0]! } },
          '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'cc-real-load' } },
        }),
        '--wait',
        '--out',
        out,
      );
      assert.equal(loaded.code, 0, tail(loaded.stderr));
      const posted = await call(`${BASE}/prompt`, {
        method: 'POST',
        body: JSON.stringify({ prompt: workflow(Math.floor(Math.random() * 0xffffff)) }),
      });
      const other = posted.body.prompt_id as string;
      await ended(other);
      const jobs = await cli('--json', 'jobs');
      assert.ok(jobs.lines.join('\n').includes(other), 'the other program’s prompt is not listed');
      const info = await cli('--json', 'object-info');
      assert.equal(info.code, 0);
      for (const c of ['EmptyImage', 'ImageInvert', 'LoadImage', 'SaveImage', 'KSampler'])
        assert.ok(info.lines.join('\n').includes(`"${c}"`), c);
    });
  });
