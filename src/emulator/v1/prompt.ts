/**
 * POST /api/prompt (Cloud API v1 (deprecated), Endpoints, rule 1, and Errors, rule 2; its other fields not shown
 * there; public sources: the answer is `{prompt_id, number, node_errors}` or an error body with `error` and
 * `node_errors`).
 *
 * The prompt is checked by the shared engine (engine/engine.ts `validateWorkflow`, the same check as v2's) and its
 * refusal rewritten in the workflow engine's own shape, answered 400:
 * `{"error": {type, message, details, extra_info}, "node_errors": {<node id>: {errors: [{type, message, details,
 * extra_info: {input_name, …}}], dependent_outputs: [<output node ids>], class_type}}}`, with the engine's error
 * types: `no_prompt`, `invalid_prompt` (not a graph, a UI export, an unknown class), `prompt_no_outputs`,
 * `prompt_outputs_failed_validation` (per input: `required_input_missing`, `value_smaller_than_min`,
 * `value_bigger_than_max`, `value_not_in_list`, `invalid_input_type`, `return_type_mismatch`,
 * `bad_linked_input`, `dependency_cycle`).
 *
 * LoadImage's `image` is a file name of the caller's uploads on v1 (as in the engine); it is turned into the
 * engine's `core/ASSET` reference before the check, and the prompt is kept as submitted.
 */
import { validateWorkflow, type ExecutionPlan } from '../engine/engine';
import { NODE_DEFINITIONS, type InputSpec } from '../engine/nodes';
import { EmulatorError, type FieldProblem } from '../errors';
import { detectWorkflowFormat, isLink, isPlainObject } from '../../core/util/workflow';
import { wireInput } from './objectInfo';
import type { V1State } from './state';

/** The partner key's names in `extra_data`: the document's and the public spelling (README "Naming"). */
const PARTNER_KEY_NAMES: readonly string[] = ['api_key_svc_org', 'api_key_comfy_org'];

/** One per-input error in the engine's shape. */
interface EngineInputError {
  type: string;
  message: string;
  details: string;
  extra_info: Record<string, unknown>;
}

/** `node_errors[<id>]` in the engine's shape. */
interface EngineNodeError {
  errors: EngineInputError[];
  dependent_outputs: string[];
  class_type: string;
}

/** The 400 body of a refused prompt. */
interface PromptRefusal {
  error: { type: string; message: string; details: string; extra_info: Record<string, unknown> };
  node_errors: Record<string, EngineNodeError>;
}

/** A checked prompt. */
interface CheckedPrompt {
  readonly prompt: Record<string, unknown>;
  readonly plan: ExecutionPlan;
  /** The partner key, when given (never logged). */
  readonly partnerKey: string | null;
  readonly extraDataKeys: readonly string[];
  readonly clientId: string | null;
}

/** A refusal of POST /api/prompt: answered 400 with {@link PromptRefusal}. */
export class PromptRefused extends Error {
  constructor(readonly body: PromptRefusal) {
    super(body.error.message);
    this.name = 'PromptRefused';
  }
}

function refusal(
  type: string,
  message: string,
  details = '',
  nodeErrors: Record<string, EngineNodeError> = {},
): PromptRefused {
  return new PromptRefused({ error: { type, message, details, extra_info: {} }, node_errors: nodeErrors });
}

/** The prefix of a core/ASSET id standing for an upload name the caller does not have (reported as value_not_in_list). */
const MISSING = 'v1-missing-upload:';

/** The prompt with LoadImage names replaced by the engine's references to the caller's uploads. */
function withAssetReferences(prompt: Record<string, unknown>, owner: string, state: V1State): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [id, node] of Object.entries(prompt)) {
    if (
      !isPlainObject(node) ||
      node.class_type !== 'LoadImage' ||
      !isPlainObject(node.inputs) ||
      typeof node.inputs.image !== 'string'
    ) {
      out[id] = node;
      continue;
    }
    // The engine accepts "name [input]" style annotations; the emulator's names never contain spaces.
    const name = node.inputs.image.replace(/ \[(input|output|temp)\]$/, '');
    const file = state.file(owner, name);
    out[id] = {
      ...node,
      inputs: {
        ...node.inputs,
        image: { __type: 'core/ASSET', info: { id: file === undefined ? `${MISSING}${name}` : file.assetId } },
      },
    };
  }
  return out;
}

