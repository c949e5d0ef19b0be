/**
 * UI format → API format: the graph ComfyUI's own frontend queues for a saved workflow (its `graphToPrompt`), or a
 * refusal naming every node that cannot be converted exactly. vscode-free.
 */
import { InputError } from '../http/errors';
import { isPlainObject, type ApiNode, type ApiWorkflow } from '../util/workflow';
import type { NodeDefinitions } from '../workflowSchema/objectInfo';
import {
  MalformedWorkflow,
  MODE_BYPASS,
  MODE_MUTED,
  readGraph,
  readSubgraphs,
  SUBGRAPH_INPUT_ID,
  type UiGraph,
  type UiInput,
  type UiNode,
} from './uiGraph';
import { layoutWidgets, type Widget } from './widgets';
import { buildGroupNode, groupName } from './groupNodes';

/** One node the converter cannot convert exactly: which node, and what to do about it. */
export interface ConversionProblem {
  /** The node's id as the API graph would name it (a subgraph's inner node: its path id, `"12:5"`). */
  readonly nodeId: string;
  /** The node's title when it has one of its own. */
  readonly title?: string;
  /** The node's type (`class_type`, or the frontend-only type such as `SetNode`). */
  readonly classType: string;
  /** Why it cannot be converted, one sentence. */
  readonly reason: string;
  /** What the user can do, one sentence. */
  readonly fix: string;
}

/**
 * The refusal of a conversion: every node that cannot be converted exactly (code `workflow_not_convertible`), or a
 * UI workflow whose shape is broken (code `ui_workflow_malformed`, no problems listed). The message is one line
 * per problem after a first line saying what happened.
 */
export class ConversionError extends InputError {
  constructor(
    code: 'workflow_not_convertible' | 'ui_workflow_malformed',
    message: string,
    readonly problems: readonly ConversionProblem[] = [],
  ) {
    super(code, message);
  }
}

/** Node types the frontend never queues (its virtual nodes): their links are followed through, or they only annotate. */
const VIRTUAL_TYPES = new Set(['Reroute', 'PrimitiveNode', 'Note', 'MarkdownNote']);

/** Frontend-only node types of popular extensions, with what to do about them. */
const FRONTEND_ONLY: Readonly<Record<string, { reason: string; fix: string }>> = {
  SetNode: {
    reason:
      'SetNode is a frontend-only node of the KJNodes extension (its value travels to a GetNode by name, outside the links)',
    fix: 'Replace each SetNode/GetNode pair with a direct link, or open the workflow in ComfyUI with KJNodes installed and export it in API format.',
  },
  GetNode: {
    reason:
      "GetNode is a frontend-only node of the KJNodes extension (it reads a SetNode's value by name, outside the links)",
    fix: 'Replace each SetNode/GetNode pair with a direct link, or open the workflow in ComfyUI with KJNodes installed and export it in API format.',
  },
};

const REEXPORT_FIX = 'Open the workflow in ComfyUI and export it in API format (Export (API)), then run that file.';

/** Bounds against hostile files: subgraphs nested deeper than this, or more links followed for one input, are refused. */
const MAX_NESTING = 32;

/** Where an input's value comes from once virtual, bypassed and subgraph nodes are followed through. */
type Resolved = { readonly originId: string; readonly originSlot: number } | { readonly value: unknown } | undefined;

/** A group node's or subgraph's instance, expanded: its inner graph and the values its own widgets hold. */
interface Instance {
  readonly kind: 'subgraph' | 'group';
  readonly graph: UiGraph;
}

/** One node as the frontend executes it (its `ExecutableNodeDTO`): the node, its graph, and its execution id. */
interface Exec {
  /** The execution id: the node's id, prefixed by the ids of the instances it is inside (`"12:5"`). */
  readonly id: string;
  readonly node: UiNode;
  readonly graph: UiGraph;
  readonly path: readonly string[];
  /** The instance whose inner graph holds this node. */
  readonly parent?: Exec;
  /** Set when this node is an expanded subgraph or group node instance. */
  instance?: Instance;
  /** A group node's inner node: the values of its widgets as the group node's widgets hold them. */
  readonly overrides?: ReadonlyMap<string, unknown>;
}

