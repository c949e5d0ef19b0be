/**
 * The model router's one client owner (src/core/router/routerService.ts): one client per router however many calls
 * lease it, rebuilt when the router's base URL or key changes, the replaced one closed once its last lease is
 * released, everything closed on dispose; and the CLI's run uses it (src/cli/context.ts).
 */
import * as assert from 'node:assert/strict';
import { Command } from 'commander';
import { AbortError, InputError } from '../../src/core';
import { Redactor } from '../../src/core/util';
import { RouterClient, RouterService, type RouterTarget } from '../../src/core/router';
import { createContext, type CliIo } from '../../src/cli/context';
import { Output } from '../../src/cli/output';
import { Buffered } from './harness';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

/** A stand-in client: which target it was built for, and whether it was closed. */
class FakeClient {
  closed = 0;
  constructor(readonly target: RouterTarget) {}
  async close(): Promise<void> {
    this.closed++;
  }
}

/** A service over fake clients whose target is whatever `settings` says at each lease. */
function fakeService(settings: { target: RouterTarget | undefined }): {
  service: RouterService<FakeClient>;
  made: FakeClient[];
} {
  const made: FakeClient[] = [];
  const service = new RouterService<FakeClient>({
    target: async () => settings.target,
    create: (target) => {
      const client = new FakeClient(target);
      made.push(client);
      return client;
    },
  });
  return { service, made };
}

const ROUTER = 'https://router.example';

describe('router service: one model router client per router', () => {
  it('rule: one client per router across many calls, sequential and at once', async () => {
    const { service, made } = fakeService({ target: { baseUrl: ROUTER, apiKey: 'k1' } });
    for (let i = 0; i < 5; i++) await service.use(async (client) => assert.equal(client.target.baseUrl, ROUTER));
    const leases = await Promise.all(Array.from({ length: 5 }, () => service.lease()));
    assert.equal(made.length, 1);
    assert.ok(leases.every((lease) => lease?.client === made[0]));
    for (const lease of leases) lease?.release();
    assert.equal(made[0]!.closed, 0, 'the current client stays open between uses');
    assert.equal(service.openClients, 1);
  });

  it('rule: a key change rebuilds the client; the old one is closed once its last lease is released', async () => {
    const settings: { target: RouterTarget | undefined } = { target: { baseUrl: ROUTER, apiKey: 'k1' } };
    const { service, made } = fakeService(settings);
    const running = (await service.lease())!;
    settings.target = { baseUrl: ROUTER, apiKey: 'k2' };
    const next = (await service.lease())!;
    assert.equal(made.length, 2);
    assert.equal(next.client.target.apiKey, 'k2');
    assert.equal(made[0]!.closed, 0, 'a run still using the old client keeps it open');
    running.release();
    assert.equal(made[0]!.closed, 1);
    running.release(); // idempotent
    assert.equal(made[0]!.closed, 1);
    next.release();
    assert.equal(made[1]!.closed, 0);
  });

  it('rule: another base URL (another router origin) rebuilds the client; an unused old one is closed at once', async () => {
    const settings: { target: RouterTarget | undefined } = { target: { baseUrl: ROUTER, apiKey: 'k1' } };
    const { service, made } = fakeService(settings);
    await service.use(async () => undefined);
    settings.target = { baseUrl: 'https://other.example/router', apiKey: 'k1' };
    await service.use(async (client) => assert.equal(client.target.baseUrl, 'https://other.example/router'));
    assert.equal(made.length, 2);
    assert.equal(made[0]!.closed, 1);
    assert.equal(service.openClients, 1);
  });

  it('rule: refresh retires the client the settings no longer call for (closed when unused), and keeps the one they do', async () => {
    const settings: { target: RouterTarget | undefined } = { target: { baseUrl: ROUTER, apiKey: 'k1' } };
    const { service, made } = fakeService(settings);
    await service.use(async () => undefined);
    await service.refresh();
    assert.equal(made[0]!.closed, 0, 'the same router and key: the client stays');
    settings.target = undefined; // the router URL was cleared
    await service.refresh();
    assert.equal(made[0]!.closed, 1);
    assert.equal(service.openClients, 0);
  });

  it('rule: no router configured: the lease is undefined and use() refuses with InputError no_router, before any client is built', async () => {
    const { service, made } = fakeService({ target: undefined });
    assert.equal(await service.lease(), undefined);
    await assert.rejects(
      service.use(async () => undefined),
      (e: unknown) => InputError.is(e) && e.code === 'no_router',
    );
    assert.equal(made.length, 0);
  });

  it('rule: dispose closes every client, a leased and a retired one too, and later leases are refused', async () => {
    const settings: { target: RouterTarget | undefined } = { target: { baseUrl: ROUTER, apiKey: 'k1' } };
    const { service, made } = fakeService(settings);
    const held = (await service.lease())!;
    settings.target = { baseUrl: ROUTER, apiKey: 'k2' };
    await service.use(async () => undefined);
    assert.equal(made[0]!.closed, 0, 'retired but still leased');
    await service.close();
    assert.deepEqual(
      made.map((c) => c.closed),
      [1, 1],
    );
    held.release(); // a late release closes nothing twice
    assert.deepEqual(
      made.map((c) => c.closed),
      [1, 1],
    );
    await assert.rejects(service.lease(), (e: unknown) => AbortError.is(e));
  });

  describe('with real router clients', () => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('rule: many catalog reads through the service are made by one RouterClient, closed with the service', async () => {
      server = await startServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: [{ id: 'acme/one', provider: 'acme', model: 'one' }], has_more: false }));
      });
      const made: RouterClient[] = [];
      const service = new RouterService({
        target: () => ({ baseUrl: server!.origin, apiKey: 'router-key' }),
        create: (target) => {
          const client = new RouterClient(target);
          made.push(client);
          return client;
        },
      });
      for (let i = 0; i < 3; i++) {
        const page = await service.use((client) => client.listModels());
        assert.deepEqual(
          page.entries.map((e) => e.id),
          ['acme/one'],
        );
      }
      assert.equal(made.length, 1);
      assert.equal(server.seen.length, 3);
      assert.ok(server.seen.every((s) => s.headers.authorization === 'Bearer router-key'));
      await service.close();
      assert.equal(service.openClients, 0);
    });
  });

  describe("the CLI's run", () => {
    /** A context as runCli builds it, with the global options a parse would give. */
    function context(env: NodeJS.ProcessEnv): ReturnType<typeof createContext> {
      const program = new Command('comfy-cloud');
      program.setOptionValue('timeout', '30000');
      program.setOptionValue('routerKey', []);
      const io: CliIo = { stdout: new Buffered(), stderr: new Buffered(), env };
      const redactor = new Redactor();
      return createContext(
        program,
        io,
        new Output({ stdout: io.stdout, stderr: io.stderr, redactor, flags: () => ({}) }),
        redactor,
      );
    }

    it('rule: the commands of one CLI run share one router client, released by close()', async () => {
      const ctx = context({
        COMFY_ROUTER_URL: ROUTER,
        COMFY_ROUTER_KEY: 'k1',
        COMFY_CLOUD_STATE_DIR: tempDir('cc-router-service-'),
      });
      const first = await ctx.withRouter(async (client) => client);
      const second = await ctx.withRouter(async (client) => client);
      assert.equal(first, second);
      await ctx.close();
      await assert.rejects(
        ctx.withRouter(async () => undefined),
        (e: unknown) => AbortError.is(e),
      );
    });
  });
});
