/**
 * Checks an API-format workflow against an engine's node definitions, beyond what a JSON Schema can say (links
 * between nodes, the output node), and optionally what the schema says too (for a check before submit, where no
 * schema runs). For workflow IntelliSense it adds diagnostics for links to missing nodes, output
 * indexes out of range, type mismatches between a linked output and the input, and a graph with no output node;
 * the same validation runs before submit (v1 and v2), with the words the server would use; when node definitions
 * are unknown, diagnostics stay quiet and the status says why.
 *
 * Words: each reason is the emulator's (src/emulator/engine/engine.ts, the `invalid_workflow` `node_errors` of
 * Job and Asset API v2, Error envelope: `{field, reason}`); each code is the engine's error `type` where it has one
 * (`missing_node_type`, `required_input_missing`, `return_type_mismatch`, `prompt_no_outputs`, …).
 */
import type { Translate } from '../util/l10n';
import { isLink, isPlainObject, withoutSchemaKey } from '../util/workflow';
import { linkTypeMatches } from './linkTypes';
import type { InputDefinition, NodeClassDefinition, NodeDefinitions } from './objectInfo';
import { byNodeId, describeValue } from './words';

/** What a diagnostic is about. The engine's error `type` where it has one; ours otherwise. */
type WorkflowProblemCode =
  /** A node that is not an object, or has no string `class_type` (engine: `invalid_prompt`). */
  | 'invalid_prompt'
  /** A node whose `inputs` is not an object. */
  | 'invalid_inputs'
  /** `class_type` is not among the definitions (engine: `missing_node_type`). */
  | 'missing_node_type'
  | 'required_input_missing'
  /** An array value that is not `[node_id, output_index]` (engine: `bad_linked_input`). */
  | 'bad_linked_input'
  /** A link to a node id that is not in the workflow. */
  | 'link_to_missing_node'
  /** A link to an output index the source node does not have (or a node with no outputs). */
  | 'output_index_out_of_range'
  /** The linked output's type does not fit the input (engine: `return_type_mismatch`). */
  | 'return_type_mismatch'
  /** A literal of the wrong type (engine: `invalid_input_type`). */
  | 'invalid_input_type'
  | 'value_smaller_than_min'
  | 'value_bigger_than_max'
  | 'value_not_in_list'
  /** No node of the workflow is an output node (engine: `prompt_no_outputs`). */
  | 'prompt_no_outputs'
  /** No nodes at all. */
  | 'empty_workflow';

/** A path in the JSON document, as jsonc-parser's `findNodeAtLocation` takes it: keys and array indexes. */
export type JsonPath = (string | number)[];

/**
 * One problem. `path` locates it in the document (`[]`: the whole workflow; `[id, "class_type"]`;
 * `[id, "inputs"]` for a missing input; `[id, "inputs", name]`; `[id, "inputs", name, 0]` for a link's node id,
 * `1` for its output index). `nodeId`/`field`/`message` are the `node_errors` item of the v2 document
 * (`field`: `class_type`, `inputs` or the input name).
 */
export interface WorkflowDiagnostic {
  readonly code: WorkflowProblemCode;
  readonly message: string;
  readonly path: JsonPath;
  readonly nodeId?: string;
  readonly field?: string;
}

/**
 * The outcome: `checked` with its diagnostics (none: the workflow is fine), or `quiet` (nothing was checked, no
 * diagnostics) with the reason in words for a status line.
 */
export type WorkflowCheck =
  | { readonly status: 'checked'; readonly diagnostics: readonly WorkflowDiagnostic[] }
  | { readonly status: 'quiet'; readonly reason: string; readonly diagnostics: readonly [] };

/** Options of {@link checkWorkflow}. */
export interface CheckWorkflowOptions {
  /**
   * `all` (default; before submit): every rule. `beyondSchema` (in an editor where the generated JSON Schema
   * already reports them): leaves out unknown `class_type`, missing required inputs, bad links' shape and literal
   * type/range/choice problems, so nothing is reported twice.
   */
  readonly scope?: 'all' | 'beyondSchema';
}

/** At most this many class names are listed in a message (a real engine has thousands). */
const MAX_LISTED = 6;

