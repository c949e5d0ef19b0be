/**
 * Whether a link can carry a node output into an input: the engine's rule for socket types. Source: the engine's
 * `object_info` (a link's type is the source node's `output[index]`; `*` matches any type) and
 * the engine's `validate_node_input` (non-strict): types are comma-separated sets, and a link fits when the sets share
 * a type.
 */

/** The types of a comma-separated type string (`"STRING,INT"` → `STRING`, `INT`), trimmed, empty ones dropped. */
function typeSet(type: string): string[] {
  return type
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

/**
 * True when an output of type `received` may be linked into an input of type `expected`: equal types, `*` on either
 * side, or comma-separated sets that share a type (the engine's non-strict rule). A combo input's type is
 * `COMBO` and a combo output reads `COMBO` (objectInfo.ts), so a choice passed on from another node fits.
 */
export function linkTypeMatches(received: string, expected: string): boolean {
  if (received === expected) return true;
  const got = typeSet(received);
  const want = typeSet(expected);
  if (got.length === 0 || want.length === 0 || got.includes('*') || want.includes('*')) return true;
  return got.some((t) => want.includes(t));
}
