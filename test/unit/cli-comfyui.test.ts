/**
 * The shipped CLI (`node dist/cli.js` in a child process) with `--api comfyui` against a scripted loopback ComfyUI
 * server whose answers follow a real server's recordings (test/fixtures/comfyui): ComfyUI server API (observed),
 * Submitting, Reading state and Files.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, tail } from './cli-dist.fixtures';
import { startCli } from './cliProcess';
import { UUID, assertSolid, solidPng } from './harness';
import { readBody, sendJson, startV1Server, type V1TestServer } from './v1Server';

/** A recording's body in test/fixtures/comfyui. */
function recorded(name: string): { request: { json: Record<string, unknown> }; body: Record<string, unknown> } {
  const file = path.join(__dirname, '../../../test/fixtures/comfyui', `${name}.json`);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as never;
}

describe('the shipped CLI with --api comfyui against a scripted ComfyUI server', function () {
  this.timeout(60_000);
  let server: V1TestServer | undefined;
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-comfyui-'));
  });
  afterEach(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('submit wf.json --wait --out DIR: the prompt id, then the output PNG fetched from /view', async () => {
    const png = solidPng(8, 8, [0, 255, 255]);
    const [entry] = Object.values(recorded('http_get_history_id').body) as { prompt: unknown[] }[];
    let promptId = '';
    const views: string[] = [];
    server = await startV1Server((req, res) => {
      void readBody(req).then((body) => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (req.method === 'POST' && url.pathname === '/prompt') {
          promptId = (JSON.parse(body.toString('utf8')) as { prompt_id: string }).prompt_id;
          return sendJson(res, 200, { prompt_id: promptId, number: 1, node_errors: {} });
        }
        if (url.pathname === '/queue') return sendJson(res, 200, { queue_running: [], queue_pending: [] });
        if (url.pathname === `/history/${promptId}`)
          return sendJson(res, 200, { [promptId]: { ...entry, prompt: [0, promptId, ...entry!.prompt.slice(2)] } });
        if (url.pathname === '/view') {
          views.push(url.search);
          res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
          return res.end(png);
        }
        sendJson(res, 404, {});
      });
    });
    const wf = path.join(dir, 'wf.json');
    fs.writeFileSync(wf, JSON.stringify(recorded('http_post_prompt_client_prompt_id').request.json.prompt));
    const out = path.join(dir, 'out');
    const run = startCli(['--api', 'comfyui', '--base-url', server.origin, 'submit', wf, '--wait', '--out', out], {
      cli: CLI,
      env: { COMFY_CLOUD_STATE_DIR: path.join(dir, 'state') },
      cwd: dir,
    });
    const code = await run.exited;
    assert.equal(code, 0, tail(run.stderr()));
    const [id, file, ...rest] = run.lines;
    assert.match(id!, UUID);
    assert.equal(id, promptId);
    assert.deepEqual(rest, []);
    assert.equal(path.dirname(file!), out);
    assertSolid(fs.readFileSync(file!), 8, 8, [0, 255, 255]);
    assert.deepEqual(views, ['?filename=invert_00001_.png&subfolder=&type=output']);
  });
});
