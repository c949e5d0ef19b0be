/**
 * What a face says when the connection's API cannot do what was asked, decided by the backend's capabilities
 * (core/jobs/backend.ts `JobCapabilities`), never by the API's name: the same words in the CLI and the editor. Each face
 * adds its own fix (the CLI: drop `--api`; the editor: the connection's `api` setting).
 */
import type { JobCapabilities } from './backend';
import { untranslated, type Translate } from '../util/l10n';

/** A capability an operation needs ({@link JobCapabilities}). */
export type RefusedCapability = keyof JobCapabilities;

/**
 * The sentence (no prefix, no fix) that says the connection's API, `api` (the backend's `api`, e.g. `v1`), lacks
 * `capability`; the extension passes `vscode.l10n.t` as `t`.
 */
export function refusalText(capability: RefusedCapability, api: string, t: Translate = untranslated): string {
  switch (capability) {
    case 'list':
      return t(
        'the {0} API of this connection does not list its jobs: only the jobs submitted from this machine are known',
        api,
      );
    case 'cancelRunning':
      return t('the {0} API of this connection cancels only a job that has not started', api);
    case 'assets':
      return t('assets need the v2 API, and the active connection speaks {0}', api);
    case 'idempotentSubmit':
      return t(
        'a batch needs the v2 API: each variation is sent under its own Idempotency-Key so that none runs twice, and {0} has none',
        api,
      );
    case 'storedWorkflow':
      return t('the {0} API of this connection keeps no workflow of a job', api);
  }
}

/** Whether `capabilities` offer `capability`; when not, the sentence of {@link refusalText} for `api`. */
export function refusalOf(
  capabilities: JobCapabilities,
  capability: RefusedCapability,
  api: string,
  t: Translate = untranslated,
): string | undefined {
  return capabilities[capability] ? undefined : refusalText(capability, api, t);
}
