/**
 * The emulator's data folder (persistence.ts): a restart with the same folder keeps jobs (status, outputs,
 * `expires_at`, workflow), assets and their bytes, and Idempotency-Key claims (Job and Asset API v2, States and
 * transitions: "a 201 means the job is durably recorded and queued"; POST /api/v2/jobs, rules 3–6); a job caught by
 * the stop ends plainly; a damaged `state.json` never stops the emulator, a newer one is refused. Over real HTTP; no
 * sleeps: the tests wait on the emulator's own "held" signal or poll GET in bounded loops.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator';
import { MAX_STATE_BYTES, STATE_FILE, STATE_FORMAT, STATE_VERSION } from '../../src/emulator/persistence';
import { TERMINAL, call, submit, until, type Json } from './harness';
import { tempDir } from './tmp';

/** EmptyImage → ImageInvert → SaveImage: one 64×64 PNG output. */
const SAMPLE: Json = {
  '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 16711680 } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'kept' } },
};

/** Starts an emulator on a free port over `dataDir`, its warnings collected in `warnings`. */
function start(dataDir: string, warnings: string[] = [], options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ port: 0, dataDir, warn: (line) => warnings.push(line), ...options });
}

async function listJobs(emu: Emulator): Promise<Json[]> {
  const answer = await call(`${emu.baseUrl}/api/v2/jobs`);
  assert.equal(answer.status, 200);
  return answer.body.jobs as Json[];
}

