/**
 * The v1 WebSocket's messages, decoded (Cloud API v1 (deprecated), Events).
 * Pure functions over bytes and text: no socket here (socket.ts), no state (watch.ts).
 *
 * Text frames are JSON `{type, data}`; `data.prompt_id` names the job. Binary frames (all integers big-endian) begin
 * with a 4-byte type:
 * - 1 PREVIEW_IMAGE: 4-byte `image_type` (1 = JPEG, 2 = PNG), then the image bytes;
 * - 3 TEXT: 4-byte `node_id_len` N, N bytes UTF-8 node id, then the UTF-8 progress text;
 * - 4 PREVIEW_IMAGE_WITH_METADATA: 4-byte `metadata_len` N, N bytes UTF-8 JSON metadata (`node_id`,
 *   `display_node_id`, `real_node_id`, `prompt_id`, `parent_node_id`), then the JPEG or PNG bytes; sent only after
 *   the client declared {@link FEATURE_FLAGS_MESSAGE} as its first text message (not shown in the document; public
 *   sources).
 * Unknown types are ignored; a frame too short for its own layout is `malformed` (counted by the watcher, never fatal).
 */

/** Binary frame types of the document's table. */
const BinaryFrameType = { PREVIEW_IMAGE: 1, TEXT: 3, PREVIEW_IMAGE_WITH_METADATA: 4 } as const;

/**
 * The first text message a client sends, declaring that it decodes type-4 frames (public sources: the server sends them
 * only then).
 */
export const FEATURE_FLAGS_MESSAGE = { type: 'feature_flags', data: { supports_preview_metadata: true } } as const;

/** Metadata of a type-4 preview (Cloud API v1 (deprecated), Events); absent or odd keys are undefined/null. */
export interface PreviewMetadata {
  node_id?: string;
  display_node_id?: string;
  real_node_id?: string;
  prompt_id?: string;
  parent_node_id?: string | null;
}

/** One decoded binary frame. `image` is a view of the frame's bytes (not copied). */
export type BinaryFrame =
  | { kind: 'preview'; contentType: 'image/jpeg' | 'image/png'; image: Buffer; metadata?: PreviewMetadata }
  | { kind: 'text'; nodeId: string; text: string }
  | { kind: 'unknown'; frameType: number }
  | { kind: 'malformed'; reason: string };

/** MIME type of a PREVIEW_IMAGE `image_type`: 1 JPEG, 2 PNG; undefined otherwise. */
function mimeOfImageType(imageType: number): 'image/jpeg' | 'image/png' | undefined {
  return imageType === 1 ? 'image/jpeg' : imageType === 2 ? 'image/png' : undefined;
}

/** MIME type from the image's own signature (type-4 frames do not say): PNG's 8-byte magic, else JPEG's FF D8. */
function sniffImage(bytes: Buffer): 'image/jpeg' | 'image/png' | undefined {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a)
    return 'image/png';
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  return undefined;
}

/** A string field of parsed metadata, else undefined. */
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/**
 * Decodes one binary frame exactly per Cloud API v1 (deprecated), Events (big-endian lengths; UTF-8 decoded whole, so a
 * character is never split). Never throws.
 * @returns `unknown` for a type not in the table; `malformed` (with the reason) for a frame shorter than its header
 *   or its declared length, a PREVIEW_IMAGE whose `image_type` is neither 1 nor 2, type-4 metadata that is not a JSON
 *   object, or an empty image.
 */
export function decodeBinaryFrame(frame: Buffer): BinaryFrame {
  if (frame.length < 4)
    return { kind: 'malformed', reason: `a binary frame of ${frame.length} bytes has no 4-byte type` };
  const type = frame.readUInt32BE(0);
  switch (type) {
    case BinaryFrameType.PREVIEW_IMAGE: {
      if (frame.length < 8) return { kind: 'malformed', reason: 'PREVIEW_IMAGE frame without its 4-byte image_type' };
      const imageType = frame.readUInt32BE(4);
      const contentType = mimeOfImageType(imageType);
      if (!contentType)
        return { kind: 'malformed', reason: `PREVIEW_IMAGE frame with image_type ${imageType} (1 JPEG, 2 PNG)` };
      const image = frame.subarray(8);
      if (image.length === 0) return { kind: 'malformed', reason: 'PREVIEW_IMAGE frame without image bytes' };
      return { kind: 'preview', contentType, image };
    }
    case BinaryFrameType.TEXT: {
      if (frame.length < 8) return { kind: 'malformed', reason: 'TEXT frame without its 4-byte node_id_len' };
      const n = frame.readUInt32BE(4);
      if (frame.length < 8 + n)
        return {
          kind: 'malformed',
          reason: `TEXT frame declares a ${n}-byte node id but has ${frame.length - 8} bytes after it`,
        };
      return { kind: 'text', nodeId: frame.toString('utf8', 8, 8 + n), text: frame.toString('utf8', 8 + n) };
    }
    case BinaryFrameType.PREVIEW_IMAGE_WITH_METADATA: {
      if (frame.length < 8)
        return { kind: 'malformed', reason: 'PREVIEW_IMAGE_WITH_METADATA frame without its 4-byte metadata_len' };
      const n = frame.readUInt32BE(4);
      if (frame.length < 8 + n)
        return {
          kind: 'malformed',
          reason: `PREVIEW_IMAGE_WITH_METADATA frame declares ${n} bytes of metadata but has ${frame.length - 8}`,
        };
      let parsed: unknown;
      try {
        parsed = JSON.parse(frame.toString('utf8', 8, 8 + n));
      } catch {
        return { kind: 'malformed', reason: 'PREVIEW_IMAGE_WITH_METADATA frame whose metadata is not JSON' };
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        return { kind: 'malformed', reason: 'PREVIEW_IMAGE_WITH_METADATA frame whose metadata is not an object' };
      const m = parsed as Record<string, unknown>;
      const image = frame.subarray(8 + n);
      if (image.length === 0)
        return { kind: 'malformed', reason: 'PREVIEW_IMAGE_WITH_METADATA frame without image bytes' };
      const metadata: PreviewMetadata = {
        node_id: str(m.node_id),
        display_node_id: str(m.display_node_id),
        real_node_id: str(m.real_node_id),
        prompt_id: str(m.prompt_id),
        parent_node_id: m.parent_node_id === null ? null : str(m.parent_node_id),
      };
      // "then JPEG or PNG bytes": the format is not declared, so it is read from the bytes; JPEG when unrecognised
      // (the usual preview format).
      return { kind: 'preview', contentType: sniffImage(image) ?? 'image/jpeg', image, metadata };
    }
    default:
      return { kind: 'unknown', frameType: type };
  }
}

/** One text message: its `type` and `data` (an object; `{}` when absent or not an object). */
export interface TextMessage {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Parses a text frame `{type, data}` (Cloud API v1 (deprecated), Events). Undefined for text that is not JSON, not an
 * object, or has no string `type` (ignored by the caller, like an unknown type). Never throws.
 */
export function parseTextMessage(text: string): TextMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.type !== 'string') return undefined;
  const data =
    v.data && typeof v.data === 'object' && !Array.isArray(v.data) ? (v.data as Record<string, unknown>) : {};
  return { type: v.type, data };
}
