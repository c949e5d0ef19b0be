import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { API_ERROR_CODES, ERROR_STATUS, QueueFullError, V2_ERRORS, errorFromResponse } from '../../src/core/v2/errors';
import {
  AbortError,
  ApiError,
  ComfyError,
  ConnectionError,
  InputError,
  InvalidWorkflowError,
  NotFoundError,
  OutcomeUnknownError,
  RedirectError,
  ResponseShapeError,
  ResponseTooLargeError,
  TimeoutError,
  UpstreamError,
  errorFromStatus,
  isNotFound,
  parseNodeErrors,
  parseRetryAfter,
  type ComfyErrorClass,
} from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { JobCreatedUnreadableError } from '../../src/core/v2/jobs';
import { Transport } from '../../src/core/http';
import { EmulatorError, STATUS_OF_CODE as EMULATOR_STATUS } from '../../src/emulator/errors';
import { STATUS_OF_CODE, apiErrorOf, errorEnvelope, headers } from './builders';
import { startServer, type TestServer } from './httpServer';

describe('errors: the error envelope becomes typed errors (v2 "Errors")', () => {
  for (const code of API_ERROR_CODES) {
    it(`maps ${code} to its own type carrying status, code, message, details, Retry-After and request id`, () => {
      const status = STATUS_OF_CODE[code];
      const e = errorFromResponse(status, errorEnvelope(code, 'msg', { a: 1 }), headers({ 'retry-after': '7' }), {
        requestId: 'req-1',
      });
      assert.ok(ApiError.is(e));
      assert.equal(e.code, code);
      assert.equal(e.status, status);
      assert.equal(e.message, 'msg');
      assert.deepEqual(e.details, { a: 1 });
      assert.equal(e.retryAfter, 7);
      assert.equal(e.requestId, 'req-1');
      // one subclass per code: no two codes share a class
      for (const other of API_ERROR_CODES) {
        if (other === code) continue;
        const o = errorFromResponse(STATUS_OF_CODE[other], errorEnvelope(other), headers());
        const sameClass = Object.getPrototypeOf(o) === Object.getPrototypeOf(e);
        assert.ok(!sameClass, `${code} and ${other} share a class`);
      }
    });
  }

  it('a 404 with an entity-specific code (job_not_found) is still NotFoundError and keeps its code (servers in the wild send them)', () => {
    const e = errorFromResponse(404, errorEnvelope('job_not_found'), headers());
    assert.ok(e instanceof NotFoundError);
    assert.equal(e.code, 'job_not_found');
  });

  it("a non-JSON body still yields a typed error with the status's code, never a crash", () => {
    const e = errorFromResponse(502, '<html><body>Bad gateway</body></html>', headers());
    assert.ok(e instanceof UpstreamError);
    assert.equal(e.code, 'upstream_error');
    assert.match(e.message, /Bad gateway/);
    const e2 = errorFromResponse(401, '', headers());
    assert.equal(e2.code, 'unauthorized');
    const e3 = errorFromResponse(418, '{"error": 5}', headers());
    assert.equal(e3.status, 418);
    assert.ok(ApiError.is(e3));
    const e4 = errorFromResponse(422, '{"error": {"code": 3, "message": null, "details": []}}', headers());
    assert.equal(e4.status, 422);
    assert.equal(e4.details, null);
  });

  it('rule: Retry-After is integer seconds; anything else (1.5, -1, "10, 20", a date, past or future) is no Retry-After', () => {
    assert.equal(parseRetryAfter('30'), 30);
    assert.equal(parseRetryAfter(' 0 '), 0);
    for (const odd of [
      'soon',
      '1.5',
      '-1',
      '10, 20',
      '+5',
      '1e3',
      '',
      new Date(10_000).toUTCString(),
      new Date(Date.now() + 60_000).toUTCString(),
    ]) {
      assert.equal(parseRetryAfter(odd), undefined, JSON.stringify(odd));
    }
    assert.equal(parseRetryAfter(null), undefined);
  });

  it("invalid_workflow keeps node_errors in the document's shape", () => {
    const e = errorFromResponse(
      422,
      errorEnvelope('invalid_workflow', 'bad', { node_errors: { '1': [{ field: 'width', reason: 'below minimum' }] } }),
      headers(),
    );
    assert.ok(e instanceof InvalidWorkflowError);
    assert.deepEqual(e.nodeErrors, [{ nodeId: '1', field: 'width', reason: 'below minimum' }]);
  });

  it("invalid_workflow also reads the engine's node_errors shape (some servers forward it)", () => {
    const errors = parseNodeErrors({
      '4': {
        errors: [
          {
            type: 'value_smaller_than_min',
            message: 'Value 0 smaller than min of 1',
            details: 'width',
            extra_info: { input_name: 'width' },
          },
        ],
        class_type: 'EmptyImage',
        dependent_outputs: ['9'],
      },
    });
    assert.deepEqual(errors, [
      { nodeId: '4', field: 'width', classType: 'EmptyImage', reason: 'Value 0 smaller than min of 1: width' },
    ]);
    assert.deepEqual(parseNodeErrors(null), []);
    assert.deepEqual(parseNodeErrors([1, 2]), []);
  });
});

