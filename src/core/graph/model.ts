/**
 * The workflow graph as a view shows it, vscode-free and DOM-free: nodes, edges and groups read from a workflow in
 * API format ({@link graphFromApi}: no positions, the webview lays it out) or UI format ({@link graphFromUi}: the
 * editor's own positions, sizes, groups, modes, notes and subgraphs). Plain JSON data: it crosses to the webview as
 * is (protocol.ts) and the renderer (media/graph/render.ts) draws it.
 *
 * Node ids are the execution ids the engine and the job API use: an API-format key; a UI node's id; inside a subgraph
 * instance, the path of instance ids down to the node joined by `:` (`"12:5"`), as the converter names them
 * (core/convert). So a job's node id (a running node, a failed node, an output's node) or a validator's diagnostic
 * finds its box without a mapping.
 *
 * Every text is bounded ({@link GRAPH_LIMITS}): a workflow with a 1 MB prompt still yields a small model.
 */
import { layoutWidgets } from '../convert/widgets';
import { MODE_BYPASS, MODE_MUTED, MalformedWorkflow, readGraph, type UiGraph, type UiNode } from '../convert/uiGraph';
import type { NodeDefinitions } from '../workflowSchema/objectInfo';
import { byNodeId } from '../workflowSchema/words';
import { detectWorkflowFormat, isLink, isPlainObject, withoutSchemaKey } from '../util/workflow';
import type {
  GraphBox,
  GraphEdge,
  GraphGroup,
  GraphLiteral,
  GraphModel,
  GraphNode,
  NodeKind,
  NodeMode,
  WorkflowGraph,
} from './types';

export type * from './types';

/** The bounds on what the model holds, so that any file yields a model small enough to post and draw. */
export const GRAPH_LIMITS = {
  /** Characters of a node's title (a `_meta.title` or UI title can be anything). */
  title: 80,
  /** Characters of one literal input's text. */
  literal: 40,
  /** Literal inputs shown on one node; the rest are counted in {@link GraphNode.moreInputs}. */
  literals: 8,
  /** Characters of a Note's or MarkdownNote's text. */
  note: 500,
  /** Nesting of subgraphs read (a definition that contains itself stops here). */
  subgraphDepth: 8,
} as const;

