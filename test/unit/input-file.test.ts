/**
 * Reading a workflow file before any request: regular file, bounded size, strict UTF-8 (the rules of
 * src/core/util/inputFile.ts).
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  MAX_WORKFLOW_BYTES,
  decodeText,
  firstInvalidUtf8,
  readInputFile,
  readWorkflowFile,
} from '../../src/core/util/inputFile';
import { invertWorkflow, uiWorkflowLegacy, inputError } from './builders';
import { fileWriter, tempDir } from './tmp';

/** UTF-16 big-endian bytes of `text` (Node has only little-endian). */
function utf16be(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

const utf8 = (hex: number[]): Uint8Array => Uint8Array.from(hex);

describe('decodeText: a file is decoded as strict UTF-8, anything else is refused with not_utf8', () => {
  it('UTF-8 text decodes as is, multi-byte characters included (é, €, 😀, U+10FFFF)', () => {
    const text = '{"a": "café € 😀 \u{10ffff}"}';
    assert.equal(decodeText(Buffer.from(text, 'utf8'), 'w.json'), text);
    assert.equal(decodeText(new Uint8Array(0), 'empty.json'), '');
  });

  it('a UTF-8 BOM is accepted and skipped (so JSON.parse does not choke on it)', () => {
    const text = decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]), 'bom.json');
    assert.equal(text, '{"a":1}');
    assert.deepEqual(JSON.parse(text), { a: 1 });
  });

  it('UTF-16 with a BOM, little- and big-endian, is refused: "<name>: the file is not UTF-8 (looks like UTF-16): save it as UTF-8"', () => {
    const message = 'w.json: the file is not UTF-8 (looks like UTF-16): save it as UTF-8';
    assert.throws(
      () => decodeText(Buffer.from('\ufeff{"a":1}', 'utf16le'), 'w.json'),
      (e: unknown) => inputError('not_utf8')(e) && (e as Error).message === message,
    );
    assert.throws(
      () => decodeText(utf16be('\ufeff{"a":1}'), 'w.json'),
      (e: unknown) => inputError('not_utf8')(e) && (e as Error).message === message,
    );
  });

  it('UTF-16 without a BOM (the NUL-byte pattern), little- and big-endian, is refused as UTF-16', () => {
    const wf = JSON.stringify(invertWorkflow());
    assert.throws(
      () => decodeText(Buffer.from(wf, 'utf16le'), 'le.json'),
      inputError('not_utf8', /^le\.json: the file is not UTF-8 \(looks like UTF-16\)/),
    );
    assert.throws(() => decodeText(utf16be(wf), 'be.json'), inputError('not_utf8', /looks like UTF-16/));
    assert.throws(
      () => decodeText(Buffer.from('{', 'utf16le'), 'one.json'),
      inputError('not_utf8', /looks like UTF-16/),
      'a single UTF-16 character',
    );
  });

  it('Latin-1 "caf\\xe9" is refused with the offset of the first bad byte, not decoded with a replacement character', () => {
    const latin1 = Buffer.from('caf\xe9', 'latin1');
    assert.equal(
      new TextDecoder().decode(latin1),
      'caf\ufffd',
      'the lenient decoder the client used before turns it into U+FFFD',
    );
    assert.throws(
      () => decodeText(latin1, 'w.json'),
      (e: unknown) =>
        inputError('not_utf8')(e) &&
        (e as Error).message === 'w.json: the file is not UTF-8 (invalid UTF-8 at byte 3): save it as UTF-8',
    );
  });

  it('overlong forms, surrogates, code points above U+10FFFF, stray continuation bytes and truncated sequences are invalid, at their offset', () => {
    const cases: [number[], number, string][] = [
      [[0x41, 0xc0, 0xaf], 1, 'overlong "/" in 2 bytes (C0 AF)'],
      [[0xc1, 0xbf], 0, 'overlong 2-byte lead C1'],
      [[0x41, 0x42, 0xe0, 0x80, 0xaf], 2, 'overlong in 3 bytes'],
      [[0xf0, 0x80, 0x80, 0xaf], 0, 'overlong in 4 bytes'],
      [[0xed, 0xa0, 0x80], 0, 'UTF-8-encoded surrogate U+D800 (CESU)'],
      [[0xf4, 0x90, 0x80, 0x80], 0, 'U+110000'],
      [[0xf5, 0x80, 0x80, 0x80], 0, 'lead byte F5'],
      [[0xff], 0, 'byte FF'],
      [[0x61, 0x80], 1, 'stray continuation byte'],
      [[0x61, 0xe2, 0x82], 1, 'truncated € at the end'],
      [[0xe2, 0x28, 0xa1], 0, 'bad continuation byte'],
    ];
    for (const [bytes, offset, what] of cases) {
      assert.equal(firstInvalidUtf8(utf8(bytes)), offset, what);
      assert.throws(
        () => decodeText(utf8(bytes), 'x'),
        inputError('not_utf8', new RegExp(`invalid UTF-8 at byte ${offset}\\)`)),
        what,
      );
    }
    assert.throws(
      () => decodeText(utf8([0xef, 0xbb, 0xbf, 0x61, 0xe9]), 'x'),
      inputError('not_utf8', /at byte 4\)/),
      'the offset counts the BOM',
    );
  });

  it('the UTF-8 check agrees with the strict TextDecoder on 5000 random byte strings', () => {
    let seed = 42;
    const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 16;
    const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    for (let n = 0; n < 5000; n++) {
      const bytes = Uint8Array.from({ length: 1 + (next() % 8) }, () =>
        next() % 3 === 0 ? next() % 0x80 : 0x80 + (next() % 0x80),
      );
      let valid = true;
      try {
        strict.decode(bytes);
      } catch {
        valid = false;
      }
      assert.equal(firstInvalidUtf8(bytes) === -1, valid, Buffer.from(bytes).toString('hex'));
    }
  });
});