describe('errors: guards answer for their own class only', () => {
  for (const [code, { type }] of Object.entries(V2_ERRORS)) {
    it(`${type.name}.is is true for ${code} and false for every other code of the table`, () => {
      for (const other of API_ERROR_CODES) {
        assert.equal(type.is(apiErrorOf(other)), other === code, `${type.name}.is(${other})`);
      }
    });
  }

  it('QueueFullError.is(a not_found) is false; ApiError.is and ComfyError.is are true for every refusal', () => {
    const notFound = apiErrorOf('not_found');
    assert.equal(QueueFullError.is(notFound), false);
    assert.equal(NotFoundError.is(notFound), true);
    for (const code of [...API_ERROR_CODES, 'job_not_found', 'some_new_code']) {
      assert.ok(ApiError.is(apiErrorOf(code)), code);
      assert.ok(ComfyError.is(apiErrorOf(code)), code);
    }
  });

  it('the no-answer family: ComfyError.is(connection error) is true, ConnectionError.is(timeout) is false, no guard answers for a sibling', () => {
    const record = { idempotencyKey: 'k', baseUrl: 'http://x', state: 'outcome_unknown' as const, submittedAt: '' };
    const samples: [ComfyErrorClass & { is(v: unknown): boolean }, ComfyError][] = [
      [ConnectionError, new ConnectionError('reset')],
      [TimeoutError, new TimeoutError(100)],
      [AbortError, new AbortError()],
      [InputError, new InputError('bad_input', 'no')],
      [ResponseShapeError, new ResponseShapeError('odd')],
      [RedirectError, new RedirectError('moved', 302, undefined)],
      [OutcomeUnknownError, new OutcomeUnknownError(record, new Error('x'))],
      [JobCreatedUnreadableError, new JobCreatedUnreadableError('k', undefined, new Error('x'))],
      [ApiError, errorFromStatus(500, '', headers())],
    ];
    assert.equal(ComfyError.is(new ConnectionError('reset')), true);
    assert.equal(ConnectionError.is(new TimeoutError(100)), false);
    for (const [Class, own] of samples) {
      for (const [, other] of samples) assert.equal(Class.is(other), other === own, `${Class.name}.is(${other.name})`);
      assert.ok(ComfyError.is(own));
      assert.equal(Class.is(new Error('plain')), false);
      assert.equal(
        Class.is({ code: own.code, name: own.name }),
        false,
        'a look-alike object is not an error of the core',
      );
    }
    // A subclass is its base's too: a body over the cap is a shape problem.
    const tooLarge = new ResponseTooLargeError('http://x/y', 1024);
    assert.ok(ResponseShapeError.is(tooLarge) && ResponseTooLargeError.is(tooLarge));
    assert.equal(ResponseTooLargeError.is(new ResponseShapeError('odd')), false);
  });

  it('every error is named after its own class, set once in the base', () => {
    assert.equal(apiErrorOf('queue_full').name, 'QueueFullError');
    assert.equal(apiErrorOf('invalid_workflow').name, 'InvalidWorkflowError');
    assert.equal(errorFromStatus(418, '', headers()).name, 'ApiError');
    assert.equal(new TimeoutError(1).name, 'TimeoutError');
    assert.equal(new ResponseTooLargeError('u', 1).name, 'ResponseTooLargeError');
    assert.equal(new JobCreatedUnreadableError('k', undefined, null).name, 'JobCreatedUnreadableError');
  });

  it('a server code that is a property of every object (constructor, toString, __proto__) is a plain ApiError of that code', () => {
    for (const code of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const e = errorFromResponse(422, errorEnvelope(code), headers());
      assert.ok(ApiError.is(e), code);
      assert.equal(Object.getPrototypeOf(e), ApiError.prototype, code);
      assert.equal(e.code, code);
      assert.equal(e.status, 422);
    }
  });
});

