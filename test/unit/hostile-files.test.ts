/**
 * Files derived from server data stay where they belong, and concurrent downloads never interfere (server data is
 * untrusted: a file name from it goes through one sanitizer). Against hostile servers on loopback
 * (test/unit/httpServer.ts) and the in-process emulator:
 * 1. one sanitizer (fileNames.ts `safeFileName`) makes every server-derived name a safe base name;
 * 2. the target is checked to be inside the real output folder; nothing is written through a symlink;
 * 3. downloads into one folder at once never share a partial file, never swap bytes, never fail because of each other;
 * 4. a bad redirect (not http(s), a loop, too many hops) is a typed error that says where it pointed, redacted;
 * 5. downloadAsset into a folder names the file from `file_path`, else Content-Disposition, else the id;
 * 6. a refused or failed download never leaves a complete-looking file; a broken body keeps its `.part`.
 * No sleeps as synchronisation: the servers pace bodies with setImmediate, every wait is on a request or a promise.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { V2Client, type DownloadedOutput } from '../../src/core/v2/client';
import { ComfyError, InputError } from '../../src/core';
import { MAX_FILE_NAME_BYTES, hashBytes, numberedName, pathInside, safeFileName } from '../../src/core/util';
import { Transport } from '../../src/core/http';
import { downloadIntoFolder, downloadToFile, partialPathsIn } from '../../src/core/http/download';
import { invertWorkflow, job } from './builders';
import { assertSolid, cliRunner, useEmulator } from './harness';
import { startServer, useServerAndClient, type TestServer } from './httpServer';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Every file (not folder) under `root`, as paths relative to it. */
function walk(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...walk(root, child));
    else out.push(child);
  }
  return out;
}

/** 200 with `bytes` written in `chunk`-byte pieces, one per turn of the event loop, so concurrent bodies interleave. */
function sendPaced(res: http.ServerResponse, bytes: Buffer, chunk = 512, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': String(bytes.length),
    ...headers,
  });
  let at = 0;
  const next = (): void => {
    if (at >= bytes.length) {
      res.end();
      return;
    }
    res.write(bytes.subarray(at, (at += chunk)));
    setImmediate(next);
  };
  next();
}

function sendJson(res: http.ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A job output item as a server sends it (Job and Asset API v2, Job `outputs[]`; fields from public sources). */
function output(
  id: string,
  name: string | null,
  url: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    node_id: '9',
    name,
    type: 'file',
    content_type: 'application/octet-stream',
    size_bytes: 0,
    hash: null,
    url,
    url_expires_at: null,
    ...overrides,
  };
}

/** True when `name` holds a control character (C0, DEL, C1). */
function hasControl(name: string): boolean {
  return [...name].some((ch) => {
    const c = ch.codePointAt(0)!;
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
  });
}

/** Asserts every property of a safe base name (one sanitizer for every name from server data). */
function assertSafe(name: string, from: unknown): void {
  const what = `${JSON.stringify(from)} → ${JSON.stringify(name)}`;
  assert.ok(name.length > 0, `empty: ${what}`);
  assert.ok(!/[\\/]/.test(name), `separator: ${what}`);
  assert.ok(name !== '.' && name !== '..', `dot name: ${what}`);
  assert.ok(!name.startsWith('.'), `hidden: ${what}`);
  assert.ok(!/[. ]$/.test(name), `trailing dot or space: ${what}`);
  assert.ok(!hasControl(name), `control character: ${what}`);
  assert.ok(!/[<>:"|?*]/.test(name), `Windows-forbidden character: ${what}`);
  assert.ok(!/^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]) *(\.|$)/i.test(name), `Windows device name: ${what}`);
  assert.ok(Buffer.byteLength(name, 'utf8') <= MAX_FILE_NAME_BYTES, `longer than 255 bytes: ${what}`);
  assert.equal(Buffer.from(name, 'utf8').toString('utf8'), name, `not whole UTF-8 (a split character): ${what}`);
  assert.equal(safeFileName(name, 'unused'), name, `not idempotent: ${what}`);
}

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

