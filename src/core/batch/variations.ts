/**
 * The model of a batch: one API-format workflow and a list of variations, each a set of node inputs → values, made
 * from `--set NODE.FIELD=SPEC` options (combined as a grid or zipped) or from a batch file.
 *
 * Rules (every one checked before any request, each failure an InputError, so nothing is sent):
 * - a SPEC is `A..B` (an inclusive integer range, `A..B:S` with step S > 0), `@file` (one value a line, blank lines
 *   skipped), `@folder/` (each regular file of the folder, by name; uploaded later as an asset), or one literal
 *   (JSON when it parses as a number, boolean or null, else the text as is);
 * - a value takes the type of the input's value in the workflow ({@link fitLiteral}): text for a text input (a prompt
 *   line `42` stays "42"), a number for a number input (a line `64` is 64; `abc` is refused, `bad_value`);
 * - a range with no values, a file with no values and a folder with no file are refused (`empty_values`);
 * - sources combine as a grid (cartesian product, the first option varying slowest) or zipped (`--zip`: the i-th value
 *   of each; lengths must be equal, `zip_lengths_differ`);
 * - every NODE.FIELD is checked against the workflow with `setNodeInput`'s checks (`no_such_node`, `input_is_link`),
 *   and must be an input the node has (`no_such_input`): an API-format workflow carries every widget value of its
 *   nodes, so a name it lacks is a typo that would otherwise send a paid job per value with the input ignored;
 * - a batch is at most {@link MAX_VARIATIONS} variations (`too_many_variations`): a grid grows fast and each
 *   variation is a paid job.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { InputError } from '../http/errors';
import { readInputFile } from '../util/inputFile';
import type { ApiWorkflow } from '../util/workflow';
import { setNodeInput } from '../v2/assets';
import { exposed, lazy } from '../util/lazySchema';

/** The most variations one batch may hold. */
export const MAX_VARIATIONS = 10_000;

/** A JSON literal a node input can take. */
export type Literal = string | number | boolean | null;

/** One value of a variation: a literal, or a local file uploaded as an asset (its core/ASSET reference is sent). */
export type BatchValue = { kind: 'literal'; value: Literal } | { kind: 'file'; path: string };

/** The values one node input takes across a batch, in order. */
export interface ValueSource {
  nodeId: string;
  field: string;
  values: BatchValue[];
}

/** One node input's value in one variation. */
export interface VariationInput {
  nodeId: string;
  field: string;
  value: BatchValue;
}

/** One variation: its 0-based index in the batch and the inputs it sets. */
export interface Variation {
  index: number;
  inputs: VariationInput[];
}

/** How sources combine: `grid` (cartesian product, option order) or `zip` (the i-th value of each). */
export type CombineMode = 'grid' | 'zip';

/**
 * Splits a `--set NODE.FIELD=SPEC` option.
 * @throws InputError `bad_set` when it is not of that form.
 */
export function parseSetOption(option: string): { nodeId: string; field: string; spec: string } {
  const m = /^([^.=]+)\.([^=]+)=([\s\S]*)$/.exec(option);
  if (!m)
    throw new InputError(
      'bad_set',
      `--set takes NODE.FIELD=VALUES, e.g. --set 3.seed=1..8 or --set 6.text=@prompts.txt (got ${option})`,
    );
  return { nodeId: m[1], field: m[2], spec: m[3] };
}

/**
 * The integers of an inclusive range `A..B` or `A..B:S` (step S ≥ 1), or undefined when `spec` is not a range.
 * @throws InputError `empty_values` when A > B (no values); `bad_range` when the step is not a whole number ≥ 1.
 */
export function parseRange(spec: string): number[] | undefined {
  const m = /^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*(?::\s*(\S+))?\s*$/.exec(spec);
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = Number(m[2]);
  const step = m[3] === undefined ? 1 : Number(m[3]);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
    throw new InputError('bad_range', `range ${spec}: its ends must be whole numbers`);
  if (!Number.isSafeInteger(step) || step < 1)
    throw new InputError('bad_range', `range ${spec}: the step must be a whole number of at least 1`);
  if (from > to) throw new InputError('empty_values', `range ${spec} has no values (its start is above its end)`);
  const count = Math.floor((to - from) / step) + 1;
  if (count > MAX_VARIATIONS)
    throw new InputError(
      'too_many_variations',
      `range ${spec} has ${count} values; a batch holds at most ${MAX_VARIATIONS}`,
    );
  return Array.from({ length: count }, (_, i) => from + i * step);
}

/** A literal from option text: a number, boolean or null when it parses as one in JSON, else the text. */
export function parseLiteral(text: string): Literal {
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  } catch {
    // not JSON: the text itself
  }
  return text;
}

