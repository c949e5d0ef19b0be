import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import {
  DEFAULT_CONNECTION_NAME,
  healthFromRequest,
  isReconnect,
  parseConnections,
  probeHealth,
  resolveConnection,
  upsertConnection,
} from '../../src/core';
import { useEmulator } from './harness';
import { startServer } from './httpServer';
import { inputError } from './builders';


describe('connections: the list and the active name resolve to one surface', () => {
  const list = [
    { name: 'Cloud', surface: 'cloud', baseUrl: 'https://cloud.example/' },
    { name: 'Demo', surface: 'deployment', deploymentId: 'demo-1' },
    { name: 'Laptop', surface: 'companion', baseUrl: 'http://127.0.0.1:8189' },
  ];

  it('an empty active name is the default connection made of comfyCloud.baseUrl, unchanged', () => {
    const active = resolveConnection(list, '', 'http://127.0.0.1:9000/');
    assert.deepEqual(active, { name: DEFAULT_CONNECTION_NAME, kind: 'default', api: 'v2', surface: { kind: 'self-hosted', baseUrl: 'http://127.0.0.1:9000', origin: 'http://127.0.0.1:9000' } });
  });
  it('the default connection works with no list at all (and ignores a broken list)', () => {
    assert.equal(resolveConnection(undefined, '', 'https://cloud.example').surface.kind, 'cloud');
    assert.equal(resolveConnection('not a list', '  ', 'https://cloud.example').name, DEFAULT_CONNECTION_NAME);
  });
  it('a named connection decides the base URL and the origin (the credential follows the origin)', () => {
    const active = resolveConnection(list, 'Laptop', 'https://ignored.example');
    assert.equal(active.kind, 'companion');
    assert.equal(active.surface.baseUrl, 'http://127.0.0.1:8189');
    assert.equal(active.surface.origin, 'http://127.0.0.1:8189');
  });
  it("a deployment's base URL is its own host, https://{id}.run.comfy.app, not the cloud connection's URL plus a path", () => {
    const active = resolveConnection(list, 'Demo', 'http://127.0.0.1:8189');
    assert.equal(active.surface.baseUrl, 'https://demo-1.run.comfy.app');
    assert.equal(active.surface.kind, 'deployment');
    assert.equal(active.surface.origin, 'https://demo-1.run.comfy.app');
  });
  it('a deployment needs no cloud connection', () => {
    assert.equal(resolveConnection([{ name: 'D', surface: 'deployment', deploymentId: 'x' }], 'D', '').surface.baseUrl, 'https://x.run.comfy.app');
  });
  it('a bad deployment id is an error naming the connection', () => {
    assert.throws(() => resolveConnection([...list, { name: 'Bad', surface: 'deployment', deploymentId: 'Not_A_Label' }], 'Bad', ''), inputError('bad_connection', /"Bad".*not a deployment id/));
  });
  it('a bad URL is an error naming the connection', () => {
    assert.throws(() => resolveConnection([{ name: 'X', surface: 'cloud', baseUrl: 'ftp://x' }], 'X', ''), inputError('bad_connection', /"X".*http:\/\/ or https:\/\//));
    assert.throws(() => resolveConnection([{ name: 'X', surface: 'cloud', baseUrl: 'https://u:p@x' }], 'X', ''), inputError('bad_connection', /user name or password/));
  });
  it('an active name not in the list is an unknown_connection error saying how to fix it', () => {
    assert.throws(() => resolveConnection(list, 'Nope', ''), inputError('unknown_connection', /no connection named "Nope".*clear the setting/));
  });
  it('entries are checked: not a list, not an object, no name, unknown surface, missing baseUrl or deploymentId, duplicates, the default name', () => {
    assert.throws(() => parseConnections({}), inputError('bad_connection', /must be a list/));
    assert.throws(() => parseConnections([1]), inputError('bad_connection', /entry 1 is not an object/));
    assert.throws(() => parseConnections([{ surface: 'cloud', baseUrl: 'https://x' }]), inputError('bad_connection', /entry 1 has no name/));
    assert.throws(() => parseConnections([{ name: 'A', surface: 'mainframe', baseUrl: 'https://x' }]), inputError('bad_connection', /"A" has surface "mainframe"; use one of cloud, deployment, companion, emulator/));
    assert.throws(() => parseConnections([{ name: 'A', surface: 'cloud' }]), inputError('bad_connection', /"A" has no baseUrl/));
    assert.throws(() => parseConnections([{ name: 'A', surface: 'deployment' }]), inputError('bad_connection', /no deploymentId/));
    assert.throws(() => parseConnections([{ name: 'A', surface: 'cloud', baseUrl: 7 }]), inputError('bad_connection', /baseUrl of "A" is not a string/));
    assert.throws(() => parseConnections([list[0], list[0]]), inputError('bad_connection', /two connections are named "Cloud"/));
    assert.throws(() => parseConnections([{ name: DEFAULT_CONNECTION_NAME, surface: 'cloud', baseUrl: 'https://x' }]), inputError('bad_connection', /choose another/));
    assert.throws(() => parseConnections([{ name: 'x'.repeat(65), surface: 'cloud', baseUrl: 'https://x' }]), inputError('bad_connection', /longer than 64/));
  });
  it('upserting replaces the entry of the same name (the emulator gets a new port each start) and keeps the others', () => {
    const first = upsertConnection(list, { name: 'Local emulator', surface: 'emulator', baseUrl: 'http://127.0.0.1:1111' });
    const second = upsertConnection(first, { name: 'Local emulator', surface: 'emulator', baseUrl: 'http://127.0.0.1:2222' });
    assert.deepEqual(second.map((c) => c.name), ['Cloud', 'Demo', 'Laptop', 'Local emulator']);
    assert.equal(resolveConnection(second, 'Local emulator', '').surface.baseUrl, 'http://127.0.0.1:2222');
  });
  it('upserting refuses an entry that would not resolve', () => {
    assert.throws(() => upsertConnection([], { name: 'E', surface: 'emulator', baseUrl: 'nope' }), inputError('bad_connection', /"E"/));
  });
});

describe('health: a cheap probe where the surface has one, else the last request', () => {
  const emulator = useEmulator();
  const withToken = useEmulator({ tokens: ['secret-token'] });

  it('the emulator answers GET /api/v2/health: ok', async () => {
    const health = await probeHealth({ baseUrl: emulator().baseUrl });
    assert.equal(health.state, 'ok');
    assert.ok(emulator().requests.some((r) => r.method === 'GET' && r.path === '/api/v2/health'));
  });
  it('a server with a token answers the probe 401 without the key (unauthorized) and ok with it', async () => {
    assert.equal((await probeHealth({ baseUrl: withToken().baseUrl })).state, 'unauthorized');
    assert.equal((await probeHealth({ baseUrl: withToken().baseUrl, apiKey: 'secret-token' })).state, 'ok');
  });
  it('a surface without the probe (404) is unsupported, not down', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    });
    try {
      const health = await probeHealth({ baseUrl: server.origin });
      assert.equal(health.state, 'unsupported');
      assert.deepEqual(server.seen.map((s) => `${s.method} ${s.url}`), ['GET /api/v2/health']);
    } finally {
      await server.close();
    }
  });
  it('a 5xx is error; a redirect is not followed', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/api/v2/health') res.writeHead(503).end();
      else res.writeHead(200).end();
    });
    const redirecting = await startServer((_req, res) => {
      res.writeHead(302, { location: `${server.origin}/elsewhere` }).end();
    });
    try {
      assert.equal((await probeHealth({ baseUrl: server.origin })).state, 'error');
      assert.equal((await probeHealth({ baseUrl: redirecting.origin })).state, 'error');
      assert.deepEqual(server.seen.map((s) => s.url), ['/api/v2/health']);
    } finally {
      await server.close();
      await redirecting.close();
    }
  });
  it('no server listening is unreachable, never a rejection', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    assert.equal((await probeHealth({ baseUrl: `http://127.0.0.1:${port}` })).state, 'unreachable');
  });
  it('an aborted probe is unreachable', async () => {
    const ac = new AbortController();
    ac.abort();
    assert.equal((await probeHealth({ baseUrl: emulator().baseUrl, signal: ac.signal })).state, 'unreachable');
  });
  it("the last request's outcome: an answer below 500 is ok, 401/403 unauthorized, 5xx error, no answer unreachable", () => {
    const entry = { method: 'GET', url: 'https://x/api/v2/jobs/1', durationMs: 3 };
    assert.equal(healthFromRequest({ ...entry, status: 404 }).state, 'ok');
    assert.equal(healthFromRequest({ ...entry, status: 200 }).state, 'ok');
    assert.equal(healthFromRequest({ ...entry, status: 401 }).state, 'unauthorized');
    assert.equal(healthFromRequest({ ...entry, status: 502 }).state, 'error');
    assert.deepEqual(healthFromRequest({ ...entry, error: 'ECONNREFUSED' }), { state: 'unreachable', detail: 'last request: no answer (ECONNREFUSED)' });
  });
});

describe('health: a connection back', () => {
  it('rule: isReconnect is a connection that was unreachable or failing answering again; a switch (nothing known before) or a connection up all along is not', () => {
    assert.equal(isReconnect('unreachable', 'ok'), true);
    assert.equal(isReconnect('error', 'ok'), true);
    assert.equal(isReconnect('unreachable', 'unauthorized'), true, 'an answer, even a refusal, is the server back');
    assert.equal(isReconnect('unreachable', 'unsupported'), true);
    assert.equal(isReconnect('unreachable', 'error'), false, 'still down');
    assert.equal(isReconnect('error', 'unreachable'), false);
    assert.equal(isReconnect(undefined, 'ok'), false, 'a connection just switched to is read by the switch, not here');
    assert.equal(isReconnect('ok', 'ok'), false);
  });
});