describe('hostile files, rule 3: concurrent downloads into one folder never share a partial file or swap bytes', () => {
  let server: TestServer;
  let route: Handler = (_req, res) => res.writeHead(500).end();
  let client: V2Client;
  useServerAndClient(
    (req, res) => route(req, res),
    (s, c) => ((server = s), (client = c)),
  );

  it("2 jobs × 10 parallel downloadOutputs into one folder, outputs with the same name and hash: null, bodies interleaved in small chunks: every path holds its own job's bytes, no .part left, no call fails", async () => {
    const bytes = { a: randomBytes(64 * 1024), b: randomBytes(64 * 1024) };
    const jobs = {
      a: job('succeeded', {
        outputs: [output('out-a', 'same.png', '/content/a', { content_type: 'image/png', hash: null })],
      }),
      b: job('succeeded', {
        outputs: [output('out-b', 'same.png', '/content/b', { content_type: 'image/png', hash: null })],
      }),
    };
    route = (req, res) => {
      const url = new URL(req.url ?? '/', server.origin);
      for (const k of ['a', 'b'] as const) {
        if (url.pathname === `/api/v2/jobs/${String(jobs[k].id)}`) return sendJson(res, jobs[k]);
        if (url.pathname === `/content/${k}`) return sendPaced(res, bytes[k], 256);
      }
      res.writeHead(404).end();
    };
    const snapshots = { a: await client.getJob(String(jobs.a.id)), b: await client.getJob(String(jobs.b.id)) };
    const out = tempDir('cc-concurrent-');
    const runs: { job: 'a' | 'b'; files: Promise<DownloadedOutput[]> }[] = [];
    for (let i = 0; i < 10; i++) {
      for (const k of ['a', 'b'] as const) runs.push({ job: k, files: client.downloadOutputs(snapshots[k], out) });
    }
    const settled = await Promise.allSettled(runs.map((r) => r.files));
    const failures = settled
      .filter((s) => s.status === 'rejected')
      .map((s) => String((s as PromiseRejectedResult).reason));
    assert.deepEqual(failures, [], 'no call fails');
    const paths: string[] = [];
    settled.forEach((s, i) => {
      const files = (s as PromiseFulfilledResult<DownloadedOutput[]>).value;
      assert.equal(files.length, 1);
      assert.deepEqual(
        fs.readFileSync(files[0].path),
        bytes[runs[i].job],
        `run ${i} (job ${runs[i].job}): ${files[0].path} holds its own job's bytes`,
      );
      paths.push(files[0].path);
    });
    assert.equal(new Set(paths).size, 20, 'twenty distinct files');
    const names = fs.readdirSync(out).sort();
    assert.deepEqual(
      names,
      paths.map((p) => path.basename(p)).sort(),
      'only the twenty files: no .part, .part.json or lock left',
    );
    assert.ok(names.includes('same.png') && names.includes('same-19.png'), names.join(' '));
  });

  it("a download whose content's partial file is locked by another download does not resume or touch it: it downloads into a part of its own and succeeds", async () => {
    const bytes = randomBytes(50_000);
    route = (req, res) => {
      const start = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1];
      if (start === undefined) return sendPaced(res, bytes, 8192);
      res.writeHead(206, {
        'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        'content-length': String(bytes.length - Number(start)),
      });
      res.end(bytes.subarray(Number(start)));
    };
    const dir = tempDir('cc-locked-');
    const { part, note, lock } = partialPathsIn(fs.realpathSync(dir), 'asset-L');
    const kept = bytes.subarray(0, 10_000);
    fs.writeFileSync(part, kept);
    fs.writeFileSync(note, JSON.stringify({ key: 'asset-L' }));
    const release = await lockfile.lock(part, { realpath: false, lockfilePath: lock }); // the other download
    const transport = new Transport({ baseUrl: server.origin });
    try {
      server.seen.length = 0;
      const done = await downloadToFile(transport, transport.url('/content'), path.join(dir, 'l.bin'), {
        resumeKey: 'asset-L',
      });
      assert.equal(server.seen[0].headers.range, undefined, 'no resume from a part another download holds');
      assert.equal(done.resumedFrom, 0);
      assert.deepEqual(fs.readFileSync(done.path), bytes);
      assert.deepEqual(fs.readFileSync(part), kept, "the other download's part is untouched");
      assert.deepEqual(
        fs.readdirSync(dir).sort(),
        ['l.bin', path.basename(part), path.basename(note), path.basename(lock)].sort(),
        'its own part is gone',
      );
    } finally {
      await release();
      await transport.close();
    }
    // Once the other download let go (or crashed: a stale lock is taken over), the part is resumed.
    const stale = Date.now() / 1000 - 120;
    fs.mkdirSync(lock);
    fs.utimesSync(lock, stale, stale);
    const again = new Transport({ baseUrl: server.origin });
    try {
      server.seen.length = 0;
      const done = await downloadToFile(again, again.url('/content'), path.join(dir, 'm.bin'), {
        resumeKey: 'asset-L',
      });
      assert.equal(
        server.seen[0].headers.range,
        'bytes=10000-',
        'a stale lock (a crashed download) does not block the resume',
      );
      assert.deepEqual(fs.readFileSync(done.path), bytes);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['l.bin', 'm.bin']);
    } finally {
      await again.close();
    }
  });

  it('two outputs of different jobs with the same name keep different partial files (named for the content, not the target)', () => {
    const dir = tempDir('cc-partnames-');
    const a = partialPathsIn(dir, 'output:job-a:out-1');
    const b = partialPathsIn(dir, 'output:job-b:out-1');
    assert.notEqual(a.part, b.part);
    assert.match(path.basename(a.part), /^\.[0-9a-f]{16}\.part$/);
    assert.equal(a.note, `${a.part}.json`);
  });

  describe('the CLI: two `submit --wait --out same/` at once', () => {
    const emu = useEmulator();
    it("both succeed; their files differ in name and each holds its own job's image", async () => {
      const dir = tempDir('cc-cli-concurrent-');
      const cli = cliRunner(path.join(dir, 'state'));
      const out = path.join(dir, 'same');
      // The same prefix (so the same output name) and different colours (so different bytes): red and blue, inverted.
      const red = path.join(dir, 'red.json');
      const blue = path.join(dir, 'blue.json');
      fs.writeFileSync(red, JSON.stringify(invertWorkflow({ color: 0xff0000, prefix: 'same' })));
      fs.writeFileSync(blue, JSON.stringify(invertWorkflow({ color: 0x0000ff, prefix: 'same' })));
      const [r, b] = await Promise.all([
        cli(['--base-url', emu().baseUrl, 'submit', red, '--wait', '--out', out, '--quiet']),
        cli(['--base-url', emu().baseUrl, 'submit', blue, '--wait', '--out', out, '--quiet']),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(b.code, 0, b.stderr);
      // stdout: the job id, then the files written.
      const [redFile, blueFile] = [r, b].map((run) => run.stdout.trim().split('\n').slice(1));
      assert.equal(redFile.length, 1, r.stdout);
      assert.equal(blueFile.length, 1, b.stdout);
      assert.notEqual(redFile[0], blueFile[0]);
      assert.equal(
        path.basename(redFile[0]).replace(/-1(?=\.png$)/, ''),
        path.basename(blueFile[0]).replace(/-1(?=\.png$)/, ''),
        'the same name, one of them numbered',
      );
      assertSolid(fs.readFileSync(redFile[0]), 64, 64, [0, 255, 255]);
      assertSolid(fs.readFileSync(blueFile[0]), 64, 64, [255, 255, 0]);
      assert.deepEqual(
        fs.readdirSync(out).sort(),
        [path.basename(redFile[0]), path.basename(blueFile[0])].sort(),
        'no partial file left',
      );
    });
  });
});

