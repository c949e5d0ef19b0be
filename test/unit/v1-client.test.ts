/**
 * The v1 client's REST rules (Cloud API v1 (deprecated): Endpoints, Authentication, Errors) against small
 * hostile `node:http` + `ws` servers on loopback.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ComfyError, InvalidWorkflowError, NotFoundError, ResponseTooLargeError } from '../../src/core';
import { UndiciEngine } from '../../src/core/http/undiciEngine';
import { V1Client, V1PromptError, jobOfV1 } from '../../src/core/v1';
import { readBody, sendJson, startV1Server, type V1TestServer } from './v1Server';
import { pushEndlessly, startServer, type TestServer } from './httpServer';
import { CountingEngine } from './engines';
import { tempDir } from './tmp';

const KEY = 'v1-secret-key';
const WORKFLOW = {
  '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 16711680 } },
  '3': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'fixture' } },
};

/** The multipart form a request carried, parsed by the platform's own parser. */
async function formOf(req: import('node:http').IncomingMessage, body: Buffer): Promise<FormData> {
  return new Response(body, { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
}

describe('v1 client REST (Cloud API v1 (deprecated))', () => {
  let server: V1TestServer;
  let client: V1Client;
  const bodies: { url: string; contentType: string | undefined; body: Buffer; form?: FormData; json?: unknown }[] = [];
  let answer: (
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
    body: Buffer,
  ) => boolean = () => false;

  before(async () => {
    server = await startV1Server((req, res) => {
      void readBody(req).then(async (body) => {
        const contentType = req.headers['content-type'];
        const entry: (typeof bodies)[number] = { url: req.url ?? '', contentType, body };
        if (contentType?.startsWith('multipart/form-data')) entry.form = await formOf(req, body);
        if (contentType === 'application/json') entry.json = JSON.parse(body.toString('utf8'));
        bodies.push(entry);
        if (answer(req, res, body)) return;
        sendJson(res, 404, { code: 'not_found', message: 'no route' });
      });
    });
    client = new V1Client({ baseUrl: server.origin, apiKey: KEY });
  });
  after(async () => {
    await client.close();
    await server.close();
  });
  beforeEach(() => {
    bodies.length = 0;
    server.seen.length = 0;
    answer = () => false;
  });

  it('REST calls carry X-API-Key and never Authorization', async () => {
    answer = (req, res) =>
      req.url === '/api/job/p1/status' ? (sendJson(res, 200, { status: 'executing' }), true) : false;
    const status = await client.status('p1');
    assert.equal(status.status, 'executing');
    assert.equal(server.seen[0].headers['x-api-key'], KEY);
    assert.equal(server.seen[0].headers.authorization, undefined);
  });

  it('objectInfo() is GET /api/object_info: the node definitions map', async () => {
    answer = (req, res) =>
      req.url === '/api/object_info'
        ? (sendJson(res, 200, { EmptyImage: { input: { required: {} }, output: ['IMAGE'] }, Odd: 'not a definition' }),
          true)
        : false;
    const info = await client.objectInfo();
    assert.deepEqual(Object.keys(info), ['EmptyImage']);
    assert.deepEqual(info.EmptyImage.output, ['IMAGE']);
  });

  it('objectInfo(class) uses GET /api/object_info/{class} where the server serves it', async () => {
    answer = (req, res) =>
      req.url === '/api/object_info/Save%20Image'
        ? (sendJson(res, 200, { 'Save Image': { output_node: true } }), true)
        : false;
    const info = await client.objectInfo('Save Image');
    assert.deepEqual(info, { 'Save Image': { output_node: true } });
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/api/object_info/Save%20Image'],
    );
  });

  it('objectInfo(class) filters the whole map when the per-class endpoint answers 404', async () => {
    answer = (req, res) =>
      req.url === '/api/object_info' ? (sendJson(res, 200, { A: { name: 'A' }, B: { name: 'B' } }), true) : false;
    assert.deepEqual(await client.objectInfo('B'), { B: { name: 'B' } });
    assert.deepEqual(await client.objectInfo('Missing'), {});
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/api/object_info/B', '/api/object_info', '/api/object_info/Missing', '/api/object_info'],
    );
  });

  it('objectInfo(class) also falls back to the whole map when the per-class route answers a web page (200, not JSON)', async () => {
    answer = (req, res) => {
      if (req.url === '/api/object_info') return (sendJson(res, 200, { A: { name: 'A' } }), true);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>app</title>');
      return true;
    };
    assert.deepEqual(await client.objectInfo('A'), { A: { name: 'A' } });
  });

  it('an object_info body over the cap is response_too_large and not read whole: at most the cap and one chunk is read', async () => {
    const cap = 64 * 1024;
    const counting = new CountingEngine(new UndiciEngine());
    const small = new V1Client({ baseUrl: server.origin, apiKey: KEY, maxObjectInfoBytes: cap, engine: counting });
    answer = (req, res) => {
      if (req.url !== '/api/object_info') return false;
      res.writeHead(200, { 'content-type': 'application/json' }); // no Content-Length: the cap is met while reading
      res.write('{"A":{"description":"');
      pushEndlessly(res, Buffer.alloc(64 * 1024, 'x'), 64 * 1024 * 1024); // far past the cap: an endless body
      return true;
    };
    try {
      await assert.rejects(
        small.objectInfo(),
        (err: unknown) => ResponseTooLargeError.is(err) && err.code === 'response_too_large',
      );
    } finally {
      await small.close();
      await counting.close();
    }
    assert.ok(counting.pulled > cap, `only ${counting.pulled} bytes read: the cap was not what stopped the read`);
    assert.ok(
      counting.pulled <= cap + 512 * 1024,
      `${counting.pulled} bytes read from an endless object_info body with a cap of ${cap}`,
    );
  });

  it('uploadImage sends a multipart form from the encoder: image (the file), type, overwrite as "true"/"false"; the boundary is the encoder\'s', async () => {
    const dir = tempDir('v1up-');
    const file = path.join(dir, 'photo.png');
    fs.writeFileSync(file, Buffer.from('PNGDATA'));
    answer = (req, res) =>
      req.url === '/api/upload/image'
        ? (sendJson(res, 200, { name: 'photo.png', subfolder: '', type: 'input' }), true)
        : false;
    const result = await client.uploadImage(file, { type: 'temp', overwrite: true });
    assert.deepEqual(result, { name: 'photo.png', subfolder: '', type: 'input' });
    const sent = bodies[0];
    assert.match(String(sent.contentType), /^multipart\/form-data; boundary=/);
    assert.equal(sent.form?.get('type'), 'temp');
    assert.equal(sent.form?.get('overwrite'), 'true');
    const image = sent.form?.get('image') as File;
    assert.equal(image.name, 'photo.png');
    assert.equal(Buffer.from(await image.arrayBuffer()).toString(), 'PNGDATA');
    assert.equal(server.seen[0].headers['x-api-key'], KEY);

    await client.uploadImage(file);
    assert.equal(bodies[1].form?.get('type'), 'input');
    assert.equal(bodies[1].form?.get('overwrite'), 'false');
  });

  it('uploadMask sends the mask as image with original_ref, a JSON file reference', async () => {
    const dir = tempDir('v1mask-');
    const file = path.join(dir, 'mask.png');
    fs.writeFileSync(file, Buffer.from('MASK'));
    answer = (req, res) =>
      req.url === '/api/upload/mask'
        ? (sendJson(res, 200, { name: 'mask.png', subfolder: 'clipspace', metadata: { is_mask: true } }), true)
        : false;
    const result = await client.uploadMask(file, { filename: 'photo.png', subfolder: '', type: 'input' });
    assert.equal(result.name, 'mask.png');
    const form = bodies[0].form!;
    assert.deepEqual(JSON.parse(String(form.get('original_ref'))), {
      filename: 'photo.png',
      subfolder: '',
      type: 'input',
    });
    assert.equal(form.get('type'), 'input');
    assert.equal((form.get('image') as File).name, 'mask.png');
  });

  it('an upload answer is checked: one without a name is bad_response', async () => {
    const dir = tempDir('v1bad-');
    const file = path.join(dir, 'a.png');
    fs.writeFileSync(file, 'x');
    answer = (req, res) => (req.url === '/api/upload/image' ? (sendJson(res, 200, { subfolder: '' }), true) : false);
    await assert.rejects(client.uploadImage(file), (err: unknown) => ComfyError.is(err) && err.code === 'bad_response');
  });

  it('an upload of a path that is not a file is refused before any request', async () => {
    await assert.rejects(
      client.uploadImage(tempDir('v1dir-')),
      (err: unknown) => ComfyError.is(err) && err.code === 'not_a_file',
    );
    assert.equal(server.seen.length, 0);
  });

  it('submit posts {prompt} with no extra_data when there is no partner key, and JSON content', async () => {
    answer = (req, res) =>
      req.url === '/api/prompt' ? (sendJson(res, 200, { prompt_id: 'p-1', number: 3, node_errors: {} }), true) : false;
    const sub = await client.submit(WORKFLOW);
    assert.equal(sub.promptId, 'p-1');
    assert.equal(sub.number, 3);
    assert.deepEqual(bodies[0].json, { prompt: WORKFLOW });
    assert.equal(bodies[0].contentType, 'application/json');
  });

  it('submit sends the partner key as extra_data.api_key_svc_org', async () => {
    answer = (req, res) => (req.url === '/api/prompt' ? (sendJson(res, 200, { prompt_id: 'p-2' }), true) : false);
    await client.submit(WORKFLOW, { partnerKey: 'partner-k' });
    assert.deepEqual((bodies[0].json as { extra_data: unknown }).extra_data, { api_key_svc_org: 'partner-k' });
  });

  it('submit removes a top-level $schema string before the API-format check and the POST', async () => {
    answer = (req, res) => (req.url === '/api/prompt' ? (sendJson(res, 200, { prompt_id: 'p-3' }), true) : false);
    const withSchema = { $schema: 'comfy-workflow:/schema.json', ...WORKFLOW };
    await client.submit(withSchema);
    assert.deepEqual((bodies[0].json as { prompt: unknown }).prompt, WORKFLOW);
    assert.equal(withSchema.$schema, 'comfy-workflow:/schema.json', "the caller's object is not changed");
  });

  it('a UI-format workflow is refused before any request', async () => {
    await assert.rejects(
      client.submit({ nodes: [], links: [] }),
      (err: unknown) => ComfyError.is(err) && err.code === 'workflow_format_ui',
    );
    assert.equal(server.seen.length, 0);
  });

  it("an answer with error instead of prompt_id (HTTP 400) is an invalid_workflow error carrying the engine's node_errors in v2's shape, never a job", async () => {
    answer = (req, res) => {
      if (req.url !== '/api/prompt') return false;
      sendJson(res, 400, {
        error: {
          type: 'prompt_outputs_failed_validation',
          message: 'Prompt outputs failed validation',
          details: '',
          extra_info: {},
        },
        node_errors: {
          '1': {
            errors: [
              {
                type: 'value_smaller_than_min',
                message: 'Value 0 smaller than min of 1',
                details: 'width',
                extra_info: { input_name: 'width' },
              },
            ],
            class_type: 'EmptyImage',
            dependent_outputs: ['3'],
          },
        },
      });
      return true;
    };
    await assert.rejects(client.submit(WORKFLOW), (err: unknown) => {
      assert.ok(V1PromptError.is(err) && InvalidWorkflowError.is(err));
      assert.equal(err.code, 'invalid_workflow');
      assert.equal(err.status, 400);
      assert.equal(err.engineType, 'prompt_outputs_failed_validation');
      assert.deepEqual(err.nodeErrors, [
        { nodeId: '1', field: 'width', classType: 'EmptyImage', reason: 'Value 0 smaller than min of 1: width' },
      ]);
      return true;
    });
  });

  it('an answer with error instead of prompt_id is an error even with HTTP 200', async () => {
    answer = (req, res) =>
      req.url === '/api/prompt' ? (sendJson(res, 200, { error: 'no output nodes', node_errors: {} }), true) : false;
    await assert.rejects(
      client.submit(WORKFLOW),
      (err: unknown) =>
        V1PromptError.is(err) &&
        err.code === 'invalid_workflow' &&
        err.message === 'no output nodes' &&
        err.status === 200,
    );
  });

  it('an error status of another kind keeps its code and class (a 404 is NotFoundError)', async () => {
    await assert.rejects(client.status('nope'), (err: unknown) => NotFoundError.is(err) && err.code === 'not_found');
  });

  it('outputs are confirmed by GET /api/jobs/{prompt_id}; only final files (type output) count', async () => {
    answer = (req, res) => {
      if (req.url !== '/api/jobs/p-4') return false;
      sendJson(res, 200, {
        id: 'p-4',
        status: 'completed',
        outputs: {
          '3': {
            images: [
              { filename: 'a.png', subfolder: '', type: 'output' },
              { filename: 'prev.png', subfolder: '', type: 'temp' },
            ],
          },
        },
      });
      return true;
    };
    const confirmed = await client.outputs('p-4');
    assert.equal(confirmed?.source, 'jobs');
    assert.deepEqual(
      confirmed?.outputs.map((o) => o.name),
      ['a.png'],
    );
    const url = new URL(String(confirmed?.outputs[0].url));
    assert.equal(url.pathname, '/api/view');
    assert.deepEqual(Object.fromEntries(url.searchParams), { filename: 'a.png', subfolder: '', type: 'output' });
  });

  it('where GET /api/jobs/{prompt_id} answers 404, outputs come from GET /api/history_v2/{prompt_id}', async () => {
    answer = (req, res) => {
      if (req.url !== '/api/history_v2/p-5') return false;
      sendJson(res, 200, {
        'p-5': {
          outputs: { '9': { images: [{ filename: 'h.png', subfolder: '', type: 'output' }] } },
          status: { status_str: 'success' },
        },
      });
      return true;
    };
    const confirmed = await client.outputs('p-5');
    assert.equal(confirmed?.source, 'history');
    assert.deepEqual(
      confirmed?.outputs.map((o) => [o.nodeId, o.name]),
      [['9', 'h.png']],
    );
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/api/jobs/p-5', '/api/history_v2/p-5'],
    );
  });

  it('where both answer 404, there is no confirmation (undefined)', async () => {
    assert.equal(await client.outputs('p-6'), undefined);
  });

  it("job(id) is the status mapped to v2 and, once terminal, the confirmed outputs and the engine's failure", async () => {
    answer = (req, res) => {
      if (req.url === '/api/job/p-8/status')
        return (sendJson(res, 200, { status: 'error', error_message: 'boom' }), true);
      if (req.url === '/api/jobs/p-8') {
        sendJson(res, 200, {
          id: 'p-8',
          status: 'failed',
          outputs: { '3': { images: [{ filename: 'partial.png', subfolder: '', type: 'output' }] } },
          execution_error: {
            exception_type: 'RuntimeError',
            exception_message: 'out of memory',
            node_id: '3',
            node_type: 'SaveImage',
          },
        });
        return true;
      }
      if (req.url === '/api/job/p-9/status') return (sendJson(res, 200, { status: 'queued_waiting' }), true);
      return false;
    };
    const failed = await client.job('p-8');
    assert.deepEqual(
      [failed.job.status, failed.job.error?.message, failed.job.outputs.map((o) => o.name)],
      ['failed', 'RuntimeError: out of memory', ['partial.png']],
    );
    server.seen.length = 0;
    const queued = await client.job('p-9');
    assert.equal(queued.job.status, 'queued');
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/api/job/p-9/status'],
      'outputs are asked for only once terminal',
    );
  });

  it('interrupt posts /api/interrupt with the prompt_id (the local engine stops only that prompt)', async () => {
    answer = (req, res) => (req.url === '/api/interrupt' ? (res.writeHead(200).end(), true) : false);
    await client.interrupt('p-10');
    assert.deepEqual(bodies[0].json, { prompt_id: 'p-10' });
    assert.equal(server.seen[0].headers['x-api-key'], KEY);
  });

  it('cancel posts /api/queue {delete: [prompt_id]} (public OpenAPI; pending jobs)', async () => {
    answer = (req, res) => (req.url === '/api/queue' ? (sendJson(res, 200, { deleted: ['p-7'] }), true) : false);
    assert.deepEqual(await client.cancel('p-7'), ['p-7']);
    assert.deepEqual(bodies[0].json, { delete: ['p-7'] });
  });
});

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