/** `names` joined by `joiner`, at most {@link MAX_LISTED} of them, then `…`. */
function listed(names: readonly string[], joiner: string): string {
  return names.length > MAX_LISTED ? `${names.slice(0, MAX_LISTED).join(joiner)}${joiner}…` : names.join(joiner);
}

/** The literal problem of `value` for `input` (an input that is not a link-only or dynamic one), or undefined. */
function literalProblem(
  input: InputDefinition,
  value: unknown,
  t: Translate,
): { code: WorkflowProblemCode; message: string } | undefined {
  const wrongType = (expected: string) => ({
    code: 'invalid_input_type' as const,
    message: t('expects {0}; got {1}', expected, describeValue(value)),
  });
  const range = (v: number) => {
    if (input.min !== undefined && v < input.min)
      return {
        code: 'value_smaller_than_min' as const,
        message: t('value {0} is below the minimum {1}', v, input.min),
      };
    if (input.max !== undefined && v > input.max)
      return { code: 'value_bigger_than_max' as const, message: t('value {0} is above the maximum {1}', v, input.max) };
    return undefined;
  };
  switch (input.kind) {
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) ? range(value) : wrongType(t('an integer'));
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? range(value) : wrongType(t('a number'));
    case 'string':
      return typeof value === 'string' ? undefined : wrongType(t('a string'));
    case 'boolean':
      return typeof value === 'boolean' ? undefined : wrongType(t('a boolean'));
    case 'combo': {
      const choices = input.choices ?? [];
      // No choices served (no models of that kind installed): unchecked, as the schema leaves it. An upload's choices
      // are the input folder when the definitions were read: a newer file's name is fine.
      if (input.upload) return typeof value === 'string' ? undefined : wrongType(t('a file name'));
      if (choices.length === 0) return undefined;
      const values = input.multiselect && Array.isArray(value) ? value : [value];
      const bad = values.find((v) => !choices.includes(v as string | number));
      if (bad === undefined) return undefined;
      const list = listed(choices.map(String), ', ');
      return typeof bad === 'string' || typeof bad === 'number'
        ? { code: 'value_not_in_list', message: t('value {0} is not one of {1}', JSON.stringify(bad), list) }
        : wrongType(t('one of {0}', list));
    }
    default:
      return undefined;
  }
}

/**
 * Checks `workflow` (an API-format graph, parsed; a top-level `$schema` string is ignored) against `definitions`.
 * Quiet (no diagnostics, a reason) when the definitions are unknown (undefined or no classes) or the value is not an
 * object of nodes; otherwise every node is checked, reachable from an output or not (as the emulator does).
 * Rules, with the diagnostic code:
 * - a node without a string `class_type`: `invalid_prompt`; `inputs` not an object: `invalid_inputs`;
 * - `class_type` not defined: `missing_node_type` (its links are then not checked, as the engine cannot);
 * - a required input absent: `required_input_missing`;
 * - a link to a node id that is not in the workflow: `link_to_missing_node`;
 * - a link to an output index the source class does not have: `output_index_out_of_range`;
 * - a link whose output type does not fit the input (linkTypes.ts): `return_type_mismatch`;
 * - an array that is not `[node_id, output_index]`: `bad_linked_input`; a literal of the wrong type, out of
 *   `min`/`max` or not among a combo's choices: `invalid_input_type`, `value_smaller_than_min`,
 *   `value_bigger_than_max`, `value_not_in_list`;
 * - no output node (`output_node: true`) in the workflow: `prompt_no_outputs`; no node at all: `empty_workflow`.
 * With `scope: 'beyondSchema'` the rules the generated schema states are left out (see {@link CheckWorkflowOptions}).
 * @param t the translation of the messages (`untranslated` gives the server's English words).
 */
