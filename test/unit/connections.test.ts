import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import {
  ConnectionHealth,
  DEFAULT_CONNECTION_NAME,
  healthFromRequest,
  healthPathOf,
  isReconnect,
  parseConnections,
  probeHealth,
  resolveConnection,
  upsertConnection,
} from '../../src/core/connection';
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
    assert.deepEqual(active, {
      name: DEFAULT_CONNECTION_NAME,
      kind: 'default',
      api: 'v2',
      surface: { kind: 'self-hosted', baseUrl: 'http://127.0.0.1:9000', origin: 'http://127.0.0.1:9000' },
    });
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
    assert.equal(
      resolveConnection([{ name: 'D', surface: 'deployment', deploymentId: 'x' }], 'D', '').surface.baseUrl,
      'https://x.run.comfy.app',
    );
  });
  it('a bad deployment id is an error naming the connection', () => {
    assert.throws(
      () =>
        resolveConnection([...list, { name: 'Bad', surface: 'deployment', deploymentId: 'Not_A_Label' }], 'Bad', ''),
      inputError('bad_connection', /"Bad".*not a deployment id/),
    );
  });
  it('a bad URL is an error naming the connection', () => {
    assert.throws(
      () => resolveConnection([{ name: 'X', surface: 'cloud', baseUrl: 'ftp://x' }], 'X', ''),
      inputError('bad_connection', /"X".*http:\/\/ or https:\/\//),
    );
    assert.throws(
      () => resolveConnection([{ name: 'X', surface: 'cloud', baseUrl: 'https://u:p@x' }], 'X', ''),
      inputError('bad_connection', /user name or password/),
    );
  });
  it('an active name not in the list is an unknown_connection error saying how to fix it', () => {
    assert.throws(
      () => resolveConnection(list, 'Nope', ''),
      inputError('unknown_connection', /no connection named "Nope".*clear the setting/),
    );
  });
  it('entries are checked: not a list, not an object, no name, unknown surface, missing baseUrl or deploymentId, duplicates, the default name', () => {
    assert.throws(() => parseConnections({}), inputError('bad_connection', /must be a list/));
    assert.throws(() => parseConnections([1]), inputError('bad_connection', /entry 1 is not an object/));
    assert.throws(
      () => parseConnections([{ surface: 'cloud', baseUrl: 'https://x' }]),
      inputError('bad_connection', /entry 1 has no name/),
    );
    assert.throws(
      () => parseConnections([{ name: 'A', surface: 'mainframe', baseUrl: 'https://x' }]),
      inputError('bad_connection', /"A" has surface "mainframe"; use one of cloud, deployment, companion, emulator/),
    );
    assert.throws(
      () => parseConnections([{ name: 'A', surface: 'cloud' }]),
      inputError('bad_connection', /"A" has no baseUrl/),
    );
    assert.throws(
      () => parseConnections([{ name: 'A', surface: 'deployment' }]),
      inputError('bad_connection', /no deploymentId/),
    );
    assert.throws(
      () => parseConnections([{ name: 'A', surface: 'cloud', baseUrl: 7 }]),
      inputError('bad_connection', /baseUrl of "A" is not a string/),
    );
    assert.throws(
      () => parseConnections([list[0], list[0]]),
      inputError('bad_connection', /two connections are named "Cloud"/),
    );
    assert.throws(
      () => parseConnections([{ name: DEFAULT_CONNECTION_NAME, surface: 'cloud', baseUrl: 'https://x' }]),
      inputError('bad_connection', /choose another/),
    );
    assert.throws(
      () => parseConnections([{ name: 'x'.repeat(65), surface: 'cloud', baseUrl: 'https://x' }]),
      inputError('bad_connection', /longer than 64/),
    );
  });
  it('upserting replaces the entry of the same name (the emulator gets a new port each start) and keeps the others', () => {
    const first = upsertConnection(list, {
      name: 'Local emulator',
      surface: 'emulator',
      baseUrl: 'http://127.0.0.1:1111',
    });
    const second = upsertConnection(first, {
      name: 'Local emulator',
      surface: 'emulator',
      baseUrl: 'http://127.0.0.1:2222',
    });
    assert.deepEqual(
      second.map((c) => c.name),
      ['Cloud', 'Demo', 'Laptop', 'Local emulator'],
    );
    assert.equal(resolveConnection(second, 'Local emulator', '').surface.baseUrl, 'http://127.0.0.1:2222');
  });
  it('upserting refuses an entry that would not resolve', () => {
    assert.throws(
      () => upsertConnection([], { name: 'E', surface: 'emulator', baseUrl: 'nope' }),
      inputError('bad_connection', /"E"/),
    );
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
  it('a ComfyUI server is probed on its own /system_stats (every ComfyUI serves it), the others on /api/v2/health', async () => {
    assert.equal(healthPathOf('comfyui'), '/system_stats');
    assert.equal(healthPathOf('v2'), '/api/v2/health');
    const comfyui = emulator().comfyuiUrl!;
    const health = await probeHealth({ baseUrl: comfyui, path: healthPathOf('comfyui') });
    assert.equal(health.state, 'ok');
    // Its /api/v2/health is not a ComfyUI route: the probe of another API would read it as unsupported.
    assert.equal((await probeHealth({ baseUrl: comfyui })).state, 'unsupported');
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
      assert.deepEqual(
        server.seen.map((s) => `${s.method} ${s.url}`),
        ['GET /api/v2/health'],
      );
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
      assert.deepEqual(
        server.seen.map((s) => s.url),
        ['/api/v2/health'],
      );
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
    assert.deepEqual(healthFromRequest({ ...entry, error: 'ECONNREFUSED' }), {
      state: 'unreachable',
      detail: 'last request: no answer (ECONNREFUSED)',
    });
  });
});

describe("health: one connection's health from its probes and its requests (ConnectionHealth)", () => {
  const request = (fields: { status?: number; error?: string }) => ({
    method: 'GET',
    url: 'http://127.0.0.1:1/api/v2/jobs/j1',
    durationMs: 2,
    ...fields,
  });
  const down = { state: 'unreachable', detail: 'health probe: no answer (ECONNREFUSED)' } as const;
  const probed = (
    tracker: ConnectionHealth,
    health: { state: 'ok' | 'unreachable' | 'unsupported' | 'error' | 'unauthorized'; detail: string },
  ) => tracker.probeDone(tracker.probeStarted(), health);

  it('rule: the first answer of ANY request of a connection shown unreachable turns it ok at once (not at the next probe)', () => {
    const tracker = new ConnectionHealth();
    probed(tracker, down);
    assert.equal(tracker.health?.state, 'unreachable');
    const change = tracker.requestDone(request({ status: 200 }));
    assert.deepEqual(change, {
      before: 'unreachable',
      health: { state: 'ok', detail: 'last request: 200' },
      changed: true,
      probe: false,
    });
    assert.equal(tracker.health?.state, 'ok');
  });

  it('rule: any answer below 500 is the server answering (a 404 of one job too); a connection failing with 5xx turns ok the same way', () => {
    const tracker = new ConnectionHealth();
    probed(tracker, { state: 'error', detail: 'health probe: 503' });
    assert.equal(tracker.requestDone(request({ status: 404 })).health?.state, 'ok');
    const unknown = new ConnectionHealth();
    assert.equal(
      unknown.requestDone(request({ status: 200 })).health?.state,
      'ok',
      'an answer before the first probe ends shows reachable too',
    );
  });

  it('rule: a request with no answer, or a 5xx, asks for a probe now and changes nothing by itself (where the surface has a probe)', () => {
    const tracker = new ConnectionHealth();
    probed(tracker, { state: 'ok', detail: 'health probe: 200' });
    assert.deepEqual(tracker.requestDone(request({ error: 'ECONNREFUSED' })), {
      before: 'ok',
      health: { state: 'ok', detail: 'health probe: 200' },
      changed: false,
      probe: true,
    });
    assert.equal(tracker.requestDone(request({ status: 502 })).probe, true);
    assert.equal(tracker.requestDone(request({ status: 200 })).probe, false);
  });

  it('rule: a probe that says down is dropped when a request was answered after the probe began (the newer answer stands)', () => {
    const tracker = new ConnectionHealth();
    probed(tracker, down);
    const ticket = tracker.probeStarted();
    tracker.requestDone(request({ status: 200 }));
    const change = tracker.probeDone(ticket, down);
    assert.equal(change.changed, false);
    assert.equal(tracker.health?.state, 'ok');
    // A probe begun after that answer says what it sees.
    assert.equal(probed(tracker, down).health?.state, 'unreachable');
  });

  it('rule: where the surface has no probe (404), the last request is the health: unsupported until one is made', () => {
    const tracker = new ConnectionHealth();
    assert.equal(
      probed(tracker, { state: 'unsupported', detail: 'health probe: not served here (404)' }).health?.state,
      'unsupported',
    );
    assert.equal(tracker.probeServed, false);
    assert.deepEqual(tracker.requestDone(request({ error: 'ECONNREFUSED' })), {
      before: 'unsupported',
      health: { state: 'unreachable', detail: 'last request: no answer (ECONNREFUSED)' },
      changed: true,
      probe: false,
    });
    assert.equal(tracker.requestDone(request({ status: 200 })).health?.state, 'ok');
    // The next probe (still not served) leaves the request's word.
    assert.equal(
      probed(tracker, { state: 'unsupported', detail: 'health probe: not served here (404)' }).health?.state,
      'ok',
    );
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
