/**
 * The v1 WebSocket's frames (Cloud API v1 (deprecated), Events): text frames are JSON `{type, data}`; binary frames
 * begin with a 4-byte big-endian event type, and every integer in them is big-endian:
 * - PREVIEW_IMAGE (1): 4-byte `image_type` (1 = JPEG, 2 = PNG), then the image bytes;
 * - TEXT (3): 4-byte `node_id_len`, then that many bytes of UTF-8 node id, then the UTF-8 progress text;
 * - PREVIEW_IMAGE_WITH_METADATA (4): 4-byte `metadata_len`, then that many bytes of UTF-8 JSON metadata
 *   (`node_id`, `display_node_id`, `real_node_id`, `prompt_id`, `parent_node_id`), then the JPEG or PNG bytes.
 * Pure encoders: test/fixtures/v1/ holds frames they produced, which the client's decoder is tested against.
 */

/** The binary event types of the document's table. */
export const BINARY_EVENT = { PREVIEW_IMAGE: 1, TEXT: 3, PREVIEW_IMAGE_WITH_METADATA: 4 } as const;

/** `image_type` of a PREVIEW_IMAGE frame. */
export const IMAGE_TYPE = { JPEG: 1, PNG: 2 } as const;

/** The metadata of a PREVIEW_IMAGE_WITH_METADATA frame, keys as the document lists them. */
export interface PreviewMetadata {
  readonly node_id: string;
  readonly display_node_id: string;
  readonly real_node_id: string;
  readonly prompt_id: string;
  /** Null outside a subgraph (the emulator has none). */
  readonly parent_node_id: string | null;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value, 0);
  return b;
}

/** A PREVIEW_IMAGE frame: type 1, `image_type` (1 JPEG, 2 PNG), the image bytes. */
export function previewImageFrame(imageType: number, image: Uint8Array): Buffer {
  return Buffer.concat([u32(BINARY_EVENT.PREVIEW_IMAGE), u32(imageType), image]);
}

/** A TEXT frame: type 3, the node id's length in bytes, the UTF-8 node id, the UTF-8 text. */
export function textFrame(nodeId: string, text: string): Buffer {
  const id = Buffer.from(nodeId, 'utf8');
  return Buffer.concat([u32(BINARY_EVENT.TEXT), u32(id.length), id, Buffer.from(text, 'utf8')]);
}

/**
 * A PREVIEW_IMAGE_WITH_METADATA frame: type 4, the metadata's length in bytes, the UTF-8 JSON metadata (keys in
 * the document's order), the image bytes. Sent only to a connection that declared `supports_preview_metadata`.
 */
export function previewWithMetadataFrame(metadata: PreviewMetadata, image: Uint8Array): Buffer {
  const ordered: PreviewMetadata = {
    node_id: metadata.node_id,
    display_node_id: metadata.display_node_id,
    real_node_id: metadata.real_node_id,
    prompt_id: metadata.prompt_id,
    parent_node_id: metadata.parent_node_id,
  };
  const json = Buffer.from(JSON.stringify(ordered), 'utf8');
  return Buffer.concat([u32(BINARY_EVENT.PREVIEW_IMAGE_WITH_METADATA), u32(json.length), json, image]);
}

/**
 * The binary frame of a job's preview for one socket: type 4 with its metadata (node and prompt ids) to a socket that
 * announced `supports_preview_metadata`, else type 1 (ComfyUI server API (observed), Following a job: previews).
 * @param preview the run's preview event (`data_base64`, `content_type`, `node_id`); `promptId` the job's id.
 */
export function previewFrame(
  preview: { readonly node_id: string; readonly content_type: string; readonly data_base64: string },
  promptId: string,
  withMetadata: boolean,
): Buffer {
  const image = Buffer.from(preview.data_base64, 'base64');
  if (!withMetadata)
    return previewImageFrame(preview.content_type === 'image/png' ? IMAGE_TYPE.PNG : IMAGE_TYPE.JPEG, image);
  const id = preview.node_id;
  return previewWithMetadataFrame(
    { node_id: id, display_node_id: id, real_node_id: id, prompt_id: promptId, parent_node_id: null },
    image,
  );
}
