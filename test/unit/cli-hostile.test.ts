/**
 * What reaches a terminal, a log or a message is clean, and the CLI polish, in-process against small
 * hostile servers on loopback and the emulator: escape sequences and the user's key never reach the terminal,
 * stdout carries results only, errors are one JSON document with --json, bad input is refused before any request.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { runCli } from '../../src/cli/cli';
import { StateStore } from '../../src/core/state';
import { startEmulator, type Emulator } from '../../src/emulator';
import { errorEnvelope, invertWorkflow, job } from './builders';
import { Buffered, abortingWhen, cliRunner } from './harness';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

const KEY = 'sk-user-SECRET-key-0123456789';
/** Any raw control character but the newline between lines: C0 (TAB and CR too), DEL, C1. */
// eslint-disable-next-line no-control-regex -- the point of the test: find raw control characters
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const EVIL = 'x\u001b[2J\u001b]0;pwned\u0007\u009b31m\r\nFAKE LINE';

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

function assertClean(text: string, what: string): void {
  assert.doesNotMatch(text, RAW_CONTROL, `${what} carries a raw control character: ${JSON.stringify(text)}`);
  assert.ok(!text.includes(KEY), `${what} shows the API key`);
  assert.doesNotMatch(text, /^FAKE LINE/m, `${what}: a server string started a line of its own`);
}

