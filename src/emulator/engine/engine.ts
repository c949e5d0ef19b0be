/**
 * The graph engine: checks an API-format workflow before a job is accepted (Job and Asset API v2,
 * POST /api/v2/jobs, rules 1 and 2: synchronous validation of structure, node classes and asset references)
 * and executes the checked graph node by node.
 */
import { detectWorkflowFormat, isLink, isPlainObject } from '../../core/util/workflow';
import { byNodeId, describeValue } from '../../core/workflowSchema/words';
import { EmulatorError, type FieldProblem, type NodeErrors } from '../errors';
import type { ImageBatch, RgbImage } from './image';
import { NODE_DEFINITIONS, socketTypeOf, type InputSpec, type NodeContext, type NodeDefinition } from './nodes';

/** How one input of a checked node gets its value: a literal, or output `index` of node `source`. */
type PlannedInput = { readonly literal: unknown } | { readonly source: string; readonly index: number };

/** One node to execute, in order. */
export interface PlanStep {
  readonly nodeId: string;
  readonly classType: string;
  readonly definition: NodeDefinition;
  readonly inputs: Readonly<Record<string, PlannedInput>>;
}

/** A checked workflow: the nodes reachable from its output nodes, dependencies first. */
export interface ExecutionPlan {
  readonly steps: readonly PlanStep[];
  /** The asset ids its `core/ASSET` references name (DELETE of those answers 409 `asset_in_use` while it runs). */
  readonly assetIds: readonly string[];
}

/** What validation needs to know about assets: whether the caller owns asset `id`. */
type AssetLookup = (id: string) => boolean;

/** Collects problems per node, and graph-level ones. */
class Problems {
  readonly nodes = new Map<string, FieldProblem[]>();
  readonly graph: string[] = [];

  /** Node id → its class, for the nodes whose class the emulator does not run (each also has its problem). */
  readonly unknown = new Map<string, string>();

  add(nodeId: string, field: string, reason: string): void {
    const list = this.nodes.get(nodeId) ?? [];
    list.push({ field, reason });
    this.nodes.set(nodeId, list);
  }

  /** Node `nodeId` is of `classType`, which the emulator does not run: one short problem on its `class_type`. */
  addUnknownClass(nodeId: string, classType: string): void {
    this.unknown.set(nodeId, classType);
    this.add(nodeId, 'class_type', `${classType} is not a node this emulator runs`);
  }

  /** The classes the emulator does not run, each once, in node id order. */
  unknownClasses(): string[] {
    return [
      ...new Set([...this.unknown.entries()].sort(([a], [b]) => byNodeId(a, b)).map(([, classType]) => classType)),
    ];
  }

  get empty(): boolean {
    return this.nodes.size === 0 && this.graph.length === 0;
  }

  nodeErrors(): NodeErrors {
    return Object.fromEntries([...this.nodes.entries()].sort(([a], [b]) => byNodeId(a, b)));
  }

  /** The first problem in words, and how many more. */
  summary(): string {
    const unknown = this.unknownClasses();
    if (unknown.length > 0) {
      // One sentence for the whole refusal: the classes once, what the emulator runs, what to do; not a line per node.
      const others = [...this.nodes.values()].reduce((n, l) => n + l.length, 0) - this.unknown.size + this.graph.length;
      const demo = [...NODE_DEFINITIONS.keys()].join(', ');
      const rest = others === 0 ? '' : ` (and ${others} other problem${others > 1 ? 's' : ''})`;
      return `the local emulator runs only its demo nodes (${demo}), not ${unknown.join(', ')}; use a cloud connection for this workflow${rest}`;
    }
    const first = this.nodeErrors();
    const [nodeId, list] = Object.entries(first)[0] ?? [];
    let head = this.graph[0];
    if (nodeId !== undefined) {
      const { field, reason } = list![0];
      head = `node ${nodeId} ${field === 'class_type' || field === 'inputs' ? field : `input ${field}`}: ${reason}`;
    }
    const total = [...this.nodes.values()].reduce((n, l) => n + l.length, 0) + this.graph.length;
    return total > 1 ? `${head} (and ${total - 1} more problem${total > 2 ? 's' : ''})` : head;
  }
}

