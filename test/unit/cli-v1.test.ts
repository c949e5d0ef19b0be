/**
 * The CLI's deprecated v1 surface: the `emulator` command's v1 options, and the commands under `--api v1`, which run on
 * the v1 job backend and print what they print on v2 (the job model's format: a command's output never depends on the
 * API); what v1 cannot do is refused by capability (submissions remembered in the state store shared with VS Code).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli, type EmulatorCliOptions } from '../../src/cli/cli';
import { StateStore } from '../../src/core/state';
import { canonicalJson, hashBytes } from '../../src/core/util';
import { mergeEntries } from '../../src/core/views';
import { startEmulator } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { Buffered, abortingWhen, cliRunner, solidPng, useEmulator } from './harness';
import { tempDir } from './tmp';

describe('CLI v1', () => {
  it('rule: emulator --v1-status-vocabulary public and --no-v1-jobs-endpoint reach the v1 surface, and the WebSocket URL is printed', async () => {
    const ac = new AbortController();
    const stdout = abortingWhen(/^http/, ac);
    const stderr = new Buffered();
    let seen: EmulatorCliOptions | undefined;
    const code = await runCli(
      ['emulator', '--port', '0', '--v1-status-vocabulary', 'public', '--no-v1-jobs-endpoint'],
      {
        stdout,
        stderr,
        env: {},
        signal: ac.signal,
        startEmulator: (o) => {
          seen = o;
          return startEmulator({ host: o.host, port: o.port, v1: o.v1 });
        },
      },
    );
    assert.equal(code, 0, stderr.text);
    assert.deepEqual(seen?.v1, { statusVocabulary: 'public', jobsEndpoint: false });
    assert.match(
      stderr.text,
      /deprecated v1 API on http:\/\/127\.0\.0\.1:\d+\/api\/… \(X-API-Key\), its WebSocket at ws:\/\//,
    );
  });

  it('rule: emulator defaults to the document vocabulary with the jobs endpoint served', async () => {
    const ac = new AbortController();
    let seen: EmulatorCliOptions | undefined;
    const code = await runCli(['emulator', '--port', '0'], {
      stdout: abortingWhen(/^http/, ac),
      stderr: new Buffered(),
      env: {},
      signal: ac.signal,
      startEmulator: (o) => {
        seen = o;
        return startEmulator({ host: o.host, port: o.port, v1: o.v1 });
      },
    });
    assert.equal(code, 0);
    assert.deepEqual(seen?.v1, { statusVocabulary: 'document', jobsEndpoint: true });
  });

  it('rule: emulator --v1-status-vocabulary other than document|public is bad usage (exit 2) before anything starts', async () => {
    const stderr = new Buffered();
    let started = false;
    const code = await runCli(['emulator', '--port', '0', '--v1-status-vocabulary', 'cloud'], {
      stdout: new Buffered(),
      stderr,
      env: {},
      startEmulator: (o) => {
        started = true;
        return startEmulator({ host: o.host, port: o.port });
      },
    });
    assert.equal(code, 2);
    assert.equal(started, false);
    assert.match(stderr.text, /--v1-status-vocabulary must be document or public/);
  });
});

describe('CLI --api v1 commands', () => {
  const KEY = 'v1-cli-key';
  const emu = useEmulator({ tokens: [KEY] });
  const stateDir = tempDir('cc-v1-state-');
  const run = cliRunner(stateDir);
  /** The CLI under --api v1 against the emulator, with the key. */
  const v1 = (args: string[], env: NodeJS.ProcessEnv = {}, signal?: AbortSignal) =>
    run(['--base-url', emu().baseUrl, '--api-key', KEY, '--api', 'v1', ...args], env, signal);
  let dir: string;
  before(() => {
    dir = tempDir('cc-v1-cli-');
  });
  const writeJson = (name: string, value: unknown): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };
  const requestsNow = (): number => emu().requests.length;

  it('rule: submit --wait --out prints the job id first then each path written, progress on stderr, exit 0', async () => {
    const out = path.join(dir, 'out');
    const r = await v1(['submit', writeJson('a.json', invertWorkflow({ prefix: 'v1cli' })), '--wait', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const [id, file, ...rest] = r.stdout.trim().split('\n');
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(rest, []);
    assert.ok(file.startsWith(out) && fs.statSync(file).size > 0, r.stdout);
    assert.match(r.stderr, /status: /);
    assert.equal(emu().v1!.prompts.at(-1)!.promptId, id);
  });

  it('rule: an accepted v1 prompt is remembered in the state store shared with VS Code, as its submissions are; with --wait the record learns the final status', async () => {
    const store = new StateStore(stateDir);
    const workflow = invertWorkflow({ prefix: 'remembered' });
    const file = writeJson('remembered.json', workflow);
    const from = requestsNow();
    const r = await v1(['submit', file]);
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    const record = (await store.list()).find((rec) => rec.jobId === id);
    assert.ok(record, 'the prompt is not remembered');
    assert.equal(record.baseUrl, emu().baseUrl);
    assert.equal(record.state, 'created');
    assert.equal(record.client, 'cli');
    assert.equal(record.workflowFile, path.resolve(file));
    assert.equal(record.workflowHash, await hashBytes(canonicalJson(workflow)));
    assert.equal(record.savePrefix, 'remembered');
    assert.equal(record.lastStatus, 'queued');
    // v1 has no Idempotency-Key: the record's key is local and never sent.
    assert.match(record.idempotencyKey, /^v1-/);
    assert.ok(
      !emu()
        .requests.slice(from)
        .some((req) => JSON.stringify(req.headers).includes(record.idempotencyKey)),
      'the local key was sent',
    );
    // The Jobs view lists it as any remembered job of this server.
    assert.deepEqual(
      mergeEntries(emu().baseUrl, await store.list(), [])
        .filter((e) => e.jobId === id)
        .map((e) => e.record?.idempotencyKey),
      [record.idempotencyKey],
    );

    const waited = await v1([
      'submit',
      writeJson('remembered-wait.json', invertWorkflow({ prefix: 'remembered-wait' })),
      '--wait',
    ]);
    assert.equal(waited.code, 0, waited.stderr);
    const done = (await store.list()).find((rec) => rec.jobId === waited.stdout.trim().split('\n')[0]);
    assert.equal(done?.lastStatus, 'succeeded');
    // watch of a remembered prompt keeps its record current too.
    const w = await v1(['watch', id]);
    assert.equal(w.code, 0, w.stderr);
    assert.equal((await store.get(record.idempotencyKey))?.lastStatus, 'succeeded');
  });

  it('rule: one deprecation note on stderr per run under --api v1, naming how to move to v2; none under v2', async () => {
    const r = await v1(['submit', writeJson('n.json', invertWorkflow({ prefix: 'note' })), '--wait']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.match(/v1 API is deprecated/g)?.length, 1);
    assert.match(r.stderr, /v2 Job and Asset API; move to it by dropping --api v1/);
    const v2 = await run(['--base-url', emu().baseUrl, '--api-key', KEY, 'status', 'x']);
    assert.doesNotMatch(v2.stderr, /deprecated/);
  });

  it("rule: submit --json prints exactly one document, the job as v2 prints it (the job model's format, whatever the API)", async () => {
    const out = path.join(dir, 'jout');
    const r = await v1([
      'submit',
      writeJson('j.json', invertWorkflow({ prefix: 'json' })),
      '--wait',
      '--out',
      out,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.status, 'succeeded');
    assert.equal(doc.api, 'v1');
    assert.equal(doc.outputs.length, 1);
    assert.equal(fs.readdirSync(out).length, 1);
    const noWait = await v1(['submit', writeJson('j2.json', invertWorkflow({ prefix: 'json2' })), '--json']);
    assert.equal(noWait.code, 0, noWait.stderr);
    const queued = JSON.parse(noWait.stdout);
    assert.equal(typeof queued.id, 'string');
    assert.equal(emu().v1!.prompts.at(-1)!.promptId, queued.id);
  });

  it('rule: the partner key (--partner-key, else COMFY_PARTNER_KEY) is sent as api_key_svc_org and never printed', async () => {
    const a = await v1([
      'submit',
      writeJson('p.json', invertWorkflow({ prefix: 'p' })),
      '--partner-key',
      'partner-secret-1',
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(emu().v1!.prompts.find((p) => p.promptId === a.stdout.trim())!.partnerKey, 'partner-secret-1');
    const b = await v1(['submit', writeJson('p2.json', invertWorkflow({ prefix: 'p2' })), '--wait'], {
      COMFY_PARTNER_KEY: 'partner-secret-2',
    });
    assert.equal(b.code, 0, b.stderr);
    assert.equal(
      emu().v1!.prompts.find((p) => p.promptId === b.stdout.trim().split('\n')[0])!.partnerKey,
      'partner-secret-2',
    );
    assert.ok(![a.stdout, a.stderr, b.stdout, b.stderr].some((t) => t.includes('partner-secret')));
  });

  it('rule: the key goes as X-API-Key: a wrong key is refused, exit 1', async () => {
    const r = await run([
      '--base-url',
      emu().baseUrl,
      '--api-key',
      'wrong',
      '--api',
      'v1',
      'status',
      '00000000-0000-4000-8000-000000000000',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /401|unauthorized/i);
  });

  it('rule: a refused prompt exits 1 with its message and each node error on stderr', async () => {
    const r = await v1(['submit', writeJson('bad.json', invertWorkflow({ width: 0 }))]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /invalid_workflow/);
    assert.match(r.stderr, /node 1 input width/);
    assert.equal(r.stdout, '');
  });

  it('rule: a failed terminal status exits 1 and says why', async () => {
    const wf = {
      '1': { class_type: 'EmptyImage', inputs: { width: 4096, height: 4096, batch_size: 4, color: 0 } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'big' } },
    };
    const r = await v1(['submit', writeJson('fail.json', wf), '--wait', '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(JSON.parse(r.stdout).status, 'failed');
    assert.match(r.stderr, /^job \S+ failed/m);
    assert.match(r.stderr, /failed/);
  });

  it('rule: bad usage and bad input exit 2 before any request', async () => {
    const before = requestsNow();
    const wf = writeJson('u.json', invertWorkflow());
    assert.equal((await run(['--base-url', emu().baseUrl, '--api', 'v3', 'status', 'x'])).code, 2);
    assert.equal((await run(['--base-url', emu().baseUrl, 'status', 'x'], { COMFY_API: 'v0' })).code, 2);
    assert.equal((await v1(['submit', wf, '--out', dir])).code, 2, '--out without --wait');
    assert.equal((await v1(['submit', writeJson('nj.json', '{"1": {')])).code, 2, 'not JSON');
    const input = await v1(['submit', wf, '--input', '1.image=@x.png']);
    assert.equal(input.code, 2, 'an option that needs assets');
    assert.match(
      input.stderr,
      /--input: assets need the v2 API, and the active connection speaks v1 \(drop --api v1\)/,
    );
    const key = await v1(['submit', wf, '--idempotency-key', 'k-1']);
    assert.equal(key.code, 2, 'an option that needs Idempotency-Keys');
    assert.match(key.stderr, /--idempotency-key: .*Idempotency-Key.*v1 has none/);
    const partner = await run(['--base-url', emu().baseUrl, 'submit', wf, '--partner-key', 'k']);
    assert.equal(partner.code, 2, 'a partner key where the API takes none');
    assert.match(partner.stderr, /the v2 API of this connection takes no partner-service key/);
    assert.equal((await v1(['upload', wf, '--type', 'output'])).code, 2);
    assert.equal((await v1(['upload', wf, '--mask'])).code, 2, '--mask needs --original-ref');
    assert.equal((await v1(['upload', wf, '--mask', '--original-ref', '{"name":1}'])).code, 2);
    assert.equal((await v1(['upload', path.join(dir, 'absent.png')])).code, 2);
    assert.equal((await run(['--base-url', emu().baseUrl, 'upload', wf, '--mask'])).code, 2);
    const workflow = await v1(['workflow', 'x']);
    assert.equal(workflow.code, 2, 'a stored workflow, which v1 does not keep');
    assert.match(workflow.stderr, /the v1 API of this connection keeps no workflow of a job \(drop --api v1\)/);
    const tagged = await v1(['upload', wf, '--tag', 't']);
    assert.equal(tagged.code, 2, 'an asset option where the API has no assets');
    assert.match(tagged.stderr, /--file-path, --tag: assets need the v2 API/);
    assert.equal((await v1(['download', 'x'])).code, 2, 'downloading an asset where the API has none');
    assert.equal(requestsNow(), before);
  });

  it('rule: jobs runs on v1 as on v2: the remembered jobs of this server with their status, no server listing (v1 lists none)', async () => {
    const sub = await v1(['submit', writeJson('listed.json', invertWorkflow({ prefix: 'listed' })), '--wait']);
    assert.equal(sub.code, 0, sub.stderr);
    const id = sub.stdout.trim().split('\n')[0];
    const from = requestsNow();
    const r = await v1(['jobs']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${id}  succeeded  `, 'm'));
    assert.doesNotMatch(r.stdout, /listed by the server/);
    assert.ok(
      !emu()
        .requests.slice(from)
        .some((req) => req.path.startsWith('/api/v2/')),
      'jobs under --api v1 spoke v2',
    );
  });

  it('rule: object-info is refused where the API serves no node definitions (v2): exit 2, nothing sent, saying so', async () => {
    const before = requestsNow();
    const r = await run(['--base-url', emu().baseUrl, 'object-info']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the v2 API of this connection serves no node definitions/);
    assert.equal(requestsNow(), before);
  });

  it("rule: status prints the job's summary line as on v2; --json the job; an unknown prompt exits 1", async () => {
    const sub = await v1(['submit', writeJson('s.json', invertWorkflow({ prefix: 's' })), '--wait']);
    const id = sub.stdout.trim().split('\n')[0];
    const plain = await v1(['status', id]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, `${id} succeeded · 1 output(s)\n`);
    const doc = JSON.parse((await v1(['status', id, '--json'])).stdout);
    assert.equal(doc.id, id);
    assert.equal(doc.status, 'succeeded');
    const missing = await v1(['status', '00000000-0000-4000-8000-000000000000']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not_found/);
  });

  it('rule: watch follows a prompt to its end: --out writes its outputs, --json one document; a failed prompt exits 1', async () => {
    const sub = await v1(['submit', writeJson('w.json', invertWorkflow({ prefix: 'w' }))]);
    const id = sub.stdout.trim();
    const wout = path.join(dir, 'wout');
    const w = await v1(['watch', id, '--out', wout, '--json']);
    assert.equal(w.code, 0, w.stderr);
    const doc = JSON.parse(w.stdout);
    assert.equal(doc.id, id);
    assert.equal(doc.status, 'succeeded');
    assert.equal(doc.outputs.length, 1);
    assert.equal(fs.readdirSync(wout).length, 1);
    const plain = await v1(['watch', id, '--out', path.join(dir, 'wout2')]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.ok(fs.statSync(plain.stdout.trim()).size > 0, 'the path written');
    emu().v1!.forceStatus(id, 'error');
    try {
      const f = await v1(['watch', id]);
      assert.equal(f.code, 1);
    } finally {
      emu().v1!.forceStatus(id, undefined);
    }
  });

  it('rule: Ctrl-C during submit --wait exits 130 and says the job keeps running', async () => {
    const slow = await startEmulator({ port: 0, nodeDelayMs: 60_000 });
    try {
      const ac = new AbortController();
      const stderr = abortingWhen(/submitted job/, ac);
      const code = await runCli(
        [
          '--base-url',
          slow.baseUrl,
          '--api',
          'v1',
          'submit',
          writeJson('int.json', invertWorkflow({ prefix: 'int' })),
          '--wait',
        ],
        { stdout: new Buffered(), stderr, env: { COMFY_CLOUD_STATE_DIR: stateDir }, signal: ac.signal },
      );
      assert.equal(code, 130);
      assert.match(stderr.text, /keeps running on the server/);
    } finally {
      await slow.close();
    }
  });

  it('rule: object-info prints one line per class "class_type  display name  category"; --class filters; an unknown class exits 1', async () => {
    const all = await v1(['object-info']);
    assert.equal(all.code, 0, all.stderr);
    const line = all.stdout.split('\n').find((l) => l.startsWith('EmptyImage  '));
    assert.ok(line, all.stdout);
    assert.equal(line.split('  ').length, 3);
    const one = await v1(['object-info', '--class', 'ImageInvert', '--json']);
    assert.deepEqual(Object.keys(JSON.parse(one.stdout)), ['ImageInvert']);
    const none = await v1(['object-info', '--class', 'NoSuchNode']);
    assert.equal(none.code, 1);
  });

  it('rule: COMFY_API=v1 selects v1 as --api v1 does (and --api wins over it)', async () => {
    const fromEnv = await run(
      ['--base-url', emu().baseUrl, '--api-key', KEY, 'object-info', '--class', 'EmptyImage', '--json'],
      { COMFY_API: 'v1' },
    );
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.deepEqual(Object.keys(JSON.parse(fromEnv.stdout)), ['EmptyImage']);
    assert.match(fromEnv.stderr, /deprecated/);
    // The flag over the environment: v2 serves no node definitions.
    assert.equal(
      (await run(['--base-url', emu().baseUrl, '--api-key', KEY, '--api', 'v2', 'object-info'], { COMFY_API: 'v1' }))
        .code,
      2,
    );
  });

  it('rule: upload sends the image (input or temp, overwrite) and prints its name; --mask --original-ref uploads a mask', async () => {
    const png = path.join(dir, 'pic.png');
    fs.writeFileSync(png, solidPng(8, 8, [1, 2, 3]));
    const up = await v1(['upload', png, '--json']);
    assert.equal(up.code, 0, up.stderr);
    const doc = JSON.parse(up.stdout);
    assert.equal(typeof doc.name, 'string');
    const temp = await v1(['upload', png, '--type', 'temp', '--overwrite']);
    assert.equal(temp.code, 0, temp.stderr);
    assert.match(temp.stdout, /png/);
    const mask = await v1([
      'upload',
      png,
      '--mask',
      '--original-ref',
      JSON.stringify({ filename: doc.name, subfolder: '', type: 'input' }),
    ]);
    assert.equal(mask.code, 0, mask.stderr);
    assert.ok(emu().requests.some((r) => r.method === 'POST' && r.path.endsWith('/api/upload/mask')));
  });

  it('rule: --help of each command names the options an API without assets takes', async () => {
    assert.match((await run(['submit', '--help'])).stdout, /--partner-key/);
    assert.match((await run(['upload', '--help'])).stdout, /--original-ref/);
    assert.match((await run(['object-info', '--help'])).stdout, /--class/);
    assert.match((await run(['--help'])).stdout, /--api <version>/);
  });
});
