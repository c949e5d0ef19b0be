/**
 * A node's inputs as a form, and a form's change as an edit of the workflow's JSON text: the graph view's editing.
 * - The fields are typed from the node definition (numbers with min, max and step; combos with their choices; booleans;
 *   multi-line text; a seed), in the definition's order; without a definition each literal input is typed by its value.
 * - API format: a field is `inputs.<name>` of the node. UI format: a widget's value in `widgets_values`, at the
 *   position the UI-format converter gives it (core/convert/widgets.ts), so the edit lands where ComfyUI reads it.
 * - A change is checked against the field before anything is written ({@link fieldProblem}, the rules of the
 *   workflow check: an integer, within min and max, one of the choices), then made with jsonc-parser's `modify`: only
 *   the value's text changes, the rest of the file keeps its formatting.
 * Plain data and text, no `vscode`: the host, the webview (the same check on the field) and the unit tests read it.
 */
import {
  findNodeAtLocation,
  getNodeValue,
  modify,
  parseTree,
  visit,
  type Edit,
  type FormattingOptions,
  type Node,
} from 'jsonc-parser';
import { layoutWidgets } from '../convert/widgets';
import { isLink } from '../util/workflow';
import type { InputDefinition, NodeDefinitions } from '../workflowSchema/objectInfo';
import {
  FORM_LIMITS,
  FORM_WORDS,
  fieldProblem,
  type FormField,
  type FormFieldKind,
  type FormWords,
  type NodeForm,
} from './formFields';
import { memberOf, nodeObject } from './positions';

export * from './formFields';

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false };

/** A value as a field carries it: a primitive as it is, a list or an object as its JSON text (bounded). */
function shown(value: unknown): FormField['value'] {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  const json = JSON.stringify(value) ?? '';
  return json.length > 2_000 ? `${json.slice(0, 1_999)}…` : json;
}

/** The kind of a field typed by its value alone (no definition). */
function kindOfValue(value: unknown): FormFieldKind {
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'string';
  return 'other';
}

/** A field typed from the input's definition (`value` as the file holds it, else the default). */
function definedField(input: InputDefinition, name: string, value: unknown, path: (string | number)[]): FormField {
  const kind: FormFieldKind =
    input.kind === 'int' || input.kind === 'float' || input.kind === 'boolean' || input.kind === 'string'
      ? input.kind
      : input.kind === 'combo' && !input.multiselect
        ? 'combo'
        : 'other';
  const field: FormField = {
    name,
    label: name,
    kind,
    value: shown(value === undefined ? input.default : value),
    path,
  };
  if (input.min !== undefined) field.min = input.min;
  if (input.max !== undefined) field.max = input.max;
  if (input.step !== undefined) field.step = input.step;
  if (input.multiline) field.multiline = true;
  if (kind === 'combo') field.choices = (input.choices ?? []).slice(0, FORM_LIMITS.choices);
  if (input.upload) field.upload = true;
  if (input.tooltip) field.tooltip = input.tooltip;
  if (kind === 'int' && (input.controlAfterGenerate ?? (name === 'seed' || name === 'noise_seed'))) field.seed = true;
  return field;
}

/** The literal's field, or a link's, for an input of an API-format node (`value` as the file holds it). */
function apiField(
  name: string,
  value: unknown,
  input: InputDefinition | undefined,
  path: (string | number)[],
): FormField {
  if (isLink(value))
    return { name, label: name, kind: 'link', value: null, path, link: { from: String(value[0]), output: value[1] } };
  return input
    ? definedField(input, name, value, path)
    : { name, label: name, kind: kindOfValue(value), value: shown(value), path };
}

/** The widget inputs of a definition (the ones a form can show). */
function widgetInputs(inputs: readonly InputDefinition[]): InputDefinition[] {
  return inputs.filter((i) => i.kind !== 'link' && i.kind !== 'dynamic' && !i.forceInput && !i.type.includes(','));
}