describe('hostile files, rule 3: two CLI processes at once, outputs of the same name with hash: null', () => {
  // The self-hosted companion answers outputs with `hash: null`: nothing verifies the bytes, so a swap would go
  // unnoticed. Each job's output is 256 KiB of its own random bytes. The server holds each download until both
  // processes are downloading, then sends both bodies in 4 KiB pieces, so the two downloads overlap whatever the
  // processes' start-up times.
  const PROCESSES = 2;
  const jobs = new Map<string, Record<string, unknown>>();
  const contents = new Map<string, Buffer>();
  const held: (() => void)[] = [];
  let server: TestServer;
  before(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', server.origin);
      if (req.method === 'POST' && url.pathname === '/api/v2/jobs') {
        req.resume();
        req.on('end', () => {
          const created = job('succeeded');
          const id = String(created.id);
          contents.set(id, randomBytes(256 * 1024));
          created.outputs = [
            output(`out-${id}`, 'ComfyUI_00001_.png', `/content/${id}`, { content_type: 'image/png', hash: null }),
          ];
          jobs.set(id, created);
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify(created));
        });
        return;
      }
      const id = /^\/api\/v2\/jobs\/([^/]+)$/.exec(url.pathname)?.[1];
      if (id !== undefined && jobs.has(id)) return sendJson(res, jobs.get(id));
      const content = /^\/content\/([^/]+)$/.exec(url.pathname)?.[1];
      if (content !== undefined && contents.has(content)) {
        held.push(() => sendPaced(res, contents.get(content)!, 4096, { 'content-type': 'image/png' }));
        if (held.length === PROCESSES) for (const send of held.splice(0)) send();
        return;
      }
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'not_found', message: 'not found' } }));
    });
  });
  after(async () => server.close());

  /** Runs `comfy-cloud` (the compiled CLI) as a process of its own; resolves with its exit code and output. */
  function cliProcess(args: string[], stateDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [path.join(__dirname, '..', '..', 'src', 'cli', 'main.js'), ...args],
        { env: { ...process.env, COMFY_CLOUD_STATE_DIR: stateDir } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it("two `submit --wait --out same/` processes at once: each prints a file of its own that holds its own job's bytes", async function () {
    this.timeout(60_000);
    const dir = tempDir('cc-cli-processes-');
    const out = path.join(dir, 'same');
    const workflow = path.join(dir, 'invert.json');
    fs.writeFileSync(workflow, JSON.stringify(invertWorkflow({ prefix: 'ComfyUI' })));
    const args = ['--base-url', server.origin, 'submit', workflow, '--wait', '--out', out, '--quiet'];
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => cliProcess(args, path.join(dir, 'state'))));
    const printed: string[] = [];
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      // stdout: the job id, then the file written.
      const [jobId, file, ...rest] = run.stdout.trim().split('\n');
      assert.deepEqual(rest, [], run.stdout);
      assert.ok(contents.has(jobId), `not a job of the server: ${jobId}`);
      assert.ok(
        fs.readFileSync(file).equals(contents.get(jobId)!),
        `${file}, printed by the process of job ${jobId}, does not hold that job's bytes`,
      );
      printed.push(file);
    }
    assert.notEqual(printed[0], printed[1]);
    assert.deepEqual(
      fs.readdirSync(out).sort(),
      ['ComfyUI_00001_-1.png', 'ComfyUI_00001_.png'],
      'the same name, one of them numbered; no partial file left',
    );
  });
});

