/**
 * Model ids and cursors of the model router, validated against their patterns and lengths before any request (a bad
 * id costs no request). Rules: Model router API, Resources and their fields (value types) and Limits.
 */
import { InputError } from '../http/errors';

/** Provider and model segment pattern (Model router API, Resources and their fields, value types). */
export const SEGMENT_PATTERN = /^[a-z0-9]+([._-][a-z0-9]+)*$/;
/** Page cursor pattern (Model router API, Resources and their fields, value types). */
export const CURSOR_PATTERN = /^[A-Za-z0-9._~+/=-]+$/;
/** Longest provider segment, characters. */
const MAX_PROVIDER_LENGTH = 64;
/** Longest model (and variant) segment, characters. */
const MAX_MODEL_LENGTH = 128;
/** Longest page cursor, characters (shortest: 1). */
const MAX_CURSOR_LENGTH = 512;

/** A canonical model id split into its segments: `{provider}/{model}[/{variant}]`. */
export interface ModelId {
  provider: string;
  model: string;
  variant?: string;
}

/** A value as it may stand in a message: quoted, at most 80 characters. */
function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

function checkSegment(id: string, what: 'provider' | 'model' | 'variant', segment: string, max: number): void {
  if (segment.length === 0)
    throw new InputError(
      'bad_model_id',
      `model id ${shown(id)}: the ${what} segment is empty; write {provider}/{model}[/{variant}], e.g. "acme/image-gen"`,
    );
  if (segment.length > max)
    throw new InputError(
      'bad_model_id',
      `model id ${shown(id)}: the ${what} segment has ${segment.length} characters, at most ${max} are allowed; check the id in \`models list\``,
    );
  if (!SEGMENT_PATTERN.test(segment)) {
    const hint =
      segment !== segment.toLowerCase()
        ? 'ids are lowercase: write it in lowercase'
        : 'use lowercase letters and digits, joined by single ".", "_" or "-"';
    throw new InputError(
      'bad_model_id',
      `model id ${shown(id)}: the ${what} segment ${shown(segment)} does not match ${SEGMENT_PATTERN.source}; ${hint}`,
    );
  }
}

/**
 * Splits and checks a canonical model id `{provider}/{model}[/{variant}]` (lowercase; provider ≤ 64 characters,
 * model ≤ 128, both matching {@link SEGMENT_PATTERN}). The document shows no variant in its paths: a variant is
 * given the model segment's pattern and length (decided: the strictest guess that lets a real variant through).
 * @throws InputError `bad_model_id` naming the segment at fault and the fix.
 */
export function parseModelId(id: string): ModelId {
  const parts = id.split('/');
  if (parts.length < 2 || parts.length > 3) {
    throw new InputError(
      'bad_model_id',
      `model id ${shown(id)} has ${parts.length} segment(s); write {provider}/{model} or {provider}/{model}/{variant}, e.g. "acme/image-gen"`,
    );
  }
  checkSegment(id, 'provider', parts[0], MAX_PROVIDER_LENGTH);
  checkSegment(id, 'model', parts[1], MAX_MODEL_LENGTH);
  if (parts.length === 3) checkSegment(id, 'variant', parts[2], MAX_MODEL_LENGTH);
  return parts.length === 3
    ? { provider: parts[0], model: parts[1], variant: parts[2] }
    : { provider: parts[0], model: parts[1] };
}

/**
 * The path of a model under the router base: `/v1/models/{provider}/{model}[/{variant}]`. Segments are checked
 * already and hold only `[a-z0-9._-]`, so they need no escaping.
 * @throws InputError `bad_model_id` (see {@link parseModelId}).
 */
export function modelPath(id: string | ModelId): string {
  const m = typeof id === 'string' ? parseModelId(id) : id;
  // The variant goes as a third path segment with the model segment's pattern: the document does not show it (decided).
  return `/v1/models/${m.provider}/${m.model}${m.variant !== undefined ? `/${m.variant}` : ''}`;
}

/**
 * Checks a page cursor: 1 to 512 characters of `[A-Za-z0-9._~+/=-]` (Model router API, Resources and their fields,
 * value types). A cursor is opaque: only a `next_cursor` the router sent is valid.
 * @throws InputError `bad_cursor` naming the problem and the fix.
 */
export function checkCursor(cursor: string): void {
  const fix = 'pass a next_cursor exactly as a previous page gave it, or omit the cursor for the first page';
  if (cursor.length === 0) throw new InputError('bad_cursor', `the cursor is empty; ${fix}`);
  if (cursor.length > MAX_CURSOR_LENGTH)
    throw new InputError(
      'bad_cursor',
      `the cursor has ${cursor.length} characters, at most ${MAX_CURSOR_LENGTH} are allowed; ${fix}`,
    );
  if (!CURSOR_PATTERN.test(cursor))
    throw new InputError(
      'bad_cursor',
      `the cursor ${shown(cursor)} has characters outside ${CURSOR_PATTERN.source}; ${fix}`,
    );
}

/**
 * The page size the router serves for a requested `limit` (Model router API, GET /v1/models): above 100, 100;
 * 0 or negative, the default 20; none, 20.
 */
export function servedLimit(requested: number | undefined): number {
  if (requested === undefined || requested <= 0) return 20;
  return Math.min(100, requested);
}