describe('emulator data folder (persistence across a restart)', () => {
  it('a restart with the same data folder keeps a finished job: status, outputs and their bytes, expires_at, workflow, listing', async () => {
    const dataDir = tempDir('cc-emu-keep-');
    const first = await start(dataDir);
    let done: Json;
    let bytes: Buffer;
    try {
      const created = await submit(first, SAMPLE);
      assert.equal(created.status, 201);
      done = await until(first, created.body.id, (j) => TERMINAL.includes(j.status));
      assert.equal(done.status, 'succeeded');
      const content = await fetch(done.outputs[0].url);
      bytes = Buffer.from(await content.arrayBuffer());
    } finally {
      await first.close();
    }
    const warnings: string[] = [];
    const second = await start(dataDir, warnings);
    try {
      const again = await call(`${second.baseUrl}/api/v2/jobs/${done.id}`);
      assert.equal(again.status, 200, 'the job is still known');
      assert.equal(again.body.status, 'succeeded');
      assert.equal(again.body.expires_at, done.expires_at);
      assert.equal(again.body.created_at, done.created_at);
      assert.deepEqual(
        again.body.outputs.map((o: Json) => [o.id, o.hash, o.name, o.size_bytes]),
        done.outputs.map((o: Json) => [o.id, o.hash, o.name, o.size_bytes]),
      );
      const content = await fetch(again.body.outputs[0].url);
      assert.equal(content.status, 200);
      assert.deepEqual(Buffer.from(await content.arrayBuffer()), bytes, "the output's bytes are the same");
      const workflow = await call(`${second.baseUrl}/api/v2/jobs/${done.id}/workflow`);
      assert.deepEqual(workflow.body, { format: 'api', workflow: SAMPLE });
      assert.deepEqual(
        (await listJobs(second)).map((j) => j.id),
        [done.id],
      );
      const asset = await call(`${second.baseUrl}/api/v2/assets/${done.outputs[0].id}`);
      assert.equal(asset.status, 200, 'the output is an asset again');
      assert.deepEqual(warnings, []);
    } finally {
      await second.close();
    }
  });

  it('a restart keeps Idempotency-Key claims: the same key is refused after it', async () => {
    const dataDir = tempDir('cc-emu-keys-');
    const first = await start(dataDir);
    try {
      const created = await submit(first, SAMPLE, { 'idempotency-key': 'key-across-restart' });
      assert.equal(created.status, 201);
      await until(first, created.body.id, (j) => TERMINAL.includes(j.status));
    } finally {
      await first.close();
    }
    const second = await start(dataDir);
    try {
      const reused = await submit(second, SAMPLE, { 'idempotency-key': 'key-across-restart' });
      assert.equal(reused.status, 422);
      assert.equal(reused.body.error.code, 'idempotency_key_reuse');
      assert.equal((await listJobs(second)).length, 1, 'no second job');
    } finally {
      await second.close();
    }
  });

  it('a job running when the emulator stopped ends failed, its error saying the emulator stopped; a queued one runs again', async () => {
    const dataDir = tempDir('cc-emu-interrupted-');
    const first = await start(dataDir);
    let running: Json;
    let queued: Json;
    try {
      first.holdNodes({ classTypes: ['ImageInvert'] });
      running = (await submit(first, SAMPLE)).body;
      await first.whenHeld((n) => n.jobId === running.id);
      queued = (await submit(first, SAMPLE)).body;
      assert.equal((await call(`${first.baseUrl}/api/v2/jobs/${queued.id}`)).body.status, 'queued');
    } finally {
      await first.close();
    }
    const second = await start(dataDir);
    try {
      const failed = await call(`${second.baseUrl}/api/v2/jobs/${running.id}`);
      assert.equal(failed.body.status, 'failed');
      assert.equal(failed.body.error.code, 'execution_error');
      assert.match(failed.body.error.message, /emulator stopped while this job was running/);
      assert.notEqual(failed.body.completed_at, null);
      const ran = await until(second, queued.id, (j) => TERMINAL.includes(j.status));
      assert.equal(ran.status, 'succeeded', 'the queued job ran after the restart');
      assert.equal(ran.outputs.length, 1);
    } finally {
      await second.close();
    }
  });

  it('writes are atomic: state.json is a whole versioned document, and a temporary file left by a cut write is ignored', async () => {
    const dataDir = tempDir('cc-emu-atomic-');
    const first = await start(dataDir);
    let id: string;
    try {
      id = (await submit(first, SAMPLE)).body.id;
      await until(first, id, (j) => TERMINAL.includes(j.status));
    } finally {
      await first.close();
    }
    const doc = JSON.parse(fs.readFileSync(path.join(dataDir, STATE_FILE), 'utf8')) as Json;
    assert.equal(doc.format, STATE_FORMAT);
    assert.equal(doc.version, STATE_VERSION);
    assert.deepEqual(
      fs.readdirSync(dataDir).filter((f) => f.startsWith(STATE_FILE)),
      [STATE_FILE],
      'no temporary file left',
    );
    // A crash in the middle of a write leaves at most a partial temporary file beside the previous document.
    fs.writeFileSync(path.join(dataDir, `${STATE_FILE}.tmp`), '{"format": "comfy-cloud-emulator-state", "jobs": [');
    const warnings: string[] = [];
    const second = await start(dataDir, warnings);
    try {
      assert.equal((await call(`${second.baseUrl}/api/v2/jobs/${id}`)).body.status, 'succeeded');
      assert.deepEqual(warnings, []);
      assert.ok(!fs.existsSync(path.join(dataDir, `${STATE_FILE}.tmp`)));
    } finally {
      await second.close();
    }
  });

  it('a write never touches state.json in place: it goes to state.json.tmp, flushed, then renamed over state.json', async () => {
    const dataDir = tempDir('cc-emu-rename-');
    const file = path.join(dataDir, STATE_FILE);
    const opened: string[] = [];
    const renamed: [string, string][] = [];
    const { openSync, renameSync, writeFileSync } = fs;
    // The emulator reads these through the module object at each call: wrapped here to see every write and rename.
    const spied = createRequire(__filename)('node:fs') as Record<string, unknown>;
    spied.openSync = (p: fs.PathLike, ...rest: unknown[]) => (
      opened.push(String(p)),
      (openSync as (...a: unknown[]) => number)(p, ...rest)
    );
    spied.renameSync = (from: fs.PathLike, to: fs.PathLike) => (
      renamed.push([String(from), String(to)]),
      renameSync(from, to)
    );
    spied.writeFileSync = (p: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      assert.notEqual(String(p), file, 'state.json written in place');
      return (writeFileSync as (...a: unknown[]) => void)(p, ...rest);
    };
    try {
      const emu = await start(dataDir);
      try {
        await until(emu, (await submit(emu, SAMPLE)).body.id, (j) => TERMINAL.includes(j.status));
      } finally {
        await emu.close();
      }
    } finally {
      Object.assign(spied, { openSync, renameSync, writeFileSync });
    }
    const writes = opened.filter((p) => p.startsWith(file));
    assert.ok(writes.length > 0, 'nothing was saved');
    assert.deepEqual([...new Set(writes)], [`${file}.tmp`], 'only the temporary file is opened for writing');
    const intoPlace = renamed.filter(([, to]) => to === file);
    assert.equal(intoPlace.length, writes.length, 'every write is renamed into place');
    assert.ok(intoPlace.every(([from]) => from === `${file}.tmp`));
  });

  for (const [name, content] of [
    ['garbage', 'this is not json at all'],
    ['a torn document', `{"format": "${STATE_FORMAT}", "version": 1, "jobs": [{"id": "a"`],
    ["another program's JSON", '{"hello": "world"}'],
  ] as const) {
    it(`an unreadable state.json (${name}) is moved aside with one warning; the emulator starts empty and serves`, async () => {
      const dataDir = tempDir('cc-emu-garbage-');
      fs.writeFileSync(path.join(dataDir, STATE_FILE), content);
      const warnings: string[] = [];
      const emu = await start(dataDir, warnings);
      try {
        assert.equal(warnings.length, 1, warnings.join('\n'));
        assert.match(
          warnings[0],
          /state\.json was not read: .*; moved to .*state\.json\.unreadable-\d+, starting with no jobs/,
        );
        const aside = fs.readdirSync(dataDir).filter((f) => f.startsWith(`${STATE_FILE}.unreadable-`));
        assert.equal(aside.length, 1);
        assert.equal(
          fs.readFileSync(path.join(dataDir, aside[0]), 'utf8'),
          content,
          'the damaged file is kept as it was',
        );
        assert.deepEqual(await listJobs(emu), []);
        const created = await submit(emu, SAMPLE);
        assert.equal((await until(emu, created.body.id, (j) => TERMINAL.includes(j.status))).status, 'succeeded');
      } finally {
        await emu.close();
      }
    });
  }

  it('a state.json larger than the bound is not read (moved aside with a warning)', async () => {
    const dataDir = tempDir('cc-emu-huge-');
    const file = path.join(dataDir, STATE_FILE);
    fs.writeFileSync(file, '');
    fs.truncateSync(file, MAX_STATE_BYTES + 1); // sparse: no bytes are written, and none may be read
    const warnings: string[] = [];
    const emu = await start(dataDir, warnings);
    try {
      assert.equal(warnings.length, 1);
      assert.match(
        warnings[0],
        new RegExp(`it is ${MAX_STATE_BYTES + 1} bytes, more than the ${MAX_STATE_BYTES} allowed`),
      );
      assert.deepEqual(await listJobs(emu), []);
    } finally {
      await emu.close();
    }
  });

  it('a state.json of a newer version is refused with a TypeError naming the folder, and left as it is', async () => {
    const dataDir = tempDir('cc-emu-newer-');
    const text = JSON.stringify({ format: STATE_FORMAT, version: STATE_VERSION + 1, jobs: [] });
    fs.writeFileSync(path.join(dataDir, STATE_FILE), text);
    await assert.rejects(
      start(dataDir),
      (e: unknown) =>
        e instanceof TypeError && /written by a newer emulator/.test(e.message) && e.message.includes(dataDir),
    );
    assert.equal(fs.readFileSync(path.join(dataDir, STATE_FILE), 'utf8'), text);
  });

  it('a record that cannot be read is skipped with a warning; the others are kept; an output whose bytes are gone is dropped with a warning', async () => {
    const dataDir = tempDir('cc-emu-partial-');
    const first = await start(dataDir);
    let done: Json;
    try {
      done = await until(first, (await submit(first, SAMPLE)).body.id, (j) => TERMINAL.includes(j.status));
    } finally {
      await first.close();
    }
    const file = path.join(dataDir, STATE_FILE);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as Json;
    doc.jobs.push({ id: 42, status: 'nonsense' });
    fs.writeFileSync(file, JSON.stringify(doc));
    fs.rmSync(path.join(dataDir, 'blobs', done.outputs[0].hash.slice('blake3:'.length)));
    const warnings: string[] = [];
    const second = await start(dataDir, warnings);
    try {
      assert.deepEqual(warnings.sort(), [
        '1 asset record was dropped: its bytes are no longer in blobs/',
        'skipped 1 unreadable job record in state.json',
      ]);
      const again = await call(`${second.baseUrl}/api/v2/jobs/${done.id}`);
      assert.equal(again.body.status, 'succeeded');
      assert.deepEqual(again.body.outputs, []);
    } finally {
      await second.close();
    }
  });

  it("without a data folder nothing is kept: a second emulator does not know the first one's job", async () => {
    const first = await startEmulator({ port: 0 });
    let id: string;
    try {
      id = (await submit(first, SAMPLE)).body.id;
      await until(first, id, (j) => TERMINAL.includes(j.status));
    } finally {
      await first.close();
    }
    const second = await startEmulator({ port: 0 });
    try {
      assert.equal((await call(`${second.baseUrl}/api/v2/jobs/${id}`)).status, 404);
    } finally {
      await second.close();
    }
  });
});