/** The output node ids each node feeds (the engine's `dependent_outputs`). */
function dependentOutputs(prompt: Record<string, unknown>): Map<string, string[]> {
  const result = new Map<string, string[]>();
  const outputs = Object.entries(prompt)
    .filter(
      ([, n]) =>
        isPlainObject(n) && typeof n.class_type === 'string' && NODE_DEFINITIONS.get(n.class_type)?.isOutput === true,
    )
    .map(([id]) => id);
  for (const output of outputs) {
    const seen = new Set<string>();
    const stack = [output];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      result.set(id, [...(result.get(id) ?? []), output]);
      const node = prompt[id];
      if (!isPlainObject(node) || !isPlainObject(node.inputs)) continue;
      for (const value of Object.values(node.inputs)) if (isLink(value)) stack.push(String(value[0]));
    }
  }
  return result;
}

/** One engine problem as the engine's typed input error, from the input's spec and the value given. */
function inputError(
  problem: FieldProblem,
  spec: InputSpec | undefined,
  value: unknown,
  uploads: readonly string[],
  classType = '',
): EngineInputError {
  const name = problem.field;
  // `input_config` is the input as object_info describes it (ComfyUI server API (observed), Submitting).
  const config = spec === undefined ? undefined : wireInput(classType, name, spec, uploads);
  const extra = {
    input_name: name,
    ...(config === undefined ? {} : { input_config: config }),
    ...(spec === undefined ? {} : { received_value: value === undefined ? null : value }),
  };
  const reason = problem.reason;
  if (reason === 'required input is missing')
    return {
      type: 'required_input_missing',
      message: 'Required input is missing',
      details: name,
      extra_info: { input_name: name },
    };
  // The reasons are engine/engine.ts's words; each is matched by its stable part.
  if (spec?.kind === 'int' && / is below the minimum /.test(reason)) {
    return {
      type: 'value_smaller_than_min',
      message: `Value ${String(value)} smaller than min of ${spec.min}`,
      details: name,
      extra_info: extra,
    };
  }
  if (spec?.kind === 'int' && / is above the maximum /.test(reason)) {
    return {
      type: 'value_bigger_than_max',
      message: `Value ${String(value)} bigger than max of ${spec.max}`,
      details: name,
      extra_info: extra,
    };
  }
  if (spec?.kind === 'combo' && / is not one of /.test(reason)) {
    return {
      type: 'value_not_in_list',
      message: 'Value not in list',
      details: `${name}: '${String(value)}' not in ${JSON.stringify(spec.options)}`,
      extra_info: extra,
    };
  }
  if (spec?.kind === 'asset') {
    const given =
      isPlainObject(value) && isPlainObject(value.info) && typeof value.info.id === 'string'
        ? value.info.id.replace(MISSING, '')
        : String(value);
    return {
      type: 'value_not_in_list',
      message: 'Value not in list',
      details: `${name}: '${given}' not in ${JSON.stringify(uploads)}`,
      extra_info: { input_name: name, received_value: given },
    };
  }
  if (/closes a cycle/.test(reason))
    return {
      type: 'dependency_cycle',
      message: 'Dependency cycle detected',
      details: `${name}: ${reason}`,
      extra_info: { input_name: name },
    };
  if (/^expects [A-Z]+, but output /.test(reason))
    return {
      type: 'return_type_mismatch',
      message: 'Return type mismatch between linked nodes',
      details: `${name}: ${reason}`,
      extra_info: { input_name: name },
    };
  if (/^links to /.test(reason))
    return {
      type: 'bad_linked_input',
      message: 'Bad linked input',
      details: `${name}: ${reason}`,
      extra_info: { input_name: name },
    };
  return {
    type: 'invalid_input_type',
    message: `Failed to convert an input value to a ${spec === undefined ? 'valid' : spec.kind.toUpperCase()} value`,
    details: `${name}: ${reason}`,
    extra_info: { ...extra, exception_message: reason },
  };
}

