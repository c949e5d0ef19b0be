/**
 * Legacy group nodes (the frontend's `extra.groupNodes`, instances typed `workflow>Name`): their name from the type,
 * and the parts of their definition read to build the inner graph an instance expands to (links indexed by end,
 * outputs linked outside, the inner graph with the group's inputs and outputs as a subgraph's).
 */
import { SUBGRAPH_INPUT_ID, SUBGRAPH_OUTPUT_ID, type UiGraph, type UiLink, type UiNode } from './uiGraph';

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
