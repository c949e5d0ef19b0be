/**
 * Workflow formats: telling an API-format graph (what POST /api/v2/jobs takes) from a UI-format export
 * (what the editor saves). Rules: jobs-assets-api-v2.md, POST /api/v2/jobs rule 2, and FACTS.md
 * ("UI-format detection").
 */

/** One node of an API-format workflow: `class_type` names the node, `inputs` holds literals and links. */
export interface ApiNode {
  class_type: string;
  inputs: Record<string, unknown>;
  _meta?: { title?: string; [key: string]: unknown };
}

/** An API-format workflow: node id → node. */
export type ApiWorkflow = Record<string, ApiNode>;

/** What a parsed JSON document is, as a workflow. */
export type WorkflowFormat = 'api' | 'ui' | 'unknown';

/** Node id and link: `[source_node_id, output_index]` (FACTS.md, "A workflow that needs no model weights"). */
export type Link = [string, number];

/** True for a JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Classifies a parsed JSON value.
 * - `ui`: the top level has a `nodes` array (editor export, schema 0.4 with `last_node_id`/`links` or
 *   schema 1 with `state`); FACTS.md notes the official SDK's all-three-keys check misses schema 1.
 * - `api`: a non-empty object whose every value is an object with a string `class_type` and an object `inputs`.
 * - `unknown`: anything else.
 */
export function detectWorkflowFormat(value: unknown): WorkflowFormat {
  if (!isPlainObject(value)) return 'unknown';
  if (Array.isArray(value.nodes)) return 'ui';
  const entries = Object.values(value);
  if (entries.length === 0) return 'unknown';
  const allNodes = entries.every(
    (node) => isPlainObject(node) && typeof node.class_type === 'string' && isPlainObject(node.inputs),
  );
  return allNodes ? 'api' : 'unknown';
}

/** True when `value` is a link `[source_node_id, output_index]` inside an API-format node's inputs. */
export function isLink(value: unknown): value is Link {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    (typeof value[0] === 'string' || typeof value[0] === 'number') &&
    typeof value[1] === 'number' &&
    Number.isInteger(value[1])
  );
}
