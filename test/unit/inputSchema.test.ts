import * as assert from 'node:assert/strict';
import { ResponseShapeError } from '../../src/core';
import { prefillInput, requestBodySchema, RouterClient } from '../../src/core/router';
import { getLanguageService, TextDocument, type JSONSchema } from 'vscode-json-languageservice';
import { useEmulator } from './harness';

/** A converted schema read by path in these tests. */
type Deep = { [key: string]: Deep } & { toString(): string };

/** The messages VS Code's own JSON language service gives `text` validated against `schema`. */
async function jsonDiagnostics(schema: unknown, text: string): Promise<string[]> {
  const service = getLanguageService({});
  service.configure({
    validate: true,
    schemas: [{ uri: 'comfy-router-schema:/p/m.json', fileMatch: ['*.json'], schema: schema as JSONSchema }],
  });
  const document = TextDocument.create('file:///input.json', 'json', 1, text);
  const diagnostics = await service.doValidation(document, service.parseJSONDocument(document));
  return diagnostics.map((d) => (typeof d.message === 'string' ? d.message : d.message.value));
}

const doc = (body: unknown, schemas: Record<string, unknown> = {}) => ({
  openapi: '3.0.3',
  paths: { '/v1/models/p/m': { post: { requestBody: { content: { 'application/json': { schema: body } } } } } },
  components: { schemas },
});

describe('model input schema (New Model Input and IntelliSense)', () => {
  it('nullable becomes a null type, in the body and in the components', () => {
    const s = requestBodySchema(
      doc(
        { type: 'object', properties: { seed: { type: 'integer', nullable: true } } },
        { X: { type: 'string', nullable: true } },
      ),
    ) as Deep;
    assert.deepEqual(s.properties.seed.type, ['integer', 'null']);
    assert.deepEqual(s.components.schemas.X.type, ['string', 'null']);
    assert.equal(s.properties.seed.nullable, undefined);
  });

  it("boolean exclusiveMinimum stays draft-04's own, declared by $schema", () => {
    const s = requestBodySchema(
      doc({ type: 'object', properties: { g: { type: 'number', minimum: 0, exclusiveMinimum: true } } }),
    ) as Deep;
    assert.equal(s.$schema, 'http://json-schema.org/draft-04/schema#');
    assert.equal(s.properties.g.exclusiveMinimum, true);
    assert.equal(s.properties.g.minimum, 0);
  });

  it('$refs into the components resolve in the same document (components kept, converted; a $ref root wrapped in allOf)', () => {
    const s = requestBodySchema(
      doc(
        { $ref: '#/components/schemas/In' },
        {
          In: { type: 'object', allOf: [{ $ref: '#/components/schemas/Size' }] },
          Size: { type: 'object', nullable: true },
        },
      ),
    ) as Deep;
    // The root's $ref is wrapped in allOf, so the root (with its components) is not replaced by the target.
    assert.equal(s.$ref, undefined);
    assert.equal(JSON.stringify(s.allOf), JSON.stringify([{ $ref: '#/components/schemas/In' }]));
    assert.equal(s.components.schemas.In.allOf[0].$ref, '#/components/schemas/Size');
    assert.deepEqual(s.components.schemas.Size.type, ['object', 'null']);
    assert.equal(s.components.schemas.Size.$schema, undefined);
  });

  it("the input's own $schema key is declared at the root, so additionalProperties: false does not flag it (a $ref root to an object schema inlined)", async () => {
    const strict = {
      type: 'object',
      additionalProperties: false,
      required: ['n'],
      properties: { n: { type: 'integer', maximum: 5 }, size: { $ref: '#/components/schemas/Size' } },
    };
    const size = { type: 'object', additionalProperties: false, properties: { w: { type: 'integer' } } };
    for (const body of [{ $ref: '#/components/schemas/Strict' }, strict]) {
      const schema = requestBodySchema(doc(body, { Strict: strict, Size: size }));
      const problems = await jsonDiagnostics(
        schema,
        '{ "$schema": "comfy-router-schema:/p/m.json", "n": 9, "size": { "w": 1, "h": 2 } }',
      );
      assert.deepEqual(
        problems.sort(),
        ['Property h is not allowed.', 'Value is above the maximum of 5.'],
        JSON.stringify(body),
      );
    }
  });

  it('a document without a POST JSON request body is a ResponseShapeError', () => {
    assert.throws(() => requestBodySchema({ paths: { '/x': { get: {} } } }), ResponseShapeError);
    assert.throws(() => requestBodySchema('nope'), ResponseShapeError);
  });

  it('the prefill holds $schema first, then the required fields with their defaults (or enum, or typed placeholders), through $refs', () => {
    const s = requestBodySchema(
      doc(
        { $ref: '#/components/schemas/In' },
        {
          In: {
            type: 'object',
            required: ['prompt', 'steps', 'size', 'mode', 'n'],
            properties: {
              prompt: { type: 'string' },
              steps: { type: 'integer', default: 20 },
              size: { $ref: '#/components/schemas/Size' },
              mode: { type: 'string', enum: ['a', 'b'] },
              n: { type: 'integer', minimum: 1 },
              optional: { type: 'string', default: 'not me' },
            },
          },
          Size: { type: 'object', required: ['width'], properties: { width: { type: 'integer', default: 1024 } } },
        },
      ),
    );
    const text = prefillInput(s, 'comfy-router-schema:/p/m.json');
    assert.deepEqual(Object.keys(JSON.parse(text)), ['$schema', 'prompt', 'steps', 'size', 'mode', 'n']);
    assert.deepEqual(JSON.parse(text), {
      $schema: 'comfy-router-schema:/p/m.json',
      prompt: '',
      steps: 20,
      size: { width: 1024 },
      mode: 'a',
      n: 1,
    });
  });

  describe('against the emulator', () => {
    const emu = useEmulator();
    it("the emulator's emulator/strict schema converts, and its prefill has its required fields", async () => {
      const client = new RouterClient({ baseUrl: emu().routerUrl!, apiKey: 'test-router-key' });
      const result = await client.getInputSchema('emulator/strict');
      const s = requestBodySchema(JSON.parse(result.bytes.toString('utf8'))) as Deep;
      assert.ok(s.components.schemas.StrictInput);
      const value = JSON.parse(prefillInput(s, 'u'));
      assert.equal(value.steps, 20);
      assert.ok('prompt' in value);
    });
  });
});
