/**
 * Legacy group nodes (the frontend's `extra.groupNodes`, instances typed `workflow>Name`): their name from the type,
 * and the rebuilding of an instance as the frontend's GroupNodeConfig does it, from the parts of its definition (links
 * indexed by end, outputs linked outside, the inner graph with the group's inputs and outputs as a subgraph's, the
 * group's widgets laid out over the instance's saved values).
 */
import { isPlainObject } from '../util/workflow';
import type { InputDefinition, NodeClassDefinition, NodeDefinitions } from '../workflowSchema/objectInfo';
import {
  MalformedWorkflow,
  readNode,
  SUBGRAPH_INPUT_ID,
  SUBGRAPH_OUTPUT_ID,
  type UiGraph,
  type UiLink,
  type UiNode,
} from './uiGraph';
import { isWidgetInput, layoutWidgets } from './widgets';

/** The legacy group node type's name (`workflow>Name` or `workflow/Name`), else undefined. */
export function groupName(type: string): string | undefined {
  const match = /^workflow[>/](.+)$/.exec(type);
  return match?.[1];
}

/**
 * The links of a legacy group node's definition by end: `linksFrom` (origin node → origin slot → its links) and
 * `linksTo` (target node → target slot → its link). Links without an origin are skipped. Undefined when a link does
 * not join two of `nodes`.
 */
export function indexGroupLinks(
  rawLinks: readonly unknown[][],
  nodes: readonly UiNode[],
): { linksFrom: Map<number, Map<number, unknown[][]>>; linksTo: Map<number, Map<number, unknown[]>> } | undefined {
  const linksFrom = new Map<number, Map<number, unknown[][]>>();
  const linksTo = new Map<number, Map<number, unknown[]>>();
  for (const l of rawLinks) {
    const [o, os, t, ts] = l;
    if (o === null || o === undefined) continue;
    if (
      typeof o !== 'number' ||
      typeof os !== 'number' ||
      typeof t !== 'number' ||
      typeof ts !== 'number' ||
      nodes[o] === undefined ||
      nodes[t] === undefined
    )
      return undefined;
    const from = linksFrom.get(o) ?? new Map<number, unknown[][]>();
    linksFrom.set(o, from);
    from.set(os, [...(from.get(os) ?? []), l]);
    const to = linksTo.get(t) ?? new Map<number, unknown[]>();
    linksTo.set(t, to);
    to.set(ts, l);
  }
  return { linksFrom, linksTo };
}

/** A legacy group node's `external` outputs (inner node → slot → type, `*` when none): outputs linked outside the group. */
export function externalOutputs(external: unknown): Map<number, Map<number, string>> {
  const externalFrom = new Map<number, Map<number, string>>();
  for (const e of Array.isArray(external) ? external : []) {
    if (Array.isArray(e) && typeof e[0] === 'number' && typeof e[1] === 'number') {
      externalFrom.set(
        e[0],
        (externalFrom.get(e[0]) ?? new Map<number, string>()).set(e[1], typeof e[2] === 'string' ? e[2] : '*'),
      );
    }
  }
  return externalFrom;
}

/**
 * A legacy group node's inner graph: inner links kept; the group's inputs come from the instance (-10), its outputs
 * leave it (-20). A string says why it cannot be built (a link to an input the inner node does not have).
 */
export function groupInnerGraph(
  nodes: readonly UiNode[],
  rawLinks: readonly unknown[][],
  groupInputs: readonly { index: number; slot: number }[],
  groupOutputs: readonly { index: number; slot: number }[],
): UiGraph | string {
  const inner = nodes.map((n) => ({ ...n, inputs: n.inputs.map((i) => ({ ...i, link: null as number | null })) }));
  const links = new Map<number, UiLink>();
  const link = (originId: string, originSlot: number, targetId: string, targetSlot: number): number => {
    const id = links.size + 1;
    links.set(id, { id, originId, originSlot, targetId, targetSlot, type: '*' });
    const target = targetId === SUBGRAPH_OUTPUT_ID ? undefined : inner[Number(targetId)]?.inputs[targetSlot];
    if (target) target.link = id;
    return id;
  };
  for (const l of rawLinks) {
    const [o, os, t, ts] = l as [number | null, number, number, number];
    if (o === null || o === undefined) continue;
    if (inner[t]?.inputs[ts] === undefined)
      return `a link of its definition goes to input ${ts} of inner node ${t}, which it does not have`;
    link(String(o), os, String(t), ts);
  }
  for (const [k, input] of groupInputs.entries()) link(SUBGRAPH_INPUT_ID, k, String(input.index), input.slot);
  const outputLinks = groupOutputs.map((o, j) => [link(String(o.index), o.slot, SUBGRAPH_OUTPUT_ID, j)]);
  return { nodes: new Map(inner.map((n) => [n.id, n])), links, outputLinks };
}

