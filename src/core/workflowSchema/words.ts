/**
 * The words an engine uses about a workflow's values and nodes, shared by the client's validator (which speaks with the
 * words the server would use) and the emulator's engine, so both say the same thing.
 */

/** A short description of a value for a reason text (`the string "64"`, `the number 0`, `an array`). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `the boolean ${value}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** One collator for every comparison: `localeCompare` with options makes one per call (most of a 500-node graph's time). */
const NODE_ID_ORDER = new Intl.Collator('en', { numeric: true });

/** Node ids in the engine's natural order ("2" before "10"): a comparator for `sort`. */
export function byNodeId(a: string, b: string): number {
  return NODE_ID_ORDER.compare(a, b);
}