/** Litegraph's `isValidConnection`: `*` or empty matches anything; comma lists match when any pair matches. */
function typesMatch(a: string, b: string): boolean {
  if (a === '' || a === '*' || b === '' || b === '*' || a === b) return true;
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (!la.includes(',') && !lb.includes(',')) return la === lb;
  return la.split(',').some((x) => lb.split(',').some((y) => typesMatch(x, y)));
}

function wrap(value: unknown): unknown {
  // An array would read as a link: the frontend boxes array values (the engine unboxes them).
  return Array.isArray(value) ? { __value__: value } : value;
}

/** The conversion of one workflow: the flattened nodes, what they resolve to, and the problems found. */
class Conversion {
  readonly execs = new Map<string, Exec>();
  readonly problems = new Map<string, ConversionProblem>();
  /** PrimitiveNode values written onto their targets' widgets (the frontend's `applyToGraph`), by execution id. */
  readonly primitiveValues = new Map<string, Map<string, unknown>>();

  constructor(
    readonly definitions: NodeDefinitions,
    readonly subgraphs: ReadonlyMap<string, UiGraph>,
    readonly groupNodes: Readonly<Record<string, unknown>>,
  ) {}

  problem(exec: Exec, reason: string, fix: string, classType = exec.node.type): void {
    if (this.problems.has(exec.id)) return;
    this.problems.set(exec.id, {
      nodeId: exec.id,
      ...(exec.node.title !== undefined ? { title: exec.node.title } : {}),
      classType,
      reason,
      fix,
    });
  }

  /** Flattens `graph` into execs (the frontend's node DTO map), expanding subgraph and group node instances. */
  expand(
    graph: UiGraph,
    path: readonly string[],
    parent: Exec | undefined,
    stack: readonly string[],
    overrides?: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
  ): void {
    if (stack.length > MAX_NESTING) throw new MalformedWorkflow(`subgraphs are nested more than ${MAX_NESTING} deep`);
    for (const node of graph.nodes.values()) {
      const id = [...path, node.id].join(':');
      const own = overrides?.get(node.id);
      const exec: Exec = { id, node, graph, path, ...(parent ? { parent } : {}), ...(own ? { overrides: own } : {}) };
      this.execs.set(id, exec);
      // A muted or bypassed instance is not opened: its inner nodes are not queued.
      if (node.mode === MODE_MUTED || node.mode === MODE_BYPASS) continue;
      const subgraph = this.subgraphs.get(node.type);
      if (subgraph !== undefined) {
        if (stack.includes(node.type)) throw new MalformedWorkflow(`subgraph ${node.type} contains itself`);
        exec.instance = { kind: 'subgraph', graph: subgraph };
        this.expand(subgraph, [...path, node.id], exec, [...stack, node.type]);
        continue;
      }
      const name = groupName(node.type);
      if (name !== undefined && Object.hasOwn(this.groupNodes, name)) {
        const group = this.buildGroup(exec, name);
        if (group === undefined) continue;
        exec.instance = { kind: 'group', graph: group.graph };
        this.expand(group.graph, [...path, node.id], exec, [...stack, node.type], group.overrides);
      }
    }
  }

  /**
   * A legacy group node instance rebuilt by {@link buildGroupNode}; undefined, with a problem recorded, when it cannot
   * be rebuilt exactly.
   */
  buildGroup(exec: Exec, name: string): { graph: UiGraph; overrides: Map<string, Map<string, unknown>> } | undefined {
    const built = buildGroupNode(exec.node, name, this.groupNodes[name], this.definitions);
    if (typeof built !== 'string') return built;
    this.problem(
      exec,
      `group node "${name}": ${built}`,
      'Convert the group node back to nodes in ComfyUI (right-click, Convert to nodes) and save the workflow again.',
    );
    return undefined;
  }