describe('errors: class names survive minification; callers rely on code and guards only', () => {
  const root = path.resolve(__dirname, '../../..');
  /** Bundles the two error modules as the production build does (minified), and evaluates the bundle. */
  async function minified(keepNames: boolean): Promise<Record<string, unknown>> {
    const result = await esbuild.build({
      bundle: true,
      minify: true,
      keepNames,
      write: false,
      platform: 'node',
      format: 'cjs',
      logLevel: 'silent',
      stdin: {
        contents:
          "export * from './src/core/v2/errors'; export { ApiError, ComfyError, ConnectionError, NotFoundError, TimeoutError } from './src/core/http/errors';",
        resolveDir: root,
        loader: 'ts',
        sourcefile: 'minified-errors-entry.ts',
      },
    });
    const module = { exports: {} as Record<string, unknown> };
    new Function('module', 'exports', 'require', result.outputFiles[0].text)(module, module.exports, require);
    return module.exports;
  }
  type Guarded = (new (init: { status: number; code: string; message: string }) => Error & { code: string }) & {
    is(v: unknown): boolean;
  };
  type Bundle = {
    V2_ERRORS: Record<string, { type: Guarded }>;
    ApiError: Guarded;
    ConnectionError: new (m: string) => Error;
    TimeoutError: new (ms: number) => Error;
    ComfyError: { is(v: unknown): boolean };
    errorFromResponse: typeof errorFromResponse;
  };

  /** The guards and codes of a bundle, checked as the CLI and the extension use them. */
  function assertGuardsAndCodes(m: Bundle): void {
    const errorOf = (code: string) => m.errorFromResponse(STATUS_OF_CODE[code], errorEnvelope(code), headers());
    for (const [code, { type }] of Object.entries(m.V2_ERRORS)) {
      for (const other of API_ERROR_CODES)
        assert.equal(type.is(errorOf(other)), other === code, `${code} guard on ${other}`);
      assert.equal(errorOf(code).code, code);
      assert.ok(m.ApiError.is(errorOf(code)));
    }
    const V2 = m.V2_ERRORS;
    assert.equal(V2.queue_full.type.is(errorOf('not_found')), false);
    assert.equal(m.ComfyError.is(new m.ConnectionError('reset')), true);
    assert.equal((m.ConnectionError as unknown as Guarded).is(new m.TimeoutError(5)), false);
  }

  it('minified with keepNames (as esbuild.mjs builds): new QueueFullError(…).name is "QueueFullError", and the guards hold', async () => {
    const m = (await minified(true)) as unknown as Bundle & { QueueFullError: Guarded; NotFoundError: Guarded };
    const e = new m.QueueFullError({ status: 429, code: 'queue_full', message: 'full' });
    assert.equal(e.name, 'QueueFullError');
    assert.equal(m.errorFromResponse(404, errorEnvelope('not_found'), headers()).name, 'NotFoundError');
    assert.equal(m.QueueFullError.is(new m.NotFoundError({ status: 404, code: 'not_found', message: 'gone' })), false);
    assertGuardsAndCodes(m);
  });

  it('minified without keepNames the class names are lost, yet every code and guard still answers right', async () => {
    const m = (await minified(false)) as unknown as Bundle & { QueueFullError: Guarded };
    const e = new m.QueueFullError({ status: 429, code: 'queue_full', message: 'full' });
    assert.notEqual(e.name, 'QueueFullError', 'the bundle renamed the class: this is why no caller tests a name');
    assert.equal(e.code, 'queue_full');
    assert.ok(m.QueueFullError.is(e));
    assertGuardsAndCodes(m);
  });
});

describe('errors: the transport makes its errors through an injected factory', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '9', 'x-svc-request-id': 'req-9' });
      res.end(errorEnvelope('queue_full', 'the queue is full'));
    });
  });
  after(() => server.close());
  const anySchema = { safeParse: (v: unknown) => ({ success: true as const, data: v }) };

  it('by default the transport does not assume the v2 envelope: an ApiError from the status alone', async () => {
    const t = new Transport({ baseUrl: server.origin });
    const e = await t.json('GET', '/anything', anySchema).then(
      () => assert.fail('no error'),
      (err: unknown) => err,
    );
    await t.close();
    assert.ok(ApiError.is(e));
    assert.equal(QueueFullError.is(e), false);
    assert.equal(e.code, 'http_429');
    assert.equal(e.status, 429);
    assert.equal(e.retryAfter, 9);
    assert.equal(e.requestId, 'req-9');
  });

  it('a given errorFactory receives status, body, headers and request context, and its error is thrown', async () => {
    const calls: unknown[][] = [];
    const mine = new ApiError({ status: 400, code: 'mine', message: 'made by the factory' });
    const t = new Transport({
      baseUrl: server.origin,
      errorFactory: (status, body, h, context) => (calls.push([status, body, h.get('retry-after'), context]), mine),
    });
    await assert.rejects(t.json('GET', '/x', anySchema), (err: unknown) => err === mine);
    await t.close();
    assert.deepEqual(calls, [
      [
        429,
        errorEnvelope('queue_full', 'the queue is full'),
        '9',
        { requestId: 'req-9', request: `${server.origin}/x` },
      ],
    ]);
  });

  it("V2Client passes the v2 factory: the same answer is a QueueFullError with the envelope's message", async () => {
    const c = new V2Client({ baseUrl: server.origin });
    await assert.rejects(
      c.jobs.get('j1'),
      (err: unknown) =>
        QueueFullError.is(err) &&
        err.code === 'queue_full' &&
        err.message === 'the queue is full' &&
        err.retryAfter === 9,
    );
    await c.close();
  });
});