/** What a node's form is made from: its id, its object in the tree, the JSON path of that object, the definitions. */
interface FormSource {
  nodeId: string;
  node: Node;
  path: (string | number)[];
  definitions: NodeDefinitions | undefined;
}

/** An API-format node's form. */
function apiForm({ nodeId, node, path, definitions }: FormSource): NodeForm {
  const value = getNodeValue(node) as Record<string, unknown>;
  const classType = typeof value.class_type === 'string' ? value.class_type : '';
  const definition = definitions?.classes.get(classType);
  const inputs = (value.inputs !== null && typeof value.inputs === 'object' ? value.inputs : {}) as Record<
    string,
    unknown
  >;
  const meta = value._meta as { title?: unknown } | undefined;
  const title = typeof meta?.title === 'string' ? meta.title : (definition?.displayName ?? classType);
  const fields: FormField[] = [];
  const named = new Set<string>();
  const at = (name: string): (string | number)[] => [...path, 'inputs', name];
  for (const input of definition ? definition.inputs : []) {
    const given = Object.hasOwn(inputs, input.name) ? inputs[input.name] : undefined;
    // A link-only input shows only when linked; a widget input always (its default when the file leaves it out).
    if (given === undefined && !widgetInputs([input]).length) continue;
    named.add(input.name);
    fields.push(apiField(input.name, given, input, at(input.name)));
  }
  for (const [name, given] of Object.entries(inputs))
    if (!named.has(name)) fields.push(apiField(name, given, undefined, at(name)));
  return {
    nodeId,
    title,
    classType,
    format: 'api',
    definitions: !definitions ? 'none' : definition ? 'known' : 'unknownClass',
    fields: fields.slice(0, FORM_LIMITS.fields),
  };
}

/**
 * Where UI link `linkId` into `node` comes from: its row in the `links` of the graph holding the node (a list
 * `[id, origin, slot, …]` or an object `{ id, origin_id, origin_slot }`); `from` is '' when it is not found.
 */
function linkSource(node: Node, linkId: unknown): { from: string; output: number } {
  const graph = node.parent?.parent?.parent;
  const links = graph && memberOf(graph, 'links');
  for (const row of links?.type === 'array' ? (getNodeValue(links) as unknown[]) : []) {
    const [id, from, output] = Array.isArray(row)
      ? row
      : [
          (row as { id?: unknown })?.id,
          (row as { origin_id?: unknown })?.origin_id,
          (row as { origin_slot?: unknown })?.origin_slot,
        ];
    if (id === linkId) return { from: String(from), output: typeof output === 'number' ? output : 0 };
  }
  return { from: '', output: 0 };
}

