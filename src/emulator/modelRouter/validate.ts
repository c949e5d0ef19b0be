/**
 * A small validator of a model's input against its OpenAPI 3.0 schema (schemas.ts), answering pydantic-style
 * field errors (Model router API, Errors, validation error response: `loc` outermost first with integers
 * indexing arrays, `msg`, `type` passed through as a provider would, `ctx` the violated bound, `input` the
 * offending value). `loc` is the path inside the input (no leading `body`): the emulator's decision, so that a
 * client maps it straight onto the user's file. Handles what the documents use: type, nullable, required,
 * additionalProperties false, properties, items, enum, pattern, min/maxLength, minimum/maximum with boolean
 * exclusiveMinimum, multipleOf, maxItems, $ref into components.
 */
import type { FieldError } from './buckets';
import type { SchemaObject } from './schemas';

type Loc = (string | number)[];

/** The field errors of `value` against `schema`, resolving `#/components/schemas/X` in `components`; [] when valid. */
export function validate(value: unknown, schema: SchemaObject, components: Record<string, SchemaObject>): FieldError[] {
  const errors: FieldError[] = [];
  check(value, schema, [], components, errors);
  return errors;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function check(
  value: unknown,
  raw: SchemaObject,
  loc: Loc,
  components: Record<string, SchemaObject>,
  errors: FieldError[],
): void {
  let schema = raw;
  if (typeof schema.$ref === 'string') schema = components[schema.$ref.replace('#/components/schemas/', '')] ?? {};
  const fail = (type: string, msg: string, ctx?: Record<string, unknown>): void => {
    errors.push({ loc, msg, type, ...(ctx !== undefined ? { ctx } : {}), input: value });
  };
  if (value === null) {
    if (schema.nullable !== true)
      fail(
        `${String(schema.type ?? 'value')}_type`
          .replace('integer_type', 'int_type')
          .replace('number_type', 'float_type')
          .replace('object_type', 'model_type'),
        `Input should be a valid ${String(schema.type ?? 'value')}`,
      );
    return;
  }
  const kind = kindOf(value);
  switch (schema.type) {
    case 'string':
      if (kind !== 'string') return fail('string_type', 'Input should be a valid string');
      break;
    case 'integer':
      if (kind !== 'number' || !Number.isInteger(value)) return fail('int_type', 'Input should be a valid integer');
      break;
    case 'number':
      if (kind !== 'number') return fail('float_type', 'Input should be a valid number');
      break;
    case 'boolean':
      if (kind !== 'boolean') return fail('bool_type', 'Input should be a valid boolean');
      break;
    case 'array':
      if (kind !== 'array') return fail('list_type', 'Input should be a valid list');
      break;
    case 'object':
      if (kind !== 'object') return fail('model_type', 'Input should be a valid dictionary or object');
      break;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    const expected = schema.enum.map((v) => `'${String(v)}'`).join(', ');
    return fail('literal_error', `Input should be ${expected}`, { expected });
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      fail('string_too_short', `String should have at least ${schema.minLength} character(s)`, {
        min_length: schema.minLength,
      });
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      fail('string_too_long', `String should have at most ${schema.maxLength} characters`, {
        max_length: schema.maxLength,
      });
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value))
      fail('string_pattern_mismatch', `String should match pattern '${schema.pattern}'`, { pattern: schema.pattern });
  }
  if (typeof value === 'number') {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
    if (typeof minimum === 'number') {
      // OpenAPI 3.0: exclusiveMinimum is a boolean modifying minimum.
      if (exclusiveMinimum === true && !(value > minimum))
        fail('greater_than', `Input should be greater than ${minimum}`, { gt: minimum });
      else if (exclusiveMinimum !== true && value < minimum)
        fail('greater_than_equal', `Input should be greater than or equal to ${minimum}`, { ge: minimum });
    }
    if (typeof maximum === 'number') {
      if (exclusiveMaximum === true && !(value < maximum))
        fail('less_than', `Input should be less than ${maximum}`, { lt: maximum });
      else if (exclusiveMaximum !== true && value > maximum)
        fail('less_than_equal', `Input should be less than or equal to ${maximum}`, { le: maximum });
    }
    if (typeof multipleOf === 'number' && value % multipleOf !== 0)
      fail('multiple_of', `Input should be a multiple of ${multipleOf}`, { multiple_of: multipleOf });
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
      fail('too_long', `List should have at most ${schema.maxItems} items after validation, not ${value.length}`, {
        field_type: 'List',
        max_length: schema.maxItems,
        actual_length: value.length,
      });
    }
    if (schema.items !== undefined)
      value.forEach((item, i) => check(item, schema.items as SchemaObject, [...loc, i], components, errors));
  }
  if (kind === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, SchemaObject>;
    for (const name of (schema.required ?? []) as string[]) {
      if (!Object.hasOwn(object, name))
        errors.push({ loc: [...loc, name], msg: 'Field required', type: 'missing', input: value });
    }
    for (const [name, field] of Object.entries(object)) {
      if (Object.hasOwn(properties, name)) check(field, properties[name], [...loc, name], components, errors);
      else if (schema.additionalProperties === false)
        errors.push({
          loc: [...loc, name],
          msg: 'Extra inputs are not permitted',
          type: 'extra_forbidden',
          input: field,
        });
    }
  }
}