describe('readInputFile: only a regular file of bounded size is read', () => {
  let dir: string;
  before(() => {
    dir = tempDir('cc-input-');
  });

  it('a regular UTF-8 file is read as text', async () => {
    const file = path.join(dir, 'ok.json');
    fs.writeFileSync(file, '{"é": 1}');
    assert.equal(await readInputFile(file), '{"é": 1}');
  });

  it('a missing file is refused with unreadable ("no such file")', async () => {
    await assert.rejects(
      readInputFile(path.join(dir, 'missing.json')),
      inputError('unreadable', /missing\.json: no such file/),
    );
  });

  it('a directory is refused with not_a_file', async () => {
    await assert.rejects(readInputFile(dir), inputError('not_a_file', /is not a regular file \(it is a directory\)/));
  });

  let fifo: string | undefined;
  after(() => {
    // Release a reader that a broken implementation left waiting on the FIFO, so the test process can still exit.
    if (!fifo) return;
    try {
      fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // ENXIO: no reader is waiting, as it should be
    }
  });

  it('a FIFO is refused with not_a_file, without waiting for a writer', async function () {
    if (process.platform === 'win32') this.skip();
    fifo = path.join(dir, 'pipe.json');
    execFileSync('mkfifo', [fifo]);
    // Were the FIFO opened for reading, this would wait for a writer forever (mocha's timeout fails it).
    await assert.rejects(readInputFile(fifo), inputError('not_a_file', /FIFO/));
  });

  it('a device (/dev/null) is refused with not_a_file', async function () {
    if (!fs.existsSync('/dev/null')) this.skip();
    await assert.rejects(readInputFile('/dev/null'), inputError('not_a_file', /a device/));
  });

  it('a file larger than maxBytes is refused with too_large naming its size and the bound; one of exactly maxBytes is read', async () => {
    const file = path.join(dir, 'big.json');
    fs.writeFileSync(file, 'x'.repeat(101));
    await assert.rejects(
      readInputFile(file, { maxBytes: 100 }),
      inputError('too_large', /is too large: 101 bytes, above the bound of 100 bytes/),
    );
    fs.writeFileSync(file, 'x'.repeat(100));
    assert.equal((await readInputFile(file, { maxBytes: 100 })).length, 100);
  });

  it('the default bound of a workflow file is 16 MiB: one byte more is refused', async () => {
    assert.equal(MAX_WORKFLOW_BYTES, 16 * 1024 * 1024);
    const file = path.join(dir, 'huge.json');
    fs.writeFileSync(file, '');
    fs.truncateSync(file, MAX_WORKFLOW_BYTES + 1); // sparse: nothing is written
    await assert.rejects(
      readInputFile(file),
      inputError('too_large', /16 MiB \(16777217 bytes\), above the bound of 16 MiB \(16777216 bytes\)/),
    );
  });

  it('a file whose fstat size is below the bound but whose content is not (a growing file) is still bounded', async function () {
    // /proc files report size 0 but have content: the size check passes, the bounded read must catch it.
    const file = '/proc/self/maps';
    if (!fs.existsSync(file) || fs.statSync(file).size !== 0) this.skip();
    await assert.rejects(
      readInputFile(file, { maxBytes: 10 }),
      inputError('too_large', /too large: more than 10 bytes/),
    );
  });
});

