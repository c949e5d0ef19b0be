/**
 * The bridge from a VS Code CancellationToken to an AbortSignal (every cancel reaches the request; no dropped
 * disposable). cancellation.ts imports only vscode's types, so it runs in plain Node with a
 * token built here.
 */
import * as assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { toAbortSignal } from '../../src/extension/platform/cancellation';

/** A token with VS Code's contract: listeners until disposed; `cancel()` fires each once. */
function tokenSource(cancelled = false) {
  const listeners = new Set<() => void>();
  const token = {
    isCancellationRequested: cancelled,
    onCancellationRequested: (listener: () => void) => {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
  } as unknown as vscode.CancellationToken;
  return {
    token,
    listeners,
    cancel: () => {
      (token as { isCancellationRequested: boolean }).isCancellationRequested = true;
      for (const l of [...listeners]) l();
    },
  };
}

describe('cancellation: CancellationToken to AbortSignal', () => {
  it("rule: the signal aborts when the token is cancelled, and the token's listener is then gone", () => {
    const source = tokenSource();
    const bridge = toAbortSignal(source.token);
    assert.equal(bridge.signal.aborted, false);
    source.cancel();
    assert.equal(bridge.signal.aborted, true);
    assert.equal(source.listeners.size, 0);
  });

  it('rule: a token already cancelled gives a signal already aborted', () => {
    const source = tokenSource(true);
    assert.equal(toAbortSignal(source.token).signal.aborted, true);
    assert.equal(source.listeners.size, 0);
  });

  it('rule: dispose removes the listener from the token (no listener outlives the operation); the signal stays as it was', () => {
    const source = tokenSource();
    const bridge = toAbortSignal(source.token);
    assert.equal(source.listeners.size, 1);
    bridge.dispose();
    assert.equal(source.listeners.size, 0);
    source.cancel();
    assert.equal(bridge.signal.aborted, false);
  });
});