describe('errors: the generic factory (for APIs whose body is not the v2 envelope)', () => {
  it('makes an ApiError from the status alone, never reading a v2 code, a router body or a v1 body as its code', () => {
    const v2 = errorFromStatus(429, errorEnvelope('queue_full'), headers({ 'retry-after': '5' }), {
      requestId: 'r',
      request: 'GET /x',
    });
    assert.equal(Object.getPrototypeOf(v2), ApiError.prototype);
    assert.deepEqual(
      [v2.code, v2.status, v2.message, v2.retryAfter, v2.requestId, v2.request, v2.details],
      ['http_429', 429, 'HTTP 429', 5, 'r', 'GET /x', null],
    );
    assert.equal(
      errorFromStatus(403, JSON.stringify({ detail: 'not enabled', error_type: 'not_enabled' }), headers()).code,
      'forbidden',
    );
    assert.equal(
      errorFromStatus(400, JSON.stringify({ error: 'bad prompt', node_errors: {} }), headers()).code,
      'http_400',
    );
    assert.equal(errorFromStatus(401, '', headers()).code, 'unauthorized');
    assert.equal(errorFromStatus(404, 'Not Found', headers()).code, 'not_found');
    assert.equal(errorFromStatus(503, '', headers()).message, 'HTTP 503');
  });

  it('quotes a short escaped excerpt of a body that is not JSON: no escape sequence, no new line, at most 200 characters', () => {
    const e = errorFromStatus(
      502,
      `<html>\n<title>Bad\u001b[2J gateway\u202e</title>${'x'.repeat(5000)}</html>`,
      headers(),
    );
    assert.match(e.message, /^unexpected response body: <html> <title>Bad\\x1b\[2J gateway\\u202e<\/title>x+$/);
    assert.ok(e.message.length < 'unexpected response body: '.length + 220);
    const v2 = errorFromResponse(502, 'Bad\u001b]0;title\u0007 gateway', headers());
    assert.equal(v2.message, 'unexpected response body: Bad\\x1b]0;title\\x07 gateway');
  });
});

describe('errors: one code table for the client and the emulator', () => {
  it("the emulator answers every code of the core's table with its status, and the client reads it back as that code's class", () => {
    for (const code of API_ERROR_CODES) {
      assert.equal(EMULATOR_STATUS[code], ERROR_STATUS[code], code);
      const refusal = new EmulatorError(code, 'no');
      const read = errorFromResponse(refusal.status, JSON.stringify(refusal.toEnvelope()), headers());
      assert.ok(V2_ERRORS[code].type.is(read), code);
      assert.equal(read.code, code);
    }
    assert.equal(EMULATOR_STATUS.range_not_satisfiable, 416);
    assert.equal(EMULATOR_STATUS.invalid_upload, 422);
  });

  it('a misspelt code does not compile in the emulator (checked by tsc)', () => {
    const misspelt = (): EmulatorError =>
      // @ts-expect-error 'queue_ful' is not a code of the table: tsc fails if this line ever compiles
      new EmulatorError('queue_ful', 'typo');
    assert.equal(typeof misspelt, 'function');
  });
});

describe('isNotFound', () => {
  it('rule: any 404 is "not found", whatever its code (not_found, job_not_found, asset_not_found); nothing else is', () => {
    for (const code of ['not_found', 'job_not_found', 'asset_not_found', 'whatever']) {
      assert.equal(isNotFound(new ApiError({ status: 404, code, message: 'm' })), true, code);
    }
    assert.equal(isNotFound(new NotFoundError({ status: 404, code: 'not_found', message: 'm' })), true);
    assert.equal(isNotFound(new ApiError({ status: 410, code: 'gone', message: 'm' })), false);
    assert.equal(isNotFound(new ConnectionError('refused')), false);
    assert.equal(isNotFound(new Error('404')), false);
  });
});
