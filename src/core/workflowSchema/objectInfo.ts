/**
 * The engine's node definitions (`object_info`: the engine's `/object_info`, the cloud's `GET /api/object_info`),
 * read into the shapes the workflow schema and validator use. Rules: Cloud API v1 (deprecated), Resources and their
 * fields (node definitions map; other fields of a definition are not shown there: the engine's, from public sources).
 *
 * Read tolerantly: unknown fields are ignored, a class or input whose shape is odd is skipped (and counted), never
 * the whole map; what a real engine serves (thousands of classes, v1 tuple inputs, v3 `COMBO` with `options`, v3
 * dynamic inputs, comma-separated types) is never refused. Bounded: at most {@link OBJECT_INFO_LIMITS} of each.
 */
import * as z from 'zod/mini';
import { exposed, lazy } from '../util/lazySchema';
import { isPlainObject } from '../util/workflow';

/** Bounds of what is read: far above what a real engine serves (about 1000 to 5000 classes), below a hostile map. */
export const OBJECT_INFO_LIMITS = {
  classes: 20_000,
  inputsPerClass: 1_000,
  outputsPerClass: 1_000,
  choicesPerInput: 50_000,
  /** Characters of a description, tooltip, display name or category (longer ones are cut). */
  textChars: 10_000,
} as const;

/**
 * How an input takes its value in an API-format workflow:
 * - `int`, `float`, `string`, `boolean`, `combo`: a widget (a literal), or a link, since any widget can be converted
 *   to an input (unless `forceInput`, then it is `link`);
 * - `link`: only a link `[node_id, output_index]` (a link type such as `IMAGE`, `MODEL`, `*`, or `forceInput`);
 * - `dynamic`: a v3 input whose values come under other names (`COMFY_AUTOGROW_V3`: `values.a`, …) or a UI-only
 *   widget (`socketless`): not checked, never required.
 */
type InputKind = 'int' | 'float' | 'string' | 'boolean' | 'combo' | 'link' | 'dynamic';

/** One input of a node class, as the schema and the validator need it. */
export interface InputDefinition {
  readonly name: string;
  /** From `input.required` (true) or `input.optional` (false); hidden inputs are not listed. */
  readonly required: boolean;
  readonly kind: InputKind;
  /**
   * The type a link into this input must carry, as the engine names it: `INT`, `FLOAT`, `STRING`, `BOOLEAN`,
   * `COMBO` (choices), a link type (`IMAGE`, `*`), or several separated by commas (`STRING,FILE_3D`).
   */
  readonly type: string;
  /**
   * A combo's choices (strings, sometimes numbers), in the engine's order, each once. Empty when the engine has none
   * (a model list of an engine with no models installed): then any string is taken, unchecked.
   */
  readonly choices?: readonly (string | number)[];
  /** A v3 combo with `multiselect: true`: the value is an array of choices. */
  readonly multiselect?: boolean;
  readonly default?: unknown;
  readonly min?: number;
  readonly max?: number;
  readonly step?: number;
  readonly multiline?: boolean;
  /**
   * A file the user uploads (`image_upload`, `audio_upload`, `video_upload`, `file_upload`): the choices are the
   * engine's input folder at the time the definitions were read, so a name not (yet) among them is not an error.
   */
  readonly upload?: boolean;
  /** The widget is only taken as a link (the engine's `forceInput` option). */
  readonly forceInput?: boolean;
  readonly tooltip?: string;
  /**
   * The engine's `control_after_generate` option as given: true (also when it names a mode, `"fixed"`) or false
   * (explicitly none). Absent when not given: the frontend then adds the control widget to an INT named `seed` or
   * `noise_seed` only. The control widget's value is saved in `widgets_values` but never sent in the API format.
   */
  readonly controlAfterGenerate?: boolean;
  /** Which upload widget the frontend adds for this input (`image_upload`, `audio_upload`, …), when one. */
  readonly uploadKind?: string;
  /** A STRING whose value the frontend rewrites when queued (`{a|b}` choices, comments): the `dynamicPrompts` option. */
  readonly dynamicPrompts?: boolean;
  /** The widget a comma-separated type is edited with (the `widgetType` option), when given. */
  readonly widgetType?: string;
  /** A UI-only widget with no input socket (the `socketless` option). */
  readonly socketless?: boolean;
  /**
   * A v3 dynamic combo's options: each key with the inputs it adds, named `<input>.<name>` in the API format
   * (the engine's `COMFY_DYNAMICCOMBO_V3`).
   */
  readonly dynamicOptions?: readonly { readonly key: string; readonly inputs: readonly InputDefinition[] }[];
  /** A v3 autogrow input's template inputs (the engine's `COMFY_AUTOGROW_V3`: `<input>.<name>` per added slot). */
  readonly template?: readonly InputDefinition[];
}

