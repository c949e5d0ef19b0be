/**
 * The assets client's resumable downloads (downloadToFile: a `.part` file, Range, 200/206/416, the hash checked; Job
 * and Asset API v2, GET /api/v2/assets/{id}/content) against a loopback server that answers whole, ranged or cut
 * bodies.
 */
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ComfyError, ConnectionError } from '../../src/core';
import { Transport } from '../../src/core/http';
import { hashBytes } from '../../src/core/util';
import { downloadToFile, partialPaths } from '../../src/core/http/download';
import { Handler, leavePart, rangeStart, sendCut, sendFrom, sendWhole, tmpDir } from './assets-client.fixtures';
import { startServer, type TestServer } from './httpServer';

describe('assets client: resumable downloads (downloadToFile: .part, Range, 200/206/416, hash check)', () => {
  let server: TestServer;
  let route: Handler = (_req, res) => {
    res.statusCode = 500;
    res.end();
  };
  let transport: Transport;
  let dir: string;
  const bytes = randomBytes(100_000);

  before(async () => {
    server = await startServer((req, res) => route(req, res));
  });
  after(() => server.close());
  beforeEach(() => {
    server.seen.length = 0;
    transport = new Transport({ baseUrl: server.origin });
    dir = tmpDir();
  });
  afterEach(async () => {
    await transport.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a server that ignores Range (200 with the whole body) restarts the download: the file is the content, not the part with the whole appended', async () => {
    route = (_req, res) => sendWhole(res, bytes); // ignores Range
    const target = path.join(dir, 'a.bin');
    leavePart(target, bytes.subarray(0, 30_000), 'asset-1'); // a true prefix of the same content
    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-1' });
    assert.equal(server.seen.length, 1);
    assert.equal(server.seen[0].headers.range, 'bytes=30000-', 'the client did ask to resume');
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.bytes, bytes.length);
    assert.equal(done.resumedFrom, 0, 'the 200 body was taken as the whole content');
    assert.equal(done.transferredBytes, bytes.length);
    assert.deepEqual(fs.readdirSync(dir), ['a.bin'], 'no .part or .part.json left');
  });

  it('416 to the Range request: the part is discarded and the content requested again without Range', async () => {
    route = (req, res) => {
      if (req.headers.range !== undefined) {
        res.writeHead(416, { 'content-range': `bytes */${bytes.length}` });
        res.end();
        return;
      }
      sendWhole(res, bytes);
    };
    const target = path.join(dir, 'b.bin');
    // A part the server cannot continue: as long as the content and not a prefix of it (e.g. the content changed).
    leavePart(target, randomBytes(bytes.length), 'asset-2');
    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-2' });
    assert.deepEqual(
      server.seen.map((s) => s.headers.range),
      [`bytes=${bytes.length}-`, undefined],
      'first the Range request, then one without Range',
    );
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.resumedFrom, 0);
    assert.equal(done.transferredBytes, bytes.length);
    assert.deepEqual(fs.readdirSync(dir), ['b.bin']);
  });

  it('a body cut after N bytes: ConnectionError, no target file, the .part kept; the next call asks Range: bytes=N-, gets 206 and ends byte-identical', async () => {
    const N = 4096;
    route = (req, res) => {
      const start = rangeStart(req);
      if (start === undefined) sendCut(res, bytes, N);
      else sendFrom(res, bytes, start);
    };
    const target = path.join(dir, 'c.bin');
    const { part, note } = partialPaths(target, 'asset-3');
    await assert.rejects(
      downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-3' }),
      (e: unknown) => ConnectionError.is(e),
    );
    assert.ok(!fs.existsSync(target), 'no partial file under the target name');
    assert.ok(fs.existsSync(note), 'the note naming the content is kept');
    assert.deepEqual(
      fs.readFileSync(part),
      bytes.subarray(0, N),
      'the .part holds the N bytes that arrived, written before the call returned',
    );

    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-3' });
    assert.deepEqual(
      server.seen.map((s) => s.headers.range),
      [undefined, `bytes=${N}-`],
    );
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.bytes, bytes.length);
    assert.equal(done.resumedFrom, N);
    assert.equal(done.transferredBytes, bytes.length - N);
    assert.deepEqual(fs.readdirSync(dir), ['c.bin'], 'the .part and its note are gone');
  });

  it('expectedHash that the bytes do not hash to: error hash_mismatch, no target, the .part and .part.json removed', async () => {
    route = (_req, res) => sendWhole(res, bytes);
    const target = path.join(dir, 'd.bin');
    const wrong = await hashBytes(Buffer.from('other content'));
    await assert.rejects(
      downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-4', expectedHash: wrong }),
      (e: unknown) => ComfyError.is(e) && e.code === 'hash_mismatch',
    );
    const { part, note } = partialPaths(target, 'asset-4');
    assert.ok(!fs.existsSync(target));
    assert.ok(!fs.existsSync(part));
    assert.ok(!fs.existsSync(note));
    assert.deepEqual(fs.readdirSync(dir), []);
    // The right hash is accepted (the check compares, it does not just refuse).
    const done = await downloadToFile(transport, transport.url('/content'), target, {
      resumeKey: 'asset-4',
      expectedHash: await hashBytes(bytes),
    });
    assert.deepEqual(fs.readFileSync(done.path), bytes);
  });

  it('a .part left by other content (another resumeKey, or no note) is never appended to: the request carries no Range', async () => {
    route = (req, res) => {
      const start = rangeStart(req);
      if (start === undefined) sendWhole(res, bytes);
      else sendFrom(res, bytes, start); // would happily "resume" if asked
    };
    const target = path.join(dir, 'e.bin');
    const other = randomBytes(20_000);
    leavePart(target, other, 'other-asset');
    const done = await downloadToFile(transport, transport.url('/content'), target, { resumeKey: 'asset-5' });
    assert.equal(server.seen.length, 1);
    assert.equal(server.seen[0].headers.range, undefined);
    assert.deepEqual(fs.readFileSync(target), bytes);
    assert.equal(done.resumedFrom, 0);

    const second = path.join(dir, 'f.bin');
    fs.writeFileSync(partialPaths(second, 'asset-5').part, randomBytes(20_000)); // a part without its note
    await downloadToFile(transport, transport.url('/content'), second, { resumeKey: 'asset-5' });
    assert.equal(server.seen[1].headers.range, undefined);
    assert.deepEqual(fs.readFileSync(second), bytes);
    // The other content's part is its own (named for its key): left as it was, for its own resume.
    const { part, note } = partialPaths(target, 'other-asset');
    assert.deepEqual(fs.readFileSync(part), other);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['e.bin', 'f.bin', path.basename(part), path.basename(note)].sort());
  });
});
