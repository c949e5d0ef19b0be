/**
 * The workflow an image carries (src/core/convert/image.ts): ComfyUI's `prompt` (API format) and `workflow` (UI format)
 * text chunks, as tEXt, zTXt or iTXt, compressed or not; and every way an image can fail to carry one. Test PNGs are
 * built with pngjs (the pixels) and png-chunks-encode (the chunks and their CRCs); the real ones are ComfyUI outputs
 * (from the conversion corpus, test/fixtures/convert).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import extractChunks from 'png-chunks-extract';
import { MAX_IMAGE_TEXT_BYTES, isPng, readImageWorkflow } from '../../src/core/convert/image';
import { detectWorkflowFormat } from '../../src/core/util/workflow';
import { invertWorkflow, uiWorkflowSchema1, inputError } from './builders';
import { solidPng } from './harness';
import { NUL, iTXt, latin1, pngWith, rawText, tEXt, zTXt, zeroBomb, type Chunk } from './pngBuilders';
import { repositoryRoot } from './repositoryRoot';

/** The conversion corpus (test/fixtures/convert/README.md gives each case's source): ComfyUI output PNGs among them. */
const CORPUS = path.join(repositoryRoot(), 'test', 'fixtures', 'convert');
/** comfyanonymous/ComfyUI_examples `lora/lora.png`: tEXt `workflow` and `prompt`, written together by ComfyUI. */
const LORA_PNG = path.join(CORPUS, 'ex-lora', 'input.png');
/** The same image and metadata re-stored as iTXt (`workflow` compressed, `prompt` not). */
const LORA_ITXT_PNG = path.join(CORPUS, 'der-png-itxt-lora', 'input.png');

const prompt = invertWorkflow({ prefix: 'from-image' });
const workflow = uiWorkflowSchema1();

