/**
 * The v1 client's downloads through /api/view (Cloud API v1 (deprecated), Endpoints, rule 2) and its WebSocket
 * connection (Endpoints /ws and rule 3, Authentication rule 2), against small hostile `node:http` + `ws` servers on
 * loopback.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ComfyError } from '../../src/core';
import { V1Client, jobOfV1 } from '../../src/core/v1';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';
import { KEY } from './v1-client.fixtures';
import { sendJson, startV1Server, type V1TestServer } from './v1Server';

describe('v1 downloads through /api/view (Cloud API v1 (deprecated), Endpoints, rule 2)', () => {
  let api: V1TestServer;
  let signed: TestServer;
  let client: V1Client;
  before(async () => {
    signed = await startServer((req, res) => {
      // The signed origin refuses credentials (as the emulator's does).
      if (req.headers['x-api-key'] || req.headers.authorization) {
        sendJson(res, 400, { error: 'credentials sent to the signed URL' });
        return;
      }
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 4 });
      res.end('PNG!');
    });
    api = await startV1Server((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/api/view' && url.searchParams.get('filename') === 'same.png') {
        res.writeHead(302, { location: '/same-origin-signed?sig=1' });
        res.end();
        return;
      }
      if (url.pathname === '/api/view') {
        res.writeHead(302, { location: `${signed.origin}/signed/${url.searchParams.get('filename')}?sig=abc` });
        res.end();
        return;
      }
      if (url.pathname === '/same-origin-signed') {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': 4 });
        res.end('SAME');
        return;
      }
      sendJson(res, 404, {});
    });
    client = new V1Client({ baseUrl: api.origin, apiKey: KEY });
  });
  after(async () => {
    await client.close();
    await api.close();
    await signed.close();
  });

  it('an output is downloaded through GET /api/view (filename, subfolder, type=output) with the key, and its 302 followed with no credential header', async () => {
    const dir = tempDir('v1dl-');
    const outputs = client.jobOutputs([
      { nodeId: '3', kind: 'images', ref: { filename: 'fixture_00001_.png', subfolder: '', type: 'output' } },
    ]);
    const snap = jobOfV1({ promptId: 'p-1', v1Status: 'success', outputs });
    const files = await client.downloadOutputs(snap, dir);
    assert.equal(files.length, 1);
    assert.equal(path.basename(files[0].path), 'fixture_00001_.png');
    assert.equal(fs.readFileSync(files[0].path, 'utf8'), 'PNG!');
    const view = api.seen.find((s) => s.url.startsWith('/api/view'))!;
    assert.deepEqual(Object.fromEntries(new URL(view.url, 'http://x').searchParams), {
      filename: 'fixture_00001_.png',
      subfolder: '',
      type: 'output',
    });
    assert.equal(view.headers['x-api-key'], KEY);
    assert.equal(signed.seen.length, 1);
    assert.equal(signed.seen[0].headers['x-api-key'], undefined);
    assert.equal(signed.seen[0].headers.authorization, undefined);
    assert.deepEqual(fs.readdirSync(dir), ['fixture_00001_.png'], 'no partial file left behind');
  });

  it("a 302 to the API's own origin is followed with no credential header either", async () => {
    const dir = tempDir('v1same-');
    const outputs = client.jobOutputs([
      { nodeId: '3', kind: 'images', ref: { filename: 'same.png', subfolder: '', type: 'output' } },
    ]);
    const snap = jobOfV1({ promptId: 'p-s', v1Status: 'success', outputs });
    const [file] = await client.downloadOutputs(snap, dir);
    assert.equal(fs.readFileSync(file.path, 'utf8'), 'SAME');
    const followed = api.seen.find((s) => s.url.startsWith('/same-origin-signed'))!;
    assert.equal(followed.headers['x-api-key'], undefined);
    assert.equal(followed.headers.authorization, undefined);
  });

  it('a hostile output name is made safe and lands inside the folder', async () => {
    const dir = tempDir('v1dl2-');
    const outputs = client.jobOutputs([
      { nodeId: '3', kind: 'images', ref: { filename: '../../evil.png', subfolder: '', type: 'output' } },
    ]);
    const snap = jobOfV1({ promptId: 'p-2', v1Status: 'success', outputs });
    const [file] = await client.downloadOutputs(snap, dir);
    assert.equal(path.dirname(file.path), path.resolve(dir));
    assert.equal(path.basename(file.path), 'evil.png');
  });

  it('an output whose URL is on another origin is refused, never fetched with the key', async () => {
    const snap = jobOfV1({
      promptId: 'p-3',
      v1Status: 'success',
      outputs: [
        {
          id: 'x',
          nodeId: '3',
          name: 'x.png',
          type: 'image',
          contentType: 'image/png',
          sizeBytes: null,
          hash: null,
          url: `${signed.origin}/steal`,
        },
      ],
    });
    const before = signed.seen.length;
    await assert.rejects(
      client.downloadOutputs(snap, tempDir('v1dl3-')),
      (err: unknown) => ComfyError.is(err) && err.code === 'unsafe_url',
    );
    assert.equal(signed.seen.length, before);
  });
});

describe('v1 WebSocket connection (Cloud API v1 (deprecated): Endpoints /ws and rule 3, Authentication rule 2)', () => {
  let server: V1TestServer;
  let client: V1Client;
  /** Told the first message of each new socket. */
  let onFirstMessage: (text: string, ws: import('ws').WebSocket) => void = () => undefined;
  before(async () => {
    server = await startV1Server((_req, res) => sendJson(res, 404, {}), {
      onSocket: (ws) => ws.once('message', (data) => onFirstMessage(String(data), ws)),
    });
    client = new V1Client({ baseUrl: `${server.origin}/prefix`, apiKey: KEY });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('the socket is /ws under the base URL with a fresh UUID clientId per connection and the key as token, never a credential header', async () => {
    const a = await client.connect();
    const b = await client.connect();
    a.close();
    b.close();
    assert.equal(server.sockets.length, 2);
    for (const s of server.sockets) {
      assert.equal(s.url.pathname, '/prefix/ws');
      assert.equal(s.url.searchParams.get('token'), KEY);
      assert.match(
        String(s.url.searchParams.get('clientId')),
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      assert.equal(s.headers.authorization, undefined);
      assert.equal(s.headers['x-api-key'], undefined);
      assert.equal(s.headers.origin, undefined, 'no Origin: the local engine refuses a foreign one');
    }
    assert.notEqual(
      server.sockets[0].url.searchParams.get('clientId'),
      server.sockets[1].url.searchParams.get('clientId'),
    );
    assert.equal(a.clientId, server.sockets[0].url.searchParams.get('clientId'));
  });

  it('the first text message declares the preview-metadata feature flag, sent before open resolves', async () => {
    const first = new Promise<string>((resolve) => (onFirstMessage = resolve));
    const socket = await client.connect();
    const text = await first;
    socket.close();
    assert.deepEqual(JSON.parse(text), { type: 'feature_flags', data: { supports_preview_metadata: true } });
  });

  it('truncated binary frames are counted and dropped; the frames after them still arrive', async () => {
    const socket = await client.connect();
    const kinds: string[] = [];
    const got = new Promise<void>((resolve) =>
      socket.listen((m) => {
        kinds.push(m.kind);
        if (m.kind === 'json') resolve();
      }),
    );
    await server.broadcast(Buffer.from([0, 0, 0, 1, 0, 0]));
    await server.broadcast(Buffer.from([0, 0, 0, 3, 0, 0, 0, 9, 0x41]));
    await server.broadcast(Buffer.from([0, 0, 0, 2]));
    await server.broadcast({ type: 'status', data: { queue_remaining: 0 } });
    await got;
    socket.close();
    assert.equal(socket.malformedFrames, 2);
    assert.deepEqual(kinds, ['unknown', 'json']);
  });

  it('messages that arrive before anyone listens are kept in a bounded backlog: the latest 512, the rest counted as dropped', async () => {
    const sent = new Promise<void>((resolve) => {
      onFirstMessage = (_text, ws) => {
        for (let i = 0; i < 600; i++) ws.send(JSON.stringify({ type: 'status', data: { n: i } }));
        ws.close(1000, 'done');
        resolve();
      };
    });
    const socket = await client.connect();
    await sent;
    // The close comes after every message (one ordered connection): once closed, all 600 have been received.
    await new Promise<void>((resolve) => socket.onClose(() => resolve()));
    const got: number[] = [];
    socket.listen((m) => (m.kind === 'json' ? got.push(Number(m.data.n)) : undefined));
    assert.equal(got.length, 512);
    assert.equal(got[0], 88);
    assert.equal(got.at(-1), 599);
    assert.equal(socket.droppedMessages, 88);
  });

  it('a refused handshake is an ApiError with its status (no retry in a tight loop here)', async () => {
    const refusing = await startV1Server((_req, res) => sendJson(res, 404, {}), { upgrade: () => ({ status: 401 }) });
    const c = new V1Client({ baseUrl: refusing.origin, apiKey: KEY });
    try {
      await assert.rejects(c.connect(), (err: unknown) => ComfyError.is(err) && err.code === 'unauthorized');
    } finally {
      await c.close();
      await refusing.close();
    }
  });
});