describe("hostile files, rule 3: two shipped CLI processes at once, one output name, hash: null, the same size: each printed path holds its own job's bytes", () => {
  // What is "saved already" is proven by the proof written when a download completed (job id + output id), never by
  // name and size: both jobs' outputs are `ComfyUI_00001_.png`, `hash: null`, 256 KiB, sent in 16 KiB pieces. The
  // server forces the interleaving that showed the swap: the second job's read (the watch's GET, before its outputs
  // are looked for in the folder) waits until the first job's output is complete in the shared folder. Rounds
  // alternate `submit --wait --out` and a one-variation batch `submit --set … --out` (whose outputs go to
  // `<out>/<label>/`, the same folder for both, and are looked for before they are downloaded).
  const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
  const SIZE = 256 * 1024;
  const ROUNDS = 10;
  const jobs = new Map<string, Record<string, unknown>>();
  const contents = new Map<string, Buffer>();
  /** The job ids in the order the server created them, and the shared output folder of the round. */
  let created: string[] = [];
  let out = '';
  let server: TestServer;

  /** True once a complete `ComfyUI_00001_.png` (of any job) is in the round's folder or a folder under it. */
  const firstSaved = (): boolean =>
    fs.existsSync(out) &&
    (fs.readdirSync(out, { recursive: true }) as string[]).some((f) => path.basename(f) === 'ComfyUI_00001_.png');
  /** Calls `then` once the first job's output is saved (looked at on each turn of the server's event loop, bounded). */
  function afterFirstSaved(then: () => void, turns = 0): void {
    if (firstSaved() || turns > 20_000) then();
    else setTimeout(() => afterFirstSaved(then, turns + 1), 1);
  }

  before(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', server.origin);
      if (req.method === 'POST' && url.pathname === '/api/v2/jobs') {
        req.resume();
        req.on('end', () => {
          const made = job('succeeded');
          const id = String(made.id);
          contents.set(id, randomBytes(SIZE));
          made.outputs = [
            output(`out-${id}`, 'ComfyUI_00001_.png', `/content/${id}`, {
              content_type: 'image/png',
              size_bytes: SIZE,
              hash: null,
            }),
          ];
          jobs.set(id, made);
          created.push(id);
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify(made));
        });
        return;
      }
      const id = /^\/api\/v2\/jobs\/([^/]+)$/.exec(url.pathname)?.[1];
      if (id !== undefined && jobs.has(id)) {
        if (created.indexOf(id) === 1) afterFirstSaved(() => sendJson(res, jobs.get(id)));
        else sendJson(res, jobs.get(id));
        return;
      }
      const content = /^\/content\/([^/]+)$/.exec(url.pathname)?.[1];
      if (content !== undefined && contents.has(content))
        return sendPaced(res, contents.get(content)!, 16 * 1024, { 'content-type': 'image/png' });
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'not_found', message: 'not found' } }));
    });
  });
  after(async () => server.close());

  /** Runs the shipped CLI; resolves with its exit code and output. */
  function shippedCli(args: string[], stateDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env: { ...process.env, COMFY_CLOUD_STATE_DIR: stateDir } },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  /** The job id and the file a run printed: `--quiet` prints the job id, then the file; a batch's `--json` its job's line. */
  function printed(run: { stdout: string }, batch: boolean): { jobId: string; file: string } {
    const lines = run.stdout.trim().split('\n');
    if (!batch) {
      assert.equal(lines.length, 2, run.stdout);
      return { jobId: lines[0]!, file: lines[1]! };
    }
    const result = lines
      .map((l) => JSON.parse(l) as { jobId?: string; files?: string[] })
      .find((l) => l.jobId !== undefined);
    assert.equal(result?.files?.length, 1, run.stdout);
    return { jobId: result!.jobId!, file: result!.files![0]! };
  }

  it(`${ROUNDS} rounds of two processes at once, the second looking for its output once the first saved its own: no process prints the other's file`, async function () {
    this.timeout(120_000);
    for (let round = 0; round < ROUNDS; round++) {
      const batch = round % 2 === 1;
      const dir = tempDir('cc-cli-same-output-');
      out = path.join(dir, 'same');
      created = [];
      const workflow = path.join(dir, 'invert.json');
      fs.writeFileSync(workflow, JSON.stringify(invertWorkflow({ prefix: 'ComfyUI' })));
      const args = batch
        ? ['--base-url', server.origin, 'submit', workflow, '--set', '1.color=7', '--out', out, '--json']
        : ['--base-url', server.origin, 'submit', workflow, '--wait', '--out', out, '--quiet'];
      const runs = await Promise.all([0, 1].map(() => shippedCli(args, path.join(dir, 'state'))));
      const files: string[] = [];
      for (const run of runs) {
        assert.equal(run.code, 0, `round ${round}: ${run.stderr}`);
        const { jobId, file } = printed(run, batch);
        assert.ok(contents.has(jobId), `round ${round}: not a job of the server: ${jobId}`);
        assert.ok(
          fs.readFileSync(file).equals(contents.get(jobId)!),
          `round ${round} (${batch ? 'submit --set' : 'submit --wait'}): ${path.basename(file)}, printed by the process of job ${jobId}, does not hold that job's bytes`,
        );
        files.push(file);
      }
      assert.equal(created.length, 2, `round ${round}: not two jobs`);
      assert.notEqual(files[0], files[1], `round ${round}: both processes printed one file`);
      assert.deepEqual(
        files.map((f) => path.basename(f)).sort(),
        ['ComfyUI_00001_-1.png', 'ComfyUI_00001_.png'],
        `round ${round}`,
      );
    }
  });
});