describe('CLI against a hostile server: clean terminal output', () => {
  let server: TestServer;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  const stateDir = tempDir('cc-cli-hostile-');
  const cli = cliRunner(stateDir);
  before(async () => {
    server = await startServer((req, res) => handler(req, res));
  });
  after(async () => server.close());

  it('rule: escape sequences in every printed field of a job (id, status, error, progress, output names) are shown escaped', async () => {
    const evilJob = job('failed', {
      id: `job${EVIL}`,
      error: { code: `code${EVIL}`, message: `boom${EVIL} ${KEY}`, node_id: `n${EVIL}`, class_type: `K${EVIL}` },
      progress: { value: 0.5, nodes_done: 1, nodes_total: 2, message: `step${EVIL}`, current_node_class: `C${EVIL}` },
      outputs: [{ id: 'o1', name: `name${EVIL}.png`, content_type: `image/png${EVIL}` }],
      urls: {},
    });
    handler = (_req, res) => send(res, 200, evilJob);
    for (const args of [
      ['status', 'j1'],
      ['status', 'j1', '--json'],
      ['watch', 'j1'],
      ['cancel', 'j1'],
    ]) {
      const r = await cli(['--base-url', server.origin, '--api-key', KEY, ...args]);
      assertClean(r.stdout, `${args.join(' ')} stdout`);
      assertClean(r.stderr, `${args.join(' ')} stderr`);
      assert.match(r.stdout + r.stderr, /\\x1b\[2J|\\u001b\[2J/, `${args.join(' ')}: the escape is not shown escaped`);
    }
    const json = await cli(['--base-url', server.origin, 'status', 'j1', '--json']);
    assert.equal(
      JSON.parse(json.stdout).error.message,
      (evilJob.error as { message: string }).message,
      'the JSON output no longer round-trips',
    );
    handler = (_req, res) => send(res, 200, { ...evilJob, status: `failed${EVIL}` });
    const status = await cli(['--base-url', server.origin, '--api-key', KEY, 'status', 'j1']);
    assertClean(status.stdout, 'a status with escapes');
    assert.match(status.stdout, /failedx\\x1b\[2J/);
  });

  it('rule: an error code and message with escape sequences, echoing the API key, are shown escaped and redacted', async () => {
    handler = (_req, res) => send(res, 400, { error: { code: `odd${EVIL}`, message: `your key ${KEY} is ${EVIL}` } });
    const r = await cli(['--base-url', server.origin, '--api-key', KEY, 'status', 'j1']);
    assert.equal(r.code, 1);
    assertClean(r.stderr, 'stderr');
    assert.match(r.stderr, /your key .*redacted/);
    const fromEnv = await cli(['--base-url', server.origin, 'status', 'j1', '--json'], { COMFY_API_KEY: KEY });
    assertClean(fromEnv.stdout, 'json stdout');
    assertClean(fromEnv.stderr, 'json stderr');
  });

  it('rule: an HTML error page is shown as a short, escaped excerpt', async () => {
    handler = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(`<html>\u001b[31mBad gateway ${KEY}</html>`);
    };
    const r = await cli(['--base-url', server.origin, '--api-key', KEY, 'cancel', 'j1'], {});
    assert.equal(r.code, 1);
    assertClean(r.stderr, 'stderr');
  });

  it('rule: with --json, an error is one JSON document {"error": {code, message, …}} on stdout, and the human line on stderr', async () => {
    handler = (_req, res) => send(res, 404, errorEnvelope('not_found', 'no such job'), { 'x-svc-request-id': 'rid-9' });
    const r = await cli(['--base-url', server.origin, 'status', 'nope', '--json']);
    assert.equal(r.code, 1);
    const doc = JSON.parse(r.stdout) as { error: Record<string, unknown> };
    assert.equal(doc.error.code, 'not_found');
    assert.equal(doc.error.message, 'no such job');
    assert.equal(doc.error.status, 404);
    assert.equal(doc.error.request_id, 'rid-9');
    assert.match(r.stderr, /^error \[not_found\]/m);
    const usage = await cli(['--json', 'submit', path.join(stateDir, 'missing.json')]);
    assert.equal(usage.code, 2);
    assert.equal((JSON.parse(usage.stdout) as { error: { code: string } }).error.code, 'unreadable');
  });

  it('rule: a shape mismatch prints one line naming the field, not a raw validation dump', async () => {
    handler = (_req, res) => send(res, 200, { id: 'j1', status: ['running'] });
    const r = await cli(['--base-url', server.origin, 'status', 'j1']);
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /field "status"/);
  });

  it('rule: Ctrl-C tells the truth: a job that already succeeded is not "still running"', async () => {
    const done = job('succeeded', {
      outputs: [{ id: 'o1', name: 'out.png', content_type: 'image/png', url: '/content/o1' }],
    });
    handler = (req, res) => {
      if (req.url?.startsWith('/content/')) {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('partial'); // then stalls: the user presses Ctrl-C
        return;
      }
      send(res, 200, done);
    };
    const ac = new AbortController();
    const stderr = abortingWhen(/status: succeeded/, ac);
    const stdout = new Buffered();
    const code = await runCli(['--base-url', server.origin, 'watch', String(done.id), '--out', tempDir('cc-int-')], {
      stdout,
      stderr,
      env: { COMFY_CLOUD_STATE_DIR: stateDir },
      signal: ac.signal,
    });
    assert.equal(code, 130);
    assert.match(stderr.text, /had already succeeded/);
    assert.doesNotMatch(stderr.text, /keeps running/);
  });
});

describe('CLI polish and input files', () => {
  let emu: Emulator;
  let dir: string;
  const stateDir = tempDir('cc-cli-polish-');
  const cli = cliRunner(stateDir);
  before(async () => {
    emu = await startEmulator({ port: 0 });
    dir = tempDir('cc-cli-polish-files-');
  });
  after(async () => emu.close());

  const requestsNow = (): number => emu.requests.length;

  it('rule: comfy-cloud with no command prints help on stderr and exits 2', async () => {
    const r = await cli([]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Usage: comfy-cloud/);
    assert.equal(r.stdout, '');
  });

  it('rule: global options may stand anywhere on the command line', async () => {
    const wf = path.join(dir, 'g.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'global' })));
    const a = await cli(['submit', wf, '--base-url', emu.baseUrl, '--json']);
    assert.equal(a.code, 0, a.stderr);
    const id = (JSON.parse(a.stdout) as { id: string }).id;
    const b = await cli(['--json', 'status', id, '--timeout', '5000', '--base-url', emu.baseUrl]);
    assert.equal(b.code, 0, b.stderr);
    assert.equal((JSON.parse(b.stdout) as { id: string }).id, id);
  });

  it('rule: submit prints the job id alone on stdout; --quiet silences messages, never results', async () => {
    const wf = path.join(dir, 'q.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'quiet' })));
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--quiet']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^[0-9a-f-]{36}\n$/);
    assert.equal(r.stderr, '');
    const w = await cli([
      '--base-url',
      emu.baseUrl,
      '--quiet',
      'submit',
      wf,
      '--wait',
      '--out',
      path.join(dir, 'q-out'),
    ]);
    assert.equal(w.code, 0, w.stderr);
    const lines = w.stdout.trim().split('\n');
    assert.equal(lines.length, 2, w.stdout);
    assert.ok(fs.existsSync(lines[1]));
    assert.equal(w.stderr, '');
  });

  it('rule: --cancel-on-interrupt without --wait is refused like --out is (exit 2, nothing sent)', async () => {
    const wf = path.join(dir, 'c.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'coi' })));
    const before = requestsNow();
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--cancel-on-interrupt']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--cancel-on-interrupt needs --wait/);
    assert.equal(requestsNow(), before);
  });

  it('rule: a refused download says --force', async () => {
    const wf = path.join(dir, 'd.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'force' })));
    const sub = await cli(['--base-url', emu.baseUrl, 'submit', wf, '--wait', '--json']);
    const assetId = (JSON.parse(sub.stdout) as { outputs: { id: string }[] }).outputs[0].id;
    const target = path.join(dir, 'taken.png');
    fs.writeFileSync(target, 'mine');
    const r = await cli(['--base-url', emu.baseUrl, 'download', assetId, target]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--force/);
    assert.equal(fs.readFileSync(target, 'utf8'), 'mine');
    const forced = await cli(['--base-url', emu.baseUrl, 'download', assetId, target, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.stdout.trim(), target);
  });

  for (const [what, bytes, message] of [
    [
      'Latin-1',
      Buffer.from('{"1": {"class_type": "EmptyImage", "inputs": {"filename_prefix": "caf\xe9"}}}', 'latin1'),
      /not UTF-8/,
    ],
    [
      'UTF-16 LE with a BOM',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(invertWorkflow()), 'utf16le')]),
      /not UTF-8 \(looks like UTF-16\): save it as UTF-8/,
    ],
  ] as const) {
    it(`rule: a ${what} workflow file is refused before any request (exit 2), never sent with replacement characters`, async () => {
      const wf = path.join(dir, `${what.replace(/\W/g, '')}.json`);
      fs.writeFileSync(wf, bytes);
      const before = requestsNow();
      const r = await cli(['--base-url', emu.baseUrl, 'submit', wf]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(requestsNow(), before, 'a request was sent');
    });
  }

  it('rule: a UTF-8 BOM is accepted and skipped', async () => {
    const wf = path.join(dir, 'bom.json');
    fs.writeFileSync(
      wf,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(invertWorkflow({ prefix: 'bom' })))]),
    );
    const r = await cli(['--base-url', emu.baseUrl, 'submit', wf]);
    assert.equal(r.code, 0, r.stderr);
  });

  it('rule: a workflow path that is not a regular file (a folder) is refused with a message that says so (exit 2)', async () => {
    const before = requestsNow();
    const r = await cli(['--base-url', emu.baseUrl, 'submit', dir]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not a regular file/);
    const up = await cli(['--base-url', emu.baseUrl, 'upload', dir]);
    assert.equal(up.code, 2);
    assert.match(up.stderr, /not a regular file/);
    assert.equal(requestsNow(), before);
  });

  it('rule: emulator --host on a non-loopback address warns that it is reachable from the network; a port in use suggests --port 0', async () => {
    const ac = new AbortController();
    const stdout = abortingWhen(/^http/, ac); // stopped once it printed its base URL
    const stderr = new Buffered();
    const code = await runCli(['emulator', '--host', '0.0.0.0', '--port', '0'], {
      stdout,
      stderr,
      env: {},
      signal: ac.signal,
      startEmulator: (o) => startEmulator({ host: o.host, port: o.port }),
    });
    assert.equal(code, 0, stderr.text);
    assert.match(stderr.text, /reachable from the network/);

    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const busy = await runCli(['emulator', '--port', String(port)], {
        stdout: new Buffered(),
        stderr,
        env: {},
        startEmulator: (o) => startEmulator({ host: o.host, port: o.port }),
      });
      assert.equal(busy.valueOf(), 2);
      assert.match(stderr.text, /--port 0/);
    } finally {
      blocker.close();
    }
  });

  it('rule: forget <job-id|Idempotency-Key> removes a remembered submission', async () => {
    const wf = path.join(dir, 'f.json');
    fs.writeFileSync(wf, JSON.stringify(invertWorkflow({ prefix: 'forget' })));
    const sub = await cli(['--base-url', emu.baseUrl, 'submit', wf]);
    const id = sub.stdout.trim();
    const store = new StateStore(stateDir);
    assert.ok((await store.list()).some((r) => r.jobId === id));
    const r = await cli(['forget', id]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!(await store.list()).some((x) => x.jobId === id));
    assert.equal((await cli(['forget', id])).code, 2);
  });
});