describe('readImageWorkflow: the prompt and workflow text chunks of a ComfyUI PNG', () => {
  describe('every text chunk layout', () => {
    it("rule: tEXt (as ComfyUI's SaveImage writes them): prompt and workflow, each parsed", () => {
      const read = readImageWorkflow(
        pngWith(tEXt('prompt', JSON.stringify(prompt)), tEXt('workflow', JSON.stringify(workflow))),
      );
      assert.deepEqual(read, { prompt, workflow });
    });

    it('rule: zTXt (compressed text): inflated and parsed', () => {
      assert.deepEqual(
        readImageWorkflow(pngWith(zTXt('workflow', JSON.stringify(workflow)), zTXt('prompt', JSON.stringify(prompt)))),
        { prompt, workflow },
      );
    });

    it('rule: iTXt, compressed and not: UTF-8 text (non-ASCII titles kept), whatever the language tag and translated keyword', () => {
      const titled = { ...prompt, '1': { ...(prompt['1'] as object), _meta: { title: 'Café ☕ 画像' } } };
      const read = readImageWorkflow(
        pngWith(
          iTXt('prompt', JSON.stringify(titled)),
          iTXt('workflow', JSON.stringify(workflow), { compressed: true, language: '' }),
        ),
      );
      assert.deepEqual(read, { prompt: titled, workflow });
    });

    it("rule: a tEXt or zTXt text that is valid UTF-8 is read as UTF-8 (as ComfyUI's frontend reads it), other bytes as Latin-1", () => {
      const utf8 = { title: 'Café ☕' };
      assert.deepEqual(
        readImageWorkflow(pngWith(rawText('prompt', Buffer.from(JSON.stringify(utf8), 'utf8')))).prompt,
        utf8,
      );
      // "é" as the one Latin-1 byte E9: not UTF-8.
      assert.deepEqual(readImageWorkflow(pngWith(rawText('prompt', latin1('{"title":"Café"}')))).prompt, {
        title: 'Café',
      });
    });

    it('an image with only one of the two chunks gives that one; other text chunks are ignored', () => {
      const read = readImageWorkflow(
        pngWith(tEXt('parameters', 'a photo, Steps: 20'), tEXt('prompt', JSON.stringify(prompt))),
      );
      assert.deepEqual(read, { prompt });
      assert.ok(!('workflow' in read));
      assert.deepEqual(readImageWorkflow(pngWith(zTXt('workflow', JSON.stringify(workflow)))), { workflow });
    });

    it('rule: the first chunk of a keyword counts; a later one is not even inflated (a bomb after it is not read)', () => {
      const read = readImageWorkflow(
        pngWith(tEXt('prompt', JSON.stringify(prompt)), zTXt('prompt', '', zeroBomb(64)), tEXt('prompt', 'not json')),
      );
      assert.deepEqual(read, { prompt });
    });
  });

  describe('ComfyUI outputs (the conversion corpus, test/fixtures/convert)', () => {
    it('ex-lora (tEXt, ComfyUI_examples): prompt is the API-format graph of 8 nodes, workflow the UI-format one', () => {
      const read = readImageWorkflow(fs.readFileSync(LORA_PNG));
      assert.equal(detectWorkflowFormat(read.prompt), 'api');
      assert.equal(detectWorkflowFormat(read.workflow), 'ui');
      assert.deepEqual(Object.keys(read.prompt as object).sort(), ['10', '3', '4', '5', '6', '7', '8', '9']);
      assert.equal((read.prompt as Record<string, { class_type: string }>)['10']!.class_type, 'LoraLoader');
      assert.equal((read.workflow as { nodes: unknown[] }).nodes.length, 8);
    });

    it('der-png-itxt-lora (the same metadata as iTXt, workflow compressed) reads the same as ex-lora', () => {
      const [itxt, text] = [LORA_ITXT_PNG, LORA_PNG].map((f) => fs.readFileSync(f));
      assert.ok(
        extractChunks(itxt!).some((c) => c.name === 'iTXt') && !extractChunks(itxt!).some((c) => c.name === 'tEXt'),
        'the fixture has no iTXt: it proves nothing',
      );
      assert.deepEqual(readImageWorkflow(itxt!), readImageWorkflow(text!));
    });
  });

  describe('images that carry no usable workflow: InputErrors naming the problem and the fix', () => {
    it('rule: not a PNG (a JPEG, a JSON file, nothing): not_png', () => {
      const notPng = /not a PNG image.*workflow JSON file/;
      assert.throws(
        () => readImageWorkflow(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46])),
        inputError('not_png', notPng),
      );
      assert.throws(() => readImageWorkflow(Buffer.from(JSON.stringify(prompt))), inputError('not_png', notPng));
      assert.throws(() => readImageWorkflow(new Uint8Array(0)), inputError('not_png'));
      assert.equal(isPng(solidPng(1, 1, [0, 0, 0])), true);
    });

    it('rule: a PNG without prompt or workflow chunk: png_no_workflow, saying ComfyUI writes them into the PNGs it saves', () => {
      assert.throws(
        () => readImageWorkflow(solidPng(4, 3, [0, 0, 0])),
        inputError(
          'png_no_workflow',
          /^this image carries no workflow: ComfyUI writes it into the PNGs it saves.*use the workflow JSON file/,
        ),
      );
      assert.throws(
        () => readImageWorkflow(pngWith(tEXt('Software', 'an editor'), tEXt('prompts', '{}'))),
        inputError('png_no_workflow'),
      );
    });

    it('rule: a truncated PNG (cut anywhere after the signature, a text chunk included): png_corrupt, never a partial read', () => {
      const whole = pngWith(tEXt('prompt', JSON.stringify(prompt)), tEXt('workflow', JSON.stringify(workflow)));
      const textEnd = 8 + 25 + 12 + `prompt\0${JSON.stringify(prompt)}`.length;
      // Inside IHDR, inside the prompt chunk, right after it, inside the pixels, inside IEND.
      for (const length of [8, 20, 40, textEnd - 3, textEnd, whole.length - 20, whole.length - 1]) {
        assert.throws(
          () => readImageWorkflow(whole.subarray(0, length)),
          inputError('png_corrupt', /truncated or corrupt.*save or download the image again/),
          `cut at ${length}`,
        );
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
      assert.throws(
        () => readImageWorkflow(pngWith(tEXt('workflow', '{"nodes": ['))),
        inputError('png_text_not_json', /"workflow" text chunk is not JSON/),
      );
      assert.throws(
        () =>
          readImageWorkflow(
            pngWith(tEXt('prompt', JSON.stringify(prompt)), iTXt('workflow', 'nodes', { compressed: true })),
          ),
        inputError('png_text_not_json', /"workflow"/),
      );
    });

    it('rule: a compressed stream that does not inflate, or an unknown compression method: png_corrupt', () => {
      assert.throws(
        () => readImageWorkflow(pngWith(zTXt('prompt', '', Buffer.from('not zlib at all')))),
        inputError('png_corrupt', /"prompt" text chunk does not inflate/),
      );
      const method1 = zTXt('prompt', JSON.stringify(prompt));
      method1.data[7] = 1;
      assert.throws(() => readImageWorkflow(pngWith(method1)), inputError('png_corrupt', /unknown compression method/));
      const noTags: Chunk = {
        name: 'iTXt',
        data: Buffer.concat([latin1('prompt'), NUL, Buffer.from([0, 0]), latin1('en')]),
      };
      assert.throws(() => readImageWorkflow(pngWith(noTags)), inputError('png_corrupt', /language tag/));
    });
  });

  describe("the bound on a chunk's text: a decompression bomb is refused, never inflated into memory", () => {
    /**
     * How much the process's peak resident memory grew while `fn` ran, in bytes (`resourceUsage().maxRSS`, KiB, never
     * goes down). The error code alone cannot tell a bounded read from an unbounded one: Node refuses a 4 GiB buffer
     * with the same code, after having inflated it. A bounded inflate stops at the bound (16 MiB); an unbounded one
     * raises the peak by gigabytes.
     */
    const peakMemoryGrowth = (fn: () => void): number => {
      const before = process.resourceUsage().maxRSS;
      fn();
      return (process.resourceUsage().maxRSS - before) * 1024;
    };
    /** The bomb was stopped near the bound: the peak grew by far less than what it inflates to. */
    const assertBounded = (grown: number): void => {
      assert.ok(
        grown < 256 * 1024 * 1024,
        `the peak resident memory grew by ${Math.round(grown / 1024 / 1024)} MiB: the chunk was inflated past the bound`,
      );
    };

    it('the bomb inflates as built: 3 copies give 3 MiB of zeros, Adler-32 included (so the 4 GiB one below is 4 GiB)', () => {
      const three = zlib.inflateSync(zeroBomb(3));
      assert.equal(three.length, 3 * 1024 * 1024);
      assert.ok(three.every((b) => b === 0));
    });

    it('rule: a zTXt chunk that inflates to 4 GiB (about 4 MiB in the file) is refused: png_text_too_large, naming the bound, memory bounded', () => {
      const bomb = zeroBomb(4096);
      assert.ok(bomb.length < 8 * 1024 * 1024, `${bomb.length} bytes`);
      const png = pngWith(zTXt('prompt', '', bomb));
      const grown = peakMemoryGrowth(() =>
        assert.throws(
          () => readImageWorkflow(png),
          inputError('png_text_too_large', /"prompt" text chunk holds more than 16 MiB \(16777216 bytes\)/),
        ),
      );
      assertBounded(grown);
    });

    it('rule: a compressed iTXt chunk that inflates to 4 GiB is refused: png_text_too_large, memory bounded', () => {
      const png = pngWith(iTXt('workflow', '', { deflated: zeroBomb(4096) }));
      const grown = peakMemoryGrowth(() =>
        assert.throws(() => readImageWorkflow(png), inputError('png_text_too_large', /"workflow"/)),
      );
      assertBounded(grown);
    });

    it('rule: the bound is exact: text of exactly maxTextBytes is read, one byte more is refused (compressed or not)', () => {
      const max = 1000;
      const exactly = JSON.stringify({ pad: 'x'.repeat(max - 10) });
      assert.equal(exactly.length, max);
      const over = JSON.stringify({ pad: 'x'.repeat(max - 9) });
      for (const chunk of [tEXt, zTXt, (k: string, t: string) => iTXt(k, t, { compressed: true })]) {
        assert.deepEqual(
          readImageWorkflow(pngWith(chunk('prompt', exactly)), { maxTextBytes: max }).prompt,
          JSON.parse(exactly),
        );
        assert.throws(
          () => readImageWorkflow(pngWith(chunk('prompt', over)), { maxTextBytes: max }),
          inputError('png_text_too_large'),
        );
      }
      assert.equal(MAX_IMAGE_TEXT_BYTES, 16 * 1024 * 1024);
    });
  });
});
