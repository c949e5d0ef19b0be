/**
 * The node classes the emulator runs: the workflow engine's nodes that need no model weights (EmptyImage,
 * ImageInvert, ImageScale, LoadImage, SaveImage, PreviewImage), with the inputs, limits and defaults of the workflow
 * engine's own definitions. LoadImage reads its image from a `core/ASSET` reference (Job and Asset API v2,
 * POST /api/v2/jobs, rule 1), as the job service's workflows do.
 * Each definition declares its inputs (checked before a job is accepted, see engine.ts) and executes on
 * already-checked values.
 */
import {
  assertBatchFits,
  centerCropRegion,
  invertImage,
  resizeImage,
  solidImage,
  type Filter,
  type ImageBatch,
  type RgbImage,
} from './image';
import { readPngFile } from './png';

/** The type of a node output (socket), as links carry it. */
type SocketType = 'IMAGE' | 'MASK' | 'INT' | 'STRING' | 'COMBO' | 'ASSET';

/** The engine's largest image side (MAX_RESOLUTION). */
const MAX_RESOLUTION = 16384;

/**
 * How one input is given and checked. `required` inputs without a value are an error; optional ones take
 * `default`. Widget inputs (`int`, `string`, `combo`) take a literal, or a link from an output of their type;
 * `link` inputs take only a link; `asset` inputs take a `core/ASSET` reference (Job and Asset API v2,
 * POST /api/v2/jobs, rule 1), whose id must name an asset of the caller.
 */
export type InputSpec =
  | { kind: 'int'; required: boolean; default?: number; min: number; max: number }
  | { kind: 'string'; required: boolean; default?: string }
  | { kind: 'combo'; required: boolean; default?: string; options: readonly string[] }
  | { kind: 'link'; required: boolean; type: 'IMAGE' }
  | { kind: 'asset'; required: boolean };

/** The socket type an input accepts a link from. */
export function socketTypeOf(spec: InputSpec): SocketType {
  switch (spec.kind) {
    case 'int':
      return 'INT';
    case 'string':
      return 'STRING';
    case 'combo':
      return 'COMBO';
    case 'link':
      return spec.type;
    case 'asset':
      return 'ASSET';
  }
}

/** An asset a node may read (LoadImage): its file on disk and content type. */
interface ResolvedAsset {
  readonly file: string;
  readonly contentType: string;
}

/** What a node can do besides computing: commit outputs, name files, read the caller's assets. */
export interface NodeContext {
  readonly nodeId: string;
  /** Aborts when the job is canceled or dropped; long work checks it. */
  readonly signal: AbortSignal;
  /** The next output file name for `prefix` in this job: `<prefix>_00001_.png`, `<prefix>_00002_.png`, … */
  nextFileName(prefix: string): string;
  /** Writes `image` as a PNG output of this node named `name` and commits it to the job's `outputs`. */
  commitImage(image: RgbImage, name: string): Promise<void>;
  /** The caller's asset `id`, or undefined. LoadImage reads its `core/ASSET` reference through it. */
  resolveAsset(id: string): ResolvedAsset | undefined;
}

/** One node class: its inputs, its outputs' types, whether it is an output node, and how it runs. */
export interface NodeDefinition {
  readonly classType: string;
  readonly inputs: Readonly<Record<string, InputSpec>>;
  readonly outputs: readonly SocketType[];
  /** Output nodes are where execution starts from; a workflow needs at least one. */
  readonly isOutput: boolean;
  /**
   * Runs the node on checked inputs (links already replaced by the linked outputs' values).
   * @returns one value per entry of `outputs`.
   * @throws any error: the job fails with `node_execution_error` naming this node.
   */
  execute(inputs: Readonly<Record<string, unknown>>, context: NodeContext): Promise<readonly unknown[]>;
}

const UPSCALE_METHODS = ['nearest-exact', 'bilinear', 'area', 'bicubic', 'lanczos'] as const;
// area, bicubic and lanczos are approximated by bilinear: same size and colours, slightly different edges.
const FILTER_OF_METHOD: Record<(typeof UPSCALE_METHODS)[number], Filter> = {
  'nearest-exact': 'nearest',
  bilinear: 'bilinear',
  area: 'bilinear',
  bicubic: 'bilinear',
  lanczos: 'bilinear',
};

/** A file name prefix reduced to its last path segment (the engine allows `sub/name`; outputs carry a name only). */
function safePrefix(raw: string, fallback: string): string {
  const last = raw
    .split(/[\\/]/)
    .pop()!
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f]/g, '')
    .trim();
  return last === '' || last === '.' || last === '..' ? fallback : last;
}

async function saveAll(images: ImageBatch, prefix: string, context: NodeContext): Promise<readonly unknown[]> {
  for (const image of images) {
    context.signal.throwIfAborted();
    await context.commitImage(image, context.nextFileName(prefix));
  }
  return [];
}

