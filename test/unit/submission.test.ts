/**
 * Submission rules (Job and Asset API v2, POST /api/v2/jobs, rules 3–7) and remembered jobs, against a scripted
 * server that records what it saw and an injected clock.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, InvalidWorkflowError, UpstreamError, ManualClock, OutcomeUnknownError } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import {
  QueueFullError,
  DeploymentStoppedError,
  IdempotencyKeyReuseError,
  InsufficientCreditsError,
  errorFromResponse,
} from '../../src/core/v2/errors';
import { StateStore, defaultStateDir } from '../../src/core/state';
import { submitDurably } from '../../src/core/v2/submission';
import { adviceFor } from '../../src/core/views';
import { errorEnvelope, headers, invertWorkflow, job } from './builders';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

function tempStore(): StateStore {
  return new StateStore(tempDir('cc-store-'));
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

describe('state store', () => {
  it('lives under $COMFY_CLOUD_STATE_DIR, else $XDG_STATE_HOME/comfy-cloud', () => {
    assert.equal(defaultStateDir({ COMFY_CLOUD_STATE_DIR: '/x' }), '/x');
    assert.equal(defaultStateDir({ XDG_STATE_HOME: '/s' }), '/s/comfy-cloud');
    assert.match(defaultStateDir({}), /\.local\/state\/comfy-cloud$/);
  });

  it('writes atomically (no temporary file left), reads back, merges updates, prunes after expires_at', async () => {
    const store = tempStore();
    await store.put({
      idempotencyKey: 'k1',
      baseUrl: 'http://a',
      state: 'pending',
      submittedAt: '2026-11-22T10:00:00.000Z',
    });
    await store.update('k1', { state: 'created', jobId: 'j1', expiresAt: '2026-11-22T11:00:00.000Z' });
    await store.put({
      idempotencyKey: 'k2',
      baseUrl: 'http://a',
      state: 'created',
      jobId: 'j2',
      submittedAt: '2026-11-22T10:30:00.000Z',
      expiresAt: '2026-11-23T00:00:00.000Z',
    });
    assert.deepEqual(fs.readdirSync(path.join(store.dir, 'jobs')).sort(), ['k1.json', 'k2.json']);
    assert.deepEqual(
      (await store.list()).map((r) => r.jobId),
      ['j2', 'j1'],
    );
    assert.equal(await store.prune(Date.parse('2026-11-22T12:00:00Z')), 1);
    assert.deepEqual(
      (await store.list()).map((r) => r.jobId),
      ['j2'],
    );
  });

  it('two writers never corrupt a record: each write is whole (temporary file + rename)', async () => {
    const store = tempStore();
    const other = new StateStore(store.dir);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? store : other).put({
          idempotencyKey: 'same',
          baseUrl: 'http://a',
          state: 'created',
          jobId: `j${i}`,
          submittedAt: new Date(i).toISOString(),
        }),
      ),
    );
    const r = await store.get('same');
    assert.ok(r && /^j\d+$/.test(r.jobId!));
    assert.deepEqual(fs.readdirSync(path.join(store.dir, 'jobs')), ['same.json']);
  });
});

describe('durable submission', () => {
  let server: TestServer;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  before(async () => {
    server = await startServer((req, res) => handler(req, res));
  });
  after(async () => server.close());

  /** A client whose waits (Retry-After, backoff) pass at once; its request timeout is the default, never reached here. */
  function client(options: { timeoutClock?: ManualClock } = {}): V2Client {
    return new V2Client({
      baseUrl: server.origin,
      clock: new ManualClock(Date.parse('2026-11-22T10:00:00Z'), { autoAdvance: true }),
      ...options,
    });
  }

  it('rule: the Idempotency-Key is in the state store BEFORE the request is sent', async () => {
    const store = tempStore();
    let storedWhenSeen: unknown;
    handler = (req, res) => {
      const key = String(req.headers['idempotency-key']);
      storedWhenSeen = JSON.parse(fs.readFileSync(path.join(store.dir, 'jobs', `${key}.json`), 'utf8'));
      send(res, 201, job('queued'));
    };
    const c = client();
    const result = await submitDurably(c, invertWorkflow(), { store });
    await c.close();
    assert.equal((storedWhenSeen as { state: string }).state, 'pending');
    assert.equal((storedWhenSeen as { idempotencyKey: string }).idempotencyKey, result.idempotencyKey);
    const record = await store.get(result.idempotencyKey);
    assert.equal(record?.state, 'created');
    assert.equal(record?.jobId, result.snapshot.job.id);
    // The workflow's SaveImage prefix names the job in lists when it came from no file.
    assert.equal(record?.savePrefix, 'fixture');
  });

  for (const [status, code, type] of [
    [422, 'invalid_workflow', InvalidWorkflowError],
    [402, 'insufficient_credits', InsufficientCreditsError],
    [422, 'deployment_stopped', DeploymentStoppedError],
  ] as const) {
    it(`rule: a definitive failure without a job (${status} ${code}) releases the key and is not retried`, async () => {
      const store = tempStore();
      let posts = 0;
      handler = (_req, res) => {
        posts++;
        send(res, status, errorEnvelope(code));
      };
      const c = client();
      await assert.rejects(
        submitDurably(c, invertWorkflow(), { store }),
        (e: unknown) => ApiError.hasCode(e, code) && e.status === status && (type as typeof ApiError).is(e),
      );
      await c.close();
      assert.equal(posts, 1);
      assert.deepEqual(await store.list(), []);
    });
  }

  it('rule: queue_full is retried after Retry-After with the SAME key (the key was released), the wait shown', async () => {
    const store = tempStore();
    const keys: string[] = [];
    handler = (req, res) => {
      keys.push(String(req.headers['idempotency-key']));
      if (keys.length < 3) send(res, 429, errorEnvelope('queue_full'), { 'retry-after': '4' });
      else send(res, 201, job('queued'));
    };
    const c = client();
    const waits: number[] = [];
    const result = await submitDurably(c, invertWorkflow(), { store, onWait: (w) => waits.push(w.delayMs) });
    await c.close();
    assert.equal(new Set(keys).size, 1);
    assert.deepEqual(waits, [4000, 4000]);
    assert.deepEqual((c.clock as ManualClock).sleeps, [4000, 4000]);
    assert.equal((await store.get(result.idempotencyKey))?.state, 'created');
  });

  it('rule: deployment_not_ready is retried after Retry-After with the SAME key, the wait shown', async () => {
    const store = tempStore();
    const keys: string[] = [];
    handler = (req, res) => {
      keys.push(String(req.headers['idempotency-key']));
      if (keys.length === 1) send(res, 429, errorEnvelope('deployment_not_ready'), { 'retry-after': '7' });
      else send(res, 201, job('queued'));
    };
    const c = client();
    const waits: { delayMs: number; reason: string }[] = [];
    await submitDurably(c, invertWorkflow(), { store, onWait: (w) => waits.push(w) });
    await c.close();
    assert.equal(keys.length, 2);
    assert.equal(new Set(keys).size, 1);
    assert.deepEqual(
      waits.map((w) => w.delayMs),
      [7000],
    );
    assert.match(waits[0].reason, /deployment_not_ready/);
  });

  it('rule: idempotency_key_reuse is terminal: not retried, it says what to do, and the record of the earlier submission with that key is kept', async () => {
    const store = tempStore();
    // An earlier submission with key K whose answer never came: its record says outcome_unknown.
    await store.put({
      idempotencyKey: 'K',
      baseUrl: server.origin,
      state: 'outcome_unknown',
      workflowFile: 'earlier.json',
      submittedAt: '2026-11-22T09:59:00.000Z',
    });
    let posts = 0;
    handler = (req, res) => {
      if (req.method === 'GET') return send(res, 404, errorEnvelope('not_found'));
      posts++;
      send(res, 422, errorEnvelope('idempotency_key_reuse'));
    };
    const c = client();
    await assert.rejects(
      submitDurably(c, invertWorkflow(), { store, idempotencyKey: 'K', workflowFile: 'again.json' }),
      (e: unknown) => IdempotencyKeyReuseError.is(e) && e.code === 'idempotency_key_reuse',
    );
    await c.close();
    assert.equal(posts, 1, 'not retried');
    const kept = await store.get('K');
    assert.equal(kept?.state, 'outcome_unknown', 'the earlier submission stays in view');
    assert.equal(kept?.workflowFile, 'earlier.json', 'and is not overwritten by the refused one');
    assert.match(
      adviceFor(errorFromResponse(422, errorEnvelope('idempotency_key_reuse'), headers()))!,
      /check your jobs before submitting again/,
    );
  });

  it('a key that already stands for a created job keeps its record when a resubmission with it meets an unknown outcome', async () => {
    const store = tempStore();
    const earlier = {
      idempotencyKey: 'C',
      baseUrl: server.origin,
      state: 'created' as const,
      jobId: 'job-1',
      submittedAt: '2026-11-22T09:59:00.000Z',
    };
    await store.put(earlier);
    let posts = 0;
    handler = (req, res) => {
      if (req.method === 'GET') return send(res, 404, errorEnvelope('not_found'));
      posts++;
      send(res, 502, 'Bad gateway');
    };
    const c = client();
    // The server's own answer (the 502), not an unknown outcome: the key already stands for a job.
    await assert.rejects(
      submitDurably(c, invertWorkflow(), { store, idempotencyKey: 'C' }),
      (e: unknown) => UpstreamError.is(e) && e.status === 502 && e.code === 'upstream_error',
    );
    await c.close();
    assert.equal(posts, 1, 'not resubmitted');
    assert.deepEqual(await store.get('C'), earlier, 'the created job stays as it was, not marked outcome_unknown');
  });

  it('terminal codes say what to do: deployment_stopped, insufficient_credits', () => {
    const advice = (status: number, code: string): string | undefined =>
      adviceFor(errorFromResponse(status, errorEnvelope(code), headers()));
    assert.match(advice(422, 'deployment_stopped')!, /operator/);
    assert.match(advice(402, 'insufficient_credits')!, /credits/);
    assert.equal(advice(400, 'some_unknown_code'), undefined);
  });

  it('queue_full beyond the retry budget ends with QueueFullError and the key released', async () => {
    const store = tempStore();
    handler = (_req, res) => send(res, 429, errorEnvelope('queue_full'), { 'retry-after': '1' });
    const c = client();
    await assert.rejects(
      submitDurably(c, invertWorkflow(), { store }),
      (e: unknown) => QueueFullError.is(e) && e.code === 'queue_full',
    );
    await c.close();
    assert.deepEqual(await store.list(), []);
  });

  for (const fault of ['reset', '502', 'timeout'] as const) {
    it(`rule: an unknown outcome (${fault} after sending) is never resubmitted; the record says outcome_unknown`, async () => {
      const store = tempStore();
      let posts = 0;
      // The request timeout's clock is the test's: its time runs out once the server has the whole request.
      const timeoutClock = new ManualClock(0);
      handler = async (req, res) => {
        if (req.method === 'GET') return send(res, 404, errorEnvelope('not_found'));
        posts++;
        await readBody(req);
        if (fault === 'reset') req.socket.destroy();
        else if (fault === '502') send(res, 502, 'Bad gateway');
        else timeoutClock.advance(30_000); // timeout: never answer, and the client's time is up
      };
      const c = client({ timeoutClock });
      await assert.rejects(submitDurably(c, invertWorkflow(), { store }), (e: unknown) => {
        assert.ok(OutcomeUnknownError.is(e), String(e));
        assert.match(e.message, /check your jobs before submitting again/);
        return true;
      });
      await c.close();
      assert.equal(posts, 1, 'submitted exactly once');
      const [record] = await store.list();
      assert.equal(record.state, 'outcome_unknown');
    });
  }
});
