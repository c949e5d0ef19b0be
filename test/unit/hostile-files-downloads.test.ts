/**
 * Hostile files, rules 4 to 6:
 * 4. a bad redirect (not http(s), a loop, too many hops) is a typed error that says where it pointed, redacted;
 * 5. downloadAsset into a folder names the file from `file_path`, else Content-Disposition, else the id;
 * 6. a refused or failed download never leaves a complete-looking file; a broken body keeps its `.part`.
 */
import * as assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ComfyError, InputError } from '../../src/core';
import { Transport } from '../../src/core/http';
import { V2Client } from '../../src/core/v2/client';
import { hashBytes } from '../../src/core/util';
import { downloadIntoFolder, downloadToFile, partialPathsIn } from '../../src/core/http/download';
import { Handler, sendJson, sendPaced, walk } from './hostile-files.fixtures';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

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
