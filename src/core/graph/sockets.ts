/**
 * A node's sockets as the workflow graph draws them, from the graph's links: its linked inputs (left side, by name)
 * and its used outputs (right side, by index), each with its link's type when known (ComfyUI draws a node by its
 * sockets: each input and output with its type). Pure: the webview's layout (media/graph/layout.ts) uses it.
 */
import type { WorkflowGraph } from './types';

/** One socket of a node: a linked input (by name) or a used output (by index), with its link's type when known. */
export interface Socket {
  name: string;
  type: string | null;
}

/** A node's sockets, in the order drawn: its linked inputs (left side) and its used outputs (right side). */
export interface NodeSockets {
  inputs: Socket[];
  outputs: (Socket & { index: number })[];
}

/**
 * The sockets of every node of `graph`, from its links: a node's linked inputs in the order the links name them, its
 * used outputs by index. An output is named by its type (`IMAGE`), as ComfyUI labels it, else `output N`.
 */
export function socketsOf(graph: WorkflowGraph): Map<string, NodeSockets> {
  const out = new Map<string, NodeSockets>();
  const of = (id: string): NodeSockets => {
    let s = out.get(id);
    if (!s) out.set(id, (s = { inputs: [], outputs: [] }));
    return s;
  };
  for (const e of graph.edges) {
    const to = of(e.to);
    if (!to.inputs.some((i) => i.name === e.toInput)) to.inputs.push({ name: e.toInput, type: e.type });
    const from = of(e.from);
    if (!from.outputs.some((o) => o.index === e.fromOutput))
      from.outputs.push({ index: e.fromOutput, name: e.type ?? `output ${e.fromOutput}`, type: e.type });
  }
  for (const s of out.values()) s.outputs.sort((a, b) => a.index - b.index);
  return out;
}
