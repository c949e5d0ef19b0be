/**
 * Each model's input schema as a standalone OpenAPI 3.0 document (Model router API,
 * GET /v1/models/{provider}/{model}/openapi.json):
 * a POST operation on the model's path whose request body references `#/components/schemas/…`, with OpenAPI
 * 3.0 idioms a JSON Schema reader does not know as such (`nullable`, boolean `exclusiveMinimum`), so that a
 * client's converter has real work. Served with a strong ETag of its bytes; a revision counter per model lets
 * a test change a document.
 */
import { createHash } from 'node:crypto';
import { EMULATOR_PROVIDER } from './catalog';

/** A JSON Schema object (OpenAPI 3.0 dialect) as these documents write them. */
export type SchemaObject = Record<string, unknown>;

/** The request-body schema of each fake model (filler models take {@link GENERIC_INPUT}), with its components. */
interface ModelSchema {
  root: string;
  components: Record<string, SchemaObject>;
}

const STRICT: ModelSchema = {
  root: 'StrictInput',
  components: {
    StrictInput: {
      type: 'object',
      description:
        'Input of emulator/strict: validated field by field; any mistake answers 422 with one detail item per field.',
      required: ['prompt', 'steps'],
      additionalProperties: false,
      properties: {
        prompt: { type: 'string', minLength: 1, maxLength: 200, description: 'What to make.' },
        negative_prompt: {
          type: 'string',
          nullable: true,
          maxLength: 200,
          description: 'What to avoid (null: nothing).',
        },
        steps: { type: 'integer', minimum: 1, maximum: 50, default: 20, description: 'Sampling steps.' },
        guidance: {
          type: 'number',
          minimum: 0,
          exclusiveMinimum: true,
          maximum: 20,
          default: 7.5,
          nullable: true,
          description: 'Guidance scale, above 0.',
        },
        sampler: { type: 'string', enum: ['euler', 'euler_a', 'dpmpp_2m'], default: 'euler' },
        size: { $ref: '#/components/schemas/Size' },
        loras: { type: 'array', maxItems: 4, items: { $ref: '#/components/schemas/Lora' } },
        seed: { type: 'integer', minimum: 0, nullable: true, description: 'Random seed (null: random).' },
      },
    },
    Size: {
      type: 'object',
      required: ['width', 'height'],
      additionalProperties: false,
      properties: {
        width: { type: 'integer', minimum: 64, maximum: 2048, multipleOf: 8, default: 1024 },
        height: { type: 'integer', minimum: 64, maximum: 2048, multipleOf: 8, default: 1024 },
      },
    },
    Lora: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1 },
        weight: { type: 'number', minimum: -2, maximum: 2, default: 1 },
      },
    },
  },
};

const SOLID_PNG: ModelSchema = {
  root: 'SolidPngInput',
  components: {
    SolidPngInput: {
      type: 'object',
      description: 'Input of emulator/solid-png: renders one PNG of one colour.',
      required: ['color'],
      additionalProperties: false,
      properties: {
        color: { $ref: '#/components/schemas/Color' },
        width: { type: 'integer', minimum: 1, maximum: 1024, default: 64 },
        height: { type: 'integer', minimum: 1, maximum: 1024, default: 64 },
      },
    },
    Color: { type: 'string', pattern: '^#[0-9a-fA-F]{6}$', description: 'Hex colour #RRGGBB.', example: '#ff0000' },
  },
};

const SLOW: ModelSchema = {
  root: 'SlowInput',
  components: {
    SlowInput: {
      type: 'object',
      description:
        'Input of emulator/slow: takes longer than the router deadline; collect with the same Idempotency-Key.',
      properties: { prompt: { type: 'string', nullable: true } },
    },
  },
};

/** Filler models and `echo`: any object, with an optional prompt. */
const GENERIC_INPUT: ModelSchema = {
  root: 'Input',
  components: {
    Input: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'Free text.' },
        temperature: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 2, nullable: true },
      },
    },
  },
};

/** The request-body schema and components of model `provider/model`. */
export function modelSchema(provider: string, model: string): ModelSchema {
  if (provider === EMULATOR_PROVIDER) {
    if (model === 'strict') return STRICT;
    if (model === 'solid-png') return SOLID_PNG;
    if (model === 'slow') return SLOW;
  }
  return GENERIC_INPUT;
}

/**
 * The components of `schema` at a later `revision`: the root's description says the revision, so a client that
 * serves the converted schema to an editor sees its content change (revalidation after "Refresh Schema" is visible).
 */
function revised(schema: ModelSchema, revision: number): Record<string, unknown> {
  const root = schema.components[schema.root] as Record<string, unknown>;
  const description = typeof root.description === 'string' ? `${root.description} ` : '';
  return { ...schema.components, [schema.root]: { ...root, description: `${description}(revision ${revision})` } };
}

/** A served document: its bytes and strong ETag. */
interface SchemaDocument {
  text: string;
  etag: string;
}

/** The OpenAPI document of `id` (`provider/model[/variant]`) at `revision`. */
export function schemaDocument(
  provider: string,
  model: string,
  variant: string | undefined,
  revision: number,
): SchemaDocument {
  const schema = modelSchema(provider, model);
  const id = [provider, model, variant].filter((s) => s !== undefined).join('/');
  const doc = {
    openapi: '3.0.3',
    info: { title: `${id} input`, version: `1.0.${revision}` },
    paths: {
      [`/v1/models/${id}`]: {
        post: {
          operationId: `run_${id.replace(/[^a-z0-9]+/g, '_')}`,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema.root}` } } },
          },
          responses: {
            '200': {
              description: "The model's native output.",
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
    },
    components: { schemas: revision > 0 ? revised(schema, revision) : schema.components },
  };
  const text = JSON.stringify(doc, null, 2) + '\n';
  return { text, etag: `"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"` };
}

/**
 * RFC 9110 weak comparison of `If-None-Match` with `etag`: true when any listed tag's opaque part equals the
 * current one's (a `W/` prefix ignored on either side), or the header is `*`.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  const current = opaque(etag);
  return (header.match(/(W\/)?"[^"]*"/g) ?? []).some((tag) => opaque(tag) === current);
}
