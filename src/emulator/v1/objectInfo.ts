/**
 * GET /api/object_info (Cloud API v1 (deprecated), Resources and their fields: a map keyed by node class name, each
 * with `input.required`; the other fields, not shown there, as the engine serves them), generated from
 * the emulator's own node definitions (engine/nodes.ts {@link NODE_DEFINITIONS}), so that what it describes is
 * exactly what a v1 prompt is checked against.
 *
 * Each input is `[TYPE, options?]` as a real engine writes it: `["INT", {default, min, max, step}]`,
 * `["STRING", {default}]`, a combo `[[choice, …], {default?}]`, a link type `["IMAGE"]`. LoadImage's `image` is a
 * combo of the caller's uploaded file names with `image_upload: true`, as the engine lists its input folder.
 */
import { NODE_DEFINITIONS, type InputSpec, type NodeDefinition } from '../engine/nodes';

/** One input's spec: `[TYPE]`, `[TYPE, options]` or `[[choices…], options?]`. */
type WireInputSpec = [string | string[]] | [string | string[], Record<string, unknown>];

/** A node definition as `object_info` serves it (the engine's fields; public sources). */
interface WireNodeInfo {
  input: {
    required: Record<string, WireInputSpec>;
    optional?: Record<string, WireInputSpec>;
    hidden?: Record<string, string>;
  };
  input_order: { required: string[]; optional?: string[] };
  output: string[];
  output_is_list: boolean[];
  output_name: string[];
  output_node: boolean;
  name: string;
  display_name: string;
  description: string;
  category: string;
  python_module: string;
  deprecated: boolean;
  experimental: boolean;
  api_node: boolean;
}

/** What the engine's definitions do not say: display name, description, category (the workflow engine's own words). */
const PRESENTATION: Readonly<
  Record<string, { display: string; description: string; category: string; tooltips?: Record<string, string> }>
> = {
  EmptyImage: {
    display: 'EmptyImage',
    description: 'Creates a batch of images of one colour.',
    category: 'image',
    tooltips: { color: 'The colour as an integer 0xRRGGBB.' },
  },
  ImageInvert: { display: 'Invert Image', description: 'Inverts the colours of the images.', category: 'image' },
  ImageScale: {
    display: 'Upscale Image',
    description: 'Resizes the images; a side of 0 keeps the aspect ratio.',
    category: 'image/upscaling',
  },
  LoadImage: {
    display: 'Load Image',
    description: 'Loads an uploaded image (POST /api/upload/image) by its name.',
    category: 'image',
  },
  SaveImage: {
    display: 'Save Image',
    description: 'Saves the input images as outputs.',
    category: 'image',
    tooltips: { filename_prefix: 'The prefix of the file names.' },
  },
  PreviewImage: {
    display: 'Preview Image',
    description: 'Shows the input images (saved as temporary outputs).',
    category: 'image',
  },
};

/** The engine's hidden inputs of its output nodes (never given in a workflow). */
const HIDDEN_OF_OUTPUT_NODES = { prompt: 'PROMPT', extra_pnginfo: 'EXTRA_PNGINFO' };

/** One input as `object_info` describes it (also a refusal's `input_config`). */
export function wireInput(classType: string, name: string, spec: InputSpec, uploads: readonly string[]): WireInputSpec {
  const tooltip = PRESENTATION[classType]?.tooltips?.[name];
  const withTooltip = (options: Record<string, unknown>): Record<string, unknown> =>
    tooltip === undefined ? options : { ...options, tooltip };
  switch (spec.kind) {
    case 'int':
      return [
        'INT',
        withTooltip({
          ...(spec.default === undefined ? {} : { default: spec.default }),
          min: spec.min,
          max: spec.max,
          step: 1,
        }),
      ];
    case 'string':
      return [
        'STRING',
        withTooltip({ ...(spec.default === undefined ? {} : { default: spec.default }), multiline: false }),
      ];
    case 'combo':
      return [[...spec.options], withTooltip(spec.default === undefined ? {} : { default: spec.default })];
    case 'link':
      return tooltip === undefined ? [spec.type] : [spec.type, { tooltip }];
    case 'asset':
      // On v1 the image is a file name of the caller's uploads (prompt.ts turns it into the engine's reference).
      return [[...uploads], withTooltip({ image_upload: true })];
  }
}

/** One class as `object_info` serves it; `uploads`: the caller's uploaded file names (LoadImage's choices). */
export function nodeInfo(definition: NodeDefinition, uploads: readonly string[]): WireNodeInfo {
  const classType = definition.classType;
  const required: Record<string, WireInputSpec> = {};
  const optional: Record<string, WireInputSpec> = {};
  for (const [name, spec] of Object.entries(definition.inputs))
    (spec.required ? required : optional)[name] = wireInput(classType, name, spec, uploads);
  const presentation = PRESENTATION[classType] ?? { display: classType, description: '', category: 'emulator' };
  const info: WireNodeInfo = {
    input: { required },
    input_order: { required: Object.keys(required) },
    output: [...definition.outputs],
    output_is_list: definition.outputs.map(() => false),
    // The engine names each output after its type (LoadImage: IMAGE, MASK).
    output_name: [...definition.outputs],
    output_node: definition.isOutput,
    name: classType,
    display_name: presentation.display,
    description: presentation.description,
    category: presentation.category,
    python_module: 'nodes',
    deprecated: false,
    experimental: false,
    // No partner node runs here (api_node: true would mark one, which needs the partner key in extra_data).
    api_node: false,
  };
  if (Object.keys(optional).length > 0) {
    info.input.optional = optional;
    info.input_order.optional = Object.keys(optional);
  }
  if (definition.isOutput) info.input.hidden = { ...HIDDEN_OF_OUTPUT_NODES };
  return info;
}

/** The whole map, class name → definition, in the engine's order. */
export function objectInfo(uploads: readonly string[]): Record<string, WireNodeInfo> {
  return Object.fromEntries([...NODE_DEFINITIONS.values()].map((d) => [d.classType, nodeInfo(d, uploads)]));
}