  /** The frontend's `applyToGraph` of every PrimitiveNode: its value onto the widget of each input it feeds. */
  applyPrimitives(): void {
    for (const exec of this.execs.values()) {
      const { node } = exec;
      if (node.type !== 'PrimitiveNode') continue;
      const targets = node.outputs[0]?.links ?? [];
      if (targets.length === 0) continue;
      const values = Array.isArray(node.widgetsValues) ? node.widgetsValues : [];
      if (values.length === 0) {
        this.problem(exec, 'this PrimitiveNode has no saved value', REEXPORT_FIX);
        continue;
      }
      const value = values[0];
      if (
        node.properties['Run widget replace on values'] === true &&
        typeof value === 'string' &&
        /%[^%]+%/.test(value)
      ) {
        this.problem(
          exec,
          "this PrimitiveNode's text holds %…% replacements that the frontend fills in when queued (dates, other nodes' values)",
          'Turn off "Run widget replace on values" or write the text out in full.',
        );
        continue;
      }
      for (const linkId of targets) {
        const link = exec.graph.links.get(linkId);
        const target = link && exec.graph.nodes.get(link.targetId);
        const widget = link && target?.inputs[link.targetSlot]?.widget;
        if (!target || widget === undefined) continue;
        const id = [...exec.path, target.id].join(':');
        const map = this.primitiveValues.get(id) ?? new Map<string, unknown>();
        this.primitiveValues.set(id, map);
        map.set(widget, value);
      }
    }
  }

  /** A subgraph instance's promoted widget for one of its inputs (the frontend's `getWidgetFromSlot`). */
  promotedWidget(instance: Exec, input: UiInput): Resolved {
    if (instance.instance?.kind !== 'subgraph' || input.widget === undefined) return undefined;
    const name = input.widget;
    const fromPrimitive = this.primitiveValues.get(instance.id);
    if (fromPrimitive?.has(name)) return { value: fromPrimitive.get(name) };
    const widgetNames = instance.node.inputs.filter((i) => i.widget !== undefined).map((i) => i.widget);
    const values = instance.node.widgetsValues;
    const position = widgetNames.indexOf(name);
    if (Array.isArray(values) && position > -1 && position < values.length) return { value: values[position] };
    if (isPlainObject(values) && Object.hasOwn(values, name)) return { value: values[name] };
    return undefined;
  }

  /** The frontend's `resolveInput`: what input `slot` of `exec` is fed by, following virtual nodes, bypasses and instances. */
  resolveInput(exec: Exec, slot: number, visited: Set<string>, type?: string): Resolved {
    const key = `${exec.id}[I]${slot}`;
    if (visited.has(key)) throw new MalformedWorkflow(`the links through node ${exec.id} form a loop`);
    visited.add(key);
    const input = exec.node.inputs[slot];
    if (input === undefined || input.link === null) return undefined;
    const link = exec.graph.links.get(input.link);
    // A link missing from the table, or from a node that is gone, is dropped (as the editor drops it on load).
    if (link === undefined) return undefined;
    const { parent } = exec;
    if (parent !== undefined && link.originId === SUBGRAPH_INPUT_ID) {
      const outerInput = parent.node.inputs[link.originSlot];
      if (outerInput === undefined) return undefined;
      if (outerInput.link === null) return this.promotedWidget(parent, outerInput);
      const outerLink = parent.graph.links.get(outerInput.link);
      if (outerLink === undefined) return undefined;
      return this.resolveInput(parent, outerLink.targetSlot, visited);
    }
    const origin = exec.graph.nodes.get(link.originId);
    if (origin === undefined) return undefined;
    const originExec = this.execs.get([...exec.path, origin.id].join(':'));
    if (originExec === undefined) return undefined;
    return this.resolveOutput(originExec, link.originSlot, type ?? input.type, visited);
  }

  /** The frontend's `resolveOutput`: the real node behind output `slot` of `exec`. */
  resolveOutput(exec: Exec, slot: number, type: string, visited: Set<string>): Resolved {
    const key = `${exec.id}[O]${slot}`;
    if (visited.has(key)) throw new MalformedWorkflow(`the links through node ${exec.id} form a loop`);
    visited.add(key);
    const { node } = exec;
    if (node.mode === MODE_BYPASS) {
      const index =
        groupName(node.type) !== undefined && Object.hasOwn(this.groupNodes, groupName(node.type)!)
          ? ([slot, ...node.inputs.keys()].find((i) => node.inputs[i]?.type === type) ?? -1)
          : this.bypassSlot(node, slot, type);
      return index === -1 ? undefined : this.resolveInput(exec, index, visited);
    }
    if (exec.instance !== undefined) {
      const linkId = exec.instance.graph.outputLinks[slot]?.[0];
      const link = linkId === undefined ? undefined : exec.instance.graph.links.get(linkId);
      if (link === undefined) return undefined;
      const inner = this.execs.get([...exec.path, node.id, link.originId].join(':'));
      if (inner === undefined) return undefined;
      return this.resolveOutput(inner, link.originSlot, type, visited);
    }
    if (VIRTUAL_TYPES.has(node.type)) {
      return node.inputs[slot] !== undefined ? this.resolveInput(exec, slot, visited, type) : undefined;
    }
    return { originId: exec.id, originSlot: slot };
  }

