import * as vscode from 'vscode';

/**
 * Command implementations loaded on first use (at most 150 KB of JavaScript loaded at
 * activation). The production build (esbuild.mjs, `lazy-extension-modules`) puts each command module in its own file,
 * `dist/lib/ext-<name>.js`, which shares the one core (`dist/lib/core.js`) with the extension, so an error class, the
 * job service and the state store are the same objects on both sides. Activation only registers the command ids.
 */

/** The commands a lazily loaded module handles: command id → handler. */
export type CommandHandlers = Readonly<Record<string, (...args: never[]) => unknown>>;

/** `make` called once, at the first call; later calls return the same value. */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * Registers `ids` now; the first call of any loads the handlers (`load`, which requires the module and builds its
 * object) and every call then goes to `handlers[id]`.
 * @throws Error (at that first call) when the loaded handlers do not handle exactly `ids`: a programming error.
 */
export function registerLazyCommands(ids: readonly string[], load: () => CommandHandlers): vscode.Disposable {
  const handlers = once(() => {
    const loaded = load();
    const missing = ids.filter((id) => typeof loaded[id] !== 'function');
    const extra = Object.keys(loaded).filter((id) => !ids.includes(id));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(`lazy commands do not match: missing ${missing.join(', ') || 'none'}; not registered ${extra.join(', ') || 'none'}`);
    }
    return loaded as Record<string, (...args: unknown[]) => unknown>;
  });
  return vscode.Disposable.from(...ids.map((id) => vscode.commands.registerCommand(id, (...args: unknown[]) => handlers()[id]!(...args))));
}
