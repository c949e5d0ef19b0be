/**
 * A workflow input file as the CLI takes it: a workflow JSON file (API or UI format) or a PNG image ComfyUI saved
 * (its `prompt` and `workflow` text chunks). Read and checked before any request. vscode-free.
 */
import * as path from 'node:path';
import { InputError } from '../http/errors';
import { MAX_WORKFLOW_BYTES, decodeText, readInputBytes } from '../util/inputFile';
import { detectWorkflowFormat, withoutSchemaKey, type WorkflowFormat } from '../util/workflow';
import { MAX_IMAGE_BYTES, isPng, readImageWorkflow, type ImageWorkflow } from './image';

/** A workflow input file, read: JSON (its text, its parsed value and format) or an image (its workflows). */
export type WorkflowInput =
  | {
      readonly kind: 'json';
      /** The file's text, as it is. */
      readonly text: string;
      /** The parsed JSON, a top-level `$schema` string removed (an editor's schema reference is not a node). */
      readonly workflow: unknown;
      readonly format: WorkflowFormat;
    }
  | { readonly kind: 'image'; readonly image: ImageWorkflow };

/**
 * Reads a workflow input file before any request: a PNG (by its signature, bounded by {@link MAX_IMAGE_BYTES}) is
 * read for its workflows ({@link readImageWorkflow}); anything else is a JSON file (bounded by
 * {@link MAX_WORKFLOW_BYTES}, strict UTF-8).
 * @throws InputError: `unreadable`, `not_a_file`, `too_large` (either bound); for JSON `not_utf8`, `bad_json` (naming
 *   the file and the parser's message); for an image `png_corrupt`, `png_text_too_large`, `png_text_not_json`,
 *   `png_no_workflow`.
 */
export async function readWorkflowInput(file: string): Promise<WorkflowInput> {
  const bytes = await readInputBytes(file, {
    maxBytes: (head) => (isPng(head) ? MAX_IMAGE_BYTES : MAX_WORKFLOW_BYTES),
  });
  const name = path.basename(file);
  if (isPng(bytes)) {
    try {
      return { kind: 'image', image: readImageWorkflow(bytes) };
    } catch (e) {
      // The file's name in front: the reader's messages say "the image", which image is the caller's to say.
      throw InputError.is(e) ? new InputError(e.code, `${name}: ${e.message}`) : e;
    }
  }
  const text = decodeText(bytes, file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new InputError(
      'bad_json',
      `${name} is not valid JSON (${(err as Error).message}); fix the file or export the workflow again.`,
    );
  }
  const workflow = withoutSchemaKey(parsed);
  return { kind: 'json', text, workflow, format: detectWorkflowFormat(workflow) };
}
