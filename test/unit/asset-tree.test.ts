/**
 * The Assets view's model (core/views/assetTree.ts): items from remembered assets, their
 * words (size, type, short hash, dedup hit), flag-style context values, stable ids, hostile server strings in the
 * tooltip, and the `core/ASSET` reference copied for a workflow.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assetKey, assetReferenceJson, buildAssetTree, presentAsset, shortHash } from '../../src/core/views';
import { humanSize, untranslated, type Translate } from '../../src/core/util';
import type { AssetRecord } from '../../src/core/state';

const HASH = `blake3:${'0123456789abcdef'.repeat(4)}`;
const t = untranslated;

function upload(extra: Partial<AssetRecord> = {}): AssetRecord {
  return {
    baseUrl: 'http://127.0.0.1:8189',
    assetId: '6f1c2d3e-0000-4000-8000-000000000001',
    origin: 'upload',
    fileName: 'photo.png',
    hash: HASH,
    sizeBytes: 1536,
    contentType: 'image/png',
    dedup: false,
    localPath: '/home/me/photo.png',
    recordedAt: '2026-11-22T10:00:00.000Z',
    client: 'vscode',
    ...extra,
  };
}

describe('asset tree: items from remembered assets', () => {
  it('an uploaded asset shows its file name, then size in human units, type and the first 12 hex of its hash', () => {
    const item = presentAsset(upload(), { t });
    assert.equal(item.label, 'photo.png');
    assert.equal(item.description, '1.5 KB · image/png · 0123456789ab');
    assert.equal(item.icon.id, 'cloud-upload');
  });

  it('a dedup hit says so: "already there: no bytes sent", with its own icon and flag', () => {
    const item = presentAsset(upload({ dedup: true }), { t });
    assert.equal(item.description, 'already there: no bytes sent · 1.5 KB · image/png · 0123456789ab');
    assert.equal(item.icon.id, 'cloud');
    assert.match(item.contextValue, /^asset:upload:dedup(:|$)/);
    assert.match(item.tooltip, /already there: no bytes sent/);
  });

  it('an output shows as an output (media icon for an image), with its job in the tooltip', () => {
    const item = presentAsset(
      upload({
        origin: 'output',
        dedup: undefined,
        jobId: 'job-42',
        localPath: undefined,
        fileName: 'invert_00001_.png',
      }),
      { t },
    );
    assert.equal(item.contextValue, 'asset:output:hash:png');
    assert.equal(item.icon.id, 'file-media');
    assert.match(item.tooltip, /Output of job: `job-42`/);
  });

  it('context values are flags: origin, dedup, hash, local file; menus match them by regex', () => {
    assert.equal(presentAsset(upload(), { t }).contextValue, 'asset:upload:hash:local:png');
    assert.equal(
      presentAsset(upload({ hash: null, localPath: undefined, contentType: 'text/plain', fileName: 'notes.txt' }), {
        t,
      }).contextValue,
      'asset:upload',
    );
    assert.equal(presentAsset(upload({ dedup: true }), { t }).contextValue, 'asset:upload:dedup:hash:local:png');
  });

  it("a PNG asset is flagged `png` (its workflow can be opened) and the image commands' menus match only it", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: Record<string, { command: string; when?: string }[]> };
    };
    const png = presentAsset(upload({ origin: 'output', localPath: undefined }), { t }).contextValue;
    const text = presentAsset(upload({ contentType: 'text/plain', fileName: 'notes.txt' }), { t }).contextValue;
    for (const command of ['comfyCloud.openWorkflowFromImage', 'comfyCloud.runAgainFromImage']) {
      const item = pkg.contributes.menus['view/item/context']!.find(
        (m) => m.command === command && m.when?.includes('view == comfyCloud.assets'),
      );
      assert.ok(item?.when, `no Assets view menu entry for ${command}`);
      const when = new RegExp(/viewItem =~ \/(.+)\/$/.exec(item.when)![1]!);
      assert.match(png, when);
      assert.doesNotMatch(text, when);
    }
  });

  it('ids are stable: base URL and asset id, the same whatever else changes; two servers never share one', () => {
    const a = presentAsset(upload(), { t });
    const b = presentAsset(
      upload({ sizeBytes: 9, fileName: 'renamed.png', dedup: true, recordedAt: '2030-01-01T00:00:00Z' }),
      { t },
    );
    assert.equal(a.id, b.id);
    assert.equal(a.id, assetKey(upload()));
    assert.notEqual(presentAsset(upload({ baseUrl: 'http://other' }), { t }).id, a.id);
  });

  it("buildAssetTree keeps the store's order (newest first) and makes one item per record", () => {
    const items = buildAssetTree([upload({ assetId: 'b' }), upload({ assetId: 'a' })], { t });
    assert.deepEqual(
      items.map((i) => i.id.split(' asset:')[1]),
      ['b', 'a'],
    );
  });

  it('unknown size, type or hash show as nothing in the description and "not yet"/"not given" in the tooltip; no name shows the short id', () => {
    const item = presentAsset(upload({ sizeBytes: null, contentType: null, hash: null, fileName: undefined }), { t });
    assert.equal(item.label, 'asset 6f1c2d3e');
    assert.equal(item.description, '');
    assert.match(item.tooltip, /- Hash: not yet/);
    assert.match(item.tooltip, /- Size: not yet/);
    assert.match(item.tooltip, /- Type: not given/);
  });

  it('every word goes through the Translate function', () => {
    const shout: Translate = (m, ...a) => untranslated(m, ...a).toUpperCase();
    const item = presentAsset(upload({ dedup: true }), { t: shout });
    assert.match(item.description, /ALREADY THERE: NO BYTES SENT/);
    assert.match(item.tooltip, /- ASSET ID:/);
  });
});

describe('asset tree: sizes and hashes', () => {
  it('sizes in human units, base 1024', () => {
    assert.deepEqual(
      [0, 512, 1024, 1536, 10 * 1024, 5 * 1024 * 1024, 3.25 * 1024 ** 3].map((n) => humanSize(n, t)),
      ['0 B', '512 B', '1 KB', '1.5 KB', '10 KB', '5 MB', '3.3 GB'],
    );
    assert.equal(humanSize(null, t), '');
    assert.equal(humanSize(-1, t), '');
  });

  it('the short hash is the first 12 hex digits of the blake3 digest', () => {
    assert.equal(shortHash(HASH), '0123456789ab');
    assert.equal(shortHash(null), '');
  });
});

describe('asset tree: hostile server strings', () => {
  const hostile = upload({
    assetId: 'id\u001b[2J[click](https://evil.example)\u202e',
    fileName: '**bold**<img src=x onerror=alert(1)>\u202egnp.exe',
    contentType: 'image/png\n- Forged: row',
    hash: 'blake3:`code`\u0007',
    jobId: '[x](command:workbench.action.quit)',
    origin: 'output',
  });

  it('the tooltip has no raw control or bidi character, no Markdown link, image, HTML or emphasis from the server', () => {
    const item = presentAsset(hostile, { t });
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(item.tooltip, /[\u0000-\u0009\u000b-\u001f\u007f\u202a-\u202e]/);
    // A code span shows its text literally; a server string in one cannot close it (its backticks are replaced).
    const outsideCode = item.tooltip.replace(/`[^`\n]*`/g, '');
    assert.equal((item.tooltip.match(/`/g) ?? []).length % 2, 0, 'a code span was left open');
    assert.doesNotMatch(outsideCode, /[^\\]\]\(/, 'a Markdown link survived');
    assert.doesNotMatch(outsideCode, /<img/, 'HTML survived');
    assert.doesNotMatch(item.tooltip, /(^|[^\\])\*\*bold/, 'emphasis survived');
    assert.doesNotMatch(item.tooltip, /\n- Forged/, 'a server string forged a tooltip row');
    assert.match(item.tooltip, /\\u202e/);
  });

  it('the label and description are neutralized (one line, bidi escaped)', () => {
    const item = presentAsset(hostile, { t });
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(item.label + item.description, /[\u0000-\u001f\u202a-\u202e]/);
    assert.match(item.label, /\\u202egnp\.exe$/);
  });

  it('the injected cleaner is applied to every server string (the extension redacts the API key there)', () => {
    const secret = 'sk-secret-0123456789';
    const item = presentAsset(
      upload({ fileName: `${secret}.png`, contentType: secret, baseUrl: `http://x/${secret}` }),
      { t, clean: (s) => s.split(secret).join('«redacted»') },
    );
    // The id is not shown (it only keeps the selection); everything shown is cleaned.
    assert.doesNotMatch(JSON.stringify({ ...item, id: '' }), /sk-secret/);
  });
});

describe('asset tree: the core/ASSET reference', () => {
  it('is the JSON a workflow input needs: {"__type":"core/ASSET","info":{"id","hash","file_path"}}', () => {
    assert.deepEqual(JSON.parse(assetReferenceJson(upload())), {
      __type: 'core/ASSET',
      info: { id: upload().assetId, hash: HASH, file_path: 'photo.png' },
    });
  });

  it('leaves out an unknown hash or name (info.id is what counts)', () => {
    assert.deepEqual(JSON.parse(assetReferenceJson(upload({ hash: null, fileName: undefined }))), {
      __type: 'core/ASSET',
      info: { id: upload().assetId },
    });
  });

  it('writes bidi and invisible characters as \\u escapes: nothing hidden is pasted, and JSON reads back the exact values', () => {
    const name = 'a\u202eb\u200bc\u0000.png';
    const text = assetReferenceJson(upload({ fileName: name }));
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(text, /[\u0000-\u001f\u200b\u202e]/);
    assert.equal((JSON.parse(text) as { info: { file_path: string } }).info.file_path, name);
  });
});
