import * as vscode from 'vscode';

/**
 * Command objects built on first use. Some start work when built (workflow IntelliSense shows its status and follows
 * every JSON document; the job monitors restore panels), which a window that never uses them should not pay for, so
 * activation registers the command ids and builds each object at the first call of one of its commands.
 */

/** The commands an object handles: command id → handler. */
export type CommandHandlers = Readonly<Record<string, (...args: never[]) => unknown>>;

/** `make` called once, at the first call; later calls return the same value. */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * Registers `ids` now; the first call of any gets the handlers (`load`, which builds the object) and every call then
 * goes to `handlers[id]`.
 * @throws Error (at that first call) when the loaded handlers do not handle exactly `ids`: a programming error.
 */
export function registerLazyCommands(ids: readonly string[], load: () => CommandHandlers): vscode.Disposable {
  const handlers = once(() => {
    const loaded = load();
    const missing = ids.filter((id) => typeof loaded[id] !== 'function');
    const extra = Object.keys(loaded).filter((id) => !ids.includes(id));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `lazy commands do not match: missing ${missing.join(', ') || 'none'}; not registered ${extra.join(', ') || 'none'}`,
      );
    }
    return loaded as Record<string, (...args: unknown[]) => unknown>;
  });
  return vscode.Disposable.from(
    ...ids.map((id) => vscode.commands.registerCommand(id, (...args: unknown[]) => handlers()[id]!(...args))),
  );
}