/** One output of a node class: its type (`IMAGE`; a combo output reads `COMBO`), name and list flag. */
interface OutputDefinition {
  readonly type: string;
  readonly name: string;
  readonly isList: boolean;
  readonly tooltip?: string;
}

/** One node class (`class_type`). */
export interface NodeClassDefinition {
  readonly classType: string;
  readonly displayName: string;
  readonly category: string;
  readonly description: string;
  /** Output nodes are where the engine starts executing; a workflow needs at least one (`output_node`). */
  readonly outputNode: boolean;
  readonly deprecated: boolean;
  readonly experimental: boolean;
  /** A partner node (calls an external service; needs the partner key in `extra_data`). */
  readonly apiNode: boolean;
  /** Required then optional inputs, each in `input_order` where given, else in the map's order. */
  readonly inputs: readonly InputDefinition[];
  readonly outputs: readonly OutputDefinition[];
}

/** The node definitions of one engine, by `class_type`. */
export interface NodeDefinitions {
  readonly classes: ReadonlyMap<string, NodeClassDefinition>;
  /** Classes and inputs skipped because their shape was unusable (or over the bounds). */
  readonly skipped: number;
}

/** The widget types that take a literal (and a link of the same type). */
const PRIMITIVES: Readonly<Record<string, InputKind>> = {
  INT: 'int',
  FLOAT: 'float',
  STRING: 'string',
  BOOLEAN: 'boolean',
};

const optionalText = () => z.catch(z.optional(z.string()), undefined);
const optionalFlag = () => z.catch(z.optional(z.unknown()), undefined);
const optionalSection = () => z.catch(z.optional(z.record(z.string(), z.unknown())), undefined);
const optionalList = () => z.catch(z.optional(z.array(z.unknown())), undefined);

/** One class of the map; every field tolerant (a wrong type reads as absent). */
const classSchema = lazy(() =>
  z.looseObject({
    input: z.catch(z.optional(z.looseObject({ required: optionalSection(), optional: optionalSection() })), undefined),
    input_order: z.catch(
      z.optional(
        z.looseObject({
          required: z.catch(z.optional(z.array(z.string())), undefined),
          optional: z.catch(z.optional(z.array(z.string())), undefined),
        }),
      ),
      undefined,
    ),
    output: optionalList(),
    output_name: optionalList(),
    output_is_list: optionalList(),
    output_tooltips: optionalList(),
    output_node: optionalFlag(),
    display_name: optionalText(),
    category: optionalText(),
    description: optionalText(),
    deprecated: optionalFlag(),
    experimental: optionalFlag(),
    api_node: optionalFlag(),
  }),
);
const ClassSchema = exposed(classSchema);

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, OBJECT_INFO_LIMITS.textChars) : undefined;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Combo choices: the strings and numbers of `list` (other entries dropped), each once (engines repeat some), bounded. */
function choicesOf(list: readonly unknown[]): (string | number)[] {
  const unique = new Set(
    list.filter((c): c is string | number => typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c))),
  );
  return [...unique].slice(0, OBJECT_INFO_LIMITS.choicesPerInput);
}

/**
 * Reads one input spec `[TYPE, options?]` (the engine's `object_info`); undefined when it is not of that shape. A v1
 * combo has the choices list as TYPE; a v3 one is `["COMBO", {options: [...]}]`.
 */
