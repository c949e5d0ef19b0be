/**
 * The model router's catalog and ids (Model router API, GET /v1/models, and Resources and their fields, value types).
 */
import * as assert from 'node:assert/strict';
import { InputError, ResponseShapeError } from '../../src/core';
import {
  RouterClient,
  billingOf,
  inputSchemaUrlOf,
  parseModelId,
  servedLimit,
  type ModelEntry,
} from '../../src/core/router';
import { startServer, type TestServer } from './httpServer';

const entry = (id: string, billing?: unknown): Record<string, unknown> => {
  const [provider, model] = id.split('/');
  return billing === undefined
    ? { id, provider, model }
    : { id, provider, model, billing: { charges_on_policy_rejection: billing } };
};

/** A catalog of pages keyed by cursor ('' is the first page). */
function catalogServer(
  pages: Record<string, { data: unknown[]; has_more?: boolean; next_cursor?: string; limit?: number }>,
): Promise<TestServer> {
  return startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const page = pages[url.searchParams.get('cursor') ?? ''];
    res.setHeader('x-svc-request-id', `req-${url.searchParams.get('cursor') ?? 'first'}`);
    res.setHeader('content-type', 'application/json');
    if (!page) {
      res.statusCode = 400;
      res.setHeader('x-svc-error-type', 'invalid_input');
      res.end(JSON.stringify({ detail: 'malformed or expired cursor', error_type: 'invalid_input' }));
      return;
    }
    res.end(JSON.stringify(page));
  });
}

async function collect(client: RouterClient, limit?: number): Promise<ModelEntry[]> {
  const all: ModelEntry[] = [];
  for await (const e of client.models({ limit })) all.push(e);
  return all;
}

