/**
 * A JSON Schema (draft-07, as VS Code's JSON language service reads it) for API-format workflows, generated from an
 * engine's node definitions, for workflow IntelliSense: `class_type` completion with each node's display
 * name and category; per-class `inputs` with names, types, defaults, min/max and enum choices; links as
 * `[node_id, output_index]`; hover shows a node's description. Workflow shape: API format, as the engine takes it
 * (an object of node id → `{class_type, inputs, _meta?}`; a link is `[source_node_id, output_index]`).
 *
 * Choices made for VS Code (vscode-json-languageservice 5.x):
 * - `class_type` is one `enum` with `markdownEnumDescriptions` (shown beside a completion and on hover of the
 *   value) and `enumDetails` (the display name and category, shown in the completion list itself). An `anyOf` of
 *   `const`s would give the documentation but no detail, cost about twice the bytes, and turn a typo into an
 *   "anyOf" error naming no class; the `enum` gets one `errorMessage`.
 * - Per-class inputs are `allOf` of `if: {properties: {class_type: {const}}, required: ["class_type"]}` /
 *   `then: {properties: {inputs: …}}`: the service validates `then` only when `if` holds and merges its matching
 *   schemas (parser/jsonParser.js `testCondition`), so completion and hover inside `inputs` come from the right
 *   class. `required` in `if` keeps a node without `class_type` from matching every class.
 * - A widget input is `anyOf: [literal, link]` (a widget can be converted to an input), plus a `core/ASSET`
 *   reference for string and combo widgets (Job and Asset API v2, POST /api/v2/jobs, rule 1: the job service takes
 *   assets as inputs); an upload
 *   combo takes any string besides its choices (a file uploaded later); a link-only input is the link; `inputs` stays open to other names (v3 dynamic inputs arrive as `name.sub`; the engine ignores extras).
 * - Long choice lists used by several inputs (model and file lists) are written once under `definitions`.
 */
import type { Translate } from '../util/l10n';
import type { InputDefinition, NodeClassDefinition, NodeDefinitions } from './objectInfo';

/** A JSON Schema object (draft-07 plus VS Code's `markdownDescription`, `markdownEnumDescriptions`, `enumDetails`, `errorMessage`). */
export type JsonSchema = Record<string, unknown>;

/** Options of {@link workflowJsonSchema}. */
export interface WorkflowSchemaOptions {
  /** The schema's `$id` (e.g. the URI it is served under); none by default. */
  readonly id?: string;
  /** A name for the source of the definitions, shown in the title (e.g. the connection's name). */
  readonly sourceName?: string;
}

/** A choice list shorter than this (JSON characters) is written in place; a longer one used twice is shared. */
const SHARE_CHOICES_ABOVE = 200;