export function checkWorkflow(
  workflow: unknown,
  definitions: NodeDefinitions | undefined,
  t: Translate,
  options: CheckWorkflowOptions = {},
): WorkflowCheck {
  if (definitions === undefined || definitions.classes.size === 0) {
    return {
      status: 'quiet',
      reason: t('Node definitions are not known yet (no object_info from the engine), so the workflow is not checked.'),
      diagnostics: [],
    };
  }
  if (!isPlainObject(workflow) || Array.isArray(workflow.nodes)) {
    return {
      status: 'quiet',
      reason: t('Not an API-format workflow, so it is not checked against the node definitions.'),
      diagnostics: [],
    };
  }
  const all = options.scope !== 'beyondSchema';
  const classes = definitions.classes;
  const diagnostics: WorkflowDiagnostic[] = [];
  const add = (code: WorkflowProblemCode, message: string, path: JsonPath, nodeId?: string, field?: string): void => {
    diagnostics.push({
      code,
      message,
      path,
      ...(nodeId !== undefined ? { nodeId } : {}),
      ...(field !== undefined ? { field } : {}),
    });
  };
  const nodes = withoutSchemaKey(workflow);
  const ids = Object.keys(nodes).sort(byNodeId);
  const found = new Map<
    string,
    { definition: NodeClassDefinition | undefined; inputs: Record<string, unknown> | undefined }
  >();

  for (const id of ids) {
    const raw = nodes[id];
    if (!isPlainObject(raw) || typeof raw.class_type !== 'string') {
      const what = isPlainObject(raw) ? describeValue(raw.class_type) : describeValue(raw);
      const message = isPlainObject(raw)
        ? t('missing: every node needs a "class_type" string; got {0}', what)
        : t('not a node: expected an object with "class_type" and "inputs"; got {0}', what);
      if (all)
        add(
          'invalid_prompt',
          message,
          isPlainObject(raw) && Object.hasOwn(raw, 'class_type') ? [id, 'class_type'] : [id],
          id,
          'class_type',
        );
      continue;
    }
    const definition = classes.get(raw.class_type);
    const inputs = isPlainObject(raw.inputs) ? raw.inputs : undefined;
    found.set(id, { definition, inputs });
    if (inputs === undefined && all)
      add(
        'invalid_inputs',
        t('missing: every node needs an "inputs" object; got {0}', describeValue(raw.inputs)),
        [id],
        id,
        'inputs',
      );
    if (definition === undefined && all) {
      const names = [...classes.keys()];
      const message =
        names.length <= MAX_LISTED
          ? t('unknown node class {0}; this service runs {1}', JSON.stringify(raw.class_type), names.join(', '))
          : t(
              'unknown node class {0}; the node definitions ({1} classes) have no such class_type',
              JSON.stringify(raw.class_type),
              names.length,
            );
      add('missing_node_type', message, [id, 'class_type'], id, 'class_type');
    }
  }
  if (ids.length === 0 && all) add('empty_workflow', t('the workflow has no nodes'), []);

  for (const [id, node] of found) {
    if (node.definition === undefined || node.inputs === undefined) continue;
    for (const input of node.definition.inputs) {
      if (input.kind === 'dynamic') continue;
      const value = Object.hasOwn(node.inputs, input.name) ? node.inputs[input.name] : undefined;
      const path: JsonPath = [id, 'inputs', input.name];
      if (value === undefined) {
        if (input.required && all)
          add('required_input_missing', t('required input is missing'), [id, 'inputs'], id, input.name);
        continue;
      }
      if (isLink(value)) {
        checkLink(id, input, value, path);
        continue;
      }
      if (Array.isArray(value) && !(input.kind === 'combo' && input.multiselect)) {
        if (all)
          add(
            'bad_linked_input',
            t('expects a link [node_id, output_index] to an {0} output; got {1}', input.type, describeValue(value)),
            path,
            id,
            input.name,
          );
        continue;
      }
      if (!all) continue;
      // A job-service asset reference (Job and Asset API v2, POST /api/v2/jobs, rule 1) stands for a file name; the
      // server checks its id.
      if ((input.kind === 'combo' || input.kind === 'string') && isPlainObject(value) && value.__type === 'core/ASSET')
        continue;
      if (input.kind === 'link') {
        add(
          'invalid_input_type',
          t('expects a link [node_id, output_index] to an {0} output; got {1}', input.type, describeValue(value)),
          path,
          id,
          input.name,
        );
        continue;
      }
      const problem = literalProblem(input, value, t);
      if (problem !== undefined) add(problem.code, problem.message, path, id, input.name);
    }
  }

  function checkLink(id: string, input: InputDefinition, link: [string, number], path: JsonPath): void {
    const source = String(link[0]);
    const index = link[1];
    const target = found.get(source);
    if (target === undefined) {
      // Also a node id present but not a node (reported on that node itself).
      if (!Object.hasOwn(nodes, source))
        add(
          'link_to_missing_node',
          t('links to node {0}, which is not in the workflow', JSON.stringify(source)),
          [...path, 0],
          id,
          input.name,
        );
      return;
    }
    // An unknown source class is reported on the source node itself; its outputs are unknown.
    if (target.definition === undefined) return;
    const outputs = target.definition.outputs;
    const name = `node ${JSON.stringify(source)} (${target.definition.classType})`;
    if (outputs.length === 0) {
      add('output_index_out_of_range', t('links to {0}, which has no outputs', name), [...path, 1], id, input.name);
      return;
    }
    if (index < 0 || index >= outputs.length) {
      const list = outputs.map((o, i) => `${i}: ${o.type}`).join(', ');
      const message =
        outputs.length > 1
          ? t('links to output {0} of {1}, which has only outputs {2}', index, name, list)
          : t('links to output {0} of {1}, which has only output {2}', index, name, list);
      add('output_index_out_of_range', message, [...path, 1], id, input.name);
      return;
    }
    const received = outputs[index]!.type;
    if (!linkTypeMatches(received, input.type)) {
      add(
        'return_type_mismatch',
        t('expects {0}, but output {1} of {2} is {3}', input.type, index, name, received),
        path,
        id,
        input.name,
      );
    }
  }

  const hasOutput = [...found.values()].some((n) => n.definition?.outputNode === true);
  // Only when every class is known: an unknown class may be the output node.
  const allKnown = [...found.values()].every((n) => n.definition !== undefined);
  if (found.size > 0 && !hasOutput && allKnown) {
    const outputClasses = [...classes.values()].filter((d) => d.outputNode).map((d) => d.classType);
    // The classes a person most likely wants come first.
    const preferred = ['SaveImage', 'PreviewImage'].filter((c) => outputClasses.includes(c));
    const names = [...preferred, ...outputClasses.filter((c) => !preferred.includes(c)).sort()];
    add(
      'prompt_no_outputs',
      t('the workflow has no output node ({0}), so it would produce nothing', listed(names, ' or ')),
      [],
    );
  }
  // Node problems in node id order (stable within a node), then the graph's.
  diagnostics.sort((a, b) => {
    if (a.nodeId === undefined || b.nodeId === undefined)
      return (a.nodeId === undefined ? 1 : 0) - (b.nodeId === undefined ? 1 : 0);
    return byNodeId(a.nodeId, b.nodeId);
  });
  return { status: 'checked', diagnostics };
}

