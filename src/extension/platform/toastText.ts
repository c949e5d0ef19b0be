/**
 * The product name every notification of the extension starts with, so that a toast among other extensions' says
 * whose it is. No `vscode` import: the rule is tested in plain Node.
 */
export const PRODUCT_PREFIX = 'Comfy Cloud:';

/**
 * `text` as a notification says it: unchanged when it already starts with "Comfy Cloud:", else prefixed through
 * `t('Comfy Cloud: {0}', text)` (the translated form of the prefix; `t` is `vscode.l10n.t` in the extension).
 */
export function toastText(text: string, t: (message: string, ...args: string[]) => string): string {
  return text.startsWith(PRODUCT_PREFIX) ? text : t('Comfy Cloud: {0}', text);
}
