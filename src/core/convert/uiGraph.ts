/**
 * Reading a UI-format workflow (the editor's save file) into plain graphs: nodes with their input and output slots,
 * links by id, and the subgraph definitions of version 1. Shapes are those of ComfyUI's frontend (litegraph's
 * serialisation: schema 0.4 links as arrays `[id, origin_id, origin_slot, target_id, target_slot, type]`, version 1
 * and subgraph links as objects). vscode-free.
 */
import { isPlainObject } from '../util/workflow';

/** Litegraph's node modes that change what is queued: muted nodes are left out, bypassed ones passed through. */
export const MODE_MUTED = 2;
export const MODE_BYPASS = 4;

/** The ids the frontend gives a subgraph's input and output boxes in its links. */
export const SUBGRAPH_INPUT_ID = '-10';
export const SUBGRAPH_OUTPUT_ID = '-20';

/** One input slot of a node as saved: its link id (null when nothing is connected) and, for a widget's socket, its widget. */
export interface UiInput {
  readonly name: string;
  readonly type: string;
  link: number | null;
  /** The widget this socket belongs to (`widget.name`), when it is a widget's socket. */
  readonly widget?: string;
}

/** One output slot as saved: its type and the ids of its links. */
interface UiOutput {
  readonly name: string;
  readonly type: string;
  readonly links: readonly number[];
}

/** One node of a graph as saved. */
export interface UiNode {
  /** The id as a string (links and execution ids use it so). */
  readonly id: string;
  readonly type: string;
  readonly mode: number;
  readonly title?: string;
  readonly inputs: UiInput[];
  readonly outputs: UiOutput[];
  /** `widgets_values`: an array by widget position (or, from some custom nodes, an object by widget name). */
  readonly widgetsValues: unknown;
  readonly properties: Readonly<Record<string, unknown>>;
  /** The node as saved (for group-node definitions, which are read further). */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** One link: from an output slot of one node to an input slot of another. */
export interface UiLink {
  readonly id: number;
  readonly originId: string;
  readonly originSlot: number;
  readonly targetId: string;
  readonly targetSlot: number;
  readonly type: string;
}

/** A graph: the root workflow, a subgraph definition, or a group node's inner nodes. */
export interface UiGraph {
  readonly nodes: ReadonlyMap<string, UiNode>;
  readonly links: ReadonlyMap<number, UiLink>;
  /** A subgraph's outputs: for each output slot, the ids of the links that reach it inside. */
  readonly outputLinks: readonly (readonly number[])[];
}

/** A broken shape: what is wrong, for a `ui_workflow_malformed` refusal. */
export class MalformedWorkflow extends Error {}

function slotType(value: unknown): string {
  // A type is a string; litegraph saves 0 or -1 for "any" in some old files.
  return typeof value === 'string' ? value : '*';
}

function isId(value: unknown): value is number | string {
  return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && value !== '');
}