describe('router catalog', () => {
  let server: TestServer | undefined;
  let client: RouterClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('rule: the iterator keeps paging while has_more, also past a short and an EMPTY page, each entry once in the order served', async () => {
    server = await catalogServer({
      '': { data: [entry('b/two'), entry('a/one')], has_more: true, next_cursor: 'c1', limit: 2 },
      c1: { data: [], has_more: true, next_cursor: 'c2', limit: 2 },
      c2: { data: [entry('c/three')], has_more: true, next_cursor: 'c3', limit: 2 },
      c3: { data: [entry('a/one'), entry('d/four')], has_more: false, limit: 2 },
    });
    client = new RouterClient({ baseUrl: server.origin });
    const ids = (await collect(client, 2)).map((e) => e.id);
    assert.deepEqual(ids, ['b/two', 'a/one', 'c/three', 'd/four']);
    assert.deepEqual(
      server.seen.map((s) => s.url),
      [
        '/v1/models?limit=2',
        '/v1/models?cursor=c1&limit=2',
        '/v1/models?cursor=c2&limit=2',
        '/v1/models?cursor=c3&limit=2',
      ],
    );
  });

  it('rule: has_more without a next_cursor, or a cursor given twice, ends the listing with an error instead of looping', async () => {
    server = await catalogServer({
      '': { data: [], has_more: true, next_cursor: 'c1' },
      c1: { data: [entry('a/one')], has_more: true, next_cursor: 'c1' },
    });
    client = new RouterClient({ baseUrl: server.origin });
    await assert.rejects(
      collect(client),
      (e: unknown) => ResponseShapeError.is(e) && /cursor it had given before/.test(e.message),
    );
    assert.equal(server.seen.length, 2);
  });

  it('rule: limit is sent as given and the served size is read from the echo (above 100 served as 100; 0 or negative: 20)', async () => {
    server = await startServer((req, res) => {
      const asked = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('limit') ?? '20');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: [], has_more: false, limit: servedLimit(asked) }));
    });
    client = new RouterClient({ baseUrl: server.origin });
    assert.equal((await client.listModels({ limit: 500 })).limit, 100);
    assert.equal((await client.listModels({ limit: 0 })).limit, 20);
    assert.equal((await client.listModels({ limit: -3 })).limit, 20);
    assert.equal((await client.listModels({ limit: 7 })).limit, 7);
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/v1/models?limit=500', '/v1/models?limit=0', '/v1/models?limit=-3', '/v1/models?limit=7'],
    );
    assert.deepEqual(
      [servedLimit(undefined), servedLimit(101), servedLimit(100), servedLimit(0), servedLimit(-1)],
      [20, 100, 100, 20, 20],
    );
  });

  it('rule: a page without an echoed limit reports the size the document says is served', async () => {
    server = await catalogServer({ '': { data: [], has_more: false } });
    client = new RouterClient({ baseUrl: server.origin });
    assert.equal((await client.listModels({ limit: 250 })).limit, 100);
  });

  it('rule: a malformed cursor, model id or non-integer limit is refused before any request, naming the problem and the fix', async () => {
    server = await catalogServer({});
    client = new RouterClient({ baseUrl: server.origin });
    const c = client;
    const bad = (code: string, re: RegExp) => (e: unknown) => InputError.is(e) && e.code === code && re.test(e.message);
    await assert.rejects(c.listModels({ cursor: '' }), bad('bad_cursor', /empty.*next_cursor/));
    await assert.rejects(c.listModels({ cursor: 'a'.repeat(513) }), bad('bad_cursor', /513 characters, at most 512/));
    await assert.rejects(c.listModels({ cursor: 'abc def' }), bad('bad_cursor', /characters outside/));
    await assert.rejects(c.listModels({ cursor: 'abc?x=1' }), bad('bad_cursor', /characters outside/));
    await assert.rejects(c.listModels({ limit: 2.5 }), bad('bad_limit', /not an integer/));
    await assert.rejects(c.getModel('Acme/model'), bad('bad_model_id', /lowercase/));
    await assert.rejects(c.getModel('acme'), bad('bad_model_id', /1 segment/));
    await assert.rejects(c.getModel('a/b/c/d'), bad('bad_model_id', /4 segment/));
    await assert.rejects(
      c.getModel(`${'p'.repeat(65)}/m`),
      bad('bad_model_id', /provider segment has 65 characters, at most 64/),
    );
    await assert.rejects(
      c.getModel(`p/${'m'.repeat(129)}`),
      bad('bad_model_id', /model segment has 129 characters, at most 128/),
    );
    await assert.rejects(c.getModel('acme/model/Variant'), bad('bad_model_id', /variant segment/));
    await assert.rejects(c.getModel('acme/mo--del'), bad('bad_model_id', /does not match/));
    await assert.rejects(c.getModel('acme/../x'), bad('bad_model_id', /does not match/));
    await assert.rejects(c.run('acme//x', '{}', { idempotencyKey: 'k' }), bad('bad_model_id', /empty/));
    await assert.rejects(c.getInputSchema('acme/x%2f'), bad('bad_model_id', /does not match/));
    assert.equal(server.seen.length, 0);
    // Accepted at the bounds.
    assert.deepEqual(parseModelId(`${'p'.repeat(64)}/${'m'.repeat(128)}`).provider.length, 64);
    assert.deepEqual(parseModelId('acme.ai/image-gen_2/hd'), {
      provider: 'acme.ai',
      model: 'image-gen_2',
      variant: 'hd',
    });
  });

  it('rule: a variant is sent as a third path segment, and a valid cursor is round-tripped as given', async () => {
    server = await startServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        req.url?.startsWith('/router/v1/models?')
          ? JSON.stringify({ data: [], has_more: false, limit: 20 })
          : JSON.stringify(entry('acme/gen')),
      );
    });
    client = new RouterClient({ baseUrl: `${server.origin}/router` });
    await client.getModel('acme/gen/hd');
    await client.listModels({ cursor: 'Ab9._~+/=-x' });
    assert.equal(server.seen[0].url, '/router/v1/models/acme/gen/hd');
    assert.equal(new URL(server.seen[1].url, 'http://x').searchParams.get('cursor'), 'Ab9._~+/=-x');
  });

  it('rule: the billing note is yes, no or unknown (anything else, or none, is unknown); detail keeps input_schema_url', async () => {
    server = await startServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-svc-request-id', 'rid-detail');
      if (req.url === '/v1/models') {
        res.end(
          JSON.stringify({
            data: [
              entry('a/yes', 'yes'),
              entry('a/no', 'no'),
              entry('a/odd', 'maybe'),
              entry('a/num', 3),
              entry('a/none'),
            ],
            has_more: false,
            limit: 20,
          }),
        );
      } else {
        res.end(JSON.stringify({ ...entry('a/one'), input_schema_url: 'https://elsewhere.example/s.json', extra: 1 }));
      }
    });
    client = new RouterClient({ baseUrl: server.origin });
    const page = await client.listModels();
    assert.deepEqual(page.entries.map(billingOf), ['yes', 'no', 'unknown', 'unknown', 'unknown']);
    const detail = await client.getModel('a/one');
    assert.equal(detail.model.input_schema_url, 'https://elsewhere.example/s.json');
    assert.equal(detail.requestId, 'rid-detail');
    assert.equal(page.hasMore, false);
  });

  it('rule: read tolerantly, keep what is not known: the page and the detail keep every field as served (unknown ones, odd values), only their reading is interpreted', async () => {
    const servedPage = {
      data: [
        {
          ...entry('a/odd', 'sometimes'),
          billing: { charges_on_policy_rejection: 'sometimes', cap_usd: 2 },
          modality: 'image',
        },
        { id: 'a/flat', provider: 'a', model: 'flat', billing: 'no' },
      ],
      has_more: 'yes',
      next_cursor: 7,
      limit: 'twenty',
      region: 'eu',
    };
    const servedDetail = { ...entry('a/one'), input_schema_url: null, tags: ['preview'] };
    server = await startServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/v1/models' ? servedPage : servedDetail));
    });
    client = new RouterClient({ baseUrl: server.origin });
    const page = await client.listModels();
    assert.deepEqual(page.body, servedPage);
    assert.deepEqual(page.entries, servedPage.data);
    // What the client reads of them: has_more other than true is false, a cursor that is not a string is none, a limit
    // that is not a number is the one the router serves by default, an odd billing note is unknown.
    assert.deepEqual([page.hasMore, page.nextCursor, page.limit], [false, undefined, 20]);
    assert.deepEqual(page.entries.map(billingOf), ['unknown', 'unknown']);
    const detail = await client.getModel('a/one');
    assert.deepEqual(detail.model, servedDetail);
    assert.equal(inputSchemaUrlOf(detail.model), undefined);
  });
});
