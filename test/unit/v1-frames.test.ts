/**
 * The v1 WebSocket's binary frames and text messages (Cloud API v1 (deprecated), Events; the feature flag from public
 * sources), decoded byte for byte from frames written here by hand.
 */
import * as assert from 'node:assert/strict';
import { FEATURE_FLAGS_MESSAGE, decodeBinaryFrame, parseTextMessage } from '../../src/core/v1';
import { JPEG_BYTES, PNG_BYTES, metadataPreviewFrame, previewFrame, textFrame } from './v1Server';

describe('v1 binary frames (Cloud API v1 (deprecated), Events)', () => {
  it('PREVIEW_IMAGE: 4-byte big-endian type 1, 4-byte big-endian image_type 1 = JPEG, then the image bytes exactly', () => {
    const frame = decodeBinaryFrame(previewFrame(1, JPEG_BYTES));
    assert.equal(frame.kind, 'preview');
    if (frame.kind !== 'preview') return;
    assert.equal(frame.contentType, 'image/jpeg');
    assert.deepEqual(frame.image, JPEG_BYTES);
    assert.equal(frame.metadata, undefined);
  });

  it('PREVIEW_IMAGE: image_type 2 is PNG', () => {
    const frame = decodeBinaryFrame(previewFrame(2, PNG_BYTES));
    assert.ok(frame.kind === 'preview' && frame.contentType === 'image/png');
    assert.deepEqual(frame.kind === 'preview' && frame.image, PNG_BYTES);
  });

  it('PREVIEW_IMAGE: an image_type other than 1 or 2 is malformed, not guessed', () => {
    assert.equal(decodeBinaryFrame(previewFrame(7, PNG_BYTES)).kind, 'malformed');
  });

  it('TEXT: type 3, 4-byte big-endian node_id_len, the UTF-8 node id, then the UTF-8 text (multibyte characters intact)', () => {
    const frame = decodeBinaryFrame(textFrame('12:é', 'KSampler ✓ 3/20'));
    assert.deepEqual(frame, { kind: 'text', nodeId: '12:é', text: 'KSampler ✓ 3/20' });
  });

  it('TEXT: the length is big-endian: a little-endian node_id_len is longer than the frame, so malformed', () => {
    const bytes = textFrame('42', 'hi');
    bytes.writeUInt32LE(2, 4);
    assert.equal(decodeBinaryFrame(bytes).kind, 'malformed');
  });

  it('PREVIEW_IMAGE_WITH_METADATA: type 4, 4-byte metadata_len, JSON metadata (node_id, display_node_id, real_node_id, prompt_id, parent_node_id), then the image', () => {
    const metadata = { node_id: '9', display_node_id: '9', real_node_id: '9', prompt_id: 'p-1', parent_node_id: null };
    const frame = decodeBinaryFrame(metadataPreviewFrame(metadata, PNG_BYTES));
    assert.equal(frame.kind, 'preview');
    if (frame.kind !== 'preview') return;
    assert.deepEqual(frame.metadata, metadata);
    assert.deepEqual(frame.image, PNG_BYTES);
    assert.equal(frame.contentType, 'image/png');
  });

  it('PREVIEW_IMAGE_WITH_METADATA: JPEG bytes are told from the signature', () => {
    const frame = decodeBinaryFrame(metadataPreviewFrame({ prompt_id: 'p' }, JPEG_BYTES));
    assert.ok(frame.kind === 'preview' && frame.contentType === 'image/jpeg');
  });

  it('a frame type not in the table is unknown (ignored by the watcher), never an error', () => {
    const bytes = Buffer.alloc(12);
    bytes.writeUInt32BE(2, 0);
    assert.deepEqual(decodeBinaryFrame(bytes), { kind: 'unknown', frameType: 2 });
    bytes.writeUInt32BE(0xffffffff, 0);
    assert.deepEqual(decodeBinaryFrame(bytes), { kind: 'unknown', frameType: 0xffffffff });
  });

  it('truncated frames are malformed results, never exceptions', () => {
    const cases = [
      Buffer.alloc(0),
      Buffer.from([0, 0, 1]),
      previewFrame(1, JPEG_BYTES).subarray(0, 6),
      previewFrame(1, Buffer.alloc(0)),
      textFrame('node-12', 'x').subarray(0, 10),
      textFrame('a', 'b').subarray(0, 7),
      metadataPreviewFrame({ prompt_id: 'p' }, PNG_BYTES).subarray(0, 12),
      metadataPreviewFrame({ prompt_id: 'p' }, Buffer.alloc(0)),
    ];
    for (const bytes of cases) assert.equal(decodeBinaryFrame(bytes).kind, 'malformed', bytes.toString('hex'));
  });

  it('type-4 metadata that is not a JSON object is malformed', () => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(4, 0);
    head.writeUInt32BE(3, 4);
    assert.equal(decodeBinaryFrame(Buffer.concat([head, Buffer.from('[1]'), PNG_BYTES])).kind, 'malformed');
    assert.equal(decodeBinaryFrame(Buffer.concat([head, Buffer.from('{no'), PNG_BYTES])).kind, 'malformed');
  });
});

describe('v1 text messages (Cloud API v1 (deprecated), Events)', () => {
  it('a text frame is {type, data}; data.prompt_id is kept for filtering', () => {
    assert.deepEqual(parseTextMessage('{"type":"executed","data":{"prompt_id":"p","node":"3","output":{}}}'), {
      type: 'executed',
      data: { prompt_id: 'p', node: '3', output: {} },
    });
  });

  it('text that is not JSON, not an object or has no string type is ignored (undefined), never thrown', () => {
    for (const text of ['', 'nope', '[1,2]', 'null', '{"data":{}}', '{"type":5}'])
      assert.equal(parseTextMessage(text), undefined, text);
  });

  it('a missing or odd data reads as {}', () => {
    assert.deepEqual(parseTextMessage('{"type":"status","data":[1]}'), { type: 'status', data: {} });
  });

  it('the feature flags message declares supports_preview_metadata (type-4 frames are sent only after it)', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(FEATURE_FLAGS_MESSAGE)), {
      type: 'feature_flags',
      data: { supports_preview_metadata: true },
    });
  });
});
