/**
 * A model's input as a JSON Schema the editor's JSON language service understands, and a first input from it
 * (New Model Input, IntelliSense from the model's openapi.json). vscode-free.
 */
import type * as Converter from '@openapi-contrib/openapi-schema-to-json-schema';
import { ResponseShapeError } from '../http/errors';

/**
 * The OpenAPI converter, required at the first conversion: loading it runs lodash's deep clone over its tables, which
 * costs the extension's activation about 4 ms of CPU (`npm run bench -- activation`) for a model input that may
 * never be opened.
 */
function converter(): typeof Converter {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required at first use, see above
  return require('@openapi-contrib/openapi-schema-to-json-schema') as typeof Converter;
}

/** A JSON Schema object (draft-04, as the converter writes it). */
type JsonSchemaObject = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The converter on one schema: `nullable` becomes a `null` type, boolean `exclusiveMinimum` is draft-04's own. */
function convert(schema: Record<string, unknown>): JsonSchemaObject {
  return converter().fromSchema(schema, { cloneSchema: true }) as JsonSchemaObject;
}

/**
 * The request-body schema of the POST operation of a model's openapi.json (Model router API,
 * GET /v1/models/{provider}/{model}/openapi.json:
 * an OpenAPI 3.0 document whose POST request body, `application/json`, may `$ref` into `#/components/schemas`),
 * converted from OpenAPI 3.0 to JSON Schema by @openapi-contrib/openapi-schema-to-json-schema. The converted
 * `components.schemas` are kept in the same document, so the `$ref`s (`#/components/schemas/X`) resolve in it.
 * @param openapi the parsed openapi.json (untrusted).
 * @returns a draft-04 JSON Schema object: the body schema's keys, `$schema`, and `components.schemas`.
 * @throws ResponseShapeError when the document has no POST operation with a JSON request-body schema.
 */
export function requestBodySchema(openapi: unknown): JsonSchemaObject {
  const paths = isObject(openapi) && isObject(openapi.paths) ? openapi.paths : {};
  let body: Record<string, unknown> | undefined;
  for (const item of Object.values(paths)) {
    const post = isObject(item) && isObject(item.post) ? item.post : undefined;
    const content =
      post && isObject(post.requestBody) && isObject(post.requestBody.content) ? post.requestBody.content : undefined;
    const json = content && isObject(content['application/json']) ? content['application/json'] : undefined;
    if (json && isObject(json.schema)) {
      body = json.schema;
      break;
    }
  }
  if (!body)
    throw new ResponseShapeError("the model's openapi.json has no POST operation with a JSON request body schema");
  const components =
    isObject(openapi) && isObject(openapi.components) && isObject(openapi.components.schemas)
      ? openapi.components.schemas
      : {};
  const schemas: Record<string, JsonSchemaObject> = {};
  for (const [name, schema] of Object.entries(components)) {
    if (isObject(schema)) schemas[name] = convert(schema);
  }
  const root = convert(body);
  // Each converted component carries its own `$schema`; only the document's root needs it.
  for (const schema of Object.values(schemas)) delete schema.$schema;
  // A root that is only a `$ref` would be replaced by its target (draft-04: siblings of `$ref` are ignored), taking
  // `components` away from the refs nested in it (seen in VS Code: "$ref … can not be resolved"): wrap it in `allOf`.
  if (typeof root.$ref === 'string') {
    const { $ref, ...rest } = root;
    // A root that names an object schema is inlined instead, so that its `$schema` key can be declared (below).
    const target = $ref.startsWith(COMPONENT_REF) ? schemas[$ref.slice(COMPONENT_REF.length)] : undefined;
    if (!target || !isObject(target.properties)) return { ...rest, allOf: [{ $ref }], components: { schemas } };
    return withSchemaKey({ ...rest, ...target, $schema: rest.$schema, components: { schemas } });
  }
  return withSchemaKey({ ...root, components: { schemas } });
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * The input's own top-level `$schema` key (which points the editor at this schema, and Run Model removes before
 * sending) declared among the root's properties, so that a body schema with `additionalProperties: false` does not
 * flag it ("Property $schema is not allowed").
 */
function withSchemaKey(root: JsonSchemaObject): JsonSchemaObject {
  if (!isObject(root.properties)) return root;
  const declared = { type: 'string', description: 'The schema of this input (removed before the input is sent).' };
  return { ...root, properties: { $schema: declared, ...root.properties } };
}

/** The schema a local `$ref` (`#/a/b`, JSON Pointer) names in `doc`, or undefined. */
function resolveLocal(doc: JsonSchemaObject, ref: string): Record<string, unknown> | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const part of ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    node = isObject(node) ? node[part] : undefined;
  }
  return isObject(node) ? node : undefined;
}

/** The first value of a required field: its default, else its first enum value, else a placeholder of its type. */
function firstValue(doc: JsonSchemaObject, schema: Record<string, unknown>, depth: number): unknown {
  const seen = new Set<string>();
  let s = schema;
  // Follow a chain of $refs (and one-element allOfs), bounded and without cycles.
  for (;;) {
    if (Array.isArray(s.allOf) && s.allOf.length === 1 && isObject(s.allOf[0]) && !isObject(s.properties)) {
      s = s.allOf[0];
      continue;
    }
    if (typeof s.$ref !== 'string' || seen.has(s.$ref) || seen.size >= 32) break;
    seen.add(s.$ref);
    const target = resolveLocal(doc, s.$ref);
    if (!target) break;
    s = target;
  }
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('object') || isObject(s.properties)) return depth > 8 ? {} : requiredObject(doc, s, depth + 1);
  if (types.includes('array')) return [];
  if (types.includes('integer') || types.includes('number')) return typeof s.minimum === 'number' ? s.minimum : 0;
  if (types.includes('boolean')) return false;
  if (types.includes('string')) return '';
  return null;
}

function requiredObject(
  doc: JsonSchemaObject,
  schema: Record<string, unknown>,
  depth: number,
): Record<string, unknown> {
  const props = isObject(schema.properties) ? schema.properties : {};
  const out: Record<string, unknown> = {};
  for (const name of Array.isArray(schema.required) ? schema.required : []) {
    if (typeof name !== 'string' || name === '$schema' || Object.prototype.hasOwnProperty.call(out, name)) continue;
    const prop = props[name];
    out[name] = isObject(prop) ? firstValue(doc, prop, depth) : null;
  }
  return out;
}

/**
 * The text of a new model input (New Model Input): a JSON object whose first key is `$schema` (`schemaUri`),
 * then the schema's required fields, each with its default (else its first enum value, else an empty value of its
 * type: `""`, `0` or the minimum, `false`, `[]`, an object of its own required fields), 2-space indented.
 * @param schema a converted schema ({@link requestBodySchema}).
 */
export function prefillInput(schema: JsonSchemaObject, schemaUri: string): string {
  // The body schema may itself be a `$ref` into the components: firstValue follows it.
  const fields = firstValue(schema, schema, 0);
  return `${JSON.stringify({ $schema: schemaUri, ...(isObject(fields) ? fields : {}) }, null, 2)}\n`;
}
