import type * as vscode from 'vscode';

/** An AbortSignal that follows a CancellationToken; dispose it to stop listening to the token. */
export interface TokenSignal extends vscode.Disposable {
  readonly signal: AbortSignal;
}

/**
 * The one bridge from VS Code's CancellationToken to the core's AbortSignal (so every cancel reaches the request):
 * the signal aborts when the token is cancelled (at once if it already is). The token's
 * listener is disposed by `dispose()` (and as soon as it fired), so no listener outlives the operation.
 */
export function toAbortSignal(token: vscode.CancellationToken): TokenSignal {
  const controller = new AbortController();
  if (token.isCancellationRequested) {
    controller.abort();
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listener = token.onCancellationRequested(() => {
    listener.dispose();
    controller.abort();
  });
  return { signal: controller.signal, dispose: () => listener.dispose() };
}
