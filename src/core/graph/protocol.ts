/**
 * The workflow graph's webview protocol (one `protocol.ts` shared by host and webview): every message between the
 * extension host and the graph webview (media/graph/), typed both ways and validated on receipt by each side
 * (`parseGraphHostMessage` in the webview, `parseGraphWebviewMessage` in the host): a message that does not parse is
 * dropped, never acted on. Also the state the webview keeps with `setState` across a reload.
 *
 * Rules the types carry:
 * - The webview says `ready` (with its protocol version) before the host posts; the host then posts `graph`, and
 *   `states`, `problems`, `select` as they change.
 * - A `graph` carries the document version it was made from; the webview ignores a graph older than the one shown
 *   (messages of two edits can cross).
 * - `banner` with text keeps the last good graph on screen under the words (the document is not valid JSON, or not a
 *   workflow); `banner` null clears it.
 * - Every server-chosen string (error messages, output names) is cleaned by the host before it is posted; the
 *   webview only ever sets text (`textContent`), never HTML.
 * - The webview reaches no network: previews come as base64 data.
 * - Choosing a node (`reveal`) opens its form: the host posts `form` (again after each change of the document, null
 *   when the node is gone); an `edit` is checked by the webview on its field first, and by the host again before it
 *   changes the document (a refusal comes back as the form's `problem`).
 *
 * Plain data, no `vscode`, no DOM: imported by the host, the webview bundle and the unit tests.
 */
import * as z from 'zod/mini';
import { lazy, parsedOrUndefined } from '../util/lazySchema';
import type { FormWords, NodeForm } from './formFields';
import type { GraphModel, GraphProblems, NodeRunState } from './types';

/** Bumped when a message changes shape; the host re-renders a page of another version from scratch. */
export const GRAPH_PROTOCOL_VERSION = 2;

/** Host → webview. */
export type GraphHostMessage =
  /** The graph of the document at `documentVersion` (the editor's version number; grows with each edit). */
  | { type: 'graph'; documentVersion: number; model: GraphModel }
  /** The run's states by node id (a job's, or {} to clear). */
  | { type: 'states'; states: Record<string, NodeRunState> }
  /** Problems on nodes (replacing the earlier ones). */
  | { type: 'problems'; problems: GraphProblems }
  /** Select (and scroll to) a node, opening the inner graph it is in; null clears the selection. */
  | { type: 'select'; nodeId: string | null }
  /** Words over the last good graph (why the document is not shown as it is now); null removes them. */
  | { type: 'banner'; text: string | null }
  /**
   * The chosen node's form (null closes it: the node is gone), its words, and the host's refusal of the last edit
   * (`field`: the field's name) or null.
   */
  | { type: 'form'; form: NodeForm | null; words: FormWords; problem: { field: string; message: string } | null };

/** Webview → host. Node ids are checked by the host against the document before it acts. */
export type GraphWebviewMessage =
  | { type: 'ready'; version: number }
  /** Select the node in the workflow's JSON (a click or Enter on its box). */
  | { type: 'reveal'; nodeId: string }
  /** The inner graph now shown (a subgraph instance's id), or null for the workflow's own graph. */
  | { type: 'openSubgraph'; path: string | null }
  /** Open the workflow file at the node (from a job's graph, whose workflow may not be open). */
  | { type: 'goToNode'; nodeId: string }
  /** Set field `field` (its name, or its label for an unnamed UI widget) of node `nodeId`'s form to `value`. */
  | { type: 'edit'; nodeId: string; field: string; value: string | number | boolean }
  /** The form was closed: no form is posted again. */
  | { type: 'closeForm' };

/** What the webview keeps across a reload (`setState`): the view (zoom factor, pan in px) and the inner graph shown. */
export interface GraphViewState {
  version: typeof GRAPH_PROTOCOL_VERSION;
  zoom: number;
  panX: number;
  panY: number;
  subgraph: string | null;
  /** The workflow file shown (its URI as a string, from the page's `data-document`): what a restored panel reopens. */
  document?: string;
}