  /** The input a bypassed node passes to output `slot` (the frontend's `#getBypassSlotIndex`); -1 when none. */
  bypassSlot(node: UiNode, slot: number, type: string): number {
    const { inputs } = node;
    if (type === '*' || type === '') return inputs.length > slot ? slot : 0;
    const outputType = node.outputs[slot]?.type ?? '*';
    const same = inputs[slot];
    if (same !== undefined && typesMatch(same.type, outputType) && typesMatch(same.type, type)) return slot;
    const exact = inputs.findIndex((i) => i.type === type);
    if (exact !== -1) return exact;
    return inputs.findIndex((i) => typesMatch(i.type, outputType) && typesMatch(i.type, type));
  }

  /** Checks a widget value the frontend would rewrite when queued; returns the problem's reason and fix, if any. */
  rewritten(widget: Widget, value: unknown): { reason: string; fix: string } | undefined {
    if (typeof value !== 'string') return undefined;
    if (widget.input?.dynamicPrompts === true && (/[{}]/.test(value) || value.includes('//') || value.includes('/*'))) {
      return {
        reason: `widget "${widget.name}" holds {…} choices or comments, which the frontend rewrites when queued (choosing at random among {a|b})`,
        fix: 'Write the text without {…} choices and comments (the engine gets the text as it is).',
      };
    }
    if (widget.name === 'filename_prefix' && /%[^%]+%/.test(value)) {
      return {
        reason: `widget "filename_prefix" holds %…% replacements that the frontend fills in when queued (dates, other nodes' values)`,
        fix: 'Write the file name prefix out in full.',
      };
    }
    return undefined;
  }

  /** The API-format node of one exec, or undefined when it is not queued (or has a problem, recorded). */
  emit(exec: Exec): ApiNode | undefined {
    const { node } = exec;
    if (
      exec.instance !== undefined ||
      node.mode === MODE_MUTED ||
      node.mode === MODE_BYPASS ||
      VIRTUAL_TYPES.has(node.type)
    )
      return undefined;
    const frontendOnly = FRONTEND_ONLY[node.type];
    if (frontendOnly !== undefined) {
      this.problem(exec, frontendOnly.reason, frontendOnly.fix);
      return undefined;
    }
    const group = groupName(node.type);
    if (group !== undefined && !this.definitions.classes.has(node.type)) {
      this.problem(
        exec,
        Object.hasOwn(this.groupNodes, group)
          ? `group node "${group}" cannot be expanded`
          : `group node "${group}" has no definition in the workflow's extra.groupNodes`,
        'Convert the group node back to nodes in ComfyUI (right-click, Convert to nodes) and save the workflow again.',
      );
      return undefined;
    }
    if (this.subgraphs.has(node.type)) return undefined;
    const definition = this.definitions.classes.get(node.type);
    if (definition === undefined) {
      this.problem(
        exec,
        `"${node.type}" is not among this engine's node definitions (a custom node that is not installed, or a frontend-only node)`,
        'Install the custom node on the engine, or replace this node with one the engine has.',
      );
      return undefined;
    }
    const widgets = layoutWidgets(definition, node.widgetsValues);
    if (!Array.isArray(widgets)) {
      this.problem(exec, widgets.reason, widgets.fix);
      return undefined;
    }
    const inputs: Record<string, unknown> = {};
    const fromPrimitive = this.primitiveValues.get(exec.id);
    for (const widget of widgets) {
      if (!widget.sent) continue;
      let { value } = widget;
      if (exec.overrides?.has(widget.name)) value = exec.overrides.get(widget.name);
      if (fromPrimitive?.has(widget.name)) value = fromPrimitive.get(widget.name);
      const rewrite = this.rewritten(widget, value);
      if (rewrite !== undefined) {
        this.problem(exec, rewrite.reason, rewrite.fix);
        return undefined;
      }
      inputs[widget.name] = wrap(value);
    }
    for (const [slot, input] of node.inputs.entries()) {
      const resolved = this.resolveInput(exec, slot, new Set());
      if (resolved === undefined) continue;
      inputs[input.name] = 'value' in resolved ? wrap(resolved.value) : [resolved.originId, resolved.originSlot];
    }
    return { inputs, class_type: node.type, _meta: { title: node.title ?? definition.displayName } };
  }
}

