import * as assert from 'node:assert/strict';
import {
  API_ERROR_CODES,
  ApiError,
  InvalidWorkflowError,
  NotFoundError,
  UpstreamError,
  errorFromResponse,
  parseNodeErrors,
  parseRetryAfter,
} from '../../src/core';
import { STATUS_OF_CODE, errorEnvelope, headers } from './builders';

describe('errors: the error envelope becomes typed errors (v2 "Errors")', () => {
  for (const code of API_ERROR_CODES) {
    it(`maps ${code} to its own type carrying status, code, message, details, Retry-After and request id`, () => {
      const status = STATUS_OF_CODE[code];
      const e = errorFromResponse(status, errorEnvelope(code, 'msg', { a: 1 }), headers({ 'retry-after': '7' }), { requestId: 'req-1' });
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

  it('a 404 with an entity-specific code (job_not_found) is still NotFoundError and keeps its code (FACTS)', () => {
    const e = errorFromResponse(404, errorEnvelope('job_not_found'), headers());
    assert.ok(e instanceof NotFoundError);
    assert.equal(e.code, 'job_not_found');
  });

  it('a non-JSON body still yields a typed error with the status\'s code, never a crash', () => {
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
    for (const odd of ['soon', '1.5', '-1', '10, 20', '+5', '1e3', '', new Date(10_000).toUTCString(), new Date(Date.now() + 60_000).toUTCString()]) {
      assert.equal(parseRetryAfter(odd), undefined, JSON.stringify(odd));
    }
    assert.equal(parseRetryAfter(null), undefined);
  });

  it('invalid_workflow keeps node_errors in the document\'s shape', () => {
    const e = errorFromResponse(422, errorEnvelope('invalid_workflow', 'bad', { node_errors: { '1': [{ field: 'width', reason: 'below minimum' }] } }), headers());
    assert.ok(e instanceof InvalidWorkflowError);
    assert.deepEqual(e.nodeErrors, [{ nodeId: '1', field: 'width', reason: 'below minimum' }]);
  });

  it('invalid_workflow also reads the engine\'s node_errors shape (FACTS)', () => {
    const errors = parseNodeErrors({
      '4': { errors: [{ type: 'value_smaller_than_min', message: 'Value 0 smaller than min of 1', details: 'width', extra_info: { input_name: 'width' } }], class_type: 'EmptyImage', dependent_outputs: ['9'] },
    });
    assert.deepEqual(errors, [{ nodeId: '4', field: 'width', classType: 'EmptyImage', reason: 'Value 0 smaller than min of 1: width' }]);
    assert.deepEqual(parseNodeErrors(null), []);
    assert.deepEqual(parseNodeErrors([1, 2]), []);
  });
});
