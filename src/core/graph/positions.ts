/**
 * Where a workflow graph's node is in the workflow's JSON text, and which node a place in the text belongs to: the
 * two directions of the graph view's click-to-reveal, and where a diagnostic's node is; and the graph's texts made
 * safe before they reach the page ({@link cleanModel}). vscode-free; positions come
 * from the JSON tree (jsonc-parser, as VS Code's JSON extension reads the file), never from a regex.
 *
 * Node ids are the graph's (core/graph/model.ts): an API-format key; a UI node's `id`; inside a subgraph instance,
 * the path of instance ids down to the node joined by `:` (`"12:5"`), the inner node being one of the nodes of the
 * instance's definition in `definitions.subgraphs`.
 */
import { parseTree, type Node } from 'jsonc-parser';
import type { TextSpan } from '../util';
import type { GraphModel, WorkflowGraph } from './types';

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false };

/** The value of `key` in an object node (the last one when repeated, as JSON.parse keeps). */
function member(object: Node | undefined, key: string): Node | undefined {
  if (object?.type !== 'object') return undefined;
  let found: Node | undefined;
  for (const p of object.children ?? []) if (p.children?.[0]?.value === key) found = p.children[1];
  return found;
}

/** A UI node's id as the graph names it (ids are numbers or strings in the file). */
function idText(node: Node | undefined): string | undefined {
  const v: unknown = node?.value;
  return (node?.type === 'number' || node?.type === 'string') && v !== '' ? String(v) : undefined;
}

/** The object in a `nodes` array whose `id` is `id`. */
function uiNode(nodes: Node | undefined, id: string): Node | undefined {
  if (nodes?.type !== 'array') return undefined;
  return nodes.children?.find((n) => idText(member(n, 'id')) === id);
}

/** The definition in `definitions.subgraphs` whose `id` is `type` (a subgraph instance's node type). */
function subgraphDefinition(root: Node, type: string): Node | undefined {
  const defs = member(member(root, 'definitions'), 'subgraphs');
  if (defs?.type !== 'array') return undefined;
  return defs.children?.find((d) => member(d, 'id')?.value === type);
}

/** Whether the root looks like a UI-format file (a `nodes` list), else it is read as API format. */
function isUi(root: Node): boolean {
  return member(root, 'nodes')?.type === 'array';
}

/**
 * The JSON value of node `nodeId` in the parsed tree `root`: in API format the value of the member `"<id>"` (an
 * object); in UI format the object in `nodes` with that id, and for an inner node (`"12:5"`) the object with the last
 * id in the `nodes` of the definition that instance 12 is an instance of (through every level of the path). Undefined
 * when there is no such node. The `property` is the API format's member (key and value), for its span.
 */
export function nodeObject(root: Node | undefined, nodeId: string): { value: Node; property?: Node } | undefined {
  if (root?.type !== 'object') return undefined;
  if (!isUi(root)) {
    const property = root.children?.filter((p) => p.children?.[0]?.value === nodeId).pop();
    const value = member(root, nodeId);
    return property && value?.type === 'object' ? { value, property } : undefined;
  }
  let graph: Node | undefined = root;
  let found: Node | undefined;
  const path = nodeId.split(':');
  for (let i = 0; i < path.length; i++) {
    found = uiNode(member(graph, 'nodes'), path[i]!);
    if (!found) return undefined;
    if (i < path.length - 1) {
      const type = member(found, 'type')?.value;
      graph = typeof type === 'string' ? subgraphDefinition(root, type) : undefined;
      if (!graph) return undefined;
    }
  }
  return found?.type === 'object' ? { value: found } : undefined;
}

/**
 * The span of node `nodeId`'s object in `text` ({@link nodeObject}): in API format the member `"<id>": {…}` (key to
 * closing brace), in UI format the node's object. Undefined when the text has no such node (an id from an older
 * graph, an invalid document).
 */
export function nodeSpan(text: string, nodeId: string): TextSpan | undefined {
  const found = nodeObject(parseTree(text, [], PARSE_OPTIONS), nodeId);
  const node = found?.property ?? found?.value;
  return node && { offset: node.offset, length: node.length };
}

/** A member of an object node by key (the last when repeated, as `JSON.parse` keeps): for readers of the tree. */
export { member as memberOf };

/** The path of property keys and array indexes from the root down to the innermost node at `offset`. */
function pathAt(root: Node, offset: number): (string | number)[] {
  const path: (string | number)[] = [];
  let node: Node | undefined = root;
  while (node?.children) {
    const inside: Node | undefined = node.children.find((c) => offset >= c.offset && offset <= c.offset + c.length);
    if (!inside) break;
    if (node.type === 'object') {
      // A property: its key, then down into its value.
      path.push(inside.children?.[0]?.value as string);
      node = inside.children?.[1];
      continue;
    }
    if (node.type === 'array') path.push(node.children.indexOf(inside));
    node = inside;
  }
  return path;
}