function problemLine(p: ConversionProblem): string {
  const title = p.title !== undefined && p.title !== p.classType ? ` "${p.title}"` : '';
  return `node ${p.nodeId} (${p.classType}${title}): ${p.reason}. Fix: ${p.fix}`;
}

/**
 * Converts a UI-format workflow (the editor's save file: schema 0.4 or version 1) into the API-format graph ComfyUI's
 * frontend would queue for it (its `graphToPrompt`), given the engine's node definitions. Rules, as the frontend
 * applies them: muted nodes (mode 2) are left out and links from them dropped; bypassed nodes (mode 4) pass each
 * output on from their first input of a matching type; Reroute, PrimitiveNode, Note and MarkdownNote are never
 * queued (a Reroute is followed through, a PrimitiveNode's value is written onto the widgets it feeds); subgraph
 * instances are opened, their inner nodes named by path (`"12:5"`), their promoted widgets feeding the inner inputs;
 * legacy group nodes are opened the same way (`"37:0"` by position); widget values come from `widgets_values` by
 * position (see {@link layoutWidgets}); array values are boxed as `{__value__: [...]}`; links to nodes that are not
 * queued are dropped.
 * @param workflow the parsed UI workflow (a top-level `nodes` array).
 * @param definitions the engine's node definitions ({@link parseObjectInfo} of its `object_info`).
 * @returns the API graph, node id → `{ class_type, inputs, _meta: { title } }`.
 * @throws ConversionError `workflow_not_convertible` listing every node that cannot be converted exactly (an unknown
 * class, a frontend-only node such as KJNodes' SetNode, widget values that do not line up with the definition, text
 * the frontend rewrites at random when queued), or `ui_workflow_malformed` when the workflow's shape is broken (a
 * links table entry of the wrong shape, a node without id or type, a loop of links or of subgraphs).
 */
export function convertUiWorkflow(workflow: unknown, definitions: NodeDefinitions): ApiWorkflow {
  try {
    if (!isPlainObject(workflow)) throw new MalformedWorkflow('the workflow is not a JSON object');
    const root = readGraph(workflow, 'the workflow');
    const subgraphs = readSubgraphs(workflow);
    const extra = isPlainObject(workflow.extra) ? workflow.extra : {};
    const groupNodes = isPlainObject(extra.groupNodes) ? extra.groupNodes : {};
    const conversion = new Conversion(definitions, subgraphs, groupNodes);
    conversion.expand(root, [], undefined, []);
    conversion.applyPrimitives();
    const output: ApiWorkflow = {};
    for (const exec of conversion.execs.values()) {
      const node = conversion.emit(exec);
      if (node !== undefined) output[exec.id] = node;
    }
    if (conversion.problems.size > 0) {
      const problems = [...conversion.problems.values()];
      const count = problems.length === 1 ? 'One node' : `${problems.length} nodes`;
      throw new ConversionError(
        'workflow_not_convertible',
        [
          `${count} of the UI-format workflow cannot be converted to API format exactly:`,
          ...problems.map(problemLine),
        ].join('\n'),
        problems,
      );
    }
    // Inputs linked to nodes that are not queued (muted, or gone) are dropped, as the frontend drops them.
    for (const node of Object.values(output)) {
      for (const [name, value] of Object.entries(node.inputs)) {
        if (Array.isArray(value) && value.length === 2 && !Object.hasOwn(output, value[0] as string))
          delete node.inputs[name];
      }
    }
    return output;
  } catch (err) {
    if (err instanceof MalformedWorkflow)
      throw new ConversionError('ui_workflow_malformed', `The UI-format workflow is malformed: ${err.message}.`);
    throw err;
  }
}
