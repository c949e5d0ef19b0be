/**
 * Workflow formats: telling an API-format graph (what POST /api/v2/jobs takes) from a UI-format export
 * (what the editor saves). Rules: Job and Asset API v2, POST /api/v2/jobs, rule 2 (how UI format is recognized is
 * not shown there; public sources: a top-level `nodes` array, as below).
 */
import { InputError } from '../http/errors';

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

/** Node id and link: `[source_node_id, output_index]` (the workflow engine's API format; public sources). */
export type Link = [string, number];

/** True for a JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Classifies a parsed JSON value.
 * - `ui`: the top level has a `nodes` array (editor export, schema 0.4 with `last_node_id`/`links` or
 *   schema 1 with `state`); the official SDK's all-three-keys check (`nodes`, `links`, `last_node_id`) misses schema 1.
 * - `api`: a non-empty object whose every value is an object with a string `class_type` and an object `inputs`; a
 *   top-level `$schema` string (the workflow schema's reference an editor inserts) is not a node and is ignored.
 * - `unknown`: anything else.
 */
export function detectWorkflowFormat(value: unknown): WorkflowFormat {
  if (!isPlainObject(value)) return 'unknown';
  if (Array.isArray(value.nodes)) return 'ui';
  const entries = Object.values(withoutSchemaKey(value));
  if (entries.length === 0) return 'unknown';
  const allNodes = entries.every(
    (node) => isPlainObject(node) && typeof node.class_type === 'string' && isPlainObject(node.inputs),
  );
  return allNodes ? 'api' : 'unknown';
}

/**
 * `value` without its top-level `$schema` key when that key holds a string (the reference to the workflow schema an
 * editor inserts; it is not a node, so it is removed before any submission, CLI and extension, v1 and v2, and the
 * API-format check ignores it). A shallow copy; anything else (a non-object, no `$schema`, a `$schema`
 * that is not a string, which could be a node id) is returned as is. The text-level twin for bodies sent byte for
 * byte is `removeTopLevelSchemaKey` (router/input.ts).
 */
export function withoutSchemaKey<T>(value: T): T {
  if (!isPlainObject(value) || typeof value.$schema !== 'string') return value;
  const { $schema: _dropped, ...rest } = value;
  return rest as T;
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

/** At most this many characters of a SaveImage prefix are kept for a label. */
const MAX_PREFIX = 120;

/**
 * The `filename_prefix` of the workflow's first SaveImage node (by node id order), trimmed; undefined when there is
 * none. What names a job whose workflow came from no file (a job's label is its workflow's file name, else this
 * prefix). Not validated further: it is shown cleaned, like any other text.
 */
export function saveImagePrefix(workflow: unknown): string | undefined {
  if (!isPlainObject(workflow)) return undefined;
  for (const id of Object.keys(workflow).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))) {
    const node = workflow[id];
    if (!isPlainObject(node) || node.class_type !== 'SaveImage' || !isPlainObject(node.inputs)) continue;
    const prefix = node.inputs.filename_prefix;
    if (typeof prefix === 'string' && prefix.trim()) return prefix.trim().slice(0, MAX_PREFIX);
  }
  return undefined;
}

/**
 * The SaveImage prefix an output's file name shows (`invert_00001_.png` → `invert`, the engine's
 * `<prefix>_<counter>_.<ext>`); undefined when the name is not of that form.
 */
export function prefixOfOutputName(name: string | null | undefined): string | undefined {
  const m = /^(.+?)_\d{5,}_?\.[A-Za-z0-9]+$/.exec(name ?? '');
  return m ? m[1]!.slice(0, MAX_PREFIX) : undefined;
}

/**
 * True for an output or asset that is a PNG image (content type `image/png`, or no type and a `.png` name): ComfyUI
 * writes the workflow that made it into its text chunks.
 */
export function isPngOutput(contentType: string | null | undefined, name: string | null | undefined): boolean {
  if (contentType) return contentType.toLowerCase() === 'image/png';
  return /\.png$/i.test(name ?? '');
}

/**
 * Refuses, before any request, a workflow that the server would refuse for its format (POST /api/v2/jobs
 * rule 2) or that is not an API-format graph at all.
 * @throws InputError `workflow_format_ui` (the server's own code) or `not_api_format`.
 */
export function assertApiWorkflow(workflow: unknown): asserts workflow is ApiWorkflow {
  const format = detectWorkflowFormat(workflow);
  if (format === 'ui') {
    throw new InputError(
      'workflow_format_ui',
      'This is a UI-format workflow (the editor\'s save file, with "nodes" and "links"). The job service runs API format: in ComfyUI, use Workflow → Export (API) and submit that file.',
    );
  }
  if (format !== 'api') {
    throw new InputError(
      'not_api_format',
      'This JSON is not an API-format workflow: expected an object of nodes, each with a string "class_type" and an object "inputs". In ComfyUI, use Workflow → Export (API).',
    );
  }
}

/**
 * A workflow input that refers to an asset (Job and Asset API v2, POST /api/v2/jobs, rule 1: objects of kind
 * core/ASSET; their shape is not shown there, public sources give it): `info.id` is what counts.
 */
export interface AssetReference {
  __type: 'core/ASSET';
  info: { id: string; hash?: string; file_path?: string };
}

/** The `core/ASSET` reference for an asset (an uploaded asset, a job's output, a remembered upload): only the fields it reads. */
export function assetReference(asset: { id: string; hash?: string | null; file_path?: string | null }): AssetReference {
  const info: AssetReference['info'] = { id: asset.id };
  if (asset.hash) info.hash = asset.hash;
  if (asset.file_path) info.file_path = asset.file_path;
  return { __type: 'core/ASSET', info };
}