/** Bounds on what a message may carry, so a bad message cannot make the receiver hold megabytes of strings. */
export const GRAPH_MESSAGE_LIMITS = {
  id: 256,
  text: 2_000,
  nodes: 20_000,
  /** Base64 characters of a preview frame (about 12 MB of image). */
  preview: 16_000_000,
  /** Characters of a form's text value (a long prompt). */
  value: 200_000,
  choices: 5_000,
  fields: 200,
} as const;

const schemas = lazy(() => {
  const id = z.string().check(z.minLength(1), z.maxLength(GRAPH_MESSAGE_LIMITS.id));
  const text = z.string().check(z.maxLength(GRAPH_MESSAGE_LIMITS.text));
  const num = z.number().check(z.refine(Number.isFinite));
  const box = z.object({ x: num, y: num, width: num, height: num });
  const node = z.object({
    id,
    kind: z.enum(['node', 'note', 'subgraph', 'subgraphInput', 'subgraphOutput']),
    title: text,
    classType: text,
    unknownClass: z.boolean(),
    mode: z.enum(['normal', 'muted', 'bypassed']),
    literals: z.array(z.object({ name: text, text })).check(z.maxLength(64)),
    moreInputs: num,
    note: z.nullable(text),
    subgraph: z.nullable(id),
    box: z.nullable(box),
  });
  const edge = z.object({ from: id, fromOutput: num, to: id, toInput: text, type: z.nullable(text) });
  const group = z.object({ title: text, box, color: z.nullable(text) });
  const graph = z.object({
    title: text,
    nodes: z.array(node).check(z.maxLength(GRAPH_MESSAGE_LIMITS.nodes)),
    edges: z.array(edge).check(z.maxLength(GRAPH_MESSAGE_LIMITS.nodes * 8)),
    groups: z.array(group).check(z.maxLength(GRAPH_MESSAGE_LIMITS.nodes)),
    positioned: z.boolean(),
  });
  const model = z.object({ format: z.enum(['api', 'ui']), root: graph, subgraphs: z.record(id, graph) });
  const runState = z.object({
    status: z.enum(['waiting', 'running', 'done', 'cached', 'failed']),
    progress: z.nullable(z.object({ value: num, max: num })),
    error: z.nullable(text),
    preview: z.nullable(
      z.object({
        seq: num,
        contentType: z.string().check(z.regex(/^image\/[a-z0-9.+-]+$/)),
        dataBase64: z.string().check(z.maxLength(GRAPH_MESSAGE_LIMITS.preview), z.regex(/^[A-Za-z0-9+/]*={0,2}$/)),
      }),
    ),
    outputs: z.array(z.object({ id, name: text, type: z.nullable(text) })).check(z.maxLength(1000)),
  });
  const problems = z.object({
    byNode: z.record(id, z.array(z.object({ field: text, message: text, source: z.enum(['check', 'server']) }))),
    graph: z.array(text),
  });
  const value = z.union([z.string().check(z.maxLength(GRAPH_MESSAGE_LIMITS.value)), num, z.boolean()]);
  const field = z.object({
    name: text,
    label: text,
    kind: z.enum(['int', 'float', 'string', 'boolean', 'combo', 'link', 'other']),
    value: z.nullable(value),
    path: z.array(z.union([text, num])).check(z.maxLength(32)),
    min: z.optional(num),
    max: z.optional(num),
    step: z.optional(num),
    multiline: z.optional(z.boolean()),
    choices: z.optional(z.array(z.union([text, num])).check(z.maxLength(GRAPH_MESSAGE_LIMITS.choices))),
    upload: z.optional(z.boolean()),
    seed: z.optional(z.boolean()),
    tooltip: z.optional(text),
    link: z.optional(z.object({ from: z.string().check(z.maxLength(GRAPH_MESSAGE_LIMITS.id)), output: num })),
  });
  const form = z.object({
    nodeId: id,
    title: text,
    classType: text,
    format: z.enum(['api', 'ui']),
    definitions: z.enum(['known', 'unknownClass', 'none']),
    fields: z.array(field).check(z.maxLength(GRAPH_MESSAGE_LIMITS.fields)),
  });
  const words = z.record(z.string().check(z.maxLength(64)), text);
  const host = z.discriminatedUnion('type', [
    z.object({ type: z.literal('graph'), documentVersion: num, model }),
    z.object({ type: z.literal('states'), states: z.record(id, runState) }),
    z.object({ type: z.literal('problems'), problems }),
    z.object({ type: z.literal('select'), nodeId: z.nullable(id) }),
    z.object({ type: z.literal('banner'), text: z.nullable(text) }),
    z.object({
      type: z.literal('form'),
      form: z.nullable(form),
      words,
      problem: z.nullable(z.object({ field: text, message: text })),
    }),
  ]);
  const webview = z.discriminatedUnion('type', [
    z.object({ type: z.literal('ready'), version: num }),
    z.object({ type: z.literal('reveal'), nodeId: id }),
    z.object({ type: z.literal('openSubgraph'), path: z.nullable(id) }),
    z.object({ type: z.literal('goToNode'), nodeId: id }),
    z.object({ type: z.literal('edit'), nodeId: id, field: text, value }),
    z.object({ type: z.literal('closeForm') }),
  ]);
  const view = z.object({
    version: z.literal(GRAPH_PROTOCOL_VERSION),
    zoom: num.check(z.gte(0.01), z.lte(100)),
    panX: num,
    panY: num,
    subgraph: z.nullable(id),
    document: z.optional(z.string().check(z.maxLength(GRAPH_MESSAGE_LIMITS.text))),
  });
  return { host, webview, view, model, runState };
});

