/**
 * An emulator owned by editor windows (the emulator's owners.ts, the extension's emulatorOwner.ts): windows hold it
 * with one long request each and the owner token; it is released (and stops) once none held it for its grace time, or
 * when one asks. Timers are the test's own: no waiting on the clock.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startEmulator, type Emulator, type ReleaseReason } from '../../src/emulator';
import {
  askToStop,
  holdEmulator,
  readRecord,
  removeRecord,
  writeRecord,
} from '../../src/extension/connection/emulatorOwner';

const TOKEN = 'a'.repeat(64);

/** Timers run by hand: `fire()` runs the one pending (the owners arm one at a time); `armed()` waits for one. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  let onArm: (() => void) | undefined;
  return {
    set: (fn: () => void) => {
      pending.set(++next, fn);
      onArm?.();
      return next;
    },
    /** Resolves once a timer is pending (at once when one is). */
    whenArmed: () =>
      new Promise<void>((resolve) => {
        if (pending.size > 0) resolve();
        else onArm = resolve;
      }),
    clear: (handle: unknown) => void pending.delete(handle as number),
    get armed() {
      return pending.size;
    },
    fire() {
      for (const [id, fn] of [...pending]) {
        pending.delete(id);
        fn();
      }
    },
  };
}

describe('an emulator owned by editor windows (GET /__emulator/owner with the owner token)', () => {
  let emu: Emulator;
  let released: ReleaseReason[];
  let timers: ReturnType<typeof manualTimers>;

  beforeEach(async () => {
    released = [];
    timers = manualTimers();
    emu = await startEmulator({
      port: 0,
      owner: { token: TOKEN, graceMs: 1000, onRelease: (reason) => released.push(reason), timers },
    });
  });
  afterEach(() => emu.close());

  it('with no owner from the start, it is released after the grace time (the window that started it died first)', () => {
    assert.equal(timers.armed, 1);
    timers.fire();
    assert.deepEqual(released, ['orphaned']);
  });

  it('held by two windows, it is released only once both let go and the grace time passed without a new one', async () => {
    const first = await holdEmulator(emu.baseUrl, TOKEN, 5000);
    const second = await holdEmulator(emu.baseUrl, TOKEN, 5000);
    assert.equal(first.pid, process.pid);
    assert.equal(timers.armed, 0, 'a grace timer runs while windows hold it');
    first.release();
    await first.ended;
    assert.equal(timers.armed, 0, 'one window still holds it');
    second.release();
    await second.ended;
    await timers.whenArmed(); // once the last window let go
    // A reload: a window holds it again within the grace time.
    const again = await holdEmulator(emu.baseUrl, TOKEN, 5000);
    assert.equal(timers.armed, 0);
    timers.fire();
    assert.deepEqual(released, []);
    again.release();
    await again.ended;
    await timers.whenArmed();
    timers.fire();
    assert.deepEqual(released, ['orphaned']);
  });

  it('an owner may ask it to stop (202); closing the emulator ends every hold', async () => {
    const hold = await holdEmulator(emu.baseUrl, TOKEN, 5000);
    assert.equal(await askToStop(emu.baseUrl, TOKEN, 5000), true);
    assert.deepEqual(released, ['stop']);
    await emu.close();
    await hold.ended;
  });

  it('without the owner token: 401, nothing held, nothing stopped; the jobs API is not the owners', async () => {
    await assert.rejects(holdEmulator(emu.baseUrl, 'b'.repeat(64), 5000), /answered 401/);
    assert.equal(await askToStop(emu.baseUrl, 'b'.repeat(64), 5000), false);
    const bare = await fetch(`${emu.origin}/__emulator/owner/stop`, { method: 'POST' });
    assert.equal(bare.status, 401);
    assert.deepEqual(released, []);
    // The fault control is not served because the emulator is owned.
    assert.equal((await fetch(`${emu.origin}/__emulator/faults`)).status, 404);
    assert.equal((await fetch(`${emu.baseUrl}/api/v2/jobs?limit=1`)).status, 200);
  });

  it('an emulator not owned answers 404 there: no hold', async () => {
    const plain = await startEmulator({ port: 0 });
    try {
      await assert.rejects(holdEmulator(plain.baseUrl, TOKEN, 5000), /answered 404/);
    } finally {
      await plain.close();
    }
  });
});

describe('the record of the running emulator (the next window finds it there)', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'emu-record-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is written whole, readable by the user alone, and removed only by the emulator it records', async () => {
    const file = path.join(dir, 'sub', 'emulator.json');
    assert.equal(await readRecord(file), undefined);
    await writeRecord(file, { pid: 42, baseUrl: 'http://127.0.0.1:1', token: TOKEN });
    assert.deepEqual(await readRecord(file), { pid: 42, baseUrl: 'http://127.0.0.1:1', token: TOKEN });
    if (process.platform !== 'win32') assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['emulator.json'], 'no temporary file left');
    await removeRecord(file, 'another token');
    assert.ok(fs.existsSync(file), 'another emulator removed the record');
    await removeRecord(file, TOKEN);
    assert.equal(fs.existsSync(file), false);
  });

  it('a damaged record is none', async () => {
    const file = path.join(dir, 'emulator.json');
    fs.writeFileSync(file, '{"pid": 1');
    assert.equal(await readRecord(file), undefined);
    fs.writeFileSync(file, '{"pid": "1", "baseUrl": "x", "token": "t"}');
    assert.equal(await readRecord(file), undefined);
  });
});