function parseInput(name: string, raw: unknown, required: boolean, depth = 0): InputDefinition | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  const [head, rawOptions] = raw as [unknown, unknown];
  const options: Record<string, unknown> = isPlainObject(rawOptions) ? rawOptions : {};
  const uploadKind = Object.keys(options).find((k) => k.endsWith('_upload') && options[k] === true);
  const common = {
    name,
    required,
    ...(options.default !== undefined ? { default: options.default } : {}),
    ...(finite(options.min) !== undefined ? { min: finite(options.min) } : {}),
    ...(finite(options.max) !== undefined ? { max: finite(options.max) } : {}),
    ...(finite(options.step) !== undefined ? { step: finite(options.step) } : {}),
    ...(options.multiline === true ? { multiline: true } : {}),
    ...(options.forceInput === true ? { forceInput: true } : {}),
    ...(Object.keys(options).some((k) => k.endsWith('_upload') && options[k] === true) ? { upload: true } : {}),
    ...(text(options.tooltip) ? { tooltip: text(options.tooltip) } : {}),
    ...(options.control_after_generate !== undefined
      ? { controlAfterGenerate: options.control_after_generate !== false }
      : {}),
    ...(uploadKind !== undefined ? { uploadKind } : {}),
    ...(options.dynamicPrompts === true ? { dynamicPrompts: true } : {}),
    ...(typeof options.widgetType === 'string' ? { widgetType: options.widgetType } : {}),
    ...(options.socketless === true ? { socketless: true } : {}),
  };
  const forced = options.forceInput === true;
  if (Array.isArray(head)) {
    return { ...common, kind: forced ? 'link' : 'combo', type: 'COMBO', choices: choicesOf(head) };
  }
  if (typeof head !== 'string') return undefined;
  if (head === 'COMBO') {
    const choices = Array.isArray(options.options) ? choicesOf(options.options) : [];
    return {
      ...common,
      kind: forced ? 'link' : 'combo',
      type: 'COMBO',
      choices,
      ...(options.multiselect === true ? { multiselect: true } : {}),
    };
  }
  if (head === 'COMFY_DYNAMICCOMBO_V3') {
    // v3 dynamic combo: the value is one of the options' keys; the chosen option's own inputs come as `name.input`.
    const keys = Array.isArray(options.options)
      ? options.options.map((o) => (isPlainObject(o) ? o.key : undefined))
      : [];
    const dynamicOptions = (Array.isArray(options.options) ? options.options : []).flatMap((o) =>
      isPlainObject(o) && typeof o.key === 'string' ? [{ key: o.key, inputs: nestedInputs(o.inputs, depth) }] : [],
    );
    return { ...common, kind: forced ? 'link' : 'combo', type: 'COMBO', choices: choicesOf(keys), dynamicOptions };
  }
  if (head === 'COMFY_MATCHTYPE_V3') {
    // v3 match type: a link of any of the template's allowed types (comma-separated), `*` when none is given.
    const template = isPlainObject(options.template) ? options.template : {};
    const allowed =
      typeof template.allowed_types === 'string' && template.allowed_types.trim() ? template.allowed_types : '*';
    return { ...common, kind: 'link', type: allowed };
  }
  if (/^COMFY_[A-Z0-9_]*_V3$/.test(head) || options.socketless === true) {
    const template =
      head === 'COMFY_AUTOGROW_V3' && isPlainObject(options.template)
        ? { template: nestedInputs(options.template.input, depth) }
        : {};
    return { ...common, required: false, kind: 'dynamic', type: head, ...template };
  }
  const direct = PRIMITIVES[head];
  if (direct !== undefined) return { ...common, kind: forced ? 'link' : direct, type: head };
  // Several types (`STRING,FILE_3D_GLB,…`): a widget of the first primitive among them (or of `widgetType`), else a link.
  const parts = head.split(',').map((p) => p.trim());
  const widget =
    typeof options.widgetType === 'string' && PRIMITIVES[options.widgetType]
      ? options.widgetType
      : parts.find((p) => PRIMITIVES[p]);
  if (parts.length > 1 && widget !== undefined && !forced) return { ...common, kind: PRIMITIVES[widget]!, type: head };
  return { ...common, kind: 'link', type: head };
}

