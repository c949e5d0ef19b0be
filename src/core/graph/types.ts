/**
 * The data of the workflow graph: the model of a workflow as a graph (model.ts builds it), the run state of a node
 * (runStates.ts) and problems on nodes (problems.ts). Types only, importing nothing: the webview bundle and its type
 * check read them without the rest of the core.
 */

/** How a UI node takes part in a run: `normal`; `muted` (litegraph mode 2: left out); `bypassed` (mode 4: passed through). */
export type NodeMode = 'normal' | 'muted' | 'bypassed';

/** What a box is: a node, a Note/MarkdownNote (text only), a subgraph instance (opens its inner graph), a subgraph's input or output box. */
export type NodeKind = 'node' | 'note' | 'subgraph' | 'subgraphInput' | 'subgraphOutput';

/** One literal input as shown: its name ('' when the UI file's widgets could not be named) and its short text. */
export interface GraphLiteral {
  name: string;
  text: string;
}

/** A box in graph units (UI format: the editor's canvas pixels). */
export interface GraphBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One node of the graph. */
export interface GraphNode {
  /** The execution id (`"12:5"` inside a subgraph instance). */
  id: string;
  kind: NodeKind;
  /** `_meta.title` (API) or the node's title (UI), else the class's display name, else `class_type`; bounded. */
  title: string;
  classType: string;
  /** True when node definitions were given and do not know `class_type`. */
  unknownClass: boolean;
  mode: NodeMode;
  /** Literal inputs (widgets), at most {@link GRAPH_LIMITS}.literals. */
  literals: GraphLiteral[];
  /** How many more literal inputs the node has than are listed. */
  moreInputs: number;
  /** A note's text, bounded; null for other kinds. */
  note: string | null;
  /** For a subgraph instance, the key of its inner graph in {@link GraphModel.subgraphs} (its own execution id). */
  subgraph: string | null;
  /** UI format: the saved position and size; null in API format (laid out by the webview). */
  box: GraphBox | null;
}

/** One edge: output `fromOutput` of node `from` into input `toInput` of node `to`, labelled with its type when known. */
export interface GraphEdge {
  from: string;
  fromOutput: number;
  to: string;
  toInput: string;
  /** The source's output type (`MODEL`, `LATENT`, …) where the definitions or the UI link give it; null otherwise. */
  type: string | null;
}

/** A UI group: its title, bounding box and saved color (a CSS color as saved, or null). */
export interface GraphGroup {
  title: string;
  box: GraphBox;
  color: string | null;
}

/** One graph: the workflow's or a subgraph's. */
export interface WorkflowGraph {
  /** The graph's name: '' for the workflow, the subgraph's name for an inner graph. */
  title: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  groups: GraphGroup[];
  /** True when every node has its {@link GraphNode.box} (UI format): drawn where saved, not laid out. */
  positioned: boolean;
}

/** A workflow as a graph: its own graph and the inner graphs of its subgraph instances, by instance execution id. */
export interface GraphModel {
  format: 'api' | 'ui';
  root: WorkflowGraph;
  subgraphs: Record<string, WorkflowGraph>;
}

/** A node's state in a run. */
export type NodeRunStatus = 'waiting' | 'running' | 'done' | 'cached' | 'failed';

/** An output of the node, as the graph shows it. */
export interface NodeRunOutput {
  id: string;
  /** The file name (else the id), bounded. */
  name: string;
  type: string | null;
}

/** What the graph shows of one node during (or after) a run. */
export interface NodeRunState {
  status: NodeRunStatus;
  /** The running node's step of its steps (`value` of `max`), when the job gives them. */
  progress: { value: number; max: number } | null;
  /** The failed node's error message (cleaned by the caller's `clean`), bounded. */
  error: string | null;
  /** The latest preview frame, on the node that drew it: base64 bytes, type, and its place in the job's frames. */
  preview: { seq: number; contentType: string; dataBase64: string } | null;
  outputs: NodeRunOutput[];
}

/** One problem on a node: the input (`field`: an input name, `class_type` or `inputs`), the words, and who said it. */
export interface NodeProblem {
  field: string;
  message: string;
  /** `check`: the client's validator; `server`: the server's refusal. */
  source: 'check' | 'server';
}

/** Problems by node id, and the ones about the whole workflow (no output node, no nodes). */
export interface GraphProblems {
  byNode: Record<string, NodeProblem[]>;
  graph: string[];
}
