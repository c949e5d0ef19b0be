/**
 * A connection may speak a ComfyUI server's native API (`api: "comfyui"`): kept by the settings' parser, never
 * deprecated, refused for a deployment, and built by core/backends into its backend, which sends a key the
 * connection carries as `Authorization: Bearer` and none otherwise (ComfyUI server API (observed), Routes: no
 * authentication by default).
 */
import * as assert from 'node:assert/strict';
import { createBackend } from '../../src/core/backends';
import { CONNECTION_APIS, isDeprecatedApi, parseConnections } from '../../src/core/connection';
import { startServer, type TestServer } from './httpServer';

describe('comfyui: a connection that speaks a ComfyUI server native API', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('"api": "comfyui" is kept, is not deprecated, and a deployment cannot speak it', () => {
    const [entry] = parseConnections([
      { name: 'Local', surface: 'companion', baseUrl: 'http://127.0.0.1:8188', api: 'comfyui' },
    ]);
    assert.equal(entry!.api, 'comfyui');
    assert.ok(CONNECTION_APIS.includes('comfyui'));
    assert.equal(isDeprecatedApi('comfyui'), false);
    assert.throws(
      () =>
        parseConnections([
          { name: 'Dep', surface: 'deployment', baseUrl: 'https://x.example', deploymentId: 'dep-1', api: 'comfyui' },
        ]),
      /the deployment "Dep" speaks v2 only; remove its "api": "comfyui"/,
    );
  });

  it('createBackend builds the comfyui backend: /queue read with the key as Bearer, and without one none', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ queue_running: [], queue_pending: [] }));
    });
    for (const apiKey of ['k-123', undefined]) {
      const { backend, assets } = createBackend({
        surface: { baseUrl: server.origin },
        api: 'comfyui',
        apiKey,
        userAgent: 'test',
      });
      assert.equal(backend.api, 'comfyui');
      assert.equal(assets, undefined);
      assert.deepEqual(backend.capabilities, {
        list: true,
        cancelRunning: true,
        assets: false,
        storedWorkflow: false,
        idempotentSubmit: false,
      });
      await backend.list({ limit: 1 }).catch(() => undefined);
      await backend.close();
    }
    const auth = server.seen.map((s) => `${s.url} ${s.headers.authorization ?? '-'}`);
    assert.deepEqual(auth, [
      '/queue Bearer k-123',
      '/history?max_items=2 Bearer k-123',
      '/queue -',
      '/history?max_items=2 -',
    ]);
  });
});
