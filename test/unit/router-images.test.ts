// Images in a model's output (images in it, base64 or URLs, are offered for preview and
// saving): the vscode-free finder (src/core/outputImages.ts), by the rules it implements.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  findOutputImages,
  imageExtension,
  imageFileName,
  imageFormatOf,
  jsonPathText,
  writeFileAtomically,
  type OutputImage,
} from '../../src/core/router';
import { tempDir } from './tmp';
import { solidImage } from '../../src/emulator/engine/image';
import { encodePng } from '../../src/emulator/engine/png';

const png = encodePng(solidImage(4, 3, 0x336699));
const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(80, 7)]);
const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(80, 1)]);
const webp = Buffer.concat([
  Buffer.from('RIFF', 'latin1'),
  Buffer.from([0x50, 0, 0, 0]),
  Buffer.from('WEBPVP8 ', 'latin1'),
  Buffer.alloc(80, 2),
]);
const notImage = Buffer.alloc(120, 0x41);

const paths = (found: OutputImage[]): string[] => found.map((f) => jsonPathText(f.path));

describe('router output images', () => {
  it('rule: a bare base64 string is an image when its decoded bytes start with a PNG, JPEG, GIF or WebP signature, whatever its key', () => {
    const out = JSON.stringify({
      a: png.toString('base64'),
      b: [jpeg.toString('base64'), { c: gif.toString('base64') }],
      'odd key': webp.toString('base64'),
      text: notImage.toString('base64'),
    });
    const found = findOutputImages(out);
    assert.deepEqual(paths(found), ['a', 'b[0]', 'b[1].c', '["odd key"]']);
    assert.deepEqual(
      found.map((f) => (f.kind === 'base64' ? f.format : f.kind)),
      ['png', 'jpeg', 'gif', 'webp'],
    );
    const first = found[0]!;
    assert.ok(first.kind === 'base64' && first.bytes.equals(png) && !first.dataUrl);
  });

  it('rule: a key named like an image does not make a non-image base64 string an image (the signature decides)', () => {
    assert.deepEqual(
      findOutputImages(JSON.stringify({ b64_json: notImage.toString('base64'), image: 'aGVsbG8gd29ybGQ=' })),
      [],
    );
  });

  it('rule: a data:image/…;base64, URL is an image when its bytes have a signature; its claimed type is not trusted', () => {
    const found = findOutputImages(
      JSON.stringify({
        data: [
          { url: `data:image/jpeg;base64,${png.toString('base64')}` },
          { url: `data:image/png;base64,${notImage.toString('base64')}` },
        ],
      }),
    );
    assert.equal(found.length, 1);
    const image = found[0]!;
    assert.ok(image.kind === 'base64' && image.dataUrl && image.format === 'png', JSON.stringify(image));
    assert.equal(jsonPathText(image.path), 'data[0].url');
  });

  it('rule: an http(s) URL is an image when its path ends in an image extension or it stands under a key like url / image_url; never fetched', () => {
    const out = JSON.stringify({
      images: [{ url: 'https://cdn.example/x/render' }, { link: 'https://cdn.example/a.PNG?sig=1' }],
      image_url: 'http://files.example/1',
      page: 'https://example.com/about',
      local: 'file:///etc/passwd.png',
      js: 'javascript:alert(1)//.png',
    });
    const found = findOutputImages(out);
    assert.deepEqual(paths(found), ['images[0].url', 'images[1].link', 'image_url']);
    assert.deepEqual(
      found.map((f) => (f.kind === 'url' ? f.url : '')),
      ['https://cdn.example/x/render', 'https://cdn.example/a.PNG?sig=1', 'http://files.example/1'],
    );
  });

  it('rule: decoding is bounded: an image larger than maxImageBytes is skipped, and at most maxImages are reported', () => {
    const big = encodePng(solidImage(200, 200, 0xff0000));
    assert.equal(findOutputImages(JSON.stringify({ big: big.toString('base64') }), { maxImageBytes: 100 }).length, 0);
    assert.equal(findOutputImages(JSON.stringify({ big: big.toString('base64') })).length, 1);
    const many = JSON.stringify(Array.from({ length: 10 }, () => png.toString('base64')));
    assert.equal(findOutputImages(many, { maxImages: 3 }).length, 3);
  });

  it('rule: output that is not JSON, or nested deeper than the bound, gives no image and never throws', () => {
    assert.deepEqual(findOutputImages('not json {'), []);
    assert.deepEqual(findOutputImages(Buffer.from([0xff, 0xfe, 0x00])), []);
    const deep = '['.repeat(100) + JSON.stringify(png.toString('base64')) + ']'.repeat(100);
    assert.deepEqual(findOutputImages(deep), []);
    assert.equal(findOutputImages(deep, { maxDepth: 200 }).length, 1);
    assert.deepEqual(findOutputImages('['.repeat(200_000) + ']'.repeat(200_000)), []);
  });

  it('rule: the bytes given are only read: the output buffer is unchanged by the search', () => {
    const text = `{"n": 12345678901234567890, "img": "${png.toString('base64')}"}`;
    const bytes = Buffer.from(text);
    const copy = Buffer.from(bytes);
    assert.equal(findOutputImages(bytes).length, 1);
    assert.ok(bytes.equals(copy));
  });

  it('signatures and file extensions of the recognised formats', () => {
    assert.deepEqual([png, jpeg, gif, webp, notImage].map(imageFormatOf), ['png', 'jpeg', 'gif', 'webp', undefined]);
    assert.deepEqual((['png', 'jpeg', 'gif', 'webp'] as const).map(imageExtension), ['png', 'jpg', 'gif', 'webp']);
    assert.equal(jsonPathText([]), '(root)');
  });

  it('rule: the default file name comes from the model id and the index (1-based), one plain file name whatever the id holds', () => {
    assert.equal(imageFileName('emulator/solid-png', 0, 'png'), 'emulator-solid-png-1.png');
    assert.equal(imageFileName('acme/flux/pro', 2, 'jpeg'), 'acme-flux-pro-3.jpg');
    assert.equal(imageFileName('../../etc/x\\y', 0, 'gif'), 'etc-x-y-1.gif');
    assert.equal(imageFileName('', 0, 'webp'), 'model-1.webp');
  });

  it('rule: a saved image is written atomically: the whole bytes at the target, no temporary file left, even when it replaces a file', async () => {
    const dir = tempDir('router-images-');
    const target = path.join(dir, 'out.png');
    fs.writeFileSync(target, 'old');
    await writeFileAtomically(target, png);
    assert.ok(fs.readFileSync(target).equals(png));
    assert.deepEqual(fs.readdirSync(dir), ['out.png']);
    await assert.rejects(
      writeFileAtomically(path.join(dir, 'missing', 'x.png'), png),
      (e: NodeJS.ErrnoException) => e.code === 'ENOENT',
    );
    assert.deepEqual(fs.readdirSync(dir), ['out.png']);
  });
});