const emptyImage: NodeDefinition = {
  classType: 'EmptyImage',
  inputs: {
    width: { kind: 'int', required: true, default: 512, min: 1, max: MAX_RESOLUTION },
    height: { kind: 'int', required: true, default: 512, min: 1, max: MAX_RESOLUTION },
    batch_size: { kind: 'int', required: true, default: 1, min: 1, max: 4096 },
    color: { kind: 'int', required: true, default: 0, min: 0, max: 0xffffff },
  },
  outputs: ['IMAGE'],
  isOutput: false,
  async execute(inputs) {
    const width = inputs.width as number;
    const height = inputs.height as number;
    const count = inputs.batch_size as number;
    assertBatchFits(width, height, count);
    // Images are immutable once made, so one buffer serves the whole batch.
    const image = solidImage(width, height, inputs.color as number);
    return [Array.from({ length: count }, () => image)];
  },
};

const imageInvert: NodeDefinition = {
  classType: 'ImageInvert',
  inputs: { image: { kind: 'link', required: true, type: 'IMAGE' } },
  outputs: ['IMAGE'],
  isOutput: false,
  async execute(inputs) {
    return [(inputs.image as ImageBatch).map(invertImage)];
  },
};

const imageScale: NodeDefinition = {
  classType: 'ImageScale',
  inputs: {
    image: { kind: 'link', required: true, type: 'IMAGE' },
    upscale_method: { kind: 'combo', required: true, options: UPSCALE_METHODS },
    // 0 keeps the aspect ratio from the other side (both 0: unchanged), as in the engine.
    width: { kind: 'int', required: true, default: 512, min: 0, max: MAX_RESOLUTION },
    height: { kind: 'int', required: true, default: 512, min: 0, max: MAX_RESOLUTION },
    crop: { kind: 'combo', required: true, options: ['disabled', 'center'] },
  },
  outputs: ['IMAGE'],
  isOutput: false,
  async execute(inputs, context) {
    const batch = inputs.image as ImageBatch;
    const filter = FILTER_OF_METHOD[inputs.upscale_method as (typeof UPSCALE_METHODS)[number]];
    const out: RgbImage[] = [];
    for (const image of batch) {
      context.signal.throwIfAborted();
      let width = inputs.width as number;
      let height = inputs.height as number;
      if (width === 0 && height === 0) {
        out.push(image);
        continue;
      }
      if (width === 0) width = Math.max(1, Math.round((image.width * height) / image.height));
      if (height === 0) height = Math.max(1, Math.round((image.height * width) / image.width));
      assertBatchFits(width, height, batch.length);
      const region = inputs.crop === 'center' ? centerCropRegion(image, width, height) : undefined;
      out.push(resizeImage(image, width, height, filter, region));
    }
    return [out];
  },
};

const saveImage: NodeDefinition = {
  classType: 'SaveImage',
  inputs: {
    images: { kind: 'link', required: true, type: 'IMAGE' },
    filename_prefix: { kind: 'string', required: false, default: 'ComfyUI' },
  },
  outputs: [],
  isOutput: true,
  async execute(inputs, context) {
    return saveAll(inputs.images as ImageBatch, safePrefix(inputs.filename_prefix as string, 'ComfyUI'), context);
  },
};

const previewImage: NodeDefinition = {
  classType: 'PreviewImage',
  inputs: { images: { kind: 'link', required: true, type: 'IMAGE' } },
  outputs: [],
  isOutput: true,
  async execute(inputs, context) {
    // The engine writes previews to its temp folder under this prefix; here they are outputs like any other.
    return saveAll(inputs.images as ImageBatch, 'ComfyUI_temp', context);
  },
};

const loadImage: NodeDefinition = {
  classType: 'LoadImage',
  // The engine's `image` is a file name of its input folder; on the job service it is a core/ASSET reference,
  // whose `info.id` must name an asset of the caller (checked before the job is accepted: 422 missing_asset).
  inputs: { image: { kind: 'asset', required: true } },
  outputs: ['IMAGE', 'MASK'],
  isOutput: false,
  async execute(inputs, context) {
    const id = (inputs.image as { info: { id: string } }).info.id;
    const asset = context.resolveAsset(id);
    if (asset === undefined)
      throw new Error(`asset ${JSON.stringify(id)} is gone (deleted or expired since the job was accepted)`);
    const { image, mask } = await readPngFile(asset.file, context.signal);
    return [[image], mask];
  },
};

/** Every node class the emulator knows, by `class_type`. */
export const NODE_DEFINITIONS: ReadonlyMap<string, NodeDefinition> = new Map(
  [emptyImage, imageInvert, imageScale, loadImage, saveImage, previewImage].map((d) => [d.classType, d]),
);