function integer(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/** Reads one link table entry: an array (schema 0.4) or an object (version 1, subgraphs). */
function readLink(raw: unknown, where: string, index: number): UiLink {
  if (Array.isArray(raw)) {
    const [id, originId, originSlot, targetId, targetSlot, type] = raw as unknown[];
    if (
      raw.length >= 5 &&
      integer(id) &&
      isId(originId) &&
      integer(originSlot) &&
      isId(targetId) &&
      integer(targetSlot)
    ) {
      return {
        id,
        originId: String(originId),
        originSlot,
        targetId: String(targetId),
        targetSlot,
        type: slotType(type),
      };
    }
  } else if (isPlainObject(raw)) {
    const {
      id,
      origin_id: originId,
      origin_slot: originSlot,
      target_id: targetId,
      target_slot: targetSlot,
      type,
    } = raw;
    if (integer(id) && isId(originId) && integer(originSlot) && isId(targetId) && integer(targetSlot)) {
      return {
        id,
        originId: String(originId),
        originSlot,
        targetId: String(targetId),
        targetSlot,
        type: slotType(type),
      };
    }
  }
  throw new MalformedWorkflow(
    `${where} links[${index}] is not a link: expected [id, origin_id, origin_slot, target_id, target_slot, type] or {id, origin_id, origin_slot, target_id, target_slot}`,
  );
}

function readInputs(raw: unknown, where: string): UiInput[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new MalformedWorkflow(`${where}: inputs is not a list`);
  return raw.map((slot, i) => {
    if (!isPlainObject(slot) || typeof slot.name !== 'string')
      throw new MalformedWorkflow(`${where}: inputs[${i}] is not an input slot`);
    const link = slot.link === undefined || slot.link === null ? null : slot.link;
    if (link !== null && !integer(link)) throw new MalformedWorkflow(`${where}: inputs[${i}].link is not a link id`);
    const widget = isPlainObject(slot.widget) && typeof slot.widget.name === 'string' ? slot.widget.name : undefined;
    return { name: slot.name, type: slotType(slot.type), link, ...(widget !== undefined ? { widget } : {}) };
  });
}

function readOutputs(raw: unknown, where: string): UiOutput[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new MalformedWorkflow(`${where}: outputs is not a list`);
  return raw.map((slot, i) => {
    if (!isPlainObject(slot)) throw new MalformedWorkflow(`${where}: outputs[${i}] is not an output slot`);
    const links = Array.isArray(slot.links) ? slot.links.filter(integer) : [];
    return { name: typeof slot.name === 'string' ? slot.name : '', type: slotType(slot.type), links };
  });
}

/** Reads one node; `id` overrides the saved id (group nodes' inner nodes are numbered by position). */
export function readNode(raw: unknown, where: string, id?: string): UiNode {
  if (!isPlainObject(raw)) throw new MalformedWorkflow(`${where} is not a node`);
  if (id === undefined && !isId(raw.id)) throw new MalformedWorkflow(`${where} has no id`);
  if (typeof raw.type !== 'string' || raw.type === '') throw new MalformedWorkflow(`${where} has no type`);
  const nodeId = id ?? String(raw.id as string | number);
  const at = `${where} (id ${nodeId})`;
  return {
    id: nodeId,
    type: raw.type,
    mode: integer(raw.mode) ? raw.mode : 0,
    ...(typeof raw.title === 'string' ? { title: raw.title } : {}),
    inputs: readInputs(raw.inputs, at),
    outputs: readOutputs(raw.outputs, at),
    widgetsValues: raw.widgets_values,
    properties: isPlainObject(raw.properties) ? raw.properties : {},
    raw,
  };
}

/**
 * Reads the nodes and links of a graph (the root workflow or a subgraph definition).
 * @throws MalformedWorkflow when `nodes` or `links` is not a list, or an entry is not of its shape.
 */
export function readGraph(raw: Record<string, unknown>, where: string): UiGraph {
  if (!Array.isArray(raw.nodes)) throw new MalformedWorkflow(`${where} has no nodes list`);
  const rawLinks = raw.links ?? [];
  if (!Array.isArray(rawLinks)) throw new MalformedWorkflow(`${where}: links is not a list`);
  const nodes = new Map<string, UiNode>();
  raw.nodes.forEach((n, i) => {
    const node = readNode(n, `${where} nodes[${i}]`);
    if (nodes.has(node.id)) throw new MalformedWorkflow(`${where}: two nodes have the id ${node.id}`);
    nodes.set(node.id, node);
  });
  const links = new Map<number, UiLink>();
  rawLinks.forEach((l, i) => {
    const link = readLink(l, where, i);
    links.set(link.id, link);
  });
  const outputLinks = Array.isArray(raw.outputs)
    ? raw.outputs.map((o) => (isPlainObject(o) && Array.isArray(o.linkIds) ? o.linkIds.filter(integer) : []))
    : [];
  return { nodes, links, outputLinks };
}

/**
 * The subgraph definitions of a version-1 workflow (`definitions.subgraphs`), by id (the type their instances carry).
 * @throws MalformedWorkflow when a definition is not of its shape.
 */
export function readSubgraphs(workflow: Record<string, unknown>): Map<string, UiGraph> {
  const subgraphs = new Map<string, UiGraph>();
  const definitions = workflow.definitions;
  if (!isPlainObject(definitions) || definitions.subgraphs === undefined) return subgraphs;
  if (!Array.isArray(definitions.subgraphs)) throw new MalformedWorkflow('definitions.subgraphs is not a list');
  definitions.subgraphs.forEach((raw, i) => {
    if (!isPlainObject(raw) || typeof raw.id !== 'string')
      throw new MalformedWorkflow(`definitions.subgraphs[${i}] has no id`);
    subgraphs.set(raw.id, readGraph(raw, `subgraph ${raw.id}`));
  });
  return subgraphs;
}