/**
 * 422 `invalid_workflow`: `details.node_errors` in the document's shape (node id → `[{field, reason}]`);
 * graph-level problems (no nodes, no output node) in `details.graph_errors` as `[{reason}]`, and the classes the
 * emulator does not run in `details.unknown_classes` (each once, in node id order), additions of ours: with them a
 * client says "these classes are not run here" once instead of once per node. With unknown classes the message is
 * one sentence: what the emulator runs, the classes, what to do (use a cloud connection).
 */
function invalidWorkflow(problems: Problems): EmulatorError {
  const details: Record<string, unknown> = { node_errors: problems.nodeErrors() };
  if (problems.graph.length > 0) details.graph_errors = problems.graph.map((reason) => ({ reason }));
  const unknown = problems.unknownClasses();
  if (unknown.length > 0) details.unknown_classes = unknown;
  // The unknown classes' sentence stands alone: it is not one problem among others.
  const message = unknown.length > 0 ? problems.summary() : `invalid workflow: ${problems.summary()}`;
  return new EmulatorError('invalid_workflow', message, details);
}

/** A node as found in the workflow, before its inputs are checked. */
interface FoundNode {
  readonly classType: string;
  /** `{}` when the node's `inputs` is not an object (reported once, not as every input missing). */
  readonly inputs: Record<string, unknown>;
  readonly inputsOk: boolean;
  readonly definition: NodeDefinition | undefined;
}

/** Checks a literal value against its input spec; the problem in words, or undefined when it fits. */
function literalProblem(spec: InputSpec, value: unknown): string | undefined {
  switch (spec.kind) {
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value))
        return `expects an integer; got ${describeValue(value)}`;
      if (value < spec.min) return `value ${value} is below the minimum ${spec.min}`;
      if (value > spec.max) return `value ${value} is above the maximum ${spec.max}`;
      return undefined;
    case 'string':
      return typeof value === 'string' ? undefined : `expects a string; got ${describeValue(value)}`;
    case 'combo':
      if (typeof value !== 'string') return `expects one of ${spec.options.join(', ')}; got ${describeValue(value)}`;
      return spec.options.includes(value)
        ? undefined
        : `value ${JSON.stringify(value)} is not one of ${spec.options.join(', ')}`;
    case 'link':
      return `expects a link [node_id, output_index] to an ${spec.type} output; got ${describeValue(value)}`;
    case 'asset':
      // A core/ASSET object without a usable id is an unusable reference: 422 missing_asset (checkAssetReferences).
      return isPlainObject(value) && value.__type === 'core/ASSET'
        ? undefined
        : `expects a core/ASSET reference {"__type": "core/ASSET", "info": {"id": "<asset id>"}}; got ${describeValue(value)}`;
  }
}

/**
 * The `info.id` of a well-formed `core/ASSET` reference, or undefined (Job and Asset API v2, POST /api/v2/jobs, rule
 * 1).
 */