/** Rewrites the engine's refusal of `prompt` (v2 shape) into the workflow engine's shape. */
function engineRefusal(
  error: EmulatorError,
  prompt: Record<string, unknown>,
  uploads: readonly string[],
): PromptRefused {
  if (error.code === 'workflow_format_ui')
    return refusal('invalid_prompt', `Cannot execute a UI-format workflow: ${error.message}`);
  const details = error.details ?? {};
  const nodeProblems = (isPlainObject(details.node_errors) ? details.node_errors : {}) as Record<
    string,
    FieldProblem[]
  >;
  // A node that is not a node, or of an unknown class: the engine refuses the whole prompt before checking inputs.
  for (const [id, problems] of Object.entries(nodeProblems)) {
    for (const p of problems) {
      if (p.field !== 'class_type' && p.field !== 'inputs') continue;
      const node = prompt[id];
      const classType = isPlainObject(node) && typeof node.class_type === 'string' ? node.class_type : undefined;
      if (classType !== undefined && p.field === 'class_type')
        return refusal(
          'invalid_prompt',
          `Cannot execute because node ${classType} does not exist.`,
          `Node ID '#${id}'`,
        );
      return refusal(
        'invalid_prompt',
        `Cannot execute because a node is missing the class_type property or its inputs: ${p.reason}`,
        `Node ID '#${id}'`,
      );
    }
  }
  const graph = Array.isArray(details.graph_errors) ? (details.graph_errors as { reason: string }[]) : [];
  if (Object.keys(nodeProblems).length === 0 && graph.length > 0) {
    const reason = graph[0].reason;
    if (/no output node/.test(reason)) return refusal('prompt_no_outputs', 'Prompt has no outputs', reason);
    return refusal('invalid_prompt', `Cannot execute the prompt: ${reason}`);
  }
  const dependents = dependentOutputs(prompt);
  const nodeErrors: Record<string, EngineNodeError> = {};
  for (const [id, problems] of Object.entries(nodeProblems)) {
    const node = prompt[id] as { class_type: string; inputs: Record<string, unknown> };
    const definition = NODE_DEFINITIONS.get(node.class_type);
    nodeErrors[id] = {
      errors: problems.map((p) =>
        inputError(p, definition?.inputs[p.field], node.inputs[p.field], uploads, node.class_type),
      ),
      dependent_outputs: dependents.get(id) ?? [],
      class_type: node.class_type,
    };
  }
  return refusal('prompt_outputs_failed_validation', 'Prompt outputs failed validation', '', nodeErrors);
}

/**
 * Checks the body of POST /api/prompt for `owner`.
 * @throws PromptRefused (400) for a missing or malformed `prompt` or `extra_data`, or a prompt the engine refuses.
 */
export function checkPrompt(body: unknown, owner: string, state: V1State): CheckedPrompt {
  if (!isPlainObject(body) || body.prompt === undefined || body.prompt === null)
    throw refusal('no_prompt', 'No prompt provided', 'send {"prompt": {<API-format workflow>}}');
  const prompt = body.prompt;
  if (detectWorkflowFormat(prompt) === 'ui')
    throw refusal(
      'invalid_prompt',
      'Cannot execute a UI-format workflow: export it in the API format (Workflow → Export (API))',
    );
  if (!isPlainObject(prompt))
    throw refusal(
      'invalid_prompt',
      'The prompt must be an API-format workflow: an object of node id → {"class_type", "inputs"}',
    );
  let partnerKey: string | null = null;
  let extraDataKeys: string[] = [];
  if (body.extra_data !== undefined && body.extra_data !== null) {
    if (!isPlainObject(body.extra_data)) throw refusal('invalid_prompt', '"extra_data" must be an object');
    extraDataKeys = Object.keys(body.extra_data);
    // Other keys of extra_data (extra_pnginfo, …) are the engine's own and accepted unread.
    for (const name of PARTNER_KEY_NAMES) {
      const value = body.extra_data[name];
      if (value === undefined) continue;
      if (typeof value !== 'string' || value === '')
        throw refusal(
          'invalid_prompt',
          `"extra_data.${name}" must be a non-empty string (the partner-service API key)`,
        );
      partnerKey ??= value;
    }
  }
  const uploads = state.inputNames(owner);
  let plan: ExecutionPlan;
  try {
    plan = validateWorkflow(withAssetReferences(prompt, owner, state), () => true);
  } catch (e) {
    if (
      e instanceof EmulatorError &&
      (e.code === 'invalid_workflow' || e.code === 'workflow_format_ui' || e.code === 'missing_asset')
    )
      throw engineRefusal(e, prompt, uploads);
    throw e;
  }
  // References to uploads the caller does not have (the engine was told every id exists, to check them here in its words).
  const missing: Record<string, EngineNodeError> = {};
  const dependents = dependentOutputs(prompt);
  for (const step of plan.steps) {
    const image = step.inputs.image;
    if (step.classType !== 'LoadImage' || image === undefined || !('literal' in image)) continue;
    const ref = image.literal as { info: { id: string } };
    if (!ref.info.id.startsWith(MISSING)) continue;
    missing[step.nodeId] = {
      errors: [
        inputError({ field: 'image', reason: 'missing upload' }, { kind: 'asset', required: true }, ref, uploads),
      ],
      dependent_outputs: dependents.get(step.nodeId) ?? [],
      class_type: 'LoadImage',
    };
  }
  if (Object.keys(missing).length > 0)
    throw refusal('prompt_outputs_failed_validation', 'Prompt outputs failed validation', '', missing);
  const clientId = typeof body.client_id === 'string' ? body.client_id : null;
  return {
    prompt,
    plan: { ...plan, assetIds: plan.assetIds.filter((id) => !id.startsWith(MISSING)) },
    partnerKey,
    extraDataKeys,
    clientId,
  };
}