/** A UI-format node's form: its widgets by the converter's order (by position when the definition is unknown). */
function uiForm({ nodeId, node, path, definitions }: FormSource): NodeForm {
  const value = getNodeValue(node) as Record<string, unknown>;
  const classType = typeof value.type === 'string' ? value.type : '';
  const definition = definitions?.classes.get(classType);
  const title = typeof value.title === 'string' && value.title ? value.title : (definition?.displayName ?? classType);
  const saved = value.widgets_values;
  const at = (key: string | number): (string | number)[] => [...path, 'widgets_values', key];
  // Widgets whose input is linked ("converted to input"): the link gives the value, the saved one is not used.
  const linked = new Map<string, FormField['link']>();
  for (const i of Array.isArray(value.inputs) ? (value.inputs as Record<string, unknown>[]) : []) {
    const widget = i?.widget as { name?: unknown } | undefined;
    if (typeof widget?.name === 'string' && i.link !== null && i.link !== undefined)
      linked.set(widget.name, linkSource(node, i.link));
  }
  const fields: FormField[] = [];
  const widgets = definition ? layoutWidgets(definition, saved) : undefined;
  if (widgets && Array.isArray(widgets)) {
    const byName = !Array.isArray(saved);
    for (const w of widgets) {
      if (!w.sent || !w.input) continue;
      if (linked.has(w.name)) {
        fields.push({ name: w.name, label: w.name, kind: 'link', value: null, path: [], link: linked.get(w.name)! });
        continue;
      }
      const key = byName ? w.name : w.position;
      if (key === undefined) {
        // Not in the saved list (the default): shown as it is; writing it would need the values before it saved too.
        fields.push({ ...definedField(w.input, w.name, w.value, []), kind: 'other' });
        continue;
      }
      fields.push(definedField(w.input, w.name, w.value, at(key)));
    }
  } else if (Array.isArray(saved)) {
    saved.forEach((v, i) =>
      fields.push({ name: '', label: `widget ${i + 1}`, kind: kindOfValue(v), value: shown(v), path: at(i) }),
    );
  } else if (saved !== null && typeof saved === 'object') {
    for (const [name, v] of Object.entries(saved as Record<string, unknown>))
      fields.push({ name, label: name, kind: kindOfValue(v), value: shown(v), path: at(name) });
  }
  return {
    nodeId,
    title,
    classType,
    format: 'ui',
    definitions: !definitions ? 'none' : definition && Array.isArray(widgets) ? 'known' : 'unknownClass',
    fields: fields.slice(0, FORM_LIMITS.fields),
  };
}

/** The JSON path from the root to `node` (object keys and array indexes). */
function pathOf(node: Node): (string | number)[] {
  const path: (string | number)[] = [];
  let child: Node = node;
  for (let parent = node.parent; parent; child = parent, parent = parent.parent) {
    if (parent.type === 'property') path.unshift(parent.children?.[0]?.value as string);
    else if (parent.type === 'array') path.unshift(parent.children?.indexOf(child) ?? -1);
  }
  return path;
}

/**
 * The form of node `nodeId` (the graph's node id: an API key, a UI node's id, `"12:5"` inside a subgraph) in the
 * workflow `text`, typed from `definitions` when given. Undefined when the text has no such node (or is not JSON);
 * notes and subgraph instances have no form (no widgets of a class).
 */
export function nodeForm(text: string, nodeId: string, definitions: NodeDefinitions | undefined): NodeForm | undefined {
  return formOf(parseTree(text, [], PARSE_OPTIONS), nodeId, definitions);
}

/** {@link nodeForm} of the parsed tree `root`. */
function formOf(
  root: Node | undefined,
  nodeId: string,
  definitions: NodeDefinitions | undefined,
): NodeForm | undefined {
  const found = nodeObject(root, nodeId);
  if (!root || !found) return undefined;
  const ui = memberOf(root, 'nodes')?.type === 'array';
  const source = { nodeId, node: found.value, path: pathOf(found.value), definitions };
  return ui ? uiForm(source) : apiForm(source);
}