/**
 * The values of one `--set` SPEC, read from disk for `@file` and `@folder/` (relative to `baseDir`).
 * @throws InputError `empty_values`, `bad_range`, `not_a_folder`, `unreadable`, and readInputFile's errors
 *   (`not_utf8`, `too_large`, …).
 */
export async function expandSpec(spec: string, baseDir: string): Promise<BatchValue[]> {
  const range = parseRange(spec);
  if (range) return range.map((value) => ({ kind: 'literal', value }));
  if (!spec.startsWith('@')) return [{ kind: 'literal', value: parseLiteral(spec) }];
  const target = path.resolve(baseDir, spec.slice(1));
  if (spec.endsWith('/') || spec.endsWith(path.sep)) return folderValues(target, spec);
  const text = await readInputFile(target);
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new InputError('empty_values', `${spec} has no values (every line is blank)`);
  return lines.map((value) => ({ kind: 'literal', value }));
}

/** Each regular file of a folder, sorted by name (hidden files skipped), as file values. */
async function folderValues(folder: string, spec: string): Promise<BatchValue[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(folder, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new InputError('not_a_folder', `${spec} is not a folder`);
    throw new InputError('unreadable', `cannot read the folder ${spec}: ${(err as Error).message}`);
  }
  const files = entries
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (files.length === 0) throw new InputError('empty_values', `the folder ${spec} has no file`);
  return files.map((name) => ({ kind: 'file', path: path.join(folder, name) }));
}

/**
 * Checks that node `nodeId` of `workflow` has input `field`, not wired to a link (setNodeInput's checks, and the
 * input's presence: see the module's rules).
 * @throws InputError `no_such_node`, `input_is_link`, `no_such_input` (naming the node's inputs).
 */
export function checkInput(workflow: ApiWorkflow, nodeId: string, field: string): void {
  setNodeInput(workflow, nodeId, field, null);
  const node = workflow[nodeId];
  if (!Object.prototype.hasOwnProperty.call(node.inputs, field)) {
    throw new InputError(
      'no_such_input',
      `node ${nodeId} (${node.class_type}) has no input "${field}" (its inputs: ${Object.keys(node.inputs).join(', ') || 'none'})`,
    );
  }
}

/**
 * Checks every source's node input against `workflow` ({@link checkInput}) and that a source has values.
 * @throws InputError `no_such_node`, `input_is_link`, `no_such_input`, `empty_values`, `duplicate_input` (one input
 *   set twice).
 */
export function checkSources(workflow: ApiWorkflow, sources: ValueSource[]): void {
  const seen = new Set<string>();
  for (const s of sources) {
    checkInput(workflow, s.nodeId, s.field);
    const key = `${s.nodeId}.${s.field}`;
    if (seen.has(key)) throw new InputError('duplicate_input', `${key} is set twice; give all its values in one --set`);
    seen.add(key);
    if (s.values.length === 0) throw new InputError('empty_values', `${key} has no values`);
  }
}

/**
 * A literal as the input it goes into takes it: a value takes the type of the input's value in the workflow, so a
 * line `42` of a prompts file stays the text "42" for a text input, and a line `64` of a widths file is the number 64
 * for a number input (a file's lines and a `--set` literal are text until then). Another input (a list, null) takes
 * the literal as parsed ({@link parseLiteral}).
 * @throws InputError `bad_value` when the text is not of the input's type (`abc` for a number input).
 */
export function fitLiteral(current: unknown, value: Literal, key: string): Literal {
  const text = typeof value === 'string' ? value : String(value);
  if (typeof current === 'string') return text;
  if (typeof current === 'number') {
    const n = typeof value === 'number' ? value : text.trim() === '' ? NaN : Number(text);
    if (!Number.isFinite(n)) {
      // `1,2,3` is one value here: several are a range or a file of lines.
      const hint = /[,\s]/.test(text.trim())
        ? ` (for several values give a range such as 1..8, or @values.txt with one value a line)`
        : '';
      throw new InputError(
        'bad_value',
        `${key} takes a number (it is ${current} in the workflow); ${JSON.stringify(value)} is not one${hint}`,
      );
    }
    return n;
  }
  if (typeof current === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (text === 'true' || text === 'false') return text === 'true';
    throw new InputError(
      'bad_value',
      `${key} takes true or false (it is ${current} in the workflow); ${JSON.stringify(value)} is neither`,
    );
  }
  return typeof value === 'string' ? parseLiteral(value) : value;
}

/**
 * `sources` with every literal fitted to its input's type in `workflow` ({@link fitLiteral}); file values as they are.
 * @throws InputError `bad_value`.
 */
