/**
 * The workflow a ComfyUI output PNG carries: its `prompt` text chunk (the API-format graph as queued) and its
 * `workflow` chunk (the UI-format workflow). vscode-free.
 */
import { InputError } from '../http/errors';

/** The workflows found in an image: each parsed JSON, absent when the image has no such chunk. */
export interface ImageWorkflow {
  /** The `prompt` chunk: the API-format graph that made the image. */
  readonly prompt?: unknown;
  /** The `workflow` chunk: the UI-format workflow, as the editor saved it. */
  readonly workflow?: unknown;
}

/** True when `bytes` start with the PNG signature. */
export function isPng(bytes: Uint8Array): boolean {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  return bytes.length >= 8 && signature.every((b, i) => bytes[i] === b);
}

/**
 * Reads the workflows of a ComfyUI output PNG.
 * @throws InputError when the file is not a PNG, is truncated or corrupt, a text chunk inflates past the bound, or it
 * carries neither chunk.
 */
export function readImageWorkflow(bytes: Uint8Array): ImageWorkflow {
  void bytes;
  throw new InputError('png_no_workflow', 'reading workflows from images is not available yet');
}