/** The text's indentation and line ends, so an inserted member is formatted as its neighbours. */
export function formattingOf(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  return {
    insertSpaces: !indent.startsWith('\t'),
    tabSize: indent.startsWith('\t') ? 4 : indent.length,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/**
 * The edits of `text` that set field `name` of node `nodeId` to `value`: the value's text replaced (or the member
 * inserted, for an API input the file leaves out), formatting kept.
 * @throws Error naming the problem when the node or field is gone (the document changed), the field cannot be
 * edited (a link, a value not saved in a UI file), or `value` is refused by the field ({@link fieldProblem}).
 */
export function fieldEdit(
  text: string,
  nodeId: string,
  name: string,
  value: unknown,
  definitions: NodeDefinitions | undefined,
  words: FormWords = FORM_WORDS,
): { edits: Edit[]; field: FormField } {
  // An API-format node is read alone (its span found by a scan that builds no tree): a 500-node workflow is some
  // 100 KB, and its whole tree costs more than the rest of an edit. A UI-format node: one tree of the text.
  const span = apiNodeSpan(text, nodeId);
  const part = span ? text.slice(span.offset, span.offset + span.length) : text;
  const root = parseTree(part, [], PARSE_OPTIONS);
  const form = span
    ? root && apiForm({ nodeId, node: root, path: [nodeId], definitions })
    : formOf(root, nodeId, definitions);
  if (!form) throw new Error(`node ${nodeId} is not in the workflow any more; select it again in the graph`);
  const field = form.fields.find((f) => (f.name || f.label) === name);
  if (!field) throw new Error(`node ${nodeId} has no input "${name}" any more; select it again in the graph`);
  if (field.kind === 'link' || field.kind === 'other' || field.path.length === 0)
    throw new Error(`input "${name}" of node ${nodeId} cannot be edited in the form; edit it in the JSON`);
  const problem = fieldProblem(field, value, words);
  if (problem !== undefined) throw new Error(`input "${name}" of node ${nodeId}: ${problem}`);
  if (!span) return { edits: valueEdits(text, root, field.path, value), field };
  const edits = valueEdits(part, root, field.path.slice(1), value);
  return { edits: edits.map((e) => ({ ...e, offset: e.offset + span.offset })), field };
}

/**
 * Where the object of API-format node `nodeId` is in `text` (the last member of that key, as `JSON.parse` keeps),
 * found by jsonc-parser's `visit` (no tree built). Undefined for a UI-format text (a top-level `nodes` list) or when
 * there is no such object.
 */
function apiNodeSpan(text: string, nodeId: string): { offset: number; length: number } | undefined {
  let depth = 0;
  let key: string | undefined;
  let start = -1;
  let ui = false;
  let found: { offset: number; length: number } | undefined;
  visit(
    text,
    {
      onObjectProperty: (property) => {
        if (depth === 1) key = property;
      },
      onObjectBegin: (offset) => {
        depth++;
        start = depth === 2 && key === nodeId ? offset : depth === 2 ? -1 : start;
      },
      onObjectEnd: (offset, length) => {
        if (depth === 2 && start >= 0) found = { offset: start, length: offset + length - start };
        depth--;
      },
      onArrayBegin: () => {
        if (depth === 1 && key === 'nodes') ui = true;
        depth++;
      },
      onArrayEnd: () => {
        depth--;
      },
    },
    PARSE_OPTIONS,
  );
  return ui ? undefined : found;
}

/**
 * The edits that set the value at `path` of the parsed `text` (`root`): a value in place has its text replaced, else
 * jsonc-parser's `modify` writes it. A member added to an
 * object is written after its last member, on that line for an object written on one line, else on a line of its own
 * indented as that member: `modify` would format its neighbours too.
 */
function valueEdits(text: string, root: Node | undefined, path: (string | number)[], value: unknown): Edit[] {
  // A value in place: its text replaced (what `modify` does, without parsing the text again).
  const at = root && findNodeAtLocation(root, path);
  if (at && at.type !== 'object' && at.type !== 'array')
    return [{ offset: at.offset, length: at.length, content: JSON.stringify(value) }];
  const parent = root && findNodeAtLocation(root, path.slice(0, -1));
  const key = path[path.length - 1];
  const last = parent?.children?.[parent.children.length - 1];
  if (parent?.type === 'object' && typeof key === 'string' && !memberOf(parent, key) && last) {
    const member = `${JSON.stringify(key)}: ${JSON.stringify(value)}`;
    const end = last.offset + last.length;
    if (!text.slice(parent.offset, parent.offset + parent.length).includes('\n'))
      return [{ offset: end, length: 0, content: `, ${member}` }];
    const lineStart = text.lastIndexOf('\n', last.offset) + 1;
    const indent = /^[ \t]*/.exec(text.slice(lineStart, last.offset))?.[0] ?? '';
    return [{ offset: end, length: 0, content: `,${formattingOf(text).eol ?? '\n'}${indent}${member}` }];
  }
  return modify(text, path, value, { formattingOptions: formattingOf(text) });
}