/**
 * The path of instance ids from the workflow's graph to an instance of subgraph definition `type` (`["12"]`, or
 * deeper through other instances), the first found in file order; undefined when nothing instantiates it.
 */
function instancePath(
  root: Node,
  type: string,
  depth = 0,
  graph: Node = root,
  seen: readonly string[] = [],
): string[] | undefined {
  if (depth > 8) return undefined;
  for (const n of member(graph, 'nodes')?.children ?? []) {
    const t = member(n, 'type')?.value;
    const id = idText(member(n, 'id'));
    if (typeof t !== 'string' || id === undefined || seen.includes(t)) continue;
    if (t === type) return [id];
    const def = subgraphDefinition(root, t);
    const deeper = def && instancePath(root, type, depth + 1, def, [...seen, t]);
    if (deeper) return [id, ...deeper];
  }
  return undefined;
}

/** Where in a node the offset is: the node's id and the input (`field`: an input name, `class_type`, or `inputs`). */
export interface NodeAtOffset {
  nodeId: string;
  field: string;
}

/**
 * The node whose JSON holds `offset` (a cursor, a diagnostic's start): in API format the top-level member it is in
 * (on its key included); in UI format the object of `nodes` it is in, and in a subgraph definition's `nodes` the
 * inner node of the first instance of that definition (its execution id `"12:5"`). `field` is the API-format input
 * under `inputs` (or `class_type`), else `inputs`. Undefined outside every node (between nodes, in `links`).
 */
export function nodeAtOffset(text: string, offset: number): NodeAtOffset | undefined {
  const root = parseTree(text, [], PARSE_OPTIONS);
  if (root?.type !== 'object') return undefined;
  const path = pathAt(root, offset);
  if (!isUi(root)) {
    const [id, part, input] = path;
    if (typeof id !== 'string' || id === '$schema' || member(root, id)?.type !== 'object') return undefined;
    const field =
      part === 'inputs' && typeof input === 'string' ? input : part === 'class_type' ? 'class_type' : 'inputs';
    return { nodeId: id, field };
  }
  if (path[0] === 'nodes' && typeof path[1] === 'number') {
    const id = idText(member(member(root, 'nodes')!.children![path[1]], 'id'));
    return id === undefined ? undefined : { nodeId: id, field: 'inputs' };
  }
  if (
    path[0] === 'definitions' &&
    path[1] === 'subgraphs' &&
    typeof path[2] === 'number' &&
    path[3] === 'nodes' &&
    typeof path[4] === 'number'
  ) {
    const def = member(member(root, 'definitions'), 'subgraphs')!.children![path[2]];
    const type = member(def, 'id')?.value;
    const id = idText(member(member(def, 'nodes')?.children?.[path[4]], 'id'));
    const instance = typeof type === 'string' ? instancePath(root, type) : undefined;
    return id === undefined || !instance ? undefined : { nodeId: [...instance, id].join(':'), field: 'inputs' };
  }
  return undefined;
}

/**
 * The node input under `offset` of an API-format workflow's text ({@link nodeAtOffset}: the cursor on an input's name
 * or value under `inputs`), e.g. `{nodeId: "3", field: "seed"}`; undefined elsewhere (`class_type`, between inputs,
 * outside every node, a UI-format file): what Run with Variations varies.
 */
export function nodeInputAt(text: string, offset: number): NodeAtOffset | undefined {
  const at = nodeAtOffset(text, offset);
  return at && at.field !== 'inputs' && at.field !== 'class_type' ? at : undefined;
}

/**
 * Every shown text of `model` made safe by `clean` (the Display's: secrets redacted, control characters escaped):
 * titles, class names, literals, notes (line by line, their line breaks kept), group titles, edge types. Ids are
 * left as they are: they are how the host and the page name a node.
 */
export function cleanModel(model: GraphModel, clean: (text: string) => string): GraphModel {
  const graph = (g: WorkflowGraph): WorkflowGraph => ({
    ...g,
    title: clean(g.title),
    nodes: g.nodes.map((n) => ({
      ...n,
      title: clean(n.title),
      classType: clean(n.classType),
      literals: n.literals.map((l) => ({ name: clean(l.name), text: clean(l.text) })),
      note: n.note === null ? null : n.note.split('\n').map(clean).join('\n'),
    })),
    edges: g.edges.map((e) => ({ ...e, toInput: clean(e.toInput), type: e.type === null ? null : clean(e.type) })),
    groups: g.groups.map((gr) => ({ ...gr, title: clean(gr.title) })),
  });
  return {
    format: model.format,
    root: graph(model.root),
    subgraphs: Object.fromEntries(Object.entries(model.subgraphs).map(([k, g]) => [k, graph(g)])),
  };
}