/**
 * The diagnostics as the v2 document's `details.node_errors` (node id → `[{field, reason}]`) plus the graph-level
 * ones (no output node, no nodes) as `graph` reasons: what a check before submit shows, in the server's shape.
 */
export function nodeErrorsOf(diagnostics: readonly WorkflowDiagnostic[]): {
  nodeErrors: Record<string, { field: string; reason: string }[]>;
  graph: string[];
} {
  const nodeErrors: Record<string, { field: string; reason: string }[]> = {};
  const graph: string[] = [];
  for (const d of diagnostics) {
    if (d.nodeId === undefined) {
      graph.push(d.message);
      continue;
    }
    (nodeErrors[d.nodeId] ??= []).push({ field: d.field ?? 'inputs', reason: d.message });
  }
  return { nodeErrors, graph };
}

/**
 * One line for a refused workflow, as the emulator's `invalid_workflow` message words it: `invalid workflow: node 2
 * input image: <reason> (and 2 more problems)`; undefined when there is no diagnostic.
 */
export function summarizeWorkflowProblems(
  diagnostics: readonly WorkflowDiagnostic[],
  t: Translate,
): string | undefined {
  const first = diagnostics[0];
  if (first === undefined) return undefined;
  const head =
    first.nodeId === undefined
      ? first.message
      : first.field === 'class_type' || first.field === 'inputs' || first.field === undefined
        ? t('node {0} {1}: {2}', first.nodeId, first.field ?? 'inputs', first.message)
        : t('node {0} input {1}: {2}', first.nodeId, first.field, first.message);
  const more = diagnostics.length - 1;
  if (more === 0) return t('invalid workflow: {0}', head);
  return more === 1
    ? t('invalid workflow: {0} (and 1 more problem)', head)
    : t('invalid workflow: {0} (and {1} more problems)', head, more);
}
