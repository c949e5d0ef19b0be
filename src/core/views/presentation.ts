/**
 * The words shown to a person about an error: what to do about it. One module, used by the CLI (cli/output.ts) and
 * the extension (extension/submit.ts), so both say the same thing (the words shown to a person live in one module).
 *
 * The words are true: what is said about retrying depends on what happened, read from the error's `retries`
 * (set by `withRetry`, http/retry.ts): "tried N times over S s" only when it was tried more than once; "not
 * retried: the Retry-After of N s is longer than the client waits" when that is why; nothing about retrying when
 * the error did not come through a retry loop.
 */
import { ApiError, ComfyError, ConnectionError } from '../http/errors';
import { untranslated, type Translate } from '../util/l10n';

/** Which program shows the words: a remedy that names a flag or a command differs between them. */
type Shell = 'cli' | 'extension';

/**
 * What a person can do about `error`, or undefined when its message says enough (or it is not an error of the
 * core). Reads the error's `code` (v2 codes: Job and Asset API v2, Errors, and the codes public sources add), its
 * `retryAfter` (s) and its `retries` (attempts, ms). Terminal codes say why retrying will not help. `unauthorized` has
 * words only for the CLI: the extension offers its "Set API Key" action instead. The words are in the language of `t`
 * (the extension passes `vscode.l10n.t`; the CLI keeps the default, English).
 */
export function adviceFor(error: unknown, shell?: Shell, t: Translate = untranslated): string | undefined {
  if (!ComfyError.is(error)) return undefined;
  return advice(error.code, error, shell, t);
}

/**
 * An error for a message the extension shows a person: `message [code] — advice` for an error of the core (the advice
 * of {@link adviceFor} for the extension, when there is one), the message of any other Error, else the value as text.
 * @param t our words in the user's language (`vscode.l10n.t`); default English.
 * @param options `hint: false`: a {@link ConnectionError} without its hint (its `reason` only).
 */
export function errorMessage(err: unknown, t: Translate = untranslated, options: { hint?: boolean } = {}): string {
  if (ComfyError.is(err)) {
    const advice = adviceFor(err, 'extension', t);
    // A connection failure without the transport's guess at its cause, when the caller says the cause itself.
    const message = options.hint === false && err instanceof ConnectionError ? err.reason : err.message;
    return `${message} [${err.code}]${advice ? ` — ${advice}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * One sentence for an `invalid_workflow` refusal that is only about node classes the server does not run: the server
 * named them (`details.unknown_classes`, {@link InvalidWorkflowError.unknownClasses}) and every node error is on a
 * node's `class_type`. The server's message when it names each class (the emulator's says what it runs and to use a
 * cloud connection), else ours naming them; each class once, never a reason per node. Undefined for any other
 * refusal, whose node errors are then listed as they are.
 * @param t our words in the user's language (`vscode.l10n.t`); default English.
 */
export function unknownClassesMessage(
  err: {
    readonly message: string;
    readonly unknownClasses: readonly string[];
    readonly nodeErrors: readonly { readonly field?: string }[];
  },
  t: Translate = untranslated,
): string | undefined {
  const classes = err.unknownClasses;
  if (classes.length === 0 || err.nodeErrors.some((n) => n.field !== 'class_type')) return undefined;
  const named = (c: string): boolean =>
    new RegExp(`(^|[^A-Za-z0-9_])${c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_])`).test(err.message);
  if (classes.every(named)) return err.message;
  return t(
    'the server does not run the node classes {0} that this workflow uses; use a connection that runs them',
    classes.join(', '),
  );
}

/** Codes whose advice does not depend on what happened (each a function, so its words go through `t`). */
const ADVICE: Readonly<Record<string, (t: Translate) => string>> = {
  idempotency_key_reuse: (t) =>
    t(
      'this Idempotency-Key was presented before, so the server did not run the workflow again; a job may already exist for it: check your jobs before submitting again (a new submission gets a new key)',
    ),
  deployment_stopped: (t) =>
    t(
      'the deployment is stopped, and retrying cannot succeed until its operator starts it again; use another deployment or base URL meanwhile',
    ),
  insufficient_credits: (t) =>
    t('the account is out of credits; add credits to it, then submit again (nothing was run)'),
  rate_limited: (t) => t('too many requests for this account; wait for the Retry-After time before trying again'),
  forbidden: (t) =>
    t('the API key is valid but not allowed to do this; use a key of the account that owns the job or asset'),
  missing_asset: (t) =>
    t(
      'a core/ASSET input names an asset that is unknown, expired or not yours; upload the file again and use the new asset id',
    ),
  asset_in_use: (t) =>
    t(
      'the server still holds this asset (e.g. a queued or running job uses it); delete it once the job using it has finished, or cancel that job first',
    ),
  upstream_error: (t) => t('the service failed unexpectedly; try again shortly'),
};

/** Codes that mean "not now": what happened, then when to try again (the default closing). */
const NOT_NOW: Readonly<Record<string, { what: (t: Translate) => string; closing: (t: Translate) => string }>> = {
  queue_full: { what: (t) => t('the queue is full'), closing: (t) => t('try again later') },
  deployment_not_ready: {
    what: (t) => t('the deployment is still starting'),
    closing: (t) => t('try again in a minute'),
  },
};

/** Remedies named in each shell's own terms. */
const UNAUTHORIZED: Readonly<Record<Shell, ((t: Translate) => string) | undefined>> = {
  cli: (t) => t('set an API key with {0} or {1}', '--api-key', 'COMFY_API_KEY'),
  extension: undefined,
};

function advice(
  code: string,
  error: ComfyError | undefined,
  shell: Shell | undefined,
  t: Translate,
): string | undefined {
  if (code === 'unauthorized') return shell ? UNAUTHORIZED[shell]?.(t) : undefined;
  const notNow = NOT_NOW[code];
  if (!notNow) return ADVICE[code]?.(t);
  const retryAfter = error instanceof ApiError ? error.retryAfter : undefined;
  const history = error?.retries;
  const tooLong = history !== undefined && retryAfter !== undefined && retryAfter > history.maxRetryAfterS;
  const notWaited = tooLong
    ? t('the Retry-After of {0} s is longer than the client waits ({1} s)', retryAfter, history.maxRetryAfterS)
    : '';
  let story: string | undefined;
  if (history && history.attempts > 1) {
    const tried = t('tried {0} times over {1} s', history.attempts, seconds(history.elapsedMs));
    story = tooLong ? t('{0}, then not again: {1}', tried, notWaited) : t('{0}, until the retry budget ran out', tried);
  } else if (history) {
    story = tooLong ? t('not retried: {0}', notWaited) : t('not retried');
  }
  // After a Retry-After too long to wait for, "in a minute" would be untrue: the server named its own time.
  const closing = tooLong ? t('try again in {0} s or later', retryAfter) : notNow.closing(t);
  return [notNow.what(t), story, closing].filter(Boolean).join('; ');
}

/** A duration (ms) in seconds for a sentence: one decimal under 10 s (`0.5`, `8`), whole seconds above. */
function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0));
}