/** `text` cut to `max` characters with an ellipsis (descriptions of custom nodes can be essays). */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Markdown-escapes characters that would format text taken from the server. */
function md(text: string): string {
  return text.replace(/([\\`*_{}[\]<>#|])/g, '\\$1');
}

/** The `markdownDescription` of an input: name, type, default, range, then its tooltip. */
function inputDescription(input: InputDefinition, t: Translate): string {
  const facts: string[] = [`\`${md(input.type === 'COMBO' ? 'COMBO' : input.type)}\``];
  if (input.kind === 'link') facts.push(t('link [node_id, output_index]'));
  if (!input.required) facts.push(t('optional'));
  if (input.default !== undefined && input.kind !== 'link')
    facts.push(t('default {0}', `\`${md(JSON.stringify(input.default) ?? '')}\``));
  if (input.min !== undefined) facts.push(t('min {0}', input.min));
  if (input.max !== undefined) facts.push(t('max {0}', input.max));
  if (input.step !== undefined && input.kind !== 'link') facts.push(t('step {0}', input.step));
  if (input.multiline) facts.push(t('multiline'));
  const head = `**${md(input.name)}** · ${facts.join(' · ')}`;
  return input.tooltip ? `${head}\n\n${md(cut(input.tooltip, 600))}` : head;
}

/** The `markdownEnumDescriptions` entry of a class: display name, category, flags, description, outputs. */
function classDescription(d: NodeClassDefinition, t: Translate): string {
  const flags = [
    d.outputNode ? t('output node') : '',
    d.deprecated ? t('deprecated') : '',
    d.experimental ? t('experimental') : '',
    d.apiNode ? t('partner node') : '',
  ].filter(Boolean);
  const lines = [
    `**${md(d.displayName)}**${d.category ? ` · ${md(d.category)}` : ''}${flags.length ? ` · ${flags.join(' · ')}` : ''}`,
  ];
  if (d.description) lines.push(md(cut(d.description, 800)));
  if (d.outputs.length > 0)
    lines.push(
      t(
        'Outputs: {0}',
        d.outputs.map((o, i) => `${i} \`${md(o.type)}\`${o.name !== o.type ? ` ${md(o.name)}` : ''}`).join(', '),
      ),
    );
  return lines.join('\n\n');
}

/** What the completion list shows beside a class name: its display name and category. */
function classDetail(d: NodeClassDefinition): string {
  const name = d.displayName !== d.classType ? d.displayName : '';
  const detail = [name, d.category].filter(Boolean).join(' · ');
  return d.deprecated ? `${detail} (deprecated)` : detail;
}

/** Builds the schemas of inputs, sharing long choice lists through `definitions`. */
class InputSchemas {
  readonly definitions: Record<string, JsonSchema> = {};
  private readonly useCount = new Map<string, number>();
  private readonly shared = new Map<string, string>();

  constructor(private readonly t: Translate) {}

  /** Counts a choice list's uses first, so only lists used more than once are shared. */
  count(choices: readonly (string | number)[]): void {
    const key = JSON.stringify(choices);
    if (key.length > SHARE_CHOICES_ABOVE) this.useCount.set(key, (this.useCount.get(key) ?? 0) + 1);
  }

  /** `{enum}` in place, or a `$ref` to the shared list. */
  private choices(choices: readonly (string | number)[]): JsonSchema {
    const key = JSON.stringify(choices);
    if ((this.useCount.get(key) ?? 0) < 2) return { enum: choices };
    let name = this.shared.get(key);
    if (name === undefined) {
      name = `choices${this.shared.size + 1}`;
      this.shared.set(key, name);
      this.definitions[name] = { enum: choices };
    }
    return { $ref: `#/definitions/${name}` };
  }

  /** The literal a widget takes, or undefined for link-only and dynamic inputs. */
  private literal(input: InputDefinition): JsonSchema | undefined {
    const range = {
      ...(input.min !== undefined ? { minimum: input.min } : {}),
      ...(input.max !== undefined ? { maximum: input.max } : {}),
    };
    switch (input.kind) {
      case 'int':
        return { type: 'integer', ...range };
      case 'float':
        return { type: 'number', ...range };
      case 'string':
        return { type: 'string' };
      case 'boolean':
        return { type: 'boolean' };
      case 'combo': {
        // No choices (an engine without models of that kind): any string, unchecked (an empty enum is invalid draft-07).
        // An upload's choices are offered, but a file uploaded since the definitions were read is fine too.
        const listed = input.choices?.length ? this.choices(input.choices) : undefined;
        const one =
          listed === undefined ? { type: 'string' } : input.upload ? { anyOf: [listed, { type: 'string' }] } : listed;
        return input.multiselect ? { type: 'array', items: one } : one;
      }
      default:
        return undefined;
    }
  }

  /** The schema of one input (undefined for a dynamic one, which is left open). */
  of(input: InputDefinition): JsonSchema | undefined {
    if (input.kind === 'dynamic') return undefined;
    const link = { $ref: '#/definitions/link' };
    const literal = this.literal(input);
    const annotations: JsonSchema = {
      markdownDescription: inputDescription(input, this.t),
      ...(input.default !== undefined && literal !== undefined ? { default: input.default } : {}),
    };
    if (literal === undefined) return { ...link, ...annotations };
    // On the job service a file input may be a `core/ASSET` reference instead of a name (Job and Asset API v2,
    // POST /api/v2/jobs, rule 1).
    const asset = input.kind === 'combo' || input.kind === 'string' ? [{ $ref: '#/definitions/asset' }] : [];
    return { anyOf: [literal, ...asset, link], ...annotations };
  }
}

/** The `then` of one class: its inputs' names, schemas and the required ones. */
function inputsSchema(d: NodeClassDefinition, inputs: InputSchemas): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const input of d.inputs) {
    const schema = inputs.of(input);
    if (schema === undefined) continue;
    properties[input.name] = schema;
    if (input.required) required.push(input.name);
  }
  return { properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * The JSON Schema of an API-format workflow for `definitions`: a top-level object of node id → node (`class_type`
 * from the definitions, `inputs` per class, optional `_meta`), a top-level `$schema` string allowed. Deterministic
 * (classes sorted by name). With no classes, `class_type` is any string and inputs are unchecked.
 * @param t the translation of the words of descriptions and messages.
 */
export function workflowJsonSchema(
  definitions: NodeDefinitions,
  t: Translate,
  options: WorkflowSchemaOptions = {},
): JsonSchema {
  const classes = [...definitions.classes.values()].sort((a, b) =>
    a.classType < b.classType ? -1 : a.classType > b.classType ? 1 : 0,
  );
  const inputs = new InputSchemas(t);
  for (const d of classes) for (const input of d.inputs) if (input.kind === 'combo') inputs.count(input.choices ?? []);

  const classType: JsonSchema = {
    type: 'string',
    markdownDescription: t('The node class (`class_type`) the engine runs.'),
  };
  if (classes.length > 0) {
    Object.assign(classType, {
      enum: classes.map((d) => d.classType),
      markdownEnumDescriptions: classes.map((d) => classDescription(d, t)),
      enumDetails: classes.map(classDetail),
      errorMessage: t('unknown node class: the node definitions have no such class_type'),
    });
  }
  const branches = classes.map((d) => ({
    if: { properties: { class_type: { const: d.classType } }, required: ['class_type'] },
    then: { properties: { inputs: inputsSchema(d, inputs) } },
  }));
  const title = options.sourceName
    ? t('API-format workflow (node definitions of {0})', options.sourceName)
    : t('API-format workflow');
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...(options.id ? { $id: options.id } : {}),
    title,
    markdownDescription: t('An API-format workflow: node id → node, each with a `class_type` and its `inputs`.'),
    type: 'object',
    properties: {
      $schema: {
        type: 'string',
        markdownDescription: t('The schema this file is checked against; removed before the workflow is submitted.'),
      },
    },
    additionalProperties: { $ref: '#/definitions/node' },
    definitions: {
      link: {
        type: 'array',
        markdownDescription: t(
          'A link `[node_id, output_index]`: output `output_index` (0 for the first) of node `node_id`.',
        ),
        items: [
          { type: 'string', markdownDescription: t('The id of the node whose output is linked.') },
          { type: 'integer', minimum: 0, markdownDescription: t('The index of the output (0 for the first).') },
        ],
        minItems: 2,
        maxItems: 2,
      },
      asset: {
        type: 'object',
        markdownDescription: t(
          'An uploaded asset of the job service: `{"__type": "core/ASSET", "info": {"id": "<asset id>"}}`.',
        ),
        required: ['__type', 'info'],
        properties: {
          __type: { const: 'core/ASSET' },
          info: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        },
      },
      node: {
        type: 'object',
        required: ['class_type', 'inputs'],
        properties: {
          class_type: classType,
          inputs: {
            type: 'object',
            markdownDescription: t("The node's inputs: literals and links `[node_id, output_index]`."),
          },
          _meta: {
            type: 'object',
            properties: { title: { type: 'string', markdownDescription: t("The node's title in the editor.") } },
          },
        },
        ...(branches.length > 0 ? { allOf: branches } : {}),
      },
      ...inputs.definitions,
    },
  };
}
