/**
 * The shipped CLI (`node dist/cli.js` in a child process, against the emulator it carries): the model router's
 * commands (`models …`) and a serverless deployment by id (`--deployment`), each checked by its exit code, its stdout
 * and the files it writes.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TEST_ROUTER_KEY } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { UUID, assertSolid, type Json } from './harness';

import { KEY, ShippedEmulator, startShippedEmulator, useShippedCli } from './cli-dist.fixtures';

describe('the shipped CLI (node dist/cli.js, every command against its own emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle.
  this.timeout(60_000);
  const shipped = useShippedCli();
  const { cli, ok, write, served } = shipped;

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
      const res = await fetch(`${shipped.emu.routerUrl}/v1/models/emulator/echo/openapi.json`, {
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
      const out = path.join(shipped.dir, 'echo-out.json');
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
      const out = path.join(shipped.dir, 'deployment');
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
});
