/**
 * Byte counts as text, one module for every message and label: {@link describeSize} for messages and logs (exact, so
 * a bound can be checked), {@link humanSize} for labels in the views (short, in the user's language). Both base 1024.
 * No Node import: the monitor's webview script uses it too.
 */
import { untranslated, type Translate } from './l10n';

/**
 * A byte count for a message, with the exact count beside the rounded one: `16 MiB (16777216 bytes)`,
 * `1.5 KiB (1536 bytes)`, `512 bytes`. One decimal at most, a `.0` dropped; up to GiB.
 */
export function describeSize(bytes: number): string {
  const units: [number, string][] = [
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB'],
    [1024, 'KiB'],
  ];
  for (const [unit, name] of units) {
    if (bytes >= unit) return `${Number((bytes / unit).toFixed(1))} ${name} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}

/**
 * A size for a label, in human units, base 1024: `0 B`, `512 B`, `1 KB`, `1.5 KB`, `12 MB`, `3.3 GB`, up to TB (one
 * decimal below 10, a `.0` dropped; whole numbers from 10). '' when unknown (null, undefined), negative or not finite.
 * @param t our words in the user's language (`vscode.l10n.t`); default {@link untranslated} (the monitor's page,
 *   which has no translator of its own).
 */
export function humanSize(bytes: number | null | undefined, t: Translate = untranslated): string {
  if (bytes == null || !Number.isFinite(bytes) || bytes < 0) return '';
  if (bytes < 1024) return t('{0} B', bytes);
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = value < 10 ? value.toFixed(1).replace(/\.0$/, '') : String(Math.round(value));
  return t('{0} {1}', shown, units[unit]!);
}
