/** Errors and byte counts as text: one function each in the core (http/errors.ts, views/presentation.ts, util/bytes.ts). */
import * as assert from 'node:assert/strict';
import { ComfyError, InvalidWorkflowError, describeError } from '../../src/core';
import { describeSize, humanSize } from '../../src/core/util';
import { errorMessage, unknownClassesMessage } from '../../src/core/views';

/** A 422 invalid_workflow as a server answers it. */
function invalid(message: string, details: Record<string, unknown>): InvalidWorkflowError {
  return new InvalidWorkflowError({ status: 422, code: 'invalid_workflow', message, details });
}

describe('unknownClassesMessage: node classes the server does not run, said once', () => {
  const nodeErrors = {
    '3': [{ field: 'class_type', reason: 'KSampler is not a node this emulator runs' }],
    '6': [{ field: 'class_type', reason: 'CLIPTextEncode is not a node this emulator runs' }],
    '7': [{ field: 'class_type', reason: 'CLIPTextEncode is not a node this emulator runs' }],
  };

  it("the server's sentence when it names every class (the emulator's, which says what to do)", () => {
    const sentence =
      'the local emulator runs only its demo nodes (EmptyImage, ImageInvert), not KSampler, CLIPTextEncode; use a cloud connection for this workflow';
    assert.equal(
      unknownClassesMessage(
        invalid(sentence, { node_errors: nodeErrors, unknown_classes: ['KSampler', 'CLIPTextEncode', 'KSampler'] }),
      ),
      sentence,
    );
  });

  it("ours, naming each class once, when the server's message does not name them", () => {
    const said = unknownClassesMessage(
      invalid('invalid workflow', { node_errors: nodeErrors, unknown_classes: ['KSampler', 'CLIPTextEncode'] }),
      (m, ...a) => `«${m}» ${a.join('|')}`,
    );
    assert.equal(
      said,
      '«the server does not run the node classes {0} that this workflow uses; use a connection that runs them» KSampler, CLIPTextEncode',
    );
  });

  it('nothing (the node errors are listed as they are) when another problem is among them, or the server names no class', () => {
    const mixed = { ...nodeErrors, '1': [{ field: 'width', reason: 'value 0 is below the minimum 1' }] };
    assert.equal(
      unknownClassesMessage(
        invalid('x KSampler CLIPTextEncode', { node_errors: mixed, unknown_classes: ['KSampler', 'CLIPTextEncode'] }),
      ),
      undefined,
    );
    assert.equal(unknownClassesMessage(invalid('x', { node_errors: nodeErrors })), undefined);
  });
});

describe('errors and sizes as text, one copy each', () => {
  it('describeError: `code: message` for an error of the core, the message of another Error, else the value as text', () => {
    assert.equal(
      describeError(new ComfyError('state_locked', 'the record is locked')),
      'state_locked: the record is locked',
    );
    assert.equal(describeError(new Error('plain')), 'plain');
    assert.equal(describeError('text'), 'text');
    assert.equal(describeError(undefined), 'undefined');
  });

  it('errorMessage: `message [code]` plus the advice for the extension when there is one', () => {
    assert.equal(errorMessage(new ComfyError('some_code', 'it failed')), 'it failed [some_code]');
    assert.match(
      errorMessage(new ComfyError('deployment_stopped', 'stopped')),
      /^stopped \[deployment_stopped\] — the deployment is stopped, .+/,
    );
    assert.equal(errorMessage(new Error('plain')), 'plain');
    assert.equal(errorMessage(42), '42');
  });

  it('describeSize: the rounded size with the exact count, for messages', () => {
    assert.deepEqual([512, 1536, 16 * 1024 * 1024, 3.25 * 1024 ** 3].map(describeSize), [
      '512 bytes',
      '1.5 KiB (1536 bytes)',
      '16 MiB (16777216 bytes)',
      '3.3 GiB (3489660928 bytes)',
    ]);
  });

  it('humanSize: labels through the translation given, English words by default, empty when unknown', () => {
    assert.equal(humanSize(2048), '2 KB');
    assert.equal(
      humanSize(2048, (message, ...args) => `[${message}|${args.join(',')}]`),
      '[{0} {1}|2,KB]',
    );
    assert.equal(humanSize(undefined), '');
    assert.equal(humanSize(Number.NaN), '');
  });
});