export function fitSources(workflow: ApiWorkflow, sources: ValueSource[]): ValueSource[] {
  return sources.map((s) => {
    const current = workflow[s.nodeId]?.inputs[s.field];
    const key = `${s.nodeId}.${s.field}`;
    return {
      ...s,
      values: s.values.map((v) =>
        v.kind === 'literal' ? { kind: 'literal', value: fitLiteral(current, v.value, key) } : v,
      ),
    };
  });
}

/**
 * The variations of `sources` combined by `mode`, indexed from 0.
 * - grid: the cartesian product, the first source varying slowest (option order);
 * - zip: the i-th value of every source; @throws InputError `zip_lengths_differ` when lengths differ.
 * @throws InputError `too_many_variations` beyond {@link MAX_VARIATIONS}; `empty_values` when there is no source.
 */
export function combine(sources: ValueSource[], mode: CombineMode): Variation[] {
  if (sources.length === 0) throw new InputError('empty_values', 'a batch needs at least one --set');
  if (mode === 'zip') {
    const n = sources[0].values.length;
    const differ = sources.find((s) => s.values.length !== n);
    if (differ) {
      throw new InputError(
        'zip_lengths_differ',
        `--zip needs as many values for each --set: ${sources.map((s) => `${s.nodeId}.${s.field} has ${s.values.length}`).join(', ')}`,
      );
    }
    if (n > MAX_VARIATIONS)
      throw new InputError('too_many_variations', `${n} variations; a batch holds at most ${MAX_VARIATIONS}`);
    return Array.from({ length: n }, (_, index) => ({
      index,
      inputs: sources.map((s) => ({ nodeId: s.nodeId, field: s.field, value: s.values[index] })),
    }));
  }
  const total = sources.reduce((n, s) => n * s.values.length, 1);
  if (total > MAX_VARIATIONS)
    throw new InputError(
      'too_many_variations',
      `the grid has ${total} variations; a batch holds at most ${MAX_VARIATIONS} (use --zip, or fewer values)`,
    );
  const out: Variation[] = [];
  for (let index = 0; index < total; index++) {
    // Mixed-radix digits of `index`, the last source the fastest.
    let rest = index;
    const inputs: VariationInput[] = new Array(sources.length);
    for (let i = sources.length - 1; i >= 0; i--) {
      const s = sources[i];
      inputs[i] = { nodeId: s.nodeId, field: s.field, value: s.values[rest % s.values.length] };
      rest = Math.floor(rest / s.values.length);
    }
    out.push({ index, inputs });
  }
  return out;
}

/**
 * The variations of `--set` options on `workflow`: each option parsed and expanded (files read relative to
 * `baseDir`), every input checked against the workflow, then combined by `mode`.
 * @throws InputError as parseSetOption, expandSpec, checkSources and combine.
 */
export async function variationsFromSetOptions(
  workflow: ApiWorkflow,
  options: string[],
  mode: CombineMode,
  baseDir: string,
): Promise<Variation[]> {
  const parsed = options.map(parseSetOption);
  // Node and input checks first: a typo is reported before any file is read.
  checkSources(
    workflow,
    parsed.map((p) => ({ ...p, values: [{ kind: 'literal', value: null }] })),
  );
  const sources: ValueSource[] = [];
  for (const p of parsed) sources.push({ nodeId: p.nodeId, field: p.field, values: await expandSpec(p.spec, baseDir) });
  return combine(fitSources(workflow, sources), mode);
}

const INPUT_KEY = /^[^.=]+\.[^=]+$/;

/**
 * A batch file (JSON): the workflow (a path relative to the batch file) and either `set` (NODE.FIELD → a `--set`
 * SPEC string or a list of literal values) combined by `mode`, or `variations` (an explicit list, each NODE.FIELD →
 * literal, or `{"file": path}` for a file uploaded as an asset). Written with `zod/mini` and built at first use, like
 * the core's other shapes (the bundles keep only the zod functions used).
 */
export const BatchFileSchema = exposed(
  lazy(() => {
    const literal = z.union([z.string(), z.number(), z.boolean(), z.null()]);
    return z
      .strictObject({
        workflow: z.string().check(z.minLength(1)),
        mode: z.optional(z.enum(['grid', 'zip'])),
        set: z.optional(z.record(z.string(), z.union([z.string(), z.array(literal).check(z.minLength(1))]))),
        variations: z.optional(
          z
            .array(z.record(z.string(), z.union([literal, z.strictObject({ file: z.string().check(z.minLength(1)) })])))
            .check(z.minLength(1)),
        ),
      })
      .check(
        z.superRefine((b, ctx) => {
          if ((b.set === undefined) === (b.variations === undefined))
            ctx.addIssue({ code: 'custom', message: 'give exactly one of "set" and "variations"', input: b });
          // Checked here, not by the record's key schema: zod reports a bad record key without the key's own message.
          const keys = [
            ...Object.keys(b.set ?? {}).map((k) => ({ k, at: ['set', k] })),
            ...(b.variations ?? []).flatMap((v, i) => Object.keys(v).map((k) => ({ k, at: ['variations', i, k] }))),
          ];
          for (const { k, at } of keys)
            if (!INPUT_KEY.test(k))
              ctx.addIssue({ code: 'custom', path: at, message: `"${k}" is not NODE.FIELD (e.g. "3.seed")`, input: k });
        }),
      );
  }),
);