/** The inputs of a v3 option or template (`{required, optional}`), read like a class's; bounded in depth. */
function nestedInputs(raw: unknown, depth: number): InputDefinition[] {
  if (!isPlainObject(raw) || depth >= 4) return [];
  const inputs: InputDefinition[] = [];
  for (const required of [true, false]) {
    const section = required ? raw.required : raw.optional;
    if (!isPlainObject(section)) continue;
    for (const [name, spec] of Object.entries(section).slice(0, OBJECT_INFO_LIMITS.inputsPerClass)) {
      const input = parseInput(name, spec, required, depth + 1);
      if (input !== undefined) inputs.push(input);
    }
  }
  return inputs;
}

/** The names of `section` in `order` first (those present), then the rest in the map's order. */
function orderedNames(section: Record<string, unknown>, order: readonly string[] | undefined): string[] {
  const names = Object.keys(section);
  if (!order) return names;
  const first = order.filter((n) => Object.hasOwn(section, n));
  const seen = new Set(first);
  return [...first, ...names.filter((n) => !seen.has(n))];
}

/** Reads one class; undefined when it is not an object. `skip` counts the inputs and outputs dropped. */
function parseClass(classType: string, raw: unknown, skip: () => void): NodeClassDefinition | undefined {
  const parsed = ClassSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const d = parsed.data;
  const inputs: InputDefinition[] = [];
  for (const required of [true, false]) {
    const section = required ? d.input?.required : d.input?.optional;
    if (!section) continue;
    for (const name of orderedNames(section, required ? d.input_order?.required : d.input_order?.optional)) {
      if (inputs.length >= OBJECT_INFO_LIMITS.inputsPerClass) {
        skip();
        continue;
      }
      const input = parseInput(name, section[name], required);
      if (input === undefined) skip();
      else inputs.push(input);
    }
  }
  const rawOutputs = (d.output ?? []).slice(0, OBJECT_INFO_LIMITS.outputsPerClass);
  if ((d.output?.length ?? 0) > rawOutputs.length) skip();
  const outputs = rawOutputs.map((type, i): OutputDefinition => {
    // A combo output (a node that passes on a choice) is served as its list of choices.
    const typeName = Array.isArray(type) ? 'COMBO' : typeof type === 'string' ? type : '*';
    const name = text(d.output_name?.[i]) ?? typeName;
    const tooltip = text(d.output_tooltips?.[i]);
    return { type: typeName, name, isList: d.output_is_list?.[i] === true, ...(tooltip ? { tooltip } : {}) };
  });
  return {
    classType,
    displayName: text(d.display_name)?.trim() || classType,
    category: text(d.category) ?? '',
    description: text(d.description) ?? '',
    outputNode: d.output_node === true,
    deprecated: d.deprecated === true,
    experimental: d.experimental === true,
    apiNode: d.api_node === true,
    inputs,
    outputs,
  };
}

/**
 * Reads an `object_info` map (class name → definition) into {@link NodeDefinitions}. Never throws: a value that is
 * not an object gives no classes (then the validator stays quiet and says why); a class that is not an object, an
 * input that is not `[TYPE, options?]`, and anything past {@link OBJECT_INFO_LIMITS} are skipped and counted.
 * Source: the engine's `object_info`; Cloud API v1 (deprecated), Resources and their fields.
 */
export function parseObjectInfo(value: unknown): NodeDefinitions {
  const classes = new Map<string, NodeClassDefinition>();
  let skipped = 0;
  if (!isPlainObject(value)) return { classes, skipped };
  const skip = (): void => {
    skipped++;
  };
  for (const [classType, raw] of Object.entries(value)) {
    if (classes.size >= OBJECT_INFO_LIMITS.classes || classType === '') {
      skipped++;
      continue;
    }
    const definition = parseClass(classType, raw, skip);
    if (definition === undefined) skipped++;
    else classes.set(classType, definition);
  }
  return { classes, skipped };
}
