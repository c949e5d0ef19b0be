/**
 * Test data of the workflow schema's tests: the recorded `object_info` of a real engine (test/fixtures/object_info,
 * see its README), the emulator's own `object_info` shaped from its node definitions the way a real engine serves
 * them, and VS Code's JSON language service set up with a generated schema.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  getLanguageService,
  TextDocument,
  type CompletionList,
  type Hover,
  type JSONSchema,
  type Diagnostic,
} from 'vscode-json-languageservice';
import { NODE_DEFINITIONS, type InputSpec } from '../../src/emulator/engine/nodes';

/** The repository's folder (tests run from out/test/unit). */
const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A recorded object_info of test/fixtures/object_info, parsed. */
export function recordedObjectInfo(
  name: 'comfy-ts-object_info.json' | 'comfy-ts-object_info-v3-widgets.json',
): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'object_info', name), 'utf8')) as Record<
    string,
    unknown
  >;
}

/** One input as a real engine writes it (`[TYPE, options?]`, the engine's `object_info`). */
function wireInput(spec: InputSpec, uploads: readonly string[]): unknown[] {
  switch (spec.kind) {
    case 'int':
      return [
        'INT',
        { ...(spec.default !== undefined ? { default: spec.default } : {}), min: spec.min, max: spec.max, step: 1 },
      ];
    case 'string':
      return ['STRING', { ...(spec.default !== undefined ? { default: spec.default } : {}), multiline: false }];
    case 'combo':
      return [[...spec.options], spec.default !== undefined ? { default: spec.default } : {}];
    case 'link':
      return [spec.type];
    case 'asset':
      // The engine lists its input folder as LoadImage's choices, with an upload button.
      return [[...uploads], { image_upload: true }];
  }
}

/** The emulator's node definitions (src/emulator/engine/nodes.ts) as `object_info` serves them. */
export function emulatorObjectInfo(uploads: readonly string[] = ['example.png']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const d of NODE_DEFINITIONS.values()) {
    const required: Record<string, unknown> = {};
    const optional: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(d.inputs))
      (spec.required ? required : optional)[name] = wireInput(spec, uploads);
    out[d.classType] = {
      input: {
        required,
        optional,
        ...(d.isOutput ? { hidden: { prompt: 'PROMPT', extra_pnginfo: 'EXTRA_PNGINFO' } } : {}),
      },
      input_order: { required: Object.keys(required), optional: Object.keys(optional) },
      output: [...d.outputs],
      output_is_list: d.outputs.map(() => false),
      output_name: [...d.outputs],
      output_node: d.isOutput,
      name: d.classType,
      display_name: d.classType,
      description: '',
      python_module: 'nodes',
      category: 'image',
    };
  }
  return out;
}

/** VS Code's JSON language service with `schema` associated to every document, and helpers to ask it. */
export function jsonService(schema: Record<string, unknown>) {
  const service = getLanguageService({
    schemaRequestService: () => Promise.reject(new Error('no schema requests in tests')),
    clientCapabilities: {
      textDocument: {
        completion: { completionItem: { documentationFormat: ['markdown', 'plaintext'] } },
        hover: { contentFormat: ['markdown', 'plaintext'] },
      },
    },
  });
  service.configure({
    validate: true,
    allowComments: false,
    schemas: [{ uri: 'inmemory://workflow.schema.json', fileMatch: ['*.api.json'], schema: schema as JSONSchema }],
  });
  const open = (text: string) => {
    const document = TextDocument.create('file:///w.api.json', 'json', 1, text);
    return { document, json: service.parseJSONDocument(document) };
  };
  /** Completion at the `|` in `text` (the bar is removed). */
  const complete = async (textWithBar: string): Promise<CompletionList | null> => {
    const offset = textWithBar.indexOf('|');
    const { document, json } = open(textWithBar.slice(0, offset) + textWithBar.slice(offset + 1));
    return service.doComplete(document, document.positionAt(offset), json);
  };
  /** Hover at the `|` in `text`. */
  const hover = async (textWithBar: string): Promise<Hover | null> => {
    const offset = textWithBar.indexOf('|');
    const { document, json } = open(textWithBar.slice(0, offset) + textWithBar.slice(offset + 1));
    return service.doHover(document, document.positionAt(offset), json);
  };
  const validate = async (text: string): Promise<Diagnostic[]> => {
    const { document, json } = open(text);
    return service.doValidation(document, json);
  };
  return { complete, hover, validate };
}