/**
 * A legacy group node (`extra.groupNodes`, type `workflow>Name`) as the frontend's GroupNodeConfig builds it: its
 * inner nodes numbered by position, inner links kept, the group's inputs and outputs as links to the instance, and
 * its widget values handed to the inner widgets (`overrides`: inner node index → widget name → value).
 * @param instance the group node instance; `data` its definition in `extra.groupNodes[name]`.
 * @returns the inner graph and overrides, or a string saying why it cannot be rebuilt exactly.
 * @throws MalformedWorkflow when its definition's links hold an entry that is not a list, or a node is malformed.
 */
export function buildGroupNode(
  instance: UiNode,
  name: string,
  data: unknown,
  definitions: NodeDefinitions,
): { graph: UiGraph; overrides: Map<string, Map<string, unknown>> } | string {
  if (!isPlainObject(data) || !Array.isArray(data.nodes) || !Array.isArray(data.links))
    return 'its definition in extra.groupNodes is not of the expected shape';
  const config = isPlainObject(data.config) ? data.config : {};
  const nodes = data.nodes.map((raw, i) => readNode(raw, `group node ${name} nodes[${i}]`, String(i)));
  const rawLinks = data.links.filter((l): l is unknown[] => Array.isArray(l));
  if (rawLinks.length !== data.links.length)
    throw new MalformedWorkflow(`group node ${name}: links holds an entry that is not a list`);
  const indexed = indexGroupLinks(rawLinks, nodes);
  if (indexed === undefined) return 'a link of its definition does not join two of its nodes';
  const { linksFrom, linksTo } = indexed;
  const externalFrom = externalOutputs(data.external);
  const seen = new Map<string, number>();
  const inputConfig = (node: UiNode, index: number, inputName: string): { name: string; visible: boolean } => {
    const nodeConfig = isPlainObject(config[String(index)]) ? (config[String(index)] as Record<string, unknown>) : {};
    const inputs = isPlainObject(nodeConfig.input) ? nodeConfig.input : {};
    const custom = isPlainObject(inputs[inputName]) ? inputs[inputName] : {};
    const label =
      node.raw.inputs && Array.isArray(node.raw.inputs)
        ? (node.raw.inputs as unknown[]).find(
            (i): i is Record<string, unknown> => isPlainObject(i) && i.name === inputName,
          )?.label
        : undefined;
    let inputLabel = typeof custom.name === 'string' ? custom.name : typeof label === 'string' ? label : inputName;
    let key = inputLabel;
    if (seen.has(inputLabel)) {
      const prefix = `${node.title ?? node.type} `;
      key = inputLabel = `${prefix}${inputName}`;
      if (seen.has(inputLabel)) inputLabel = `${prefix}${seen.get(inputLabel)} ${inputName}`;
    }
    seen.set(key, (seen.get(key) ?? 1) + 1);
    return { name: inputLabel, visible: custom.visible !== false };
  };
  const groupInputs: { index: number; slot: number; name: string }[] = [];
  const groupWidgets = new Map<InputDefinition, { index: number; inputName: string }>();
  const widgetInputs: InputDefinition[] = [];
  const groupOutputs: { index: number; slot: number }[] = [];
  const deferred: (() => string | undefined)[] = [];
  const addWidget = (index: number, input: InputDefinition, groupInputName: string): void => {
    const seed = input.kind === 'int' && (input.name === 'seed' || input.name === 'noise_seed');
    const renamed: InputDefinition = {
      ...input,
      name: groupInputName,
      required: true,
      uploadKind: undefined,
      ...(seed ? { controlAfterGenerate: true } : {}),
    };
    groupWidgets.set(renamed, { index, inputName: input.name });
    widgetInputs.push(renamed);
  };
  for (const [index, node] of nodes.entries()) {
    if (node.mode !== 0) return `its inner node ${index} (${node.type}) is muted or bypassed`;
    let inputs: InputDefinition[] | undefined;
    let outputCount = 0;
    if (node.type === 'Reroute') {
      const to = linksTo.get(index);
      const from = linksFrom.get(index);
      if (to !== undefined && from !== undefined && !externalFrom.get(index)?.has(0)) continue; // used inside only
      // Its type, as the frontend finds it: from what it feeds, else from what feeds it, else from its links.
      let type = '*';
      if (from !== undefined) {
        for (const l of from.get(0) ?? []) {
          const target = nodes[l[2] as number]?.inputs[l[3] as number];
          if (target?.widget !== undefined) return `its inner Reroute ${index} feeds a widget`;
          if (type === '*' && target !== undefined) type = target.type;
        }
      } else if (to !== undefined) {
        const l = to.get(0);
        type = (l && nodes[l[0] as number]?.outputs[l[1] as number]?.type) ?? '*';
      } else {
        const l = rawLinks.find((x) => x[2] === index);
        if (l !== undefined && typeof l[5] === 'string') type = l[5];
        if (type === '*') type = externalFrom.get(index)?.get(0) ?? '*';
      }
      inputs = [{ name: type, required: true, kind: 'link', type }];
      outputCount = 1;
    } else {
      const definition = definitions.classes.get(node.type);
      if (definition === undefined)
        return `its inner node ${index} (${node.type}) is not among this engine's node definitions`;
      if (definition.inputs.some((i) => i.dynamicOptions !== undefined || i.kind === 'dynamic'))
        return `its inner node ${index} (${node.type}) has v3 dynamic inputs`;
      inputs = [...definition.inputs];
      const upload = definition.inputs.find((i) => i.required && i.uploadKind === 'image_upload');
      if (upload !== undefined) {
        // The frontend adds the upload widget to the definition after the required inputs.
        const lastRequired = inputs.filter((i) => i.required).length;
        inputs.splice(lastRequired, 0, {
          name: 'upload',
          required: true,
          kind: 'string',
          type: 'IMAGEUPLOAD',
          default: 'image',
        });
      }
      outputCount = definition.outputs.length;
    }
    const slots: string[] = [];
    const converted = new Map<number, InputDefinition>();
    for (const input of inputs) {
      if (isWidgetInput(input)) {
        const socket = node.inputs.findIndex((i) => i.name === input.name && i.widget === input.name);
        if (socket > -1) converted.set(socket, input);
        else addWidget(index, input, inputConfig(node, index, input.name).name);
      } else slots.push(input.name);
    }
    const to = linksTo.get(index);
    for (const [slot, slotName] of slots.entries()) {
      const link = to?.get(slot);
      if (link !== undefined) {
        if (nodes[link[0] as number]?.type === 'PrimitiveNode') return 'a PrimitiveNode inside it feeds an input';
        continue;
      }
      const { name: inputName, visible } = inputConfig(node, index, slotName);
      if (!visible) continue;
      if (node.inputs[slot]?.name !== slotName && !(node.type === 'Reroute' && slot === 0))
        return `the inputs of its inner node ${index} (${node.type}) are not in its definition's order`;
      groupInputs.push({ index, slot, name: inputName });
    }
    deferred.push(() => {
      // Sorted as the frontend sorts them: as strings.
      const order = [...converted.keys()].sort();
      for (const [j, socket] of order.entries()) {
        const input = converted.get(socket)!;
        const slot = slots.length + j;
        const link = to?.get(slot);
        if (link !== undefined) {
          if (nodes[link[0] as number]?.type === 'PrimitiveNode') return 'a PrimitiveNode inside it feeds a widget';
          continue;
        }
        const { name: inputName } = inputConfig(node, index, input.name);
        if (node.inputs[slot]?.name !== input.name)
          return `the inputs of its inner node ${index} (${node.type}) are not in its definition's order`;
        addWidget(index, input, inputName);
        groupInputs.push({ index, slot, name: inputName });
      }
      return undefined;
    });
    const nodeConfig = isPlainObject(config[String(index)]) ? (config[String(index)] as Record<string, unknown>) : {};
    const outputConfig = isPlainObject(nodeConfig.output) ? nodeConfig.output : {};
    for (let slot = 0; slot < outputCount; slot++) {
      const linked = (linksFrom.get(index)?.get(slot)?.length ?? 0) > 0 && !externalFrom.get(index)?.has(slot);
      const custom = isPlainObject(outputConfig[String(slot)])
        ? (outputConfig[String(slot)] as Record<string, unknown>)
        : {};
      const visible = typeof custom.visible === 'boolean' ? custom.visible : !linked;
      if (visible) groupOutputs.push({ index, slot });
    }
  }
  for (const run of deferred) {
    const reason = run();
    if (reason !== undefined) return reason;
  }
  for (const [k, input] of instance.inputs.entries()) {
    if (groupInputs[k]?.name !== input.name)
      return `the instance's input ${k} ("${input.name}") is not the group's input ${k} ("${groupInputs[k]?.name ?? 'none'}")`;
  }
  if (instance.outputs.length > groupOutputs.length)
    return `the instance has ${instance.outputs.length} outputs where the group has ${groupOutputs.length}`;

  // The group's widgets: its own definition, laid out over the instance's saved values.
  const pseudo: NodeClassDefinition = {
    classType: instance.type,
    displayName: name,
    category: '',
    description: '',
    outputNode: false,
    deprecated: false,
    experimental: false,
    apiNode: false,
    inputs: widgetInputs,
    outputs: [],
  };
  const widgets = layoutWidgets(pseudo, instance.widgetsValues);
  if (!Array.isArray(widgets)) return widgets.reason;
  const overrides = new Map<string, Map<string, unknown>>();
  for (const widget of widgets) {
    const target = widget.input && groupWidgets.get(widget.input);
    if (!target || !widget.sent) continue;
    const values = overrides.get(String(target.index)) ?? new Map<string, unknown>();
    overrides.set(String(target.index), values);
    values.set(target.inputName, widget.value);
  }

  const graph = groupInnerGraph(nodes, rawLinks, groupInputs, groupOutputs);
  return typeof graph === 'string' ? graph : { graph, overrides };
}