/** A batch file as parsed. */
export interface BatchFile {
  workflow: string;
  mode?: CombineMode;
  set?: Record<string, string | Literal[]>;
  variations?: Array<Record<string, Literal | { file: string }>>;
}

/**
 * Parses and checks a batch file's text.
 * @throws InputError `bad_json` (not JSON), `bad_batch_file` (not the schema; the first problems and their paths).
 */
export function parseBatchFile(text: string, name: string): BatchFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InputError('bad_json', `${name} is not valid JSON (${(err as Error).message})`);
  }
  const r = BatchFileSchema.safeParse(value);
  if (!r.success) {
    const problems = (r.error.issues ?? [{ path: [], message: r.error.message }])
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.map(String).join('.') : '(top)'}: ${i.message}`);
    throw new InputError('bad_batch_file', `${name} is not a valid batch file: ${problems.join('; ')}`);
  }
  return r.data;
}

/**
 * The variations a batch file describes on `workflow` (files relative to `baseDir`, the batch file's folder).
 * @throws InputError as checkSources, expandSpec and combine; as {@link checkInput} for explicit variations.
 */
export async function variationsFromBatchFile(
  workflow: ApiWorkflow,
  file: BatchFile,
  baseDir: string,
): Promise<Variation[]> {
  if (file.set) {
    const keys = Object.keys(file.set);
    checkSources(
      workflow,
      keys.map((k) => ({ ...splitKey(k), values: [{ kind: 'literal', value: null }] })),
    );
    const sources: ValueSource[] = [];
    for (const k of keys) {
      const spec = file.set[k];
      const values: BatchValue[] =
        typeof spec === 'string' ? await expandSpec(spec, baseDir) : spec.map((value) => ({ kind: 'literal', value }));
      sources.push({ ...splitKey(k), values });
    }
    return combine(fitSources(workflow, sources), file.mode ?? 'grid');
  }
  const list = file.variations ?? [];
  if (list.length > MAX_VARIATIONS)
    throw new InputError('too_many_variations', `${list.length} variations; a batch holds at most ${MAX_VARIATIONS}`);
  return list.map((v, index) => ({
    index,
    inputs: Object.entries(v).map(([k, raw]) => {
      const { nodeId, field } = splitKey(k);
      checkInput(workflow, nodeId, field);
      const value: BatchValue =
        raw !== null && typeof raw === 'object'
          ? { kind: 'file', path: path.resolve(baseDir, raw.file) }
          : { kind: 'literal', value: fitLiteral(workflow[nodeId].inputs[field], raw, k) };
      return { nodeId, field, value };
    }),
  }));
}

function splitKey(key: string): { nodeId: string; field: string } {
  const dot = key.indexOf('.');
  return { nodeId: key.slice(0, dot), field: key.slice(dot + 1) };
}

/**
 * The workflow of one variation: each input set on a copy of `workflow`; a file value becomes what `fileValue`
 * returns for it (the core/ASSET reference of its upload).
 * @throws InputError as setNodeInput.
 */
export function applyVariation(
  workflow: ApiWorkflow,
  variation: Variation,
  fileValue: (file: string) => unknown,
): ApiWorkflow {
  let out = workflow;
  for (const i of variation.inputs)
    out = setNodeInput(out, i.nodeId, i.field, i.value.kind === 'file' ? fileValue(i.value.path) : i.value.value);
  return out;
}

/**
 * A short, file-name-safe label of a variation's values, for its output folder `<index>-<label>` (e.g.
 * `7-12_a-cat`): each value cut to 24 characters, characters outside `[A-Za-z0-9._-]` replaced by `-`, at most 64
 * characters in all.
 */
export function variationLabel(variation: Variation): string {
  const parts = variation.inputs.map((i) => {
    const raw = i.value.kind === 'file' ? path.basename(i.value.path) : String(i.value.value);
    return (
      raw
        .replace(/[^A-Za-z0-9._-]+/g, '-')
        .replace(/^[-.]+|-+$/g, '')
        .slice(0, 24) || 'x'
    );
  });
  return `${variation.index}-${parts.join('_')}`.slice(0, 64);
}
