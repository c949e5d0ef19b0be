// Moving bytes from inside the real extension host: hashing a large file for an upload runs in a worker thread,
// so the extension host's event loop keeps turning (the event loop stays responsive during a
// large hash).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { V2Client } from '../../src/core/v2/client';
import { hashBytes } from '../../src/core/util';
import { startEmulator } from '../../src/emulator';

suite('Assets from the extension host', () => {
  test('uploading a large file through the core does not block the extension host', async function () {
    this.timeout(180_000);
    const emu = await startEmulator({ port: 0 });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-exthost-upload-'));
    const file = path.join(dir, 'big.bin');
    const bytes = 192 * (1 << 20);
    const block = Buffer.alloc(1 << 20);
    const fd = fs.openSync(file, 'w');
    for (let i = 0; i < bytes / block.length; i++) {
      block.writeUInt32LE(i, 0);
      fs.writeSync(fd, block);
    }
    fs.closeSync(fd);
    const client = new V2Client({ baseUrl: emu.baseUrl });
    try {
      // While the file is hashed (and uploaded), a 10 ms interval on this thread keeps firing: the largest gap
      // between two ticks shows whether the thread was blocked. Hashing 192 MiB on this thread would stall it for
      // the whole hash (hundreds of ms on this machine) in one go.
      let ticks = 0;
      let last = Date.now();
      let worstGap = 0;
      const timer = setInterval(() => {
        const now = Date.now();
        worstGap = Math.max(worstGap, now - last);
        last = now;
        ticks++;
      }, 10);
      const started = Date.now();
      const hash = await client.hashForUpload(file);
      const hashMs = Date.now() - started;
      clearInterval(timer);
      assert.match(hash, /^blake3:[0-9a-f]{64}$/);
      // Both bounds are relative to the hash's own duration (a loaded machine stretches both alike), not a rate of
      // ticks: a thread that hashed would not turn at all during the hash, or only between a few long stalls.
      assert.ok(ticks >= 3, `the event loop ticked ${ticks} times in ${hashMs} ms of hashing`);
      assert.ok(
        worstGap < Math.max(150, hashMs / 2),
        `the event loop stalled for ${worstGap} ms while hashing took ${hashMs} ms`,
      );
      const up = await client.uploadFile(file);
      assert.equal(up.hash, hash);
      assert.equal(up.asset.hash, hash);
      const again = await client.uploadFile(file);
      assert.equal(again.dedup, true, 'the same bytes were uploaded twice');
      assert.equal(await hashBytes(Buffer.from('x')), await hashBytes('x'));
    } finally {
      await client.close();
      await emu.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