describe('CLI jobs: parallel lookups', () => {
  it('rule: jobs exits 1 when every lookup failed, and still prints every row', async () => {
    const stateDir = tempDir('cc-cli-jobs-');
    const server = await startServer((_req, res) => send(res, 500, errorEnvelope('upstream_error')));
    try {
      const store = new StateStore(stateDir);
      for (let i = 0; i < 6; i++) {
        await store.put({
          idempotencyKey: `k${i}`,
          baseUrl: server.origin,
          state: 'created',
          jobId: `job-${i}`,
          submittedAt: new Date(Date.now() - i * 1000).toISOString(),
        });
      }
      const r = await cliRunner(stateDir)(['--base-url', server.origin, 'jobs']);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout.trim().split('\n').length, 6, r.stdout);
      assert.match(r.stderr, /every job lookup failed/);
    } finally {
      await server.close();
    }
  });
});

describe('CLI jobs: a job the server no longer knows', () => {
  it('rule: a job the server answers 404 for (a server restarted without it) is lost in its row, in --json and in its record, not its last remembered status; exit 0', async () => {
    const stateDir = tempDir('cc-cli-lost-');
    const cli = cliRunner(stateDir);
    let first: Emulator | undefined = await startEmulator({ port: 0 });
    let second: Emulator | undefined;
    try {
      const baseUrl = first.baseUrl;
      first.holdNodes({});
      const file = path.join(stateDir, 'invert.json');
      fs.writeFileSync(file, JSON.stringify(invertWorkflow({ prefix: 'cli-lost' })));
      const submitted = await cli(['--base-url', baseUrl, 'submit', file]);
      assert.equal(submitted.code, 0, submitted.stderr);
      const held = await first.whenHeld();
      const store = new StateStore(stateDir);
      const [record] = await store.list();
      assert.equal(record?.jobId, held.jobId);
      assert.notEqual(record?.lastStatus, 'lost');
      const port = Number(new URL(baseUrl).port);
      await first.close();
      first = undefined;
      second = await startEmulator({ port });

      const r = await cli(['--base-url', baseUrl, 'jobs']);
      assert.equal(r.code, 0, r.stderr);
      const row = r.stdout.split('\n').find((l) => l.startsWith(held.jobId));
      assert.ok(row, r.stdout);
      assert.equal(row.split('  ')[1], 'lost', row);
      assert.match(row, /the server no longer knows this job/);
      assert.equal((await store.get(record!.idempotencyKey))?.lastStatus, 'lost');
      const json = JSON.parse((await cli(['--base-url', baseUrl, 'jobs', '--json'])).stdout) as {
        remembered: { status: string; record: { lastStatus: string } }[];
      };
      assert.equal(json.remembered.length, 1);
      assert.equal(json.remembered[0]!.status, 'lost');
      assert.equal(json.remembered[0]!.record.lastStatus, 'lost');
    } finally {
      await first?.close();
      await second?.close();
    }
  });

  it('rule: any 404 code (job_not_found) reads lost; a record that knew the job ended keeps its terminal status', async () => {
    const stateDir = tempDir('cc-cli-lost-code-');
    const server = await startServer((_req, res) => send(res, 404, errorEnvelope('job_not_found')));
    try {
      const store = new StateStore(stateDir);
      await store.put({
        idempotencyKey: 'k-queued',
        baseUrl: server.origin,
        state: 'created',
        jobId: 'job-queued',
        submittedAt: '2026-11-22T10:00:01.000Z',
        lastStatus: 'queued',
      });
      await store.put({
        idempotencyKey: 'k-done',
        baseUrl: server.origin,
        state: 'created',
        jobId: 'job-done',
        submittedAt: '2026-11-22T10:00:00.000Z',
        lastStatus: 'succeeded',
      });
      const r = await cliRunner(stateDir)(['--base-url', server.origin, 'jobs', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout) as {
        remembered: { status: string; problem?: string; record: { jobId: string } }[];
      };
      const by = Object.fromEntries(json.remembered.map((x) => [x.record.jobId, x.status]));
      assert.deepEqual(by, { 'job-queued': 'lost', 'job-done': 'succeeded' });
      assert.equal(json.remembered[0]!.problem, 'job_not_found');
      assert.equal((await store.get('k-queued'))?.lastStatus, 'lost');
      assert.equal((await store.get('k-done'))?.lastStatus, 'succeeded');
    } finally {
      await server.close();
    }
  });
});