describe('readWorkflowFile: the workflow file checks shared by the CLI and the extension', () => {
  const write = fileWriter('cc-wf-');
  const dir = (): string => write.dir();

  it('an API-format workflow in UTF-8 (with or without BOM) is read and parsed', async () => {
    const wf = invertWorkflow();
    assert.deepEqual(await readWorkflowFile(write('api.json', JSON.stringify(wf))), wf);
    assert.deepEqual(await readWorkflowFile(write('bom.json', '\ufeff' + JSON.stringify(wf))), wf);
  });

  it("a top-level $schema string (the editor's reference to the workflow schema) is dropped before anything is sent; the rest is unchanged", async () => {
    const wf = invertWorkflow();
    const withSchema = { $schema: 'comfy-workflow-schema://schemas/api-format.json', ...wf };
    assert.deepEqual(await readWorkflowFile(write('schema.json', JSON.stringify(withSchema))), wf);
  });

  it('a Latin-1 workflow is refused with not_utf8 instead of being submitted with replacement characters', async () => {
    const wf = invertWorkflow() as Record<string, { _meta?: { title: string } }>;
    wf['1']._meta = { title: 'café' };
    const file = write('latin1.json', Buffer.from(JSON.stringify(wf), 'latin1'));
    assert.match(fs.readFileSync(file, 'utf8'), /caf\ufffd/, 'a lenient read gives a replacement character');
    await assert.rejects(
      readWorkflowFile(file),
      inputError('not_utf8', /latin1\.json: the file is not UTF-8 \(invalid UTF-8 at byte \d+\): save it as UTF-8/),
    );
  });

  it('a UTF-16 workflow (as Windows tools save it) is refused with not_utf8, looks like UTF-16', async () => {
    await assert.rejects(
      readWorkflowFile(write('utf16.json', Buffer.from('\ufeff' + JSON.stringify(invertWorkflow()), 'utf16le'))),
      inputError('not_utf8', /looks like UTF-16/),
    );
  });

  it("the existing codes are kept: unreadable, bad_json (naming the file and the parser's message), workflow_format_ui, not_api_format", async () => {
    await assert.rejects(readWorkflowFile(path.join(dir(), 'none.json')), inputError('unreadable'));
    await assert.rejects(
      readWorkflowFile(write('bad.json', '{"1": {')),
      inputError('bad_json', /^bad\.json is not valid JSON \(.*JSON.*\)/),
    );
    await assert.rejects(
      readWorkflowFile(write('ui.json', JSON.stringify(uiWorkflowLegacy()))),
      inputError('workflow_format_ui'),
    );
    await assert.rejects(readWorkflowFile(write('other.json', '{"a": 1}')), inputError('not_api_format'));
  });

  it('a directory or a too-large file is refused before parsing (not_a_file, too_large)', async () => {
    await assert.rejects(readWorkflowFile(dir()), inputError('not_a_file'));
    await assert.rejects(
      readWorkflowFile(write('big-wf.json', JSON.stringify(invertWorkflow())), { maxBytes: 10 }),
      inputError('too_large'),
    );
  });
});