/**
 * Whether the webview draws a `graph` of `incoming` document version when it shows one of `shown` (undefined: none
 * yet): yes unless older. Messages of two quick edits can cross, and the older graph must not replace the newer; the
 * same version again is drawn (the host posts it anew after `ready`, e.g. after a reload).
 */
export function isGraphCurrent(shown: number | undefined, incoming: number): boolean {
  return shown === undefined || incoming >= shown;
}

/**
 * The schemas of a {@link GraphModel} and of one {@link NodeRunState}, with this protocol's bounds: for another page
 * that embeds the graph (the job monitor's protocol validates its graph messages with them).
 */
export function graphDataSchemas(): {
  model: ReturnType<typeof schemas>['model'];
  runState: ReturnType<typeof schemas>['runState'];
} {
  const { model, runState } = schemas();
  return { model, runState };
}

/** A message from the host as the webview accepts it; undefined when it is not one (dropped). */
export function parseGraphHostMessage(value: unknown): GraphHostMessage | undefined {
  return parsedOrUndefined<GraphHostMessage>(schemas().host, value);
}

/** A message from the webview as the host accepts it; undefined when it is not one (dropped, logged by the host). */
export function parseGraphWebviewMessage(value: unknown): GraphWebviewMessage | undefined {
  return parsedOrUndefined<GraphWebviewMessage>(schemas().webview, value);
}

/**
 * The workflow file a saved state names (`document`), whatever its protocol version: a panel restored after an update
 * of the extension reopens its document even though its saved view (of another version) is not used.
 */
export function savedGraphDocument(value: unknown): string | undefined {
  const document = (value as { document?: unknown } | null | undefined)?.document;
  return typeof document === 'string' && document.length <= GRAPH_MESSAGE_LIMITS.text ? document : undefined;
}

/** The view state read back from `getState` (after a reload); undefined when absent or of another version. */
export function parseGraphViewState(value: unknown): GraphViewState | undefined {
  return parsedOrUndefined<GraphViewState>(schemas().view, value);
}