describe('hostile files, rule 4: a bad redirect of a content download is a typed error saying where it pointed', () => {
  let own: TestServer;
  let other: TestServer;
  let transport: Transport;
  before(async () => {
    other = await startServer((req, res) => {
      if (req.url?.startsWith('/back')) {
        res.writeHead(302, { location: `${own.origin}/loop` });
        res.end();
        return;
      }
      res.end('signed bytes');
    });
    own = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', own.origin);
      const to = (location: string): void => void res.writeHead(302, { location }).end();
      switch (url.pathname) {
        case '/file':
          return to('file:///etc/passwd');
        case '/javascript':
          return to('javascript:alert(document.cookie)');
        case '/data':
          return to('data:text/plain;base64,aGk=');
        case '/ftp':
          return to('ftp://files.example.invalid/blob?sig=FTP-SECRET');
        case '/unparseable':
          return to('http://[::1/blob?sig=BAD-SECRET');
        case '/loop':
          return to(`${other.origin}/back?sig=LOOP-SECRET`);
        case '/many':
          return to(`${other.origin}/hop?sig=HOP-SECRET&n=${Number(url.searchParams.get('n') ?? 0)}`);
        case '/same-origin':
          return to('/final');
        case '/final':
          return void res.end('own bytes');
        default:
          return void res.writeHead(404).end();
      }
    });
    transport = new Transport({ baseUrl: own.origin, apiKey: 'KEY-SECRET' });
  });
  after(async () => {
    await transport.close();
    await own.close();
    await other.close();
  });

  /** Downloads `route` into a fresh folder and returns the error, asserting the folder stayed empty. */
  async function refused(route: string): Promise<ComfyError> {
    const dir = tempDir('cc-redirect-');
    const error = await downloadToFile(transport, transport.url(route), path.join(dir, 'x.bin')).then(
      () => assert.fail(`${route}: the download succeeded`),
      (e: unknown) => e,
    );
    assert.ok(!(error instanceof TypeError), `${route}: a raw TypeError`);
    assert.ok(ComfyError.is(error), `${route}: not a ComfyError: ${String(error)}`);
    assert.equal(error.code, 'bad_response', route);
    assert.match(error.message, /redirect/, route);
    assert.deepEqual(fs.readdirSync(dir), [], `${route}: nothing written, no lock left`);
    return error;
  }

  it('a Location that is file:, javascript:, data: or ftp: is refused, naming the scheme and where it pointed, without its query', async () => {
    assert.match((await refused('/file')).message, /file: URL.*"file:\/etc\/passwd"/);
    assert.match((await refused('/javascript')).message, /javascript: URL/);
    assert.match((await refused('/data')).message, /data: URL/);
    const ftp = (await refused('/ftp')).message;
    assert.match(ftp, /ftp: URL/);
    assert.ok(!ftp.includes('FTP-SECRET'), ftp);
  });

  it('a Location that is not a URL is refused without a TypeError, quoting it without its query', async () => {
    const message = (await refused('/unparseable')).message;
    assert.match(message, /not a URL: "http:\/\/\[::1\/blob"/);
    assert.ok(!message.includes('BAD-SECRET'), message);
  });

  it("a redirect loop (a URL seen before) is refused at once, naming where it pointed, redacted (a signed URL's query is a secret)", async () => {
    own.seen.length = 0;
    const message = (await refused('/loop')).message;
    assert.match(message, /loop/);
    assert.ok(message.includes(`${own.origin}/loop`), message);
    assert.ok(!message.includes('LOOP-SECRET'), message);
    assert.equal(own.seen.length, 1, 'the loop was not followed around again');
  });

  it('more than 5 redirects are refused, naming the last target, redacted', async () => {
    let hops = 0;
    const chain = await startServer((req, res) => {
      hops++;
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? 0);
      res.writeHead(302, { location: `/hop?sig=CHAIN-SECRET&n=${n + 1}` }).end();
    });
    const t = new Transport({ baseUrl: chain.origin });
    const dir = tempDir('cc-redirect-many-');
    try {
      const error = await downloadToFile(t, t.url('/start'), path.join(dir, 'x.bin')).then(
        () => assert.fail('no error'),
        (e: unknown) => e,
      );
      assert.ok(ComfyError.is(error) && error.code === 'bad_response', String(error));
      assert.match(error.message, /redirected too many times/);
      assert.ok(error.message.includes(`${chain.origin}/hop`), error.message);
      assert.equal(hops, 6, 'the first request and 5 redirects');
      assert.deepEqual(fs.readdirSync(dir), []);
    } finally {
      await t.close();
      await chain.close();
    }
  });

  it('credentials are never sent on a followed redirect, even to the configured origin', async () => {
    own.seen.length = 0;
    const dir = tempDir('cc-redirect-creds-');
    const done = await downloadToFile(transport, transport.url('/same-origin'), path.join(dir, 'x.bin'));
    assert.equal(fs.readFileSync(done.path, 'utf8'), 'own bytes');
    assert.deepEqual(
      own.seen.map((s) => s.url),
      ['/same-origin', '/final'],
    );
    assert.equal(own.seen[0].headers.authorization, 'Bearer KEY-SECRET', 'the first request carries them');
    assert.equal(own.seen[1].headers.authorization, undefined, 'the followed redirect does not');
  });
});

