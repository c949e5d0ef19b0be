/**
 * Files derived from server data stay where they belong (server data is untrusted), rules 1 and 2:
 * 1. one sanitizer (fileNames.ts `safeFileName`) makes every server-derived name a safe base name;
 * 2. the target is checked to be inside the real output folder; nothing is written through a symlink.
 * Against a hostile server on loopback (test/unit/httpServer.ts).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InputError } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { numberedName, pathInside, safeFileName } from '../../src/core/util';
import { job } from './builders';
import { Handler, assertSafe, output, sendJson, sendPaced, walk } from './hostile-files.fixtures';
import { useServerAndClient, type TestServer } from './httpServer';
import { tempDir } from './tmp';

describe('hostile files, rule 1: one sanitizer makes every server-derived name a safe base name', () => {
  const hostile: unknown[] = [
    '..',
    '.',
    '',
    null,
    undefined,
    42,
    '/',
    '\\',
    '../../x',
    'a/../../b',
    '..\\..\\c',
    '/etc/passwd',
    'C:\\Windows\\win.ini',
    'CON',
    'con.txt',
    'NUL.tar.gz',
    'com1',
    'LPT9.png',
    'COM¹',
    'CON .txt',
    'aux',
    'conin$',
    '\u001b[31mred',
    'a\u0000b',
    'tab\there',
    'del\u007f',
    'c1\u0085\u009b',
    'we<ird>:"na|me?*',
    'trailing. . .',
    'trailing   ',
    '...hidden',
    ' . lead',
    'gnp.\u202eexe',
    'lone\ud800surrogate',
    'n'.repeat(396) + '.png',
    'é'.repeat(200) + '.png',
    '😀'.repeat(100),
    '😀'.repeat(70) + '.png',
    'x'.repeat(300) + '.' + 'y'.repeat(100),
    'CON.' + 'a'.repeat(300),
  ];

  it('every hostile name gives a safe base name: no / or \\, never . or .., never empty, no control or Windows-forbidden character, no device name, no trailing dot or space, no leading dot, at most 255 UTF-8 bytes, idempotent', () => {
    for (const name of hostile) assertSafe(safeFileName(name, 'fallback'), name);
  });

  it('only the last path segment of any platform is kept: ../../x is x, a/../../b is b, ..\\..\\c is c, /etc/passwd is passwd', () => {
    assert.equal(safeFileName('../../x', 'f'), 'x');
    assert.equal(safeFileName('a/../../b', 'f'), 'b');
    assert.equal(safeFileName('..\\..\\c', 'f'), 'c');
    assert.equal(safeFileName('/etc/passwd', 'f'), 'passwd');
    assert.equal(safeFileName('inputs/photo.png', 'f'), 'photo.png');
  });

  it('control characters (C0, DEL, C1), Windows-forbidden characters and bidirectional controls become _', () => {
    assert.equal(safeFileName('\u001b[31mred', 'f'), '_[31mred');
    assert.equal(safeFileName('a\u0000b\u007fc\u0085d\u009fe', 'f'), 'a_b_c_d_e');
    assert.equal(safeFileName('a<b>c:d"e|f?g*h', 'f'), 'a_b_c_d_e_f_g_h');
    assert.equal(safeFileName('gnp.\u202eexe', 'f'), 'gnp._exe');
  });

  it('Windows device names, in any case and with any extension (CON, con.txt, NUL.tar.gz, COM1, LPT9, COM¹), get a leading _; look-alikes are kept', () => {
    for (const name of [
      'CON',
      'con.txt',
      'NUL.tar.gz',
      'com1',
      'LPT9.png',
      'COM¹',
      'Aux',
      'prn.',
      'CON .txt',
      'CONOUT$',
    ]) {
      assert.equal(safeFileName(name, 'f'), `_${name.replace(/\.$/, '')}`, name);
    }
    for (const name of ['CONSOLE.txt', 'com10', 'nul_', 'auxiliary.png']) assert.equal(safeFileName(name, 'f'), name);
  });

  it('leading dots and white space go (no hidden files); trailing dots and spaces go (Windows drops them)', () => {
    assert.equal(safeFileName('...hidden', 'f'), 'hidden');
    assert.equal(safeFileName('.env', 'f'), 'env');
    assert.equal(safeFileName('name. . .', 'f'), 'name');
    assert.equal(safeFileName('  name  ', 'f'), 'name');
  });

  it('a name over 255 UTF-8 bytes is shortened on a code-point boundary, its extension kept', () => {
    const ascii = safeFileName('n'.repeat(396) + '.png', 'f');
    assert.equal(ascii, 'n'.repeat(251) + '.png');
    const accented = safeFileName('é'.repeat(200) + '.png', 'f'); // 2 bytes each
    assert.equal(accented, 'é'.repeat(125) + '.png', '125 × 2 + 4 = 254 bytes: a 126th é would not fit');
    const emoji = safeFileName('😀'.repeat(100), 'f'); // 4 bytes and 2 UTF-16 units each
    assert.equal(emoji, '😀'.repeat(63), '63 × 4 = 252 bytes, no half emoji');
    assert.equal(
      numberedName(ascii, 12),
      'n'.repeat(248) + '-12.png',
      'a numbered candidate stays within 255 bytes too',
    );
    assert.equal(Buffer.byteLength(numberedName(emoji, 3), 'utf8') <= 255, true);
  });

  it('the fallback goes through the same sanitizing (a fallback of ../../x escapes nothing), and an unusable fallback gives output', () => {
    assert.equal(safeFileName('..', '../../x'), 'x');
    assert.equal(safeFileName(null, 'a/../../b.png'), 'b.png');
    assert.equal(safeFileName('', '..'), 'output');
    assert.equal(safeFileName(undefined, undefined), 'output');
    assert.equal(safeFileName('.', '\u0000'), '_', 'a control character alone becomes _');
  });
});

describe('hostile files, rule 2: the target is inside the real output folder; nothing is written through a symlink', () => {
  it('pathInside refuses a name that would not be a direct child of the folder with InputError unsafe_path naming the folder', async () => {
    const dir = tempDir('cc-inside-');
    const real = fs.realpathSync(dir);
    for (const name of ['../x', '..', '.', '', 'a/b', 'a\\b', '/etc/passwd', `..${path.sep}..${path.sep}x`]) {
      await assert.rejects(
        pathInside(dir, name),
        (e: unknown) => InputError.is(e) && e.code === 'unsafe_path' && e.message.includes(real),
        JSON.stringify(name),
      );
    }
    assert.equal(await pathInside(dir, 'ok.png'), path.join(real, 'ok.png'));
  });

  it('a folder reached through a symlink is checked at its real place (realpath first)', async () => {
    const root = tempDir('cc-inside-link-');
    const real = path.join(root, 'real');
    fs.mkdirSync(real);
    const link = path.join(root, 'link');
    fs.symlinkSync(real, link, 'dir');
    assert.equal(await pathInside(link, 'a.png'), path.join(fs.realpathSync(real), 'a.png'));
  });

  describe('against a hostile server', () => {
    let server: TestServer;
    let route: Handler = (_req, res) => res.writeHead(500).end();
    let client: V2Client;
    useServerAndClient(
      (req, res) => route(req, res),
      (s, c) => ((server = s), (client = c)),
    );

    /** Serves the job `body` at its self link and each output's bytes at `/content/<n>`. */
    function serveJob(
      body: Record<string, unknown>,
      contents: Buffer[],
      headers: Record<number, Record<string, string>> = {},
    ): void {
      route = (req, res) => {
        const url = new URL(req.url ?? '/', server.origin);
        if (url.pathname === `/api/v2/jobs/${String(body.id)}`) return sendJson(res, body);
        const n = /^\/content\/(\d+)$/.exec(url.pathname)?.[1];
        if (n !== undefined && contents[Number(n)])
          return sendPaced(res, contents[Number(n)], 4096, headers[Number(n)]);
        res.writeHead(404).end();
      };
    }

    it('a job whose outputs are named .., ../../x, a/../../b, ..\\..\\c, CON, an escape sequence, 400 bytes, empty or null (ids ../../x and worse) writes every file inside the folder, each under its safe name, with its own bytes', async () => {
      const root = tempDir('cc-hostile-job-');
      const out = path.join(root, 'deep', 'er', 'out');
      const long = 'n'.repeat(396) + '.png';
      const items = [
        output('../../x', '..', '/content/0'),
        output('o1', '../../x', '/content/1'),
        output('o2', 'a/../../b', '/content/2'),
        output('o3', '..\\..\\c', '/content/3'),
        output('o4', 'CON', '/content/4'),
        output('o5', '\u001b[31mred', '/content/5'),
        output('o6', long, '/content/6'),
        output('a/../../empty', '', '/content/7'),
        output('..\\..\\nul.txt', null, '/content/8'),
        output('..', null, '/content/9'),
        output('../../cd', null, '/content/10'),
      ];
      const expected = [
        'x',
        'x-1',
        'b',
        'c',
        '_CON',
        '_[31mred',
        'n'.repeat(251) + '.png',
        'empty',
        '_nul.txt',
        'output',
        'résumé.txt',
      ];
      const contents = items.map((_, i) => Buffer.from(`bytes of output ${i} `.repeat(50)));
      const body = job('succeeded', { outputs: items });
      // filename* wins over filename, and both are server data: the sanitizer takes the last segment.
      serveJob(body, contents, {
        10: {
          'content-disposition': `attachment; filename="../../evil.sh"; filename*=UTF-8''..%2F..%2Fr%C3%A9sum%C3%A9.txt`,
        },
      });
      const snapshot = await client.getJob(String(body.id));
      const files = await client.downloadOutputs(snapshot, out);

      assert.deepEqual(
        files.map((f) => path.basename(f.path)),
        expected,
      );
      files.forEach((f, i) => {
        assert.equal(path.dirname(f.path), path.resolve(out), `output ${i} is a direct child of the folder`);
        assert.deepEqual(fs.readFileSync(f.path), contents[i], `output ${i} holds its own bytes`);
      });
      assert.deepEqual(
        walk(root).sort(),
        expected.map((n) => path.join('deep', 'er', 'out', n)).sort(),
        'nothing anywhere else, no partial file left',
      );
    });

    it("a symlink at an output's name is never written through (the next free name is taken), and the file it points to is untouched", async () => {
      const root = tempDir('cc-hostile-link-');
      const out = path.join(root, 'out');
      fs.mkdirSync(out);
      const victim = path.join(root, 'victim.png');
      fs.writeFileSync(victim, "the user's own file");
      fs.symlinkSync(victim, path.join(out, 'taken.png'));
      fs.symlinkSync(path.join(root, 'nowhere.png'), path.join(out, 'dangling.png')); // a link to nothing yet
      const contents = [Buffer.from('first'), Buffer.from('second')];
      const body = job('succeeded', {
        outputs: [output('l0', 'taken.png', '/content/0'), output('l1', 'dangling.png', '/content/1')],
      });
      serveJob(body, contents);
      const files = await client.downloadOutputs(await client.getJob(String(body.id)), out);
      assert.deepEqual(
        files.map((f) => path.basename(f.path)),
        ['taken-1.png', 'dangling-1.png'],
      );
      assert.equal(fs.readFileSync(victim, 'utf8'), "the user's own file");
      assert.ok(!fs.existsSync(path.join(root, 'nowhere.png')), 'nothing was created through the dangling link');
      assert.ok(fs.lstatSync(path.join(out, 'taken.png')).isSymbolicLink());
      assert.deepEqual(fs.readFileSync(files[0].path), contents[0]);
      assert.deepEqual(fs.readFileSync(files[1].path), contents[1]);
    });
  });
});
