/**
 * The shipped CLI (`node dist/cli.js` in a child process) with `--api comfyui --base-url <emulator>/comfyui` against
 * the emulator's ComfyUI server (ComfyUI server API (observed): Submitting, Following a job, Reading state,
 * Cancelling, Files). Running jobs are held with the emulator's node holds; every wait is on a process exit, a hold
 * or an answer (no sleeps).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readImageWorkflow } from '../../src/core/convert/image';
import { startEmulator, type Emulator } from '../../src/emulator';
import { CLI, tail } from './cli-dist.fixtures';
import { startCli } from './cliProcess';
import { assertSolid, call, solidPng, UUID, type Json } from './harness';

/** EmptyImage (red) → ImageInvert → SaveImage: its output is cyan. `color` varies it. */
function workflow(color = 0xff0000): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'invert' } },
  };
}

interface Ran {
  code: number | null;
  lines: string[];
  stderr: string;
}

describe('the shipped CLI with --api comfyui against the emulator (ComfyUI server API (observed))', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let dir: string;
  let dataDir: string;

  /** Runs the CLI on the emulator's ComfyUI server to its exit. */
  async function cli(...args: string[]): Promise<Ran> {
    const run = startCli(['--api', 'comfyui', '--base-url', emu.comfyuiUrl!, ...args], {
      cli: CLI,
      env: { COMFY_CLOUD_STATE_DIR: path.join(dir, 'state') },
      cwd: dir,
    });
    const code = await run.exited;
    return { code, lines: run.lines, stderr: run.stderr() };
  }

  /** Writes `graph` as a workflow file; returns its path. */
  function file(graph: Json, name = 'wf.json'): string {
    const target = path.join(dir, name);
    fs.writeFileSync(target, JSON.stringify(graph));
    return target;
  }

  /** Submits `graph` without waiting; returns the prompt id it printed. */
  async function submit(graph: Json): Promise<string> {
    const ran = await cli('submit', file(graph, `wf-${Math.random().toString(36).slice(2)}.json`));
    assert.equal(ran.code, 0, tail(ran.stderr));
    assert.match(ran.lines[0]!, UUID);
    return ran.lines[0]!;
  }

  /** `status ID --json`, parsed. */
  async function status(id: string): Promise<Json> {
    const ran = await cli('--json', 'status', id);
    return JSON.parse(ran.lines.join('\n')) as Json;
  }

  /** Waits until the server's history has the prompt (it ended). */
  async function ended(id: string): Promise<void> {
    for (let i = 0; i < 5000; i++) {
      const { body } = await call(`${emu.comfyuiUrl}/history/${id}`);
      if (id in body) return;
    }
    throw new Error(`prompt ${id} never ended`);
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-comfyui-emu-data-'));
    emu = await startEmulator({ port: 0, dataDir });
  });
  after(async () => {
    await emu.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-comfyui-emu-'));
  });
  afterEach(() => {
    emu.holdNodes(null);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('submit wf.json --wait --out DIR: the prompt id first, exit 0, the PNG saved; the same again is answered from the cache and still saves it', async () => {
    const wf = file(workflow(0xff0000));
    for (const round of ['first', 'cached']) {
      const out = path.join(dir, `out-${round}`);
      const ran = await cli('submit', wf, '--wait', '--out', out);
      assert.equal(ran.code, 0, `${round}: ${tail(ran.stderr)}`);
      const [id, saved] = ran.lines;
      assert.match(id!, UUID);
      assert.equal(path.dirname(saved!), out);
      assertSolid(fs.readFileSync(saved!), 8, 8, [0, 255, 255]);
    }
  });

  it("submit ui.json --convert --wait: converted with the server's /object_info, sent with the UI workflow as extra_pnginfo.workflow, so the saved PNG carries both chunks as ComfyUI's own frontend makes it", async () => {
    const node = (id: number, type: string, widgets: unknown[], input?: [string, number], output?: number): Json => ({
      id,
      type,
      pos: [id * 300, 0],
      size: [250, 100],
      flags: {},
      order: id - 1,
      mode: 0,
      inputs: input ? [{ name: input[0], type: 'IMAGE', link: input[1] }] : [],
      outputs: output ? [{ name: 'IMAGE', type: 'IMAGE', links: [output], slot_index: 0 }] : [],
      properties: {},
      widgets_values: widgets,
    });
    // SaveImage saved as ["ComfyUI", ""], as in ComfyUI's own example images: one value past its widgets, ignored.
    const ui = {
      last_node_id: 3,
      last_link_id: 2,
      nodes: [
        node(1, 'EmptyImage', [8, 8, 1, 0x00ff00], undefined, 1),
        node(2, 'ImageInvert', [], ['image', 1], 2),
        node(3, 'SaveImage', ['ui-conv', ''], ['images', 2]),
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
    const ran = await cli('submit', file(ui, 'ui.json'), '--convert', '--wait', '--out', path.join(dir, 'out'));
    assert.equal(ran.code, 0, tail(ran.stderr));
    assert.match(ran.stderr, /converted UI-format workflow \(3 nodes\) to API format/);
    const saved = fs.readFileSync(ran.lines[1]!);
    assertSolid(saved, 8, 8, [255, 0, 255]);
    const chunks = readImageWorkflow(saved);
    assert.deepEqual(chunks.workflow, ui);
    assert.deepEqual((chunks.prompt as Json)['3'].inputs, { filename_prefix: 'ui-conv', images: ['2', 0] });
  });

  it('status ID --json of a finished prompt says succeeded', async () => {
    const out = path.join(dir, 'out');
    const ran = await cli('submit', file(workflow(0x00ff00)), '--wait', '--out', out);
    assert.equal(ran.code, 0, tail(ran.stderr));
    assert.equal((await status(ran.lines[0]!)).status, 'succeeded');
  });

  it('cancel of a held running prompt ends it canceled', async () => {
    emu.holdNodes({ nodeIds: ['2'] });
    const id = await submit(workflow(0x000101));
    await emu.whenHeld((n) => n.jobId === id);
    const ran = await cli('cancel', id);
    assert.equal(ran.code, 0, tail(ran.stderr));
    // An interrupt lands between nodes: the answer is canceling (or already canceled), never running.
    assert.match(ran.lines.join('\n'), /\bcancel(ing|ed)\b/);
    assert.doesNotMatch(ran.lines.join('\n'), /\brunning\b/);
    await ended(id);
    assert.equal((await status(id)).status, 'canceled');
  });

  it('cancel of a queued prompt ends it canceled', async () => {
    emu.holdNodes({ nodeIds: ['2'] });
    const running = await submit(workflow(0x000102));
    await emu.whenHeld((n) => n.jobId === running);
    const queued = await submit(workflow(0x000103));
    const ran = await cli('cancel', queued);
    assert.equal(ran.code, 0, tail(ran.stderr));
    assert.deepEqual((await call(`${emu.comfyuiUrl}/queue`)).body.queue_pending, []);
    assert.equal((await status(queued)).status, 'canceled');
  });

  it('a workflow with an unknown class, and one with a bad value: non-zero exit naming the node and input', async () => {
    const unknown = await cli(
      'submit',
      file({ ...workflow(), '2': { class_type: 'NoSuchNode', inputs: { image: ['1', 0] } } }),
    );
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /NoSuchNode/);
    const bad = await cli(
      'submit',
      file({
        ...workflow(),
        '1': { class_type: 'EmptyImage', inputs: { width: 999999, height: 8, batch_size: 1, color: 0 } },
      }),
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /\b1\b/);
    assert.match(bad.stderr, /width/);
  });

  it('upload FILE prints the name; a LoadImage workflow naming it runs', async () => {
    const png = path.join(dir, 'in.png');
    fs.writeFileSync(png, solidPng(4, 4, [10, 20, 30]));
    const up = await cli('upload', png);
    assert.equal(up.code, 0, tail(up.stderr));
    const name = up.lines[0]!;
    assert.ok(name.length > 0);
    const out = path.join(dir, 'out');
    const ran = await cli(
      'submit',
      file({
        '1': { class_type: 'LoadImage', inputs: { image: name } },
        '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'loaded' } },
      }),
      '--wait',
      '--out',
      out,
    );
    assert.equal(ran.code, 0, tail(ran.stderr));
    assertSolid(fs.readFileSync(ran.lines[1]!), 4, 4, [10, 20, 30]);
  });

  it('jobs --json lists a prompt another client posted directly', async () => {
    const posted = await call(`${emu.comfyuiUrl}/prompt`, {
      method: 'POST',
      body: JSON.stringify({ prompt: workflow(0x000104), client_id: 'another-program' }),
    });
    const id = posted.body.prompt_id as string;
    await ended(id);
    const ran = await cli('--json', 'jobs');
    assert.equal(ran.code, 0, tail(ran.stderr));
    assert.ok(ran.lines.join('\n').includes(id), ran.lines.join('\n').slice(0, 500));
  });

  it("object-info --json lists the emulator's node classes", async () => {
    const ran = await cli('--json', 'object-info');
    assert.equal(ran.code, 0, tail(ran.stderr));
    const text = ran.lines.join('\n');
    for (const c of ['EmptyImage', 'ImageInvert', 'SaveImage', 'LoadImage']) assert.ok(text.includes(c), c);
  });

  it('a restart mid-job: the server forgot the prompt, and the job reads lost', async () => {
    emu.holdNodes({ nodeIds: ['2'] });
    const id = await submit(workflow(0x000105));
    await emu.whenHeld((n) => n.jobId === id);
    const port = Number(new URL(emu.origin).port);
    await emu.close();
    emu = await startEmulator({ port, dataDir });
    assert.equal((await status(id)).status, 'lost');
  });
});