describe('hostile files, rule 5: downloadAsset into a folder names the file from file_path, else Content-Disposition, else the id', () => {
  let server: TestServer;
  let client: V2Client;
  const bytes = Buffer.from('asset bytes '.repeat(100));
  /** Asset records by id: the file_path and the Content-Disposition header of its content. */
  const assets = new Map<string, { filePath?: string | null; disposition?: string; hash?: string | null }>();
  before(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const [, id, content] = /^\/api\/v2\/assets\/([^/]+)(\/content)?$/.exec(url.pathname) ?? [];
      const asset = id === undefined ? undefined : assets.get(decodeURIComponent(id));
      if (!asset)
        return void res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":{"code":"not_found","message":"no"}}');
      if (content)
        return sendPaced(res, bytes, 256, asset.disposition ? { 'content-disposition': asset.disposition } : {});
      sendJson(res, {
        id: decodeURIComponent(id),
        hash: asset.hash ?? null,
        size_bytes: bytes.length,
        content_type: 'application/octet-stream',
        created_at: new Date().toISOString(),
        url: null,
        url_expires_at: null,
        ...(asset.filePath !== undefined ? { file_path: asset.filePath } : {}),
      });
    });
    client = new V2Client({ baseUrl: server.origin });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  /** Registers an asset and returns its id. */
  function asset(record: { filePath?: string | null; disposition?: string; hash?: string | null }): string {
    const id = randomUUID();
    assets.set(id, record);
    return id;
  }

  it("the record's file_path, made safe: ../../etc/passwd is passwd inside the folder; the path written is returned", async () => {
    const root = tempDir('cc-asset-dir-');
    const dir = path.join(root, 'in');
    fs.mkdirSync(dir);
    const id = asset({ filePath: '../../etc/passwd', disposition: 'attachment; filename="ignored.txt"' });
    const done = await client.downloadAsset(id, dir);
    assert.equal(done.path, path.join(dir, 'passwd'));
    assert.deepEqual(fs.readFileSync(done.path), bytes);
    assert.deepEqual(walk(root), [path.join('in', 'passwd')]);
  });

  it('without file_path: the Content-Disposition filename (filename* wins over filename), made safe', async () => {
    const dir = tempDir('cc-asset-cd-');
    const id = asset({
      filePath: null,
      disposition: `attachment; filename="../plain.txt"; filename*=UTF-8''..%2F%E2%82%AC%20rates.txt`,
    });
    const done = await client.downloadAsset(id, dir);
    assert.equal(path.basename(done.path), '€ rates.txt');
    const plain = asset({ disposition: 'attachment; filename="..\\\\..\\\\CON.txt"' });
    assert.equal(path.basename((await client.downloadAsset(plain, dir)).path), '_CON.txt');
  });

  it('without file_path or a usable Content-Disposition: the asset id; a folder path that does not exist yet (ending in a separator) is created', async () => {
    const root = tempDir('cc-asset-id-');
    const id = asset({ filePath: '..', disposition: 'attachment; filename=' }); // a malformed header
    const done = await client.downloadAsset(id, path.join(root, 'new') + path.sep);
    assert.equal(done.path, path.join(root, 'new', id));
    assert.deepEqual(fs.readFileSync(done.path), bytes);
  });

  it('into a folder the first free name is taken; with overwrite the plain name is replaced', async () => {
    const dir = tempDir('cc-asset-free-');
    const id = asset({ filePath: 'photo.bin' });
    fs.writeFileSync(path.join(dir, 'photo.bin'), 'mine');
    assert.equal((await client.downloadAsset(id, dir)).path, path.join(dir, 'photo-1.bin'));
    assert.equal(fs.readFileSync(path.join(dir, 'photo.bin'), 'utf8'), 'mine', 'never overwritten');
    assert.equal((await client.downloadAsset(id, dir, { overwrite: true })).path, path.join(dir, 'photo.bin'));
    assert.deepEqual(fs.readFileSync(path.join(dir, 'photo.bin')), bytes);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['photo-1.bin', 'photo.bin']);
  });

  it('to a file that exists: refused before any content request, saying that --force replaces it; with overwrite it is replaced', async () => {
    const dir = tempDir('cc-asset-file-');
    const file = path.join(dir, 'mine.bin');
    fs.writeFileSync(file, 'mine');
    const id = asset({ filePath: 'other.bin' });
    server.seen.length = 0;
    await assert.rejects(
      client.downloadAsset(id, file),
      (e: unknown) =>
        InputError.is(e) && e.code === 'file_exists' && /--force/.test(e.message) && e.message.includes(file),
    );
    assert.ok(!server.seen.some((s) => s.url.endsWith('/content')), 'no content request');
    assert.equal(fs.readFileSync(file, 'utf8'), 'mine');
    assert.deepEqual(fs.readdirSync(dir), ['mine.bin']);
    const done = await client.downloadAsset(id, file, { overwrite: true });
    assert.equal(done.path, file);
    assert.deepEqual(fs.readFileSync(file), bytes);
  });
});

