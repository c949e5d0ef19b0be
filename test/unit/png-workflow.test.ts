/**
 * The workflow an image carries (src/core/convert/image.ts): ComfyUI's `prompt` (API format) and `workflow` (UI format)
 * text chunks, as tEXt, zTXt or iTXt, compressed or not; and every way an image can fail to carry one. Test PNGs are
 * built with pngjs (the pixels) and png-chunks-encode (the chunks and their CRCs); the real ones are ComfyUI outputs
 * (test/fixtures/png/README.md).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import encodeChunks from 'png-chunks-encode';
import extractChunks from 'png-chunks-extract';
import * as pngText from 'png-chunk-text';
import { InputError } from '../../src/core';
import { MAX_IMAGE_TEXT_BYTES, isPng, readImageWorkflow } from '../../src/core/convert/image';
import { detectWorkflowFormat } from '../../src/core/util/workflow';
import { invertWorkflow, uiWorkflowSchema1 } from './builders';
import { solidPng } from './harness';
import { repositoryRoot } from './repositoryRoot';

const FIXTURES = path.join(repositoryRoot(), 'test', 'fixtures', 'png');

/** A predicate for assert.throws: an InputError with this code whose message matches. */
function inputError(code: string, message?: RegExp) {
  return (e: unknown): boolean => {
    assert.ok(InputError.is(e), `not an InputError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  };
}

type Chunk = { name: string; data: Uint8Array };

const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');
const NUL = Buffer.from([0]);

/** A tEXt chunk (png-chunk-text: Latin-1 only). */
function tEXt(keyword: string, text: string): Chunk {
  return pngText.encode(keyword, text);
}

/** A tEXt chunk whose text bytes are given as they are (UTF-8, as some tools write). */
function rawText(keyword: string, bytes: Buffer): Chunk {
  return { name: 'tEXt', data: Buffer.concat([latin1(keyword), NUL, bytes]) };
}

/** A zTXt chunk: keyword, NUL, method 0, the zlib stream (`deflated`, default: the text deflated). */
function zTXt(keyword: string, text: string, deflated: Buffer = zlib.deflateSync(latin1(text))): Chunk {
  return { name: 'zTXt', data: Buffer.concat([latin1(keyword), NUL, Buffer.from([0]), deflated]) };
}

/** An iTXt chunk: keyword, NUL, compression flag, method 0, language tag, NUL, translated keyword, NUL, UTF-8 text. */
function iTXt(keyword: string, text: string, options: { compressed?: boolean; deflated?: Buffer; language?: string } = {}): Chunk {
  const utf8 = Buffer.from(text, 'utf8');
  const compressed = options.compressed || options.deflated !== undefined;
  const body = options.deflated ?? (compressed ? zlib.deflateSync(utf8) : utf8);
  return {
    name: 'iTXt',
    data: Buffer.concat([latin1(keyword), NUL, Buffer.from([compressed ? 1 : 0, 0]), latin1(options.language ?? 'en'), NUL, Buffer.from('Übersetzt', 'utf8'), NUL, body]),
  };
}

/** A 4×3 PNG (pngjs) with `chunks` inserted right after IHDR, re-encoded (png-chunks-encode computes every CRC). */
function pngWith(...chunks: Chunk[]): Buffer {
  const [ihdr, ...rest] = extractChunks(solidPng(4, 3, [10, 20, 30]));
  return Buffer.from(encodeChunks([ihdr!, ...chunks, ...rest]));
}

/**
 * A zlib stream that inflates to `mib` MiB of zeros, in about 1 KiB per MiB: one deflated MiB of zeros, ended by a
 * sync flush (so it is byte-aligned and refers only to the zeros before it), repeated; then an empty final block and the
 * Adler-32 of the zeros (a = 1, b = n mod 65521). Building it never holds the inflated bytes.
 */
function zeroBomb(mib: number): Buffer {
  const mibOfZeros = zlib.deflateRawSync(Buffer.alloc(1024 * 1024), { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const total = mib * 1024 * 1024;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((total % 65521) * 65536 + 1);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(mib).fill(mibOfZeros), Buffer.from([0x03, 0x00]), adler]);
}

const prompt = invertWorkflow({ prefix: 'from-image' });
const workflow = uiWorkflowSchema1();

describe('readImageWorkflow: the prompt and workflow text chunks of a ComfyUI PNG', () => {
  describe('every text chunk layout', () => {
    it('rule: tEXt (as ComfyUI\'s SaveImage writes them): prompt and workflow, each parsed', () => {
      const read = readImageWorkflow(pngWith(tEXt('prompt', JSON.stringify(prompt)), tEXt('workflow', JSON.stringify(workflow))));
      assert.deepEqual(read, { prompt, workflow });
    });

    it('rule: zTXt (compressed text): inflated and parsed', () => {
      assert.deepEqual(readImageWorkflow(pngWith(zTXt('workflow', JSON.stringify(workflow)), zTXt('prompt', JSON.stringify(prompt)))), { prompt, workflow });
    });

    it('rule: iTXt, compressed and not: UTF-8 text (non-ASCII titles kept), whatever the language tag and translated keyword', () => {
      const titled = { ...prompt, '1': { ...(prompt['1'] as object), _meta: { title: 'Café ☕ 画像' } } };
      const read = readImageWorkflow(pngWith(iTXt('prompt', JSON.stringify(titled)), iTXt('workflow', JSON.stringify(workflow), { compressed: true, language: '' })));
      assert.deepEqual(read, { prompt: titled, workflow });
    });

    it('rule: a tEXt or zTXt text that is valid UTF-8 is read as UTF-8 (as ComfyUI\'s frontend reads it), other bytes as Latin-1', () => {
      const utf8 = { title: 'Café ☕' };
      assert.deepEqual(readImageWorkflow(pngWith(rawText('prompt', Buffer.from(JSON.stringify(utf8), 'utf8')))).prompt, utf8);
      // "é" as the one Latin-1 byte E9: not UTF-8.
      assert.deepEqual(readImageWorkflow(pngWith(rawText('prompt', latin1('{"title":"Café"}')))).prompt, { title: 'Café' });
    });

    it('an image with only one of the two chunks gives that one; other text chunks are ignored', () => {
      const read = readImageWorkflow(pngWith(tEXt('parameters', 'a photo, Steps: 20'), tEXt('prompt', JSON.stringify(prompt))));
      assert.deepEqual(read, { prompt });
      assert.ok(!('workflow' in read));
      assert.deepEqual(readImageWorkflow(pngWith(zTXt('workflow', JSON.stringify(workflow)))), { workflow });
    });

    it('rule: the first chunk of a keyword counts; a later one is not even inflated (a bomb after it is not read)', () => {
      const read = readImageWorkflow(pngWith(tEXt('prompt', JSON.stringify(prompt)), zTXt('prompt', '', zeroBomb(64)), tEXt('prompt', 'not json')));
      assert.deepEqual(read, { prompt });
    });
  });

  describe('ComfyUI outputs (test/fixtures/png)', () => {
    it('lora.png (tEXt, ComfyUI_examples): prompt is the API-format graph of 8 nodes, workflow the UI-format one', () => {
      const read = readImageWorkflow(fs.readFileSync(path.join(FIXTURES, 'lora.png')));
      assert.equal(detectWorkflowFormat(read.prompt), 'api');
      assert.equal(detectWorkflowFormat(read.workflow), 'ui');
      assert.deepEqual(Object.keys(read.prompt as object).sort(), ['10', '3', '4', '5', '6', '7', '8', '9']);
      assert.equal((read.prompt as Record<string, { class_type: string }>)['10']!.class_type, 'LoraLoader');
      assert.equal((read.workflow as { nodes: unknown[] }).nodes.length, 8);
    });

    it('lora-itxt.png (the same metadata as iTXt, workflow compressed) reads the same as lora.png', () => {
      const [itxt, text] = ['lora-itxt.png', 'lora.png'].map((f) => fs.readFileSync(path.join(FIXTURES, f)));
      assert.ok(extractChunks(itxt!).some((c) => c.name === 'iTXt') && !extractChunks(itxt!).some((c) => c.name === 'tEXt'), 'the fixture has no iTXt: it proves nothing');
      assert.deepEqual(readImageWorkflow(itxt!), readImageWorkflow(text!));
    });
  });

  describe('images that carry no usable workflow: InputErrors naming the problem and the fix', () => {
    it('rule: not a PNG (a JPEG, a JSON file, nothing): not_png', () => {
      const notPng = /not a PNG image.*workflow JSON file/;
      assert.throws(() => readImageWorkflow(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46])), inputError('not_png', notPng));
      assert.throws(() => readImageWorkflow(Buffer.from(JSON.stringify(prompt))), inputError('not_png', notPng));
      assert.throws(() => readImageWorkflow(new Uint8Array(0)), inputError('not_png'));
      assert.equal(isPng(solidPng(1, 1, [0, 0, 0])), true);
    });

    it('rule: a PNG without prompt or workflow chunk: png_no_workflow, saying ComfyUI writes them into the PNGs it saves', () => {
      assert.throws(() => readImageWorkflow(solidPng(4, 3, [0, 0, 0])), inputError('png_no_workflow', /^this image carries no workflow: ComfyUI writes it into the PNGs it saves.*use the workflow JSON file/));
      assert.throws(() => readImageWorkflow(pngWith(tEXt('Software', 'an editor'), tEXt('prompts', '{}'))), inputError('png_no_workflow'));
    });

    it('rule: a truncated PNG (cut anywhere after the signature, a text chunk included): png_corrupt, never a partial read', () => {
      const whole = pngWith(tEXt('prompt', JSON.stringify(prompt)), tEXt('workflow', JSON.stringify(workflow)));
      const textEnd = 8 + 25 + 12 + `prompt\0${JSON.stringify(prompt)}`.length;
      // Inside IHDR, inside the prompt chunk, right after it, inside the pixels, inside IEND.
      for (const length of [8, 20, 40, textEnd - 3, textEnd, whole.length - 20, whole.length - 1]) {
        assert.throws(() => readImageWorkflow(whole.subarray(0, length)), inputError('png_corrupt', /truncated or corrupt.*save or download the image again/), `cut at ${length}`);
      }
      assert.deepEqual(readImageWorkflow(whole).prompt, prompt);
    });

    it('rule: a chunk whose CRC does not match its bytes (one byte of the prompt changed): png_corrupt', () => {
      const bytes = pngWith(tEXt('prompt', JSON.stringify(prompt)));
      const at = bytes.indexOf(latin1('"class_type"'));
      bytes[at + 1] = 'C'.charCodeAt(0);
      assert.throws(() => readImageWorkflow(bytes), inputError('png_corrupt', /CRC/));
    });

    it('rule: a chunk length past the end of the file (4 GiB declared) is refused before anything is allocated for it: png_corrupt', () => {
      const bytes = pngWith(tEXt('prompt', JSON.stringify(prompt)));
      bytes.writeUInt32BE(0xfffffff0, 33); // the length of the chunk after IHDR
      assert.throws(() => readImageWorkflow(bytes), inputError('png_corrupt', /declares 4294967280 bytes/));
    });

    it('rule: a chunk that is not JSON: png_text_not_json, naming the chunk', () => {
      assert.throws(() => readImageWorkflow(pngWith(tEXt('workflow', '{"nodes": ['))), inputError('png_text_not_json', /"workflow" text chunk is not JSON/));
      assert.throws(() => readImageWorkflow(pngWith(tEXt('prompt', JSON.stringify(prompt)), iTXt('workflow', 'nodes', { compressed: true }))), inputError('png_text_not_json', /"workflow"/));
    });

    it('rule: a compressed stream that does not inflate, or an unknown compression method: png_corrupt', () => {
      assert.throws(() => readImageWorkflow(pngWith(zTXt('prompt', '', Buffer.from('not zlib at all')))), inputError('png_corrupt', /"prompt" text chunk does not inflate/));
      const method1 = zTXt('prompt', JSON.stringify(prompt));
      method1.data[7] = 1;
      assert.throws(() => readImageWorkflow(pngWith(method1)), inputError('png_corrupt', /unknown compression method/));
      const noTags: Chunk = { name: 'iTXt', data: Buffer.concat([latin1('prompt'), NUL, Buffer.from([0, 0]), latin1('en')]) };
      assert.throws(() => readImageWorkflow(pngWith(noTags)), inputError('png_corrupt', /language tag/));
    });
  });

  describe('the bound on a chunk\'s text: a decompression bomb is refused, never inflated into memory', () => {
    it('the bomb inflates as built: 3 copies give 3 MiB of zeros, Adler-32 included (so the 4 GiB one below is 4 GiB)', () => {
      const three = zlib.inflateSync(zeroBomb(3));
      assert.equal(three.length, 3 * 1024 * 1024);
      assert.ok(three.every((b) => b === 0));
    });

    it('rule: a zTXt chunk that inflates to 4 GiB (about 4 MiB in the file) is refused: png_text_too_large, naming the bound', () => {
      const bomb = zeroBomb(4096);
      assert.ok(bomb.length < 8 * 1024 * 1024, `${bomb.length} bytes`);
      assert.throws(() => readImageWorkflow(pngWith(zTXt('prompt', '', bomb))), inputError('png_text_too_large', /"prompt" text chunk holds more than 16 MiB \(16777216 bytes\)/));
    });

    it('rule: a compressed iTXt chunk that inflates to 4 GiB is refused: png_text_too_large', () => {
      assert.throws(() => readImageWorkflow(pngWith(iTXt('workflow', '', { deflated: zeroBomb(4096) }))), inputError('png_text_too_large', /"workflow"/));
    });

    it('rule: the bound is exact: text of exactly maxTextBytes is read, one byte more is refused (compressed or not)', () => {
      const max = 1000;
      const exactly = JSON.stringify({ pad: 'x'.repeat(max - 10) });
      assert.equal(exactly.length, max);
      const over = JSON.stringify({ pad: 'x'.repeat(max - 9) });
      for (const chunk of [tEXt, zTXt, (k: string, t: string) => iTXt(k, t, { compressed: true })]) {
        assert.deepEqual(readImageWorkflow(pngWith(chunk('prompt', exactly)), { maxTextBytes: max }).prompt, JSON.parse(exactly));
        assert.throws(() => readImageWorkflow(pngWith(chunk('prompt', over)), { maxTextBytes: max }), inputError('png_text_too_large'));
      }
      assert.equal(MAX_IMAGE_TEXT_BYTES, 16 * 1024 * 1024);
    });
  });
});
