/**
 * The shipped CLI's `emulator` command (`node dist/cli.js emulator` in a child process: ports, --data-dir across a
 * restart, SIGINT), and the check that every command and subcommand its `--help` lists ran at least once in the
 * cli-dist-*.test.ts suites: those are imported first, so that they run before the check even when this file runs
 * alone.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { invertWorkflow } from './builders';
import { type Json } from './harness';
import { tempDir } from './tmp';
// The suites whose commands the coverage check below counts: loaded first, so they run before it.
import './cli-dist-v2.test';
import './cli-dist-v1.test';
import './cli-dist-models.test';
import { listed, ran, startShippedEmulator, useShippedCli } from './cli-dist.fixtures';
import { EMULATOR_OWNER_TOKEN_ENV } from '../../src/core/connection';
import { askToStop, holdEmulator } from '../../src/extension/connection/emulatorOwner';

/** The owner token of the owned emulators below. */
const OWNER = 'owner-token-of-this-test-0123456789';

describe('the shipped CLI (node dist/cli.js, every command against its own emulator)', function () {
  // Each run is a fresh Node process loading the whole bundle.
  this.timeout(60_000);
  const shipped = useShippedCli();
  const { cli, ok } = shipped;

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

    it('--owner-grace-ms: held by a window (the owner token in the environment), it stops that long after the last one let go, and says why', async () => {
      const started = await startShippedEmulator(['--owner-grace-ms', '300'], { [EMULATOR_OWNER_TOKEN_ENV]: OWNER });
      const hold = await holdEmulator(started.baseUrl, OWNER, 10_000);
      assert.equal(hold.pid, started.child.pid);
      assert.equal((await fetch(`${started.baseUrl}/api/v2/jobs?limit=1`)).status, 200);
      hold.release();
      assert.equal(await started.exited, 0);
      assert.match(started.stderr(), /emulator stopped: no window held it for 300 ms/);
    });

    it('--owner-grace-ms: the window that started it gone (its pipes closed), it runs on, logging without a crash, until an owner asks it to stop', async () => {
      const started = await startShippedEmulator(['--owner-grace-ms', '60000'], {
        [EMULATOR_OWNER_TOKEN_ENV]: OWNER,
        // Every request writes a line to stderr: the broken pipe is met.
        COMFY_EMULATOR_LOG: '1',
      });
      const hold = await holdEmulator(started.baseUrl, OWNER, 10_000);
      started.child.stdout!.destroy();
      started.child.stderr!.destroy();
      for (let i = 0; i < 20; i++)
        assert.equal((await fetch(`${started.baseUrl}/api/v2/jobs?limit=1`)).status, 200, `request ${i}`);
      assert.equal(await askToStop(started.baseUrl, OWNER, 10_000), true);
      await hold.ended;
      assert.equal(await started.exited, 0);
    });

    it('--owner-grace-ms without the owner token in the environment is bad usage (exit 2) that names the variable', async () => {
      const r = await cli(['emulator', '--port', '0', '--owner-grace-ms', '1000']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /COMFY_EMULATOR_OWNER_TOKEN/);
      assert.equal(r.stdout, '');
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
      assert.match(shipped.emu.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(shipped.emu.routerUrl, `${shipped.emu.baseUrl}/router`);
      shipped.emu.child.kill('SIGINT');
      assert.equal(await shipped.emu.exited, 0);
      assert.match(shipped.emu.stderr(), /^emulator stopped$/m);
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
