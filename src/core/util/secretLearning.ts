/**
 * Teaching the log Redactor the secrets kept under a SecretStorage prefix, such as the model router's keys (the
 * user's own secrets are redacted from any text before it is printed or logged). vscode-free: the extension passes
 * its SecretStorage (same shape), tests a fake. The CLI feeds
 * `--router-key` / $COMFY_ROUTER_KEY to its Redactor directly (cli.ts). Loaded at activation: keep it small.
 */
import type { Redactor } from './text';

/** The part of VS Code's SecretStorage this needs. */
export interface SecretSource {
  get(key: string): PromiseLike<string | undefined>;
  onDidChange(listener: (e: { key: string }) => unknown): { dispose(): unknown };
}

/**
 * Makes `redactor` learn every secret under `prefix` (the router keys: `comfyCloud.routerKey:<origin>`): each secret
 * whose name starts with `prefix` as it is stored or changed, and now the keys of `origins()` (the configured router's
 * origin), so a line logged before any change is already redacted. A failed read is ignored (nothing was read, so
 * nothing can be echoed).
 * @returns `ready` (settles when the current keys are learnt) and `dispose` (stops listening); `relearn()` reads the
 *   keys of `origins()` again (after the router URL setting changes).
 */
export function learnSecrets(
  secrets: SecretSource,
  redactor: Redactor,
  prefix: string,
  origins: () => Iterable<string>,
): { ready: Promise<void>; relearn(): Promise<void>; dispose(): void } {
  const learn = async (name: string): Promise<void> => {
    try {
      redactor.add(await secrets.get(name));
    } catch {
      // unreadable: never shown either
    }
  };
  const relearn = async (): Promise<void> => {
    await Promise.all([...origins()].map((origin) => learn(prefix + origin)));
  };
  const subscription = secrets.onDidChange((e) => {
    if (e.key.startsWith(prefix)) void learn(e.key);
  });
  return { ready: relearn(), relearn, dispose: () => void subscription.dispose() };
}
