/**
 * Localization for vscode-free code (every user-visible string goes through `vscode.l10n` /
 * `package.nls.json`). The core and the tree models take a {@link Translate} function: the extension passes
 * `vscode.l10n.t` (same signature), the CLI and tests pass {@link untranslated}. The message is the English text with
 * `{0}`, `{1}`… placeholders, as `vscode.l10n.t` expects, so one string serves as both the source and the l10n key.
 */

/** Formats `message` (English, with `{N}` placeholders) in the user's language. Same shape as `vscode.l10n.t`. */
export type Translate = (message: string, ...args: Array<string | number | boolean>) => string;

/** The identity translation: fills `{N}` placeholders with `args[N]` (a placeholder with no argument stays as is). */
export const untranslated: Translate = (message, ...args) =>
  // Most messages have no placeholder: returned as they are, without running the regex.
  !message.includes('{')
    ? message
    : message.replace(/\{(\d+)\}/g, (whole, index: string) => {
        const value = args[Number(index)];
        return value === undefined ? whole : String(value);
      });
