/**
 * The words shown to a person about an error (src/core/views/presentation.ts): one module for the CLI
 * and the extension, and true: what is said about retrying is what happened.
 */
import * as assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ConnectionError, ManualClock } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { DEFAULT_RETRY_POLICY, withRetry, type RequestKind, type RetryPolicy } from '../../src/core/http';
import { StateStore } from '../../src/core/state';
import { adviceFor } from '../../src/core/views';
import { submitDurably } from '../../src/core/v2/submission';
import { describe as describeForCli, errorDocument } from '../../src/cli/output';
import { apiErrorOf, errorEnvelope, invertWorkflow } from './builders';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

/** Runs `withRetry` over answers that each fail with the code and Retry-After given (s); returns the final error. */
async function failAfterRetries(
  code: string,
  retryAfters: (number | undefined)[],
  kind: RequestKind = 'submit',
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<ApiError> {
  const clock = new ManualClock(0, { autoAdvance: true });
  let i = 0;
  const error = await withRetry(
    kind,
    () => Promise.reject(apiErrorOf(code, retryAfters[Math.min(i++, retryAfters.length - 1)])),
    { clock, policy },
  ).then(
    () => assert.fail('no error'),
    (e: unknown) => e,
  );
  assert.ok(ApiError.is(error));
  return error;
}

describe('presentation: what withRetry records on the error it gives up with', () => {
  it('the attempts made, the time they took (ms, on the injected clock) and the longest Retry-After waited for', async () => {
    const e = await failAfterRetries('queue_full', [4]);
    assert.deepEqual(e.retries, { attempts: 5, elapsedMs: 16_000, maxRetryAfterS: 120 });
    const once = await failAfterRetries('queue_full', [600]);
    assert.deepEqual(once.retries, { attempts: 1, elapsedMs: 0, maxRetryAfterS: 120 });
    const terminal = await failAfterRetries('forbidden', [undefined], 'read');
    assert.deepEqual(terminal.retries, { attempts: 1, elapsedMs: 0, maxRetryAfterS: 120 });
  });

  it('an error that never went through a retry loop carries no history', () => {
    assert.equal(apiErrorOf('queue_full', 3).retries, undefined);
    assert.equal(new ConnectionError('reset').retries, undefined);
  });
});

describe('presentation: the advice about queue_full and deployment_not_ready says what happened', () => {
  const cases: { code: string; what: string; closing: string }[] = [
    { code: 'queue_full', what: 'the queue is full', closing: 'try again later' },
    { code: 'deployment_not_ready', what: 'the deployment is still starting', closing: 'try again in a minute' },
  ];
  for (const { code, what, closing } of cases) {
    it(`${code}: "tried N times over S s" only when it was tried more than once`, async () => {
      const e = await failAfterRetries(code, [4]);
      assert.equal(adviceFor(e), `${what}; tried 5 times over 16 s, until the retry budget ran out; ${closing}`);
    });

    it(`${code}: a Retry-After longer than the client waits is "not retried", naming both times`, async () => {
      const e = await failAfterRetries(code, [600]);
      assert.equal(
        adviceFor(e),
        `${what}; not retried: the Retry-After of 600 s is longer than the client waits (120 s); try again in 600 s or later`,
      );
      const shorterCap = await failAfterRetries(code, [45], 'submit', { ...DEFAULT_RETRY_POLICY, maxRetryAfterS: 30 });
      assert.match(
        adviceFor(shorterCap)!,
        /not retried: the Retry-After of 45 s is longer than the client waits \(30 s\)/,
      );
    });

    it(`${code}: retried, then a Retry-After too long to wait for ends it`, async () => {
      const e = await failAfterRetries(code, [2, 600]);
      assert.equal(
        adviceFor(e),
        `${what}; tried 2 times over 2 s, then not again: the Retry-After of 600 s is longer than the client waits (120 s); try again in 600 s or later`,
      );
    });

    it(`${code}: a single attempt for another reason (a budget of one attempt) says "not retried"`, async () => {
      const e = await failAfterRetries(code, [3], 'submit', { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 });
      assert.equal(adviceFor(e), `${what}; not retried; ${closing}`);
    });

    it(`${code}: with nothing known about retries (no retry loop), it says only "${closing}"`, () => {
      const e = apiErrorOf(code, 5);
      assert.equal(adviceFor(e), `${what}; ${closing}`);
      assert.doesNotMatch(adviceFor(e)!, /retried|tried|budget/);
    });
  }
});

describe('presentation: the CLI says the same true words (submission and the status lookup)', () => {
  let server: TestServer;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  before(async () => {
    server = await startServer((req, res) => handler(req, res));
  });
  after(() => server.close());
  const client = () => new V2Client({ baseUrl: server.origin, clock: new ManualClock(0, { autoAdvance: true }) });
  const answer = (retryAfter: string) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
    res.end(errorEnvelope('queue_full', 'queue at capacity'));
  };

  it('a submission refused with a Retry-After beyond the cap was not retried, and the CLI line and --json document say so', async () => {
    let posts = 0;
    handler = (req, res) => {
      posts++;
      answer('600')(req, res);
    };
    const c = client();
    const error = await submitDurably(c, invertWorkflow(), { store: new StateStore(tempDir('presentation-')) }).then(
      () => assert.fail('no error'),
      (e: unknown) => e,
    );
    await c.close();
    assert.equal(posts, 1);
    const line = describeForCli(error);
    assert.match(
      line,
      /^\[queue_full\] HTTP 429: queue at capacity \(Retry-After 600 s\) — the queue is full; not retried: the Retry-After of 600 s is longer than the client waits \(120 s\)/,
    );
    assert.doesNotMatch(line, /retried after each Retry-After|budget/);
    assert.equal(errorDocument(error).advice, adviceFor(error));
  });

  it('the status lookup (a budget of two attempts) says it tried twice, over the Retry-After it waited', async () => {
    handler = answer('3');
    const c = client();
    const error = await c.getJob('j1', { policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 2 } }).then(
      () => assert.fail('no error'),
      (e: unknown) => e,
    );
    await c.close();
    assert.match(
      describeForCli(error),
      /the queue is full; tried 2 times over 3 s, until the retry budget ran out; try again later/,
    );
  });
});

describe("presentation: the other codes, and each shell's own remedy", () => {
  it('unauthorized names the CLI\'s flag in the CLI, and nothing in the extension (its message offers "Set API Key")', () => {
    const e = apiErrorOf('unauthorized');
    assert.equal(adviceFor(e, 'cli'), 'set an API key with --api-key or COMFY_API_KEY');
    assert.equal(adviceFor(e, 'extension'), undefined);
    assert.match(describeForCli(e), /— set an API key with --api-key or COMFY_API_KEY/);
  });

  it('terminal codes say why retrying will not help; unknown codes and foreign errors get no advice', () => {
    assert.match(adviceFor(apiErrorOf('idempotency_key_reuse'))!, /check your jobs before submitting again/);
    assert.match(adviceFor(apiErrorOf('deployment_stopped'))!, /operator/);
    assert.match(adviceFor(apiErrorOf('insufficient_credits'))!, /add credits/);
    assert.match(adviceFor(apiErrorOf('asset_in_use'))!, /cancel that job first/);
    assert.equal(adviceFor(apiErrorOf('some_unknown_code')), undefined);
    assert.equal(adviceFor(new Error('plain')), undefined);
    assert.equal(adviceFor({ code: 'queue_full' }), undefined);
  });
});