describe('hostile files, rule 6: a refused or failed download never leaves a complete-looking file', () => {
  let server: TestServer;
  let route: Handler = (_req, res) => res.writeHead(500).end();
  let transport: Transport;
  const bytes = randomBytes(40_000);
  before(async () => {
    server = await startServer((req, res) => route(req, res));
    transport = new Transport({ baseUrl: server.origin });
  });
  after(async () => {
    await transport.close();
    await server.close();
  });

  it('bytes that do not hash to the expected hash, into a folder: nothing is left in the folder', async () => {
    route = (_req, res) => sendPaced(res, bytes, 4096);
    const dir = tempDir('cc-refused-hash-');
    await assert.rejects(
      downloadIntoFolder(transport, transport.url('/content'), dir, () => 'x.bin', {
        resumeKey: 'h',
        expectedHash: await hashBytes(Buffer.from('other')),
      }),
      (e: unknown) => ComfyError.is(e) && e.code === 'hash_mismatch',
    );
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('a body that breaks off, into a folder: only the hidden .part and its note stay (no lock, no visible file); the next call resumes it with Range', async () => {
    const N = 12_000;
    route = (req, res) => {
      const start = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1];
      if (start === undefined) {
        res.writeHead(200, { 'content-length': String(bytes.length) });
        res.write(bytes.subarray(0, N), () => res.socket?.destroy());
        return;
      }
      res.writeHead(206, {
        'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        'content-length': String(bytes.length - Number(start)),
      });
      res.end(bytes.subarray(Number(start)));
    };
    const dir = tempDir('cc-refused-cut-');
    await assert.rejects(
      downloadIntoFolder(transport, transport.url('/content'), dir, () => 'cut.bin', { resumeKey: 'cut' }),
      (e: unknown) => ComfyError.is(e) && e.code === 'connection_error',
    );
    const { part, note } = partialPathsIn(fs.realpathSync(dir), 'cut');
    assert.deepEqual(fs.readdirSync(dir).sort(), [path.basename(part), path.basename(note)].sort());
    assert.ok(
      fs.readdirSync(dir).every((n) => n.startsWith('.')),
      'only hidden files',
    );
    server.seen.length = 0;
    const done = await downloadIntoFolder(transport, transport.url('/content'), dir, () => 'cut.bin', {
      resumeKey: 'cut',
    });
    assert.equal(server.seen[0].headers.range, `bytes=${fs.statSync(done.path).size - done.transferredBytes}-`);
    assert.ok(done.resumedFrom > 0);
    assert.deepEqual(fs.readFileSync(done.path), bytes);
    assert.deepEqual(fs.readdirSync(dir), ['cut.bin']);
  });
});
