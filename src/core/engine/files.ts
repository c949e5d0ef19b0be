/**
 * The files and failures of the ComfyUI engine's answers, shared by every API that speaks the engine's shapes (the
 * deprecated Cloud API v1 and a ComfyUI server's native API): a node output's file references, a file as an output of
 * the job model, an `execution_error`'s fields, and an upload's file read from disk. Read tolerantly: odd values are
 * skipped, never a crash. Sources: Cloud API v1 (deprecated), Resources and their fields; ComfyUI server API
 * (observed), Reading state and Files.
 */
import { openAsBlob } from 'node:fs';
import { InputError } from '../http/errors';
import type { JobOutput } from '../jobs/model';
import { contentTypeOf } from '../util/fileNames';
import { assertUploadFile } from '../util/inputFile';

/** A file reference (Cloud API v1 (deprecated), Resources and their fields: output items and `original_ref`). */
export interface FileRef {
  filename: string;
  /** Accepted for compatibility, ignored by the cloud's flat storage; usually ''. */
  subfolder: string;
  /** `output` for final outputs, `temp` for previews, `input` for uploads. */
  type: string;
}

/** One file of a node output, with the node and the kind (`images`, `video`, `audio`, or another key). */
export interface NodeFile {
  nodeId: string;
  kind: string;
  ref: FileRef;
}

/** A file reference read tolerantly: `filename` essential (a non-empty string); `subfolder` '' and `type` `output` when absent. */
function fileRefOf(value: unknown): FileRef | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.filename !== 'string' || v.filename.length === 0) return undefined;
  return {
    filename: v.filename,
    subfolder: typeof v.subfolder === 'string' ? v.subfolder : '',
    type: typeof v.type === 'string' && v.type ? v.type : 'output',
  };
}

/**
 * The files of one node output (Cloud API v1 (deprecated), Resources and their fields: "object keyed by kind, with
 * arrays of file references under `images`, `video`, `audio`"): every array under any key, its items that are file
 * references; other values (text, numbers, an `animated` flag list) are not files and are skipped.
 */
export function filesOfNodeOutput(nodeId: string, output: unknown): NodeFile[] {
  if (!output || typeof output !== 'object' || Array.isArray(output)) return [];
  const files: NodeFile[] = [];
  for (const [kind, items] of Object.entries(output as Record<string, unknown>)) {
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      const ref = fileRefOf(item);
      if (ref) files.push({ nodeId, kind, ref });
    }
  }
  return files;
}

/** The files of an `outputs` map keyed by node id (`GET /api/jobs/{id}`, history), in node order. */
export function filesOfOutputs(outputs: unknown): NodeFile[] {
  if (!outputs || typeof outputs !== 'object' || Array.isArray(outputs)) return [];
  return Object.entries(outputs as Record<string, unknown>).flatMap(([nodeId, output]) =>
    filesOfNodeOutput(nodeId, output),
  );
}

/** True for a final output: `type` `output` (a `temp` file is a preview; an `input` an upload). */
export function isFinalOutput(file: NodeFile): boolean {
  return file.ref.type === 'output';
}

/** The output `type` of a v1 kind: `images` image, `video`/`gifs` video, `audio` audio, anything else file. */
function outputTypeOf(kind: string): string {
  if (kind === 'images') return 'image';
  if (kind === 'video' || kind === 'gifs' || kind === 'videos') return 'video';
  if (kind === 'audio') return 'audio';
  return 'file';
}

/**
 * A v1 file as an output of the model: `id` `<type>/<subfolder>/<filename>` (stable and unique per file; names the
 * partial file of its download), `name` the file name (sanitized when downloaded), `contentType` from its extension,
 * `url` the absolute `/api/view` URL it is downloaded from (Cloud API v1 (deprecated), "Endpoints"), `hash` and
 * `sizeBytes` unknown (null).
 * @param viewUrl the `/api/view` URL of this file (V1Client.viewUrl)
 */
export function jobOutputOf(file: NodeFile, viewUrl: URL): JobOutput {
  const { filename, subfolder, type } = file.ref;
  return {
    id: `${type}/${subfolder ? `${subfolder}/` : ''}${filename}`,
    nodeId: file.nodeId,
    name: filename,
    type: outputTypeOf(file.kind),
    contentType: contentTypeOf(filename),
    sizeBytes: null,
    hash: null,
    url: viewUrl.href,
  };
}

/** What v1 says about a failure: the socket's `execution_error` data, or `execution_error` of `GET /api/jobs/{id}`. */
export interface V1Failure {
  exception_type?: string;
  exception_message?: string;
  traceback?: unknown;
  node_id?: string;
  node_type?: string;
}

/** The failure fields of an `execution_error` object (the socket's event data or the job detail's), read tolerantly. */
export function failureOf(value: unknown): V1Failure | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const s = (x: unknown): string | undefined =>
    typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined;
  return {
    exception_type: s(v.exception_type),
    exception_message: s(v.exception_message),
    traceback: v.traceback,
    node_id: s(v.node_id),
    node_type: s(v.node_type),
  };
}

/** A file-backed Blob of an upload, streamed from disk. @throws InputError `unreadable`, `not_a_file`. */
export async function fileBlob(file: string): Promise<Blob> {
  await assertUploadFile(file);
  try {
    return await openAsBlob(file, { type: contentTypeOf(file) });
  } catch (err) {
    throw new InputError('unreadable', `cannot read ${file}: ${(err as Error).message}`);
  }
}
