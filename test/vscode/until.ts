// Waiting for a state in the extension host without sleeping: a check run now and again on each event that can
// change its answer, with a deadline. Shared by the suites (not a suite itself: index.ts loads only *.test.js).
import type * as vscode from 'vscode';

/** How long a suite waits for a state before failing (ms): generous, so a loaded machine is slow, never failing. */
export const DEADLINE_MS = 90_000;

/**
 * Resolves with `check()`'s value once it is neither undefined nor false, checked now and on every event of
 * `events`; rejects after `deadlineMs` with an error naming `what` (a function: evaluated then, to show the state),
 * or with the check's own error.
 */
export function until<T>(
  what: string | (() => string),
  events: ReadonlyArray<vscode.Event<unknown>>,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  deadlineMs = DEADLINE_MS,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const subs: vscode.Disposable[] = [];
    const finish = (err: Error | undefined, value?: T): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const s of subs) s.dispose();
      if (err) reject(err);
      else resolve(value as T);
    };
    const timer = setTimeout(
      () => finish(new Error(`not within ${deadlineMs} ms: ${typeof what === 'string' ? what : what()}`)),
      deadlineMs,
    );
    const test = (): void => {
      Promise.resolve()
        .then(check)
        .then(
          (v) => {
            if (v !== undefined && v !== false) finish(undefined, v);
          },
          (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
        );
    };
    for (const event of events) subs.push(event(test));
    test();
  });
}
