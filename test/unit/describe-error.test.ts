/** Errors and byte counts as text: one function each in the core (http/errors.ts, views/presentation.ts, util/bytes.ts). */
import * as assert from 'node:assert/strict';
import { ComfyError, describeError, describeSize, errorMessage, humanSize } from '../../src/core';

describe('errors and sizes as text, one copy each', () => {
  it('describeError: `code: message` for an error of the core, the message of another Error, else the value as text', () => {
    assert.equal(describeError(new ComfyError('state_locked', 'the record is locked')), 'state_locked: the record is locked');
    assert.equal(describeError(new Error('plain')), 'plain');
    assert.equal(describeError('text'), 'text');
    assert.equal(describeError(undefined), 'undefined');
  });

  it('errorMessage: `message [code]` plus the advice for the extension when there is one', () => {
    assert.equal(errorMessage(new ComfyError('some_code', 'it failed')), 'it failed [some_code]');
    assert.match(errorMessage(new ComfyError('deployment_stopped', 'stopped')), /^stopped \[deployment_stopped\] — the deployment is stopped, .+/);
    assert.equal(errorMessage(new Error('plain')), 'plain');
    assert.equal(errorMessage(42), '42');
  });

  it('describeSize: the rounded size with the exact count, for messages', () => {
    assert.deepEqual([512, 1536, 16 * 1024 * 1024, 3.25 * 1024 ** 3].map(describeSize), ['512 bytes', '1.5 KiB (1536 bytes)', '16 MiB (16777216 bytes)', '3.3 GiB (3489660928 bytes)']);
  });

  it('humanSize: labels through the translation given, English words by default, empty when unknown', () => {
    assert.equal(humanSize(2048), '2 KB');
    assert.equal(humanSize(2048, (message, ...args) => `[${message}|${args.join(',')}]`), '[{0} {1}|2,KB]');
    assert.equal(humanSize(undefined), '');
    assert.equal(humanSize(Number.NaN), '');
  });
});
