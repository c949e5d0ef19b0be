/**
 * `comfy-cloud models …` (Model router API) against the in-process emulator's model router, through the CLI runner:
 * each command and its exit code, bytes kept exactly (schema, model output), the Idempotency-Key printed and
 * collected, the router's errors (bucket, request id, 422 fields, spend in dollars), and the refusals made before any
 * request (exit 2). Waits of the client (Retry-After) go through a ManualClock that advances at once; each retry is
 * still held by the emulator's own (short) deadline, so nothing sleeps.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli, type CliIo, type EmulatorCliOptions } from '../../src/cli/cli';
import { ManualClock } from '../../src/core';
import { TEST_ROUTER_KEY } from '../../src/emulator';
import { Buffered, call, useEmulator, type CliRun } from './harness';
import { startServer } from './httpServer';
import { tempDir } from './tmp';

describe('cli models (model router)', () => {
  const emulator = useEmulator({ router: { deadlineMs: 60, slowMs: 200 } });
  let stateDir: string;
  let work: string;
  beforeEach(() => {
    stateDir = tempDir('cli-models-state-');
    work = tempDir('cli-models-work-');
  });
  afterEach(() => emulator().setFaults({ rules: [] }));

  /** Runs the CLI in-process with the router configured by the environment (a clock that never really waits). */
  async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
    const stdout = new Buffered();
    const stderr = new Buffered();
    const io: CliIo = {
      stdout,
      stderr,
      env: {
        COMFY_CLOUD_STATE_DIR: stateDir,
        COMFY_ROUTER_URL: emulator().routerUrl,
        COMFY_ROUTER_KEY: TEST_ROUTER_KEY,
        ...env,
      },
      clock: new ManualClock(Date.now(), { autoAdvance: true }),
    };
    const code = await runCli(args, io);
    return { code, stdout: stdout.text, stderr: stderr.text };
  }

  function file(name: string, text: string): string {
    const p = path.join(work, name);
    fs.writeFileSync(p, text);
    return p;
  }

  const ids = (): string[] => emulator().routerCatalog.map((e) => e.id);
  const requestCount = (): number => emulator().routerRequests.length;

  describe('models list', () => {
    it('prints one page: one "id  billing" line per entry in the order served, and the next cursor on stderr', async () => {
      const r = await cli(['models', 'list']);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split('\n');
      assert.deepEqual(
        lines.map((l) => l.split('  ')[0]),
        ids().slice(0, 20),
      );
      assert.ok(
        lines.every((l) => /^\S+ {2}(yes|no|unknown)$/.test(l)),
        r.stdout,
      );
      assert.match(r.stderr, /models list --cursor \S+/);
    });

    it('--json prints the page object: data, has_more, next_cursor and the served limit (a limit above 100 is served as 100)', async () => {
      const r = await cli(['models', 'list', '--json', '--limit', '500']);
      assert.equal(r.code, 0, r.stderr);
      const page = JSON.parse(r.stdout);
      assert.equal(page.limit, 100);
      assert.equal(page.data.length, 100);
      assert.equal(page.has_more, true);
      assert.equal(typeof page.next_cursor, 'string');
      assert.deepEqual(
        page.data.map((e: { id: string }) => e.id),
        ids().slice(0, 100),
      );
    });

    it('--cursor reads the page after the one that gave it', async () => {
      const first = JSON.parse((await cli(['models', 'list', '--json', '--limit', '10'])).stdout);
      const r = await cli(['models', 'list', '--json', '--limit', '10', '--cursor', first.next_cursor]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        JSON.parse(r.stdout).data.map((e: { id: string }) => e.id),
        ids().slice(10, 20),
      );
    });

    it('--all follows the cursor while has_more, through the empty and the short page: every entry once, in the order served', async () => {
      const r = await cli(['models', 'list', '--all', '--limit', '10']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        r.stdout
          .trimEnd()
          .split('\n')
          .map((l) => l.split('  ')[0]),
        ids(),
      );
    });

    it('--all --json prints one JSON array of every entry, in the order served, each once', async () => {
      const before = requestCount();
      const r = await cli(['models', 'list', '--all', '--json', '--limit', '25']);
      assert.equal(r.code, 0, r.stderr);
      const all = JSON.parse(r.stdout);
      assert.ok(Array.isArray(all));
      assert.deepEqual(
        all.map((e: { id: string }) => e.id),
        ids(),
      );
      // The quirky catalog serves an empty page mid-way: more pages were read than entries fill.
      const pages = emulator()
        .routerRequests.slice(before)
        .filter((q) => q.path.includes('/v1/models?'));
      assert.ok(pages.length > Math.ceil(ids().length / 25), `${pages.length} pages`);
    });
  });

  describe('models get', () => {
    it('prints the detail (id, provider, model, billing, input schema URL); --json the detail object', async () => {
      const text = await cli(['models', 'get', 'emulator/echo']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^id: emulator\/echo$/m);
      assert.match(text.stdout, /^charges on policy rejection: no$/m);
      const json = await cli(['models', 'get', 'emulator/echo', '--json']);
      assert.equal(json.code, 0, json.stderr);
      const detail = JSON.parse(json.stdout);
      assert.equal(detail.id, 'emulator/echo');
      assert.equal(detail.provider, 'emulator');
      assert.equal(detail.model, 'echo');
    });

    it('an unknown model: exit 1, the bucket model_not_found, its suggestions and the request id on stderr', async () => {
      const r = await cli(['models', 'get', 'emulator/nope']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[model_not_found\] HTTP 404/);
      assert.match(r.stderr, /request-id \S+/);
      assert.match(r.stderr, /emulator\/echo/, 'the suggestions are named');
    });
  });

  describe('models schema', () => {
    it('prints the openapi.json byte for byte as served, fresh then after a 304, and stale with a warning (exit 0) when the router fails', async () => {
      const emu = emulator();
      const served = await call(`${emu.routerUrl}/v1/models/emulator/strict/openapi.json`, {
        headers: { authorization: `Bearer ${TEST_ROUTER_KEY}` },
      });
      assert.equal(served.status, 200);

      const fresh = await cli(['models', 'schema', 'emulator/strict']);
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.equal(fresh.stdout, served.text);

      const before = requestCount();
      const revalidated = await cli(['models', 'schema', 'emulator/strict']);
      assert.equal(revalidated.code, 0, revalidated.stderr);
      assert.equal(revalidated.stdout, served.text);
      const sent = emu.routerRequests.slice(before);
      assert.equal(sent.length, 1);
      assert.ok(sent[0].headers['if-none-match'], 'revalidated with If-None-Match');

      emu.setFaults({ rules: ['router:schema:bucket=internal_error'] });
      const stale = await cli(['models', 'schema', 'emulator/strict']);
      assert.equal(stale.code, 0, stale.stderr);
      assert.equal(stale.stdout, served.text);
      assert.match(stale.stderr, /warning: the router could not answer .*cached copy/);
    });

    it('with nothing cached, a failing router is an error: exit 1 with the bucket', async () => {
      emulator().setFaults({ rules: ['router:schema:bucket=internal_error'] });
      const r = await cli(['models', 'schema', 'emulator/echo']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[internal_error\] HTTP 500/);
      assert.equal(r.stdout, '');
    });
  });

  describe('models run', () => {
    const input =
      '{ "$schema": "comfy-router-schema:/emulator/echo", "seed": 12345678901234567890123, "text": "caf\\u00e9 \\"q\\"",  "z": 1.50 }\n';
    const sent = '{  "seed": 12345678901234567890123, "text": "caf\\u00e9 \\"q\\"",  "z": 1.50 }\n';

    it('POSTs the file with its top-level $schema removed and nothing else changed; prints the output byte for byte', async () => {
      const r = await cli(['models', 'run', 'emulator/echo', file('in.json', input)]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, sent);
      assert.match(r.stderr, /idempotency key \S+/);
    });

    it('--out writes the output byte for byte to FILE and prints its path; the minted key is persisted in the state dir before sending', async () => {
      const out = path.join(work, 'out.json');
      const r = await cli(['models', 'run', 'emulator/echo', file('in.json', input), '--out', out]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${out}\n`);
      assert.equal(fs.readFileSync(out, 'utf8'), sent);
      const key = emulator().routerRequests.at(-1)!.headers['idempotency-key'] as string;
      const saved = fs.readdirSync(path.join(stateDir, 'router-keys'));
      assert.ok(saved.includes(`${key}.json`), saved.join(','));
    });

    it('a 422 prints one line per field: its loc path, msg and type; exit 1', async () => {
      const r = await cli(['models', 'run', 'emulator/strict', file('bad.json', '{"prompt": "", "steps": 99}')]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[invalid_input\] HTTP 422/);
      const fields = r.stderr.split('\n').filter((l) => /^ {2}\S+: .+ \(\S+\)$/.test(l) && !/idempotency key/.test(l));
      assert.ok(fields.length >= 2, r.stderr);
      assert.ok(fields.some((l) => /steps: /.test(l)) && fields.some((l) => /prompt: /.test(l)), r.stderr);
    });

    it('a slow model (504 with Retry-After) is collected with the SAME key', async () => {
      const before = requestCount();
      const r = await cli(['models', 'run', 'emulator/slow', file('in.json', '{"n": 1}')]);
      assert.equal(r.code, 0, r.stderr);
      const posts = emulator()
        .routerRequests.slice(before)
        .filter((q) => q.method === 'POST');
      assert.ok(posts.length >= 2, `${posts.length} requests`);
      assert.equal(new Set(posts.map((q) => q.headers['idempotency-key'])).size, 1);
      // Each wait to collect is said on stderr, one line per request made after the first.
      const said = r.stderr.split('\n').filter((l) => /^deadline_exceeded: retrying in 1 s \(attempt \d+\)$/.test(l));
      assert.equal(said.length, posts.length - 1, r.stderr);
    });

    it('a 504 without Retry-After: exit 1 and the key printed; `--idempotency-key K` collects the result later', async () => {
      const input2 = file('in.json', '{"n": 2}');
      const r = await cli(['models', 'run', 'emulator/slow/no-retry', input2]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[deadline_exceeded\] HTTP 504/);
      const key = /--idempotency-key (\S+)/.exec(r.stderr)?.[1];
      assert.ok(key, r.stderr);
      assert.equal(emulator().routerRequests.at(-1)!.headers['idempotency-key'], key);
      // Each run is held by the router's deadline until the generation ends; bounded.
      let collected: CliRun | undefined;
      for (let i = 0; i < 50 && collected === undefined; i++) {
        const again = await cli(['models', 'run', 'emulator/slow/no-retry', input2, '--idempotency-key', key]);
        assert.equal(emulator().routerRequests.at(-1)!.headers['idempotency-key'], key);
        if (again.code === 0) collected = again;
        else assert.match(again.stderr, /deadline_exceeded/);
      }
      assert.ok(collected, 'never collected');
      assert.ok(collected.stdout.length > 0);
    });

    it('an answer that never came (--timeout): exit 1, never a new key: the key sent is printed with the command that retries it', async () => {
      const before = requestCount();
      const r = await cli(['models', 'run', 'emulator/slow', file('in.json', '{"n": 3}'), '--timeout', '20']);
      assert.equal(r.code, 1, r.stderr);
      const sent = emulator().routerRequests.slice(before);
      assert.equal(sent.length, 1);
      assert.match(r.stderr, /\[outcome_unknown\]/);
      assert.match(r.stderr, new RegExp(`--idempotency-key ${sent[0].headers['idempotency-key'] as string}`));
    });

    it('a bucket on demand: exit 1 after one request, stderr names the bucket, the detail and the request id', async () => {
      emulator().setFaults({ rules: ['router:invoke:bucket=content_policy_violation:times=1'] });
      const before = requestCount();
      const r = await cli(['models', 'run', 'emulator/echo', file('in.json', '{}')]);
      assert.equal(r.code, 1);
      assert.equal(requestCount() - before, 1);
      const id = emulator().routerRequests.length && /request-id (\S+)\)/.exec(r.stderr)?.[1];
      assert.ok(id, r.stderr);
      assert.match(r.stderr, /\[content_policy_violation\] HTTP \d+: \S+/);
    });

    it('--json: a refusal is one JSON document with bucket, request id and key', async () => {
      emulator().setFaults({ rules: ['router:invoke:bucket=not_enabled:times=1'] });
      const r = await cli(['models', 'run', 'emulator/echo', file('in.json', '{}'), '--json']);
      assert.equal(r.code, 1);
      const doc = JSON.parse(r.stdout).error;
      assert.equal(doc.bucket, 'not_enabled');
      assert.equal(typeof doc.request_id, 'string');
      assert.equal(typeof doc.idempotency_key, 'string');
    });

    it('committed spend of a 429 concurrency_limit_exceeded is shown in dollars (cents / 100, two decimals)', async () => {
      emulator().setFaults({ rules: ['router:invoke:bucket=concurrency_limit_exceeded:spend=2500/2600:times=1'] });
      const r = await cli(['models', 'run', 'emulator/echo', file('in.json', '{}')]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[concurrency_limit_exceeded\] HTTP 429/);
      assert.match(r.stderr, /committed spend: .*\$2[56]\.00.*\$2[56]\.00/);
    });
  });

  describe('retries on stderr (a wait is never silent)', () => {
    it('run: each retry of rate_limited prints one stderr line "rate_limited: retrying in 1 s (attempt 2)", then the output', async () => {
      emulator().setFaults({ rules: ['router:invoke:bucket=rate_limited:retryAfter=1:times=2'] });
      const before = requestCount();
      const r = await cli(['models', 'run', 'emulator/echo', file('in.json', '{"a":1}')]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '{"a":1}');
      assert.deepEqual(
        r.stderr.split('\n').filter((l) => /retrying/.test(l)),
        ['rate_limited: retrying in 1 s (attempt 2)', 'rate_limited: retrying in 1 s (attempt 3)'],
      );
      const sent = emulator().routerRequests.slice(before);
      assert.equal(sent.length, 3);
      assert.equal(new Set(sent.map((q) => q.headers['idempotency-key'])).size, 1, 'one key for every retry');
    });

    it('list: a rate_limited answer with Retry-After 0 is retried at once and said on stderr', async () => {
      emulator().setFaults({ rules: ['router:list:bucket=rate_limited:retryAfter=0:times=1'] });
      const r = await cli(['models', 'list', '--limit', '5']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^rate_limited: retrying in 0 s \(attempt 2\)$/m);
      assert.equal(r.stdout.trimEnd().split('\n').length, 5);
    });

    it('no retry, no retry line: a bucket that is never retried prints no "retrying"', async () => {
      emulator().setFaults({ rules: ['router:get:bucket=forbidden:times=1'] });
      const r = await cli(['models', 'get', 'emulator/echo']);
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stderr, /retrying/);
    });
  });

  describe('the router key is redacted (no secret in a log or on a terminal)', () => {
    it('a router key echoed by the router in an error detail never appears on stdout or stderr (env or --router-key)', async () => {
      for (const env of [{}, { COMFY_ROUTER_KEY: '' }]) {
        const args = 'COMFY_ROUTER_KEY' in env ? ['--router-key', TEST_ROUTER_KEY] : [];
        emulator().setFaults({
          rules: [
            {
              on: 'router:get',
              kind: 'bucket',
              bucket: 'forbidden',
              message: `the key ${TEST_ROUTER_KEY} (${encodeURIComponent(TEST_ROUTER_KEY)}) is not entitled`,
              times: 1,
            },
          ],
        });
        const r = await cli(['models', 'get', 'emulator/echo', ...args, '--json'], env);
        assert.equal(r.code, 1);
        assert.match(r.stderr, /forbidden/);
        assert.match(r.stderr, /«redacted»/, 'the echo was there and was redacted');
        assert.ok(!(r.stdout + r.stderr).includes(TEST_ROUTER_KEY), r.stdout + r.stderr);
      }
    });
  });

  describe('refused before any request (exit 2)', () => {
    const cases: [string, () => string[]][] = [
      ['a malformed model id (get)', () => ['models', 'get', 'Emulator/Echo']],
      ['a malformed model id (schema)', () => ['models', 'schema', 'emulator']],
      ['a malformed model id (run)', () => ['models', 'run', 'emulator/echo/x/y', file('ok.json', '{}')]],
      ['a malformed cursor', () => ['models', 'list', '--cursor', 'not a cursor']],
      ['a --limit that is not a whole number', () => ['models', 'list', '--limit', '2.5']],
      ['an input file that is missing', () => ['models', 'run', 'emulator/echo', path.join(work, 'missing.json')]],
      ['an input file that is not JSON', () => ['models', 'run', 'emulator/echo', file('bad.json', '{"a": ')]],
    ];
    for (const [what, args] of cases) {
      it(`${what}: exit 2, no request`, async () => {
        const before = requestCount();
        const r = await cli(args());
        assert.equal(r.code, 2, r.stderr);
        assert.equal(requestCount(), before);
        assert.notEqual(r.stderr, '');
      });
    }

    it('no router URL (neither --router-url nor COMFY_ROUTER_URL): exit 2 saying how to set one', async () => {
      const r = await cli(['models', 'list'], { COMFY_ROUTER_URL: '' });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--router-url/);
    });
  });

  describe('global router options', () => {
    it('--router-url and --router-key may stand anywhere on the command line and win over the environment; the key goes as a Bearer token', async () => {
      const before = requestCount();
      const r = await cli(
        ['models', '--router-key', TEST_ROUTER_KEY, 'get', 'emulator/echo', '--router-url', emulator().routerUrl!],
        { COMFY_ROUTER_URL: 'http://127.0.0.1:9/router', COMFY_ROUTER_KEY: 'wrong' },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(emulator().routerRequests.slice(before)[0].headers.authorization, `Bearer ${TEST_ROUTER_KEY}`);
    });

    it('a wrong key: exit 1 with the bucket unauthorized, and the key never printed', async () => {
      const r = await cli(['models', 'list', '--router-key', 'secret-wrong-key-123']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /\[unauthorized\] HTTP 401/);
      assert.doesNotMatch(r.stdout + r.stderr, /secret-wrong-key-123/);
    });

    it('--help on models and each subcommand exits 0 and names its options', async () => {
      for (const [args, expect] of [
        [['models', '--help'], /list.*\n[\s\S]*run/],
        [['models', 'list', '--help'], /--all/],
        [['models', 'get', '--help'], /<id>/],
        [['models', 'schema', '--help'], /<id>/],
        [['models', 'run', '--help'], /--idempotency-key/],
      ] as const) {
        const r = await cli([...args]);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, expect);
      }
    });
  });

  describe('--json prints what the router served', () => {
    it('rule: models list --json and models get --json print each object as served: fields the client does not know, at every level, and odd values kept', async () => {
      const page = {
        data: [
          {
            id: 'acme/gen',
            provider: 'acme',
            model: 'gen',
            billing: { charges_on_policy_rejection: 'sometimes', cap_usd: 2 },
            modality: 'image',
          },
          { id: 'acme/flat', provider: 'acme', model: 'flat', billing: 'no' },
        ],
        has_more: false,
        limit: 20,
        region: 'eu',
      };
      const detail = {
        id: 'acme/gen',
        provider: 'acme',
        model: 'gen',
        tags: ['preview'],
        pricing: { unit: 'image', usd: 0.04 },
      };
      const server = await startServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(req.url?.startsWith('/v1/models?') || req.url === '/v1/models' ? page : detail));
      });
      try {
        const env = { COMFY_ROUTER_URL: server.origin };
        const listed = await cli(['models', 'list', '--json'], env);
        assert.equal(listed.code, 0, listed.stderr);
        assert.deepEqual(JSON.parse(listed.stdout), page);
        const all = await cli(['models', 'list', '--all', '--json'], env);
        assert.deepEqual(JSON.parse(all.stdout), page.data);
        const got = await cli(['models', 'get', 'acme/gen', '--json'], env);
        assert.equal(got.code, 0, got.stderr);
        assert.deepEqual(JSON.parse(got.stdout), detail, 'no field added (input_schema_url) nor dropped');
        // The plain lines read the same objects: an odd billing note reads as unknown, no input schema line.
        const plain = await cli(['models', 'get', 'acme/gen'], env);
        assert.match(plain.stdout, /^charges on policy rejection: unknown$/m);
        assert.doesNotMatch(plain.stdout, /input schema/);
      } finally {
        await server.close();
      }
    });
  });

  describe('emulator --router-key', () => {
    it('each --router-key (repeatable) is passed to the emulator as router keys; its router URL printed second', async () => {
      let seen: EmulatorCliOptions | undefined;
      const stdout = new Buffered();
      const controller = new AbortController();
      controller.abort();
      const io: CliIo = {
        stdout,
        stderr: new Buffered(),
        env: {},
        signal: controller.signal,
        startEmulator: async (o) => {
          seen = o;
          return {
            baseUrl: 'http://127.0.0.1:1',
            routerUrl: 'http://127.0.0.1:1/router',
            close: async () => undefined,
          };
        },
      };
      const code = await runCli(['emulator', '--port', '0', '--router-key', 'k1', '--router-key', 'k2'], io);
      assert.equal(code, 0);
      assert.deepEqual(seen?.router, { keys: ['k1', 'k2'] });
      assert.equal(stdout.text, 'http://127.0.0.1:1\nhttp://127.0.0.1:1/router\n');
    });
  });
});
