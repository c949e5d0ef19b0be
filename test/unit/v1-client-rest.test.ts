/**
 * The v1 client's REST rules (Cloud API v1 (deprecated): Endpoints, Authentication, Errors) against small hostile
 * `node:http` servers on loopback.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ComfyError, InvalidWorkflowError, NotFoundError, ResponseTooLargeError } from '../../src/core';
import { UndiciEngine } from '../../src/core/http/undiciEngine';
import { V1Client, V1PromptError } from '../../src/core/v1';
import { CountingEngine } from './engines';
import { pushEndlessly } from './httpServer';
import { tempDir } from './tmp';
import { KEY, WORKFLOW, formOf } from './v1-client.fixtures';
import { readBody, sendJson, startV1Server, type V1TestServer } from './v1Server';

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