function assetReferenceOf(value: unknown): string | undefined {
  if (!isPlainObject(value) || value.__type !== 'core/ASSET' || !isPlainObject(value.info)) return undefined;
  const id = value.info.id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** Checks a link of input `field` of node `nodeId`; adds a problem when it cannot carry what the input takes. */
function checkLink(
  problems: Problems,
  nodes: Map<string, FoundNode>,
  nodeId: string,
  field: string,
  spec: InputSpec,
  link: [string, number],
): void {
  const source = String(link[0]);
  const index = link[1];
  const found = nodes.get(source);
  if (found === undefined) {
    problems.add(nodeId, field, `links to node ${JSON.stringify(source)}, which is not in the workflow`);
    return;
  }
  // An unknown source class is reported on the source node itself.
  if (found.definition === undefined) return;
  const outputs = found.definition.outputs;
  const name = `node ${JSON.stringify(source)} (${found.classType})`;
  if (outputs.length === 0) {
    problems.add(nodeId, field, `links to ${name}, which has no outputs`);
    return;
  }
  if (index < 0 || index >= outputs.length) {
    const list = outputs.map((t, i) => `${i}: ${t}`).join(', ');
    problems.add(
      nodeId,
      field,
      `links to output ${index} of ${name}, which has only output${outputs.length > 1 ? 's' : ''} ${list}`,
    );
    return;
  }
  const expected = socketTypeOf(spec);
  if (outputs[index] !== expected) {
    problems.add(nodeId, field, `expects ${expected}, but output ${index} of ${name} is ${outputs[index]}`);
  }
}

/** The nodes reachable from the output nodes, dependencies first; a link that closes a cycle is a problem. */
function executionOrder(problems: Problems, nodes: Map<string, FoundNode>, outputIds: string[]): string[] {
  const dependencies = (id: string): { field: string; source: string }[] => {
    const node = nodes.get(id)!;
    const out: { field: string; source: string }[] = [];
    for (const field of Object.keys(node.definition!.inputs)) {
      const value = node.inputs[field];
      if (isLink(value)) out.push({ field, source: String(value[0]) });
    }
    return out;
  };
  // Iterative depth-first search: a long chain must not overflow the call stack.
  const state = new Map<string, 'visiting' | 'done'>();
  const order: string[] = [];
  for (const root of outputIds) {
    if (state.has(root)) continue;
    state.set(root, 'visiting');
    const stack = [{ id: root, deps: dependencies(root), next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.next < top.deps.length) {
        const dep = top.deps[top.next++];
        const seen = state.get(dep.source);
        if (seen === undefined) {
          state.set(dep.source, 'visiting');
          stack.push({ id: dep.source, deps: dependencies(dep.source), next: 0 });
        } else if (seen === 'visiting') {
          const from = stack.findIndex((f) => f.id === dep.source);
          const cycle = [...stack.slice(from).map((f) => f.id), dep.source].join(' → ');
          problems.add(top.id, dep.field, `this link closes a cycle: ${cycle}`);
        }
      } else {
        state.set(top.id, 'done');
        order.push(top.id);
        stack.pop();
      }
    }
  }
  return order;
}

/**
 * Checks `workflow` as POST /api/v2/jobs does, synchronously, and plans its execution.
 * @param ownsAsset whether the caller owns an asset id (for `core/ASSET` references anywhere in inputs).
 * @throws EmulatorError 422 `workflow_format_ui` (a UI-format export), 422 `invalid_workflow` (with
 *   `details.node_errors`: unknown class_type, missing required input, wrong type, value out of range, a link
 *   to a missing node, a bad output index or a wrong output type, a cycle; `details.graph_errors`: no nodes,
 *   no output node), 422 `missing_asset` (a malformed reference, or an id that is unknown or not the caller's).
 */
export function validateWorkflow(workflow: unknown, ownsAsset: AssetLookup): ExecutionPlan {
  if (detectWorkflowFormat(workflow) === 'ui') {
    throw new EmulatorError(
      'workflow_format_ui',
      'this is a UI-format workflow (the editor export with "nodes" and "links"); submit the API format instead (in the editor: Workflow → Export (API))',
    );
  }
  const problems = new Problems();
  if (!isPlainObject(workflow)) {
    problems.graph.push(
      `"workflow" must be an API-format graph: an object of node id → {"class_type", "inputs"}; got ${describeValue(workflow)}`,
    );
    throw invalidWorkflow(problems);
  }
  const nodes = new Map<string, FoundNode>();
  for (const [id, raw] of Object.entries(workflow)) {
    if (!isPlainObject(raw)) {
      problems.add(
        id,
        'class_type',
        `not a node: expected an object with "class_type" and "inputs"; got ${describeValue(raw)}`,
      );
      continue;
    }
    if (typeof raw.class_type !== 'string') {
      problems.add(
        id,
        'class_type',
        `missing: every node needs a "class_type" string; got ${describeValue(raw.class_type)}`,
      );
      continue;
    }
    const inputsOk = isPlainObject(raw.inputs);
    if (!inputsOk)
      problems.add(id, 'inputs', `missing: every node needs an "inputs" object; got ${describeValue(raw.inputs)}`);
    const definition = NODE_DEFINITIONS.get(raw.class_type);
    // Short, per node: what the emulator runs and what to do are said once, in the refusal's message.
    if (definition === undefined) problems.addUnknownClass(id, raw.class_type);
    nodes.set(id, {
      classType: raw.class_type,
      inputs: inputsOk ? (raw.inputs as Record<string, unknown>) : {},
      inputsOk,
      definition,
    });
  }
  if (nodes.size === 0 && problems.empty) problems.graph.push('the workflow has no nodes');

  for (const [id, node] of nodes) {
    if (node.definition === undefined || !node.inputsOk) continue;
    for (const [field, spec] of Object.entries(node.definition.inputs)) {
      const value = Object.hasOwn(node.inputs, field) ? node.inputs[field] : undefined;
      if (value === undefined) {
        if (spec.required) problems.add(id, field, 'required input is missing');
        continue;
      }
      if (isLink(value) && spec.kind !== 'asset') {
        checkLink(problems, nodes, id, field, spec, value);
        continue;
      }
      const problem = literalProblem(spec, value);
      if (problem !== undefined) problems.add(id, field, problem);
    }
  }
  const outputIds = [...nodes.entries()]
    .filter(([, n]) => n.definition?.isOutput)
    .map(([id]) => id)
    .sort(byNodeId);
  // A graph of unknown classes has its output node among them: saying it has none would be wrong.
  if (nodes.size > 0 && outputIds.length === 0 && problems.unknownClasses().length === 0) {
    const outputs = [...NODE_DEFINITIONS.values()]
      .filter((d) => d.isOutput)
      .map((d) => d.classType)
      .join(' or ');
    problems.graph.push(`the workflow has no output node (${outputs}), so it would produce nothing`);
  }
  if (!problems.empty) throw invalidWorkflow(problems);

  const order = executionOrder(problems, nodes, outputIds);
  if (!problems.empty) throw invalidWorkflow(problems);

  const assetIds = checkAssetReferences(nodes, ownsAsset);

  return {
    assetIds,
    steps: order.map((id) => {
      const node = nodes.get(id)!;
      const inputs: Record<string, PlannedInput> = {};
      for (const [field, spec] of Object.entries(node.definition!.inputs)) {
        const value = Object.hasOwn(node.inputs, field) ? node.inputs[field] : undefined;
        if (value === undefined) inputs[field] = { literal: 'default' in spec ? spec.default : undefined };
        else if (isLink(value) && spec.kind !== 'asset') inputs[field] = { source: String(value[0]), index: value[1] };
        else inputs[field] = { literal: value };
      }
      return { nodeId: id, classType: node.classType, definition: node.definition!, inputs };
    }),
  };
}

/**
 * Every `core/ASSET` reference among the inputs (declared or not) must name an asset of the caller
 * (POST /api/v2/jobs rule 1). @returns the ids referenced, each once.
 * @throws EmulatorError 422 `missing_asset` with `details.node_errors`.
 */
function checkAssetReferences(nodes: Map<string, FoundNode>, ownsAsset: AssetLookup): string[] {
  const problems = new Problems();
  const missing: string[] = [];
  const referenced = new Set<string>();
  for (const [id, node] of nodes) {
    for (const [field, value] of Object.entries(node.inputs)) {
      if (!isPlainObject(value) || value.__type !== 'core/ASSET') continue;
      const assetId = assetReferenceOf(value);
      if (assetId === undefined) {
        problems.add(id, field, 'malformed core/ASSET reference: "info.id" must be the asset id');
      } else if (!ownsAsset(assetId)) {
        missing.push(assetId);
        problems.add(id, field, `asset ${JSON.stringify(assetId)} does not exist or is not yours`);
      } else {
        referenced.add(assetId);
      }
    }
  }
  if (!problems.empty) {
    throw new EmulatorError('missing_asset', `missing asset: ${problems.summary()}`, {
      node_errors: problems.nodeErrors(),
      asset_ids: missing,
    });
  }
  return [...referenced];
}

/** A node that failed while executing: the job fails with `node_execution_error` naming it. */
export class NodeExecutionError extends Error {
  constructor(
    readonly nodeId: string,
    readonly classType: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'NodeExecutionError';
  }
}

/** What the engine reports while it executes, and what it needs from the job around it. */
interface ExecutionHooks {
  /** Aborts execution at the next node boundary, or during a node's delay. */
  readonly signal: AbortSignal;
  /** Extra time per node, in ms (interruptible by `signal`). */
  readonly nodeDelayMs: number;
  /** Node `index` (0-based) of `total` is about to run. */
  onNodeStart(step: PlanStep, index: number, total: number): void;
  /**
   * Resolves when node `index` may run: called after {@link onNodeStart}, before the node's delay, so a hold
   * (holds.ts) keeps the job at the snapshot that names the node. Rejects with `signal.reason` when aborted meanwhile.
   */
  beforeNodeRuns?(step: PlanStep, index: number, total: number): Promise<void>;
  /** Node `index` (0-based) of `total` has run. */
  onNodeDone(step: PlanStep, index: number, total: number): void;
  /** An image node produced `image` (the first of its batch). */
  onPreview(step: PlanStep, image: RgbImage): void;
  /** The context a node runs with. */
  context(step: PlanStep): NodeContext;
}

/** Waits `ms` (0: one turn of the event loop, so requests are served between nodes); rejects when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal.throwIfAborted();
    const onAbort = (): void => {
      if (ms > 0) clearTimeout(handle as NodeJS.Timeout);
      else clearImmediate(handle as NodeJS.Immediate);
      reject(signal.reason);
    };
    const done = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const handle = ms > 0 ? setTimeout(done, ms) : setImmediate(done);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Executes `plan` node by node (a checked plan: inputs are known to fit).
 * @throws NodeExecutionError when a node throws; `signal.reason` when aborted.
 */
export async function executePlan(plan: ExecutionPlan, hooks: ExecutionHooks): Promise<void> {
  const values = new Map<string, readonly unknown[]>();
  const total = plan.steps.length;
  for (let index = 0; index < total; index++) {
    const step = plan.steps[index];
    hooks.signal.throwIfAborted();
    hooks.onNodeStart(step, index, total);
    if (hooks.beforeNodeRuns !== undefined) await hooks.beforeNodeRuns(step, index, total);
    await pause(hooks.nodeDelayMs, hooks.signal);
    const inputs: Record<string, unknown> = {};
    for (const [field, planned] of Object.entries(step.inputs)) {
      inputs[field] = 'literal' in planned ? planned.literal : values.get(planned.source)![planned.index];
    }
    let outputs: readonly unknown[];
    try {
      outputs = await step.definition.execute(inputs, hooks.context(step));
    } catch (e) {
      if (hooks.signal.aborted) throw hooks.signal.reason;
      throw new NodeExecutionError(step.nodeId, step.classType, e);
    }
    values.set(step.nodeId, outputs);
    if (step.definition.outputs[0] === 'IMAGE') {
      const batch = outputs[0] as ImageBatch;
      if (batch.length > 0) hooks.onPreview(step, batch[0]);
    }
    hooks.onNodeDone(step, index, total);
  }
}