/** Cuts `text` to `max` characters (an ellipsis last), on one line. */
export function shortText(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A literal input's short text, at most {@link GRAPH_LIMITS}.literal characters: a number or boolean as written, a
 * string cut on one line, a `core/ASSET` reference as `asset <file name or id>`, an array as `[n items]`, an object
 * as `{…}`, null as `null`.
 */
export function literalText(value: unknown): string {
  const max = GRAPH_LIMITS.literal;
  if (value === null || value === undefined) return 'null';
  // Integers (seeds reach 2^53) as written; other numbers to 4 decimals, as a widget shows them.
  if (typeof value === 'number')
    return shortText(
      Number.isInteger(value) || !Number.isFinite(value) ? String(value) : String(Number(value.toFixed(4))),
      max,
    );
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return shortText(value, max);
  if (Array.isArray(value)) return value.length === 1 ? '[1 item]' : `[${value.length} items]`;
  if (isPlainObject(value)) {
    // A `core/ASSET` reference (Job and Asset API v2, POST /api/v2/jobs, rule 1): named by its file, else its id.
    if (value.__type === 'core/ASSET' && isPlainObject(value.info)) {
      const info = value.info;
      const name =
        typeof info.file_path === 'string' && info.file_path !== ''
          ? info.file_path.split(/[\\/]/).pop()!
          : typeof info.id === 'string'
            ? info.id
            : '?';
      return shortText(`asset ${name}`, max);
    }
    return '{…}';
  }
  return shortText(String(value), max);
}

function literalsOf(pairs: readonly GraphLiteral[]): { literals: GraphLiteral[]; moreInputs: number } {
  const n = GRAPH_LIMITS.literals;
  return { literals: pairs.slice(0, n), moreInputs: Math.max(0, pairs.length - n) };
}

/**
 * The graph of an API-format workflow (node id → `{class_type, inputs, _meta}`; a top-level `$schema` string is
 * ignored). Each input that is a link `[node_id, output_index]` to a node of the workflow is an edge, typed by the
 * source class's `output[index]` when `definitions` has it; every other input is a literal. Nodes are listed in the
 * engine's id order; a link to a node that is not in the workflow makes no edge (the validator reports it).
 * A value that is not a node (no `class_type` string) becomes a node of class `?` (the validator reports it too).
 */
export function graphFromApi(workflow: Record<string, unknown>, definitions?: NodeDefinitions): GraphModel {
  const nodesById = withoutSchemaKey(workflow);
  const ids = Object.keys(nodesById).sort(byNodeId);
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const classOf = (id: string): string => {
    const n = nodesById[id];
    return isPlainObject(n) && typeof n.class_type === 'string' ? n.class_type : '?';
  };
  for (const id of ids) {
    const raw = nodesById[id];
    const classType = classOf(id);
    const definition = definitions?.classes.get(classType);
    const inputs = isPlainObject(raw) && isPlainObject(raw.inputs) ? raw.inputs : {};
    const meta = isPlainObject(raw) && isPlainObject(raw._meta) ? raw._meta : {};
    const title =
      typeof meta.title === 'string' && meta.title.trim() !== '' ? meta.title : definition?.displayName || classType;
    // Inputs in the definition's order where known (what the editor shows), then the others as written.
    const order = definition
      ? [
          ...definition.inputs.map((i) => i.name).filter((n) => Object.hasOwn(inputs, n)),
          ...Object.keys(inputs).filter((n) => !definition.inputs.some((i) => i.name === n)),
        ]
      : Object.keys(inputs);
    const literals: GraphLiteral[] = [];
    for (const name of order) {
      const value = inputs[name];
      if (isLink(value)) {
        const from = String(value[0]);
        if (!Object.hasOwn(nodesById, from)) continue;
        const type = definitions?.classes.get(classOf(from))?.outputs[value[1]]?.type ?? null;
        edges.push({ from, fromOutput: value[1], to: id, toInput: name, type });
      } else {
        literals.push({ name, text: literalText(value) });
      }
    }
    nodes.push({
      id,
      kind: 'node',
      title: shortText(title, GRAPH_LIMITS.title),
      classType,
      unknownClass: definitions !== undefined && definition === undefined,
      mode: 'normal',
      ...literalsOf(literals),
      note: null,
      subgraph: null,
      box: null,
    });
  }
  return { format: 'api', root: { title: '', nodes, edges, groups: [], positioned: false }, subgraphs: {} };
}

// ---- UI format --------------------------------------------------------------------------------------------------

const NOTE_TYPES = new Set(['Note', 'MarkdownNote']);

function finite(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** A pair saved as `[a, b]` or `{"0": a, "1": b}` (litegraph saves both). */
function pair(value: unknown): [unknown, unknown] | undefined {
  if (Array.isArray(value)) return [value[0], value[1]];
  if (isPlainObject(value)) return [value['0'], value['1']];
  return undefined;
}

/** A node's saved box: `pos` and `size` (defaults: at 0,0, 200 × 100), plus litegraph's title bar (30 px) above `pos`. */
function boxOf(raw: Readonly<Record<string, unknown>>): GraphBox {
  const [x, y] = pair(raw.pos) ?? [0, 0];
  const [w, h] = pair(raw.size) ?? [200, 100];
  const collapsed = isPlainObject(raw.flags) && raw.flags.collapsed === true;
  const width = Math.max(40, finite(w, 200));
  const height = collapsed ? 0 : Math.max(0, finite(h, 100));
  return { x: finite(x, 0), y: finite(y, 0) - 30, width, height: height + 30 };
}

function modeOf(mode: number): NodeMode {
  return mode === MODE_MUTED ? 'muted' : mode === MODE_BYPASS ? 'bypassed' : 'normal';
}

/** The literal widgets of a UI node: named by its definition where its `widgets_values` line up, else unnamed values. */
function uiLiterals(node: UiNode, definitions: NodeDefinitions | undefined): GraphLiteral[] {
  const definition = definitions?.classes.get(node.type);
  if (definition) {
    const widgets = layoutWidgets(definition, node.widgetsValues);
    if (Array.isArray(widgets)) {
      const linked = new Set(node.inputs.filter((i) => i.widget !== undefined && i.link !== null).map((i) => i.widget));
      return widgets
        .filter((w) => w.sent && !linked.has(w.name))
        .map((w) => ({ name: w.name, text: literalText(w.value) }));
    }
  }
  const values = Array.isArray(node.widgetsValues)
    ? node.widgetsValues
    : isPlainObject(node.widgetsValues)
      ? Object.entries(node.widgetsValues)
      : [];
  return values.map((v) =>
    Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && !Array.isArray(node.widgetsValues)
      ? { name: v[0], text: literalText(v[1]) }
      : { name: '', text: literalText(v) },
  );
}

function groupsOf(raw: unknown): GraphGroup[] {
  if (!Array.isArray(raw)) return [];
  const groups: GraphGroup[] = [];
  for (const g of raw) {
    if (!isPlainObject(g)) continue;
    const b = Array.isArray(g.bounding) ? g.bounding : [];
    const box = {
      x: finite(b[0], 0),
      y: finite(b[1], 0),
      width: Math.max(0, finite(b[2], 0)),
      height: Math.max(0, finite(b[3], 0)),
    };
    groups.push({
      title: shortText(typeof g.title === 'string' ? g.title : '', GRAPH_LIMITS.title),
      box,
      // Only a plain hex colour (`#3f789e`, as ComfyUI saves it) reaches the page, which mixes it into the theme.
      color:
        typeof g.color === 'string' && /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/.test(g.color)
          ? g.color
          : null,
    });
  }
  return groups;
}

interface SubgraphDefinition {
  name: string;
  raw: Record<string, unknown>;
  graph: UiGraph;
}

/** The `definitions.subgraphs` of a version-1 workflow by id, read with the converter's reader. */
function subgraphDefinitions(workflow: Record<string, unknown>): Map<string, SubgraphDefinition> {
  const out = new Map<string, SubgraphDefinition>();
  const defs = isPlainObject(workflow.definitions) ? workflow.definitions.subgraphs : undefined;
  if (!Array.isArray(defs)) return out;
  defs.forEach((raw, i) => {
    if (!isPlainObject(raw) || typeof raw.id !== 'string')
      throw new MalformedWorkflow(`definitions.subgraphs[${i}] has no id`);
    out.set(raw.id, {
      name: typeof raw.name === 'string' ? raw.name : raw.id,
      raw,
      graph: readGraph(raw, `subgraph ${raw.id}`),
    });
  });
  return out;
}

/** The box of a subgraph's input or output node (`inputNode.bounding`), when saved. */
function ioBox(raw: unknown): GraphBox | null {
  if (!isPlainObject(raw) || !Array.isArray(raw.bounding)) return null;
  const b = raw.bounding;
  return {
    x: finite(b[0], 0),
    y: finite(b[1], 0),
    width: Math.max(40, finite(b[2], 120)),
    height: Math.max(20, finite(b[3], 60)),
  };
}

/**
 * The graph of a UI-format workflow (the editor's save file, schema 0.4 or version 1), read with the converter's
 * reader (core/convert/uiGraph): each node at its saved `pos` and `size`, its mode (muted, bypassed), Note and
 * MarkdownNote as notes, the groups with their bounding boxes, the links as edges typed by the link's saved type
 * (`*` reads as unknown). A node whose type is a subgraph definition's id is a subgraph instance: its inner graph is
 * in `subgraphs` under the instance's execution id, whose nodes are named by path (`"12:5"`), with the subgraph's
 * input and output boxes (`"12:-10"`, `"12:-20"`) where saved. Literal widgets are named by `definitions` when their
 * `widgets_values` line up (core/convert/widgets), else listed unnamed.
 * @throws MalformedWorkflow when the nodes, links or subgraph definitions are not of their shape.
 */
export function graphFromUi(workflow: Record<string, unknown>, definitions?: NodeDefinitions): GraphModel {
  const defs = subgraphDefinitions(workflow);
  const subgraphs: Record<string, WorkflowGraph> = {};

  const build = (
    raw: Record<string, unknown>,
    graph: UiGraph,
    path: readonly string[],
    title: string,
    inside: readonly string[],
  ): WorkflowGraph => {
    const idOf = (local: string): string => [...path, local].join(':');
    const nodes: GraphNode[] = [];
    for (const node of graph.nodes.values()) {
      const id = idOf(node.id);
      const sub = defs.get(node.type);
      const isNote = NOTE_TYPES.has(node.type);
      const definition = definitions?.classes.get(node.type);
      const saved = typeof node.title === 'string' && node.title.trim() !== '' ? node.title : undefined;
      let kind: NodeKind = 'node';
      let subgraph: string | null = null;
      if (isNote) kind = 'note';
      else if (sub) {
        kind = 'subgraph';
        // A definition inside itself (directly or not), or nested deeper than the bound, is shown as a box that does not open.
        if (!inside.includes(node.type) && path.length < GRAPH_LIMITS.subgraphDepth) {
          subgraph = id;
          subgraphs[id] = build(
            sub.raw,
            sub.graph,
            [...path, node.id],
            shortText(saved ?? sub.name, GRAPH_LIMITS.title),
            [...inside, node.type],
          );
        }
      }
      const noteValue = Array.isArray(node.widgetsValues) ? node.widgetsValues[0] : undefined;
      nodes.push({
        id,
        kind,
        title: shortText(saved ?? (sub ? sub.name : definition?.displayName || node.type), GRAPH_LIMITS.title),
        classType: node.type,
        unknownClass:
          definitions !== undefined &&
          !definition &&
          !sub &&
          !isNote &&
          node.type !== 'Reroute' &&
          node.type !== 'PrimitiveNode',
        mode: modeOf(node.mode),
        ...(isNote || sub ? { literals: [], moreInputs: 0 } : literalsOf(uiLiterals(node, definitions))),
        note: isNote ? (typeof noteValue === 'string' ? noteValue.slice(0, GRAPH_LIMITS.note) : '') : null,
        subgraph,
        box: boxOf(node.raw),
      });
    }
    // A subgraph's input and output boxes: the ends of the links that enter and leave it.
    if (path.length > 0) {
      for (const [key, kind, local] of [
        ['inputNode', 'subgraphInput', '-10'],
        ['outputNode', 'subgraphOutput', '-20'],
      ] as const) {
        const box = ioBox(raw[key]);
        if (box)
          nodes.push({
            id: idOf(local),
            kind,
            title: kind === 'subgraphInput' ? 'Inputs' : 'Outputs',
            classType: '',
            unknownClass: false,
            mode: 'normal',
            literals: [],
            moreInputs: 0,
            note: null,
            subgraph: null,
            box,
          });
      }
    }
    const present = new Set(nodes.map((n) => n.id));
    const edges: GraphEdge[] = [];
    for (const link of graph.links.values()) {
      const from = idOf(link.originId);
      const to = idOf(link.targetId);
      if (!present.has(from) || !present.has(to)) continue;
      const target = graph.nodes.get(link.targetId);
      edges.push({
        from,
        fromOutput: link.originSlot,
        to,
        toInput: target?.inputs[link.targetSlot]?.name ?? String(link.targetSlot),
        type: link.type === '*' || link.type === '' ? null : link.type,
      });
    }
    return { title, nodes, edges, groups: groupsOf(raw.groups), positioned: true };
  };

  const root = build(workflow, readGraph(workflow, 'workflow'), [], '', []);
  return { format: 'ui', root, subgraphs };
}

/** Every node id of the model: the workflow's and every inner graph's (execution ids). */
export function graphNodeIds(model: GraphModel): string[] {
  const ids = model.root.nodes.map((n) => n.id);
  for (const g of Object.values(model.subgraphs))
    for (const n of g.nodes) if (n.kind !== 'subgraphInput' && n.kind !== 'subgraphOutput') ids.push(n.id);
  return ids;
}

/**
 * The graph of a parsed workflow file, whichever its format (`detectWorkflowFormat`): `{model}`, or `{problem}` in
 * words when it is neither format or its UI graph is malformed (a view keeps its last good graph and shows the words
 * in a banner).
 */
export function workflowGraph(
  value: unknown,
  definitions?: NodeDefinitions,
): { model: GraphModel } | { problem: string } {
  const format = detectWorkflowFormat(value);
  if (format === 'unknown' || !isPlainObject(value))
    return {
      problem: 'Not a workflow: neither API format (node id to {class_type, inputs}) nor UI format (a nodes list).',
    };
  if (format === 'api') return { model: graphFromApi(value, definitions) };
  try {
    return { model: graphFromUi(value, definitions) };
  } catch (err) {
    if (err instanceof MalformedWorkflow) return { problem: `The UI-format workflow cannot be read: ${err.message}` };
    throw err;
  }
}
