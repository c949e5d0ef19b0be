/**
 * Stable JSON of a value, for recognising a workflow again (a submission record keeps the hash of this text; the
 * views, the v1 and v2 job backends compare against it).
 */

/** Stable JSON (sorted keys) of a workflow, for recognising it. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
