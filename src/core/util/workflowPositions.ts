/**
 * Where a node error of a 422 `invalid_workflow` belongs in the workflow's text (it becomes a Problems entry there;
 * positions in JSON come from `jsonc-parser`, as VS Code's JSON extension does, never from a regex). An API-format
 * workflow is `{ "<node id>": { "class_type": …, "inputs": { "<field>": … } } }` (Job and Asset API v2,
 * POST /api/v2/jobs, and Error envelope: `node_errors`).
 */
import { findNodeAtLocation, parseTree, type Node } from 'jsonc-parser';

/** A span of the text: `offset` and `length` in UTF-16 code units (what `TextDocument.positionAt` takes). */
export interface TextSpan {
  offset: number;
  length: number;
}

/** One error to place: the node's id and, when the server named it, the input field. */
export interface NodeErrorTarget {
  nodeId: string;
  field?: string | null;
}

/** The key (property name, quotes included) of the property whose value is `value`, if it is one. */
function keyOf(value: Node | undefined): Node | undefined {
  const property = value?.parent;
  return property?.type === 'property' ? property.children?.[0] : undefined;
}

function spanOf(node: Node): TextSpan {
  return { offset: node.offset, length: node.length };
}

/**
 * The span of each error in `text`, in order, the text parsed once (comments and trailing commas allowed, so a
 * `.jsonc` or a hand-edited file still gets positions):
 * - a field the node has (`[nodeId, 'inputs', field]`): that field's key;
 * - a field the node does not have (a missing required input), or no field: the node's key;
 * - a node the text does not have (or text that is not a JSON object): the start of the text, length 0.
 * Only the tree decides: a node id that also appears as a string value elsewhere (a link `["4", 0]`, a prefix) is
 * never mistaken for the node.
 */
export function nodeErrorSpans(text: string, targets: readonly NodeErrorTarget[]): TextSpan[] {
  const root = parseTree(text, undefined, { allowTrailingComma: true, disallowComments: false });
  const start: TextSpan = { offset: 0, length: 0 };
  return targets.map(({ nodeId, field }) => {
    if (!root || root.type !== 'object') return start;
    if (field) {
      const input = keyOf(findNodeAtLocation(root, [nodeId, 'inputs', field]));
      if (input) return spanOf(input);
    }
    const node = keyOf(findNodeAtLocation(root, [nodeId]));
    return node ? spanOf(node) : start;
  });
}
