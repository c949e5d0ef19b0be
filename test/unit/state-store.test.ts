/**
 * The state store's rules (no job lost or duplicated: concurrent writers, layout, pruning, forget,
 * hostile keys), with real concurrency: parallel updaters in this process and forked child processes
 * (fixtures/storeWriter.ts) writing the same record.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ComfyError } from '../../src/core';
import { StateStore, recordOwner, type JobRecord } from '../../src/core/state';
import { tempDir } from './tmp';

const WRITER = path.join(__dirname, 'fixtures', 'storeWriter.js');

/** A record with the tests' extra field (the store keeps unknown fields). */
type Counted = JobRecord & { writers?: string[] };

function record(key: string, extra: Partial<JobRecord> = {}): JobRecord {
  return {
    idempotencyKey: key,
    baseUrl: 'http://a',
    state: 'pending',
    submittedAt: '2026-11-22T10:00:00.000Z',
    ...extra,
  };
}

function tempStore(options: ConstructorParameters<typeof StateStore>[1] = {}): StateStore {
  return new StateStore(tempDir('cc-state-'), options);
}

/** Resolves with the exit code of `child`. */
function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Appends `id` to the record's `writers` list (one read-modify-write). */
function append(store: StateStore, key: string, id: string): Promise<JobRecord | undefined> {
  return store.mutate(
    key,
    (current: Counted) => ({ ...current, writers: [...(current.writers ?? []), id] }) as Counted,
  );
}

function ls(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

describe('state store: concurrent writers', () => {
  it('rule: parallel read-modify-writes of one record in one process lose no update (mutate, update under the lock)', async () => {
    const dir = tempDir('cc-state-');
    const stores = [new StateStore(dir), new StateStore(dir), new StateStore(dir)];
    await stores[0].put(record('same'));
    const ids = Array.from({ length: 60 }, (_, i) => `u${i}`);
    await Promise.all(ids.map((id, i) => append(stores[i % stores.length], 'same', id)));
    const final = (await stores[0].get('same')) as Counted;
    assert.deepEqual([...(final.writers ?? [])].sort(), [...ids].sort());
  });

  it('rule: 12 processes each appending 15 times to the same record lose no update, and the record is always whole JSON', async function () {
    this.timeout(120_000);
    const dir = tempDir('cc-state-');
    const store = new StateStore(dir);
    await store.put(record('same'));
    const processes = 12;
    const count = 15;
    const children = Array.from({ length: processes }, (_, p) =>
      fork(WRITER, ['mutate', dir, 'same', `p${p}`, String(count)], { stdio: 'inherit' }),
    );
    const codes = Promise.all(children.map(exited));
    let done = false;
    void codes.then(() => (done = true));
    // A reader meanwhile: every read of the record parses (writes are renamed whole into place).
    let reads = 0;
    const file = path.join(dir, 'jobs', 'same.json');
    while (!done) {
      const text = await fs.promises.readFile(file, 'utf8');
      assert.doesNotThrow(() => JSON.parse(text), `read ${reads}: ${text}`);
      reads++;
    }
    assert.deepEqual(await codes, Array(processes).fill(0));
    const final = (await store.get('same')) as Counted;
    const expected = Array.from({ length: processes }, (_, p) =>
      Array.from({ length: count }, (_, i) => `p${p}:${i}`),
    ).flat();
    assert.equal(final.writers?.length, expected.length, 'an update was lost');
    assert.deepEqual([...final.writers!].sort(), expected.sort());
    for (let p = 0; p < processes; p++) {
      const own: string[] = final.writers!.filter((w) => w.startsWith(`p${p}:`));
      assert.deepEqual(
        own,
        Array.from({ length: count }, (_, i) => `p${p}:${i}`),
        "each process's updates in its own order",
      );
    }
    assert.ok(reads > 0);
    assert.deepEqual(ls(path.join(dir, 'jobs')), ['same.json'], 'jobs/ holds only records');
    assert.deepEqual(ls(path.join(dir, 'tmp')), [], 'no temporary file left');
    assert.deepEqual(ls(path.join(dir, 'locks')), [], 'every lock released');
  });

  it('rule: put respects a held lock (a replacing write waits for the read-modify-write under way)', async () => {
    const store = tempStore({ lockRetries: 2 });
    await store.put(record('k'));
    fs.mkdirSync(path.join(store.dir, 'locks', 'k.lock')); // held by a live writer: fresh
    await assert.rejects(
      store.put(record('k', { state: 'created', jobId: 'j' })),
      (e: unknown) => ComfyError.is(e) && e.code === 'state_locked',
    );
    await assert.rejects(
      store.update('k', { state: 'created' }),
      (e: unknown) => ComfyError.is(e) && e.code === 'state_locked',
    );
    assert.equal((await store.get('k'))?.state, 'pending', 'nothing written around the lock');
  });

  it('rule: a lock left by a killed process is taken over once stale, not waited on forever', async function () {
    this.timeout(60_000);
    const store = tempStore({ lockRetries: 3 });
    await store.put(record('k'));
    const child = fork(WRITER, ['hold', store.dir, 'k'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
    const lock = path.join(store.dir, 'locks', 'k.lock');
    assert.ok(fs.existsSync(lock), 'the killed process left its lock');
    await assert.rejects(
      store.update('k', { lastStatus: 'x' }),
      (e: unknown) => ComfyError.is(e) && e.code === 'state_locked',
      'a fresh lock is respected',
    );
    const past = new Date(Date.now() - 60_000); // as if its holder had stopped refreshing it a minute ago
    fs.utimesSync(lock, past, past);
    assert.equal((await store.update('k', { lastStatus: 'taken over' }))?.lastStatus, 'taken over');
    assert.deepEqual(ls(path.join(store.dir, 'locks')), []);
  });

  it('rule: putIfAbsent writes a key once among concurrent writers and returns the record already there', async () => {
    const dir = tempDir('cc-state-');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => new StateStore(dir).putIfAbsent(record('k', { workflowFile: `w${i}` }))),
    );
    const winners = results.filter((r) => r === undefined).length;
    assert.equal(winners, 1);
    const stored = await new StateStore(dir).get('k');
    for (const r of results) if (r) assert.equal(r.workflowFile, stored?.workflowFile);
  });

  it('rule: one job is claimed by one record (claimJob under the claims lock)', async () => {
    const store = tempStore();
    await store.put(record('a'));
    await store.put(record('b'));
    const [ra, rb] = await Promise.all([
      store.claimJob('a', 'job-1', { state: 'created' }),
      store.claimJob('b', 'job-1', { state: 'created' }),
    ]);
    const won = [ra, rb].filter((r) => 'record' in r);
    assert.equal(won.length, 1);
    assert.deepEqual(
      [ra, rb].filter((r) => 'refused' in r),
      [{ refused: 'claimed_by_other' }],
    );
    assert.equal((await store.list()).filter((r) => r.jobId === 'job-1').length, 1);
    assert.deepEqual(await store.claimJob('missing', 'job-2'), { refused: 'no_record' });
  });
});

describe('state store: layout and pruning', () => {
  it('rule: one pretty JSON record per submission in jobs/<key>.json with its state; locks and temporary files elsewhere', async () => {
    const store = tempStore();
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(record(`k${i % 4}`, { lastStatus: String(i) }))));
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.update(`k${i % 4}`, { state: 'created' })));
    assert.deepEqual(ls(path.join(store.dir, 'jobs')), ['k0.json', 'k1.json', 'k2.json', 'k3.json']);
    const text = fs.readFileSync(path.join(store.dir, 'jobs', 'k0.json'), 'utf8');
    assert.match(text, /^\{\n {2}"idempotencyKey": "k0",\n/, 'pretty JSON');
    assert.equal(JSON.parse(text).state, 'created');
    assert.deepEqual(ls(path.join(store.dir, 'tmp')), []);
    assert.deepEqual(ls(path.join(store.dir, 'locks')), []);
  });

  it('rule: prune removes temporary files older than 1 h and lock entries nobody holds, and keeps fresh ones', async () => {
    const now = Date.now();
    const store = tempStore({ now: () => now });
    // Submitted a minute before the store's clock (a fixed date would expire once the real date passed it).
    await store.put(record('k', { submittedAt: new Date(now - 60_000).toISOString() }));
    const tmp = path.join(store.dir, 'tmp');
    const locks = path.join(store.dir, 'locks');
    fs.writeFileSync(path.join(tmp, 'old.1.aa.tmp'), '{');
    fs.writeFileSync(path.join(tmp, 'fresh.1.bb.tmp'), '{');
    fs.writeFileSync(path.join(store.dir, 'jobs', 'k.json.1.cc.tmp'), '{'); // the earlier layout's temporary file
    fs.mkdirSync(path.join(locks, 'dead.lock'));
    fs.mkdirSync(path.join(locks, 'held.lock'));
    const twoHoursAgo = new Date(now - 2 * 60 * 60 * 1000);
    for (const f of [
      path.join(tmp, 'old.1.aa.tmp'),
      path.join(store.dir, 'jobs', 'k.json.1.cc.tmp'),
      path.join(locks, 'dead.lock'),
    ])
      fs.utimesSync(f, twoHoursAgo, twoHoursAgo);
    assert.equal(await store.prune(), 0, 'no record expired');
    assert.deepEqual(ls(tmp), ['fresh.1.bb.tmp']);
    assert.deepEqual(ls(path.join(store.dir, 'jobs')), ['k.json']);
    assert.deepEqual(ls(locks), ['held.lock']);
    assert.equal((await store.get('k'))?.state, 'pending');
  });

  it('rule: listing the store prunes stale leftovers cheaply (once a minute)', async () => {
    let now = Date.now();
    const store = tempStore({ now: () => now });
    await store.put(record('k', { submittedAt: new Date(now - 60_000).toISOString() }));
    const stale = path.join(store.dir, 'tmp', 'k.1.aa.tmp');
    const past = new Date(now - 2 * 60 * 60 * 1000);
    fs.writeFileSync(stale, '{');
    fs.utimesSync(stale, past, past);
    assert.deepEqual(
      (await store.list()).map((r) => r.idempotencyKey),
      ['k'],
    );
    assert.deepEqual(ls(path.join(store.dir, 'tmp')), []);
    fs.writeFileSync(stale, '{');
    fs.utimesSync(stale, past, past);
    now += 1000;
    await store.list();
    assert.deepEqual(ls(path.join(store.dir, 'tmp')), ['k.1.aa.tmp'], 'not again within the minute');
    now += 60_000;
    await store.list();
    assert.deepEqual(ls(path.join(store.dir, 'tmp')), []);
  });

  it('rule: prune drops records past expires_at (or 24 h without it), re-checked under the lock', async () => {
    const store = tempStore();
    await store.put(record('old', { expiresAt: '2026-11-22T11:00:00.000Z' }));
    await store.put(record('new', { expiresAt: '2026-11-23T11:00:00.000Z' }));
    await store.put(record('noexp', { submittedAt: '2026-11-21T11:00:00.000Z' }));
    assert.equal(await store.prune(Date.parse('2026-11-22T12:00:00Z')), 2);
    assert.deepEqual(
      (await store.list()).map((r) => r.idempotencyKey),
      ['new'],
    );
  });
});

describe('state store: forget, owner, hostile keys', () => {
  it('rule: forget removes the record whose Idempotency-Key or job id matches and returns it', async () => {
    const store = tempStore();
    await store.put(record('key-a', { state: 'created', jobId: 'job-a' }));
    await store.put(record('key-b', { state: 'created', jobId: 'job-b' }));
    assert.equal((await store.forget('key-a'))?.jobId, 'job-a');
    assert.equal((await store.forget('job-b'))?.idempotencyKey, 'key-b');
    assert.equal(await store.forget('job-b'), undefined);
    assert.equal(await store.forget('nothing'), undefined);
    assert.deepEqual(ls(path.join(store.dir, 'jobs')), []);
  });

  it("rule: records carry the submitter's pid and hostname (recordOwner) and keep them through updates", async () => {
    const store = tempStore();
    await store.put(record('k', recordOwner()));
    const updated = await store.update('k', { state: 'created' });
    assert.equal(updated?.pid, process.pid);
    assert.equal(typeof updated?.hostname, 'string');
    assert.ok(updated!.hostname!.length > 0);
  });

  it('rule: a hostile Idempotency-Key never becomes a path outside jobs/', async () => {
    const root = tempDir('cc-state-hostile-');
    const store = new StateStore(path.join(root, 'state'));
    await store.put(record('ok'));
    for (const key of ['../escape', '../../escape', '/tmp/escape', 'a/b', '', 'x'.repeat(256), 'a\\b', '@claims']) {
      await assert.rejects(store.put(record(key)), /not a usable Idempotency-Key/, key);
      await assert.rejects(store.update(key, { state: 'created' }), /not a usable Idempotency-Key/, key);
      await assert.rejects(store.remove(key), /not a usable Idempotency-Key/, key);
      assert.equal(await store.get(key), undefined);
      assert.equal(await store.forget(key), undefined);
    }
    assert.deepEqual(ls(root), ['state']);
    assert.deepEqual(ls(path.join(root, 'state', 'jobs')), ['ok.json']);
    assert.deepEqual(ls(path.join(root, 'state', 'locks')), []);
  });

  it('rule: a record stands for its own file: a key written inside it is ignored, a malformed one is skipped', async () => {
    const store = tempStore();
    await store.put(record('real'));
    fs.writeFileSync(path.join(store.dir, 'jobs', 'spoof.json'), JSON.stringify(record('real', { state: 'created' })));
    fs.writeFileSync(path.join(store.dir, 'jobs', 'broken.json'), '{"state":');
    fs.writeFileSync(path.join(store.dir, 'jobs', 'array.json'), '[]');
    assert.deepEqual((await store.list()).map((r) => r.idempotencyKey).sort(), ['real', 'spoof']);
    assert.equal((await store.forget('spoof'))?.idempotencyKey, 'spoof');
    assert.equal((await store.get('real'))?.state, 'pending');
  });

  it('rule: listing reads every record whole (one larger than a read, thousands at once) and skips what is no record', async function () {
    this.timeout(60_000);
    const store = tempStore();
    // Larger than the 64 KiB read buffer: read in several reads, never cut.
    const big = record('big', {
      submittedAt: '2026-11-21T10:00:00.000Z',
      workflowFile: `/w/${'x'.repeat(200_000)}.json`,
    });
    await store.put(big);
    const jobs = path.join(store.dir, 'jobs');
    // More files than one slice of reading: written directly (as another process's renames leave them).
    for (let i = 0; i < 3000; i++) {
      const r = record(`k${i}`, { submittedAt: new Date(Date.UTC(2026, 10, 22, 10, 0, i)).toISOString() });
      fs.writeFileSync(path.join(jobs, `k${i}.json`), `${JSON.stringify(r, null, 2)}\n`);
    }
    fs.mkdirSync(path.join(jobs, 'folder.json'));
    fs.writeFileSync(path.join(jobs, 'empty.json'), '');
    fs.writeFileSync(path.join(jobs, 'cut.json'), JSON.stringify(record('cut')).slice(0, 20));
    // A FIFO named like a record (no writer) is not waited on.
    if (process.platform !== 'win32') execFileSync('mkfifo', [path.join(jobs, 'fifo.json')]);
    const listed = await store.list();
    assert.equal(listed.length, 3001);
    assert.ok(listed[3000]!.workflowFile === big.workflowFile, 'the larger record, whole, oldest last');
    // Newest submission first.
    assert.deepEqual(
      listed.slice(0, 3).map((r) => r.idempotencyKey),
      ['k2999', 'k2998', 'k2997'],
    );
    assert.deepEqual(listed[2999], record('k0', { submittedAt: '2026-11-22T10:00:00.000Z' }));
  });
});

describe('state store: a record never goes back from a terminal status', () => {
  it('rule: update and mutate keep a terminal lastStatus (succeeded, failed, canceled, expired) against a non-terminal one or lost; other fields still change', async () => {
    const store = tempStore();
    for (const terminal of ['succeeded', 'failed', 'canceled', 'expired']) {
      const key = `k-${terminal}`;
      await store.put(record(key, { state: 'created', jobId: `j-${terminal}`, lastStatus: terminal }));
      for (const later of ['queued', 'running', 'canceling', 'lost']) {
        const after = await store.update(key, { lastStatus: later, expiresAt: '2026-11-23T10:00:00.000Z' });
        assert.equal(after?.lastStatus, terminal, `${terminal} went back to ${later}`);
        assert.equal(after?.expiresAt, '2026-11-23T10:00:00.000Z');
      }
      const mutated = await store.mutate(key, (current) => ({ ...current, lastStatus: 'running' }));
      assert.equal(mutated?.lastStatus, terminal);
      assert.equal((await store.get(key))?.lastStatus, terminal);
    }
  });

  it('rule: a status not terminal moves freely: queued to lost, and lost back to what a server says (running, then succeeded)', async () => {
    const store = tempStore();
    await store.put(record('k', { state: 'created', jobId: 'j', lastStatus: 'queued' }));
    assert.equal((await store.update('k', { lastStatus: 'lost' }))?.lastStatus, 'lost');
    assert.equal((await store.update('k', { lastStatus: 'running' }))?.lastStatus, 'running');
    assert.equal((await store.update('k', { lastStatus: 'succeeded' }))?.lastStatus, 'succeeded');
  });

  it('updateJob writes into every record of the job of that server, none of another job or server, and keeps a terminal status', async () => {
    const store = tempStore();
    await store.put(record('a', { state: 'created', jobId: 'j', lastStatus: 'queued' }));
    await store.put(record('b', { state: 'created', jobId: 'j', lastStatus: 'running' }));
    await store.put(record('c', { state: 'created', jobId: 'j', lastStatus: 'succeeded' }));
    await store.put(record('d', { state: 'created', jobId: 'other', lastStatus: 'queued' }));
    await store.put(record('e', { state: 'created', jobId: 'j', lastStatus: 'queued', baseUrl: 'http://b' }));
    const updated = await store.updateJob('http://a', 'j', { lastStatus: 'lost' });
    assert.deepEqual(updated.map((r) => r.idempotencyKey).sort(), ['a', 'b', 'c']);
    const by = new Map((await store.list()).map((r) => [r.idempotencyKey, r.lastStatus]));
    assert.deepEqual(Object.fromEntries(by), { a: 'lost', b: 'lost', c: 'succeeded', d: 'queued', e: 'queued' });
  });
});

describe('state store: retired keys (a key proven to stand for no job, after an unknown outcome)', () => {
  it('rule: retire names the successor in the same write, keeps the send time, and never retires twice or a key with a job', async () => {
    const store = tempStore();
    await store.put(record('k0', { state: 'outcome_unknown', sentAt: '2026-11-22T10:00:05.000Z' }));
    const retired = await store.retire('k0', { successorKey: 'k1', retiredAt: '2026-11-22T10:00:11.000Z' });
    assert.equal(retired?.state, 'retired');
    assert.equal(retired?.successorKey, 'k1');
    assert.equal(retired?.sentAt, '2026-11-22T10:00:05.000Z');
    assert.equal(retired?.retiredBy, 'listing');
    // Another process retiring it again keeps the first successor (the one that may have been sent).
    assert.equal(
      (await store.retire('k0', { successorKey: 'k2', retiredAt: '2026-11-22T10:00:12.000Z' }))?.successorKey,
      'k1',
    );
    await store.put(record('c', { state: 'created', jobId: 'j' }));
    assert.equal(
      (await store.retire('c', { successorKey: 'c1', retiredAt: '2026-11-22T10:00:12.000Z' }))?.state,
      'created',
    );
    assert.deepEqual(
      (await store.chain('k0')).currentKey,
      'k1',
      'the successor without a record is where the submission stands: unsent',
    );
  });

  it('rule: a retired record is left out of list() (it stands for no job) unless asked, and never takes a job (claimJob)', async () => {
    const store = tempStore();
    await store.put(record('k0', { state: 'retired', successorKey: 'k1' }));
    await store.put(record('k1', { state: 'created', jobId: 'j1', originKey: 'k0' }));
    assert.deepEqual(
      (await store.list()).map((r) => r.idempotencyKey),
      ['k1'],
    );
    assert.deepEqual((await store.list({ retired: true })).map((r) => r.idempotencyKey).sort(), ['k0', 'k1']);
    assert.deepEqual(await store.claimJob('k0', 'j9'), { refused: 'retired' });
  });

  it('rule: a late duplicate noted on a retired record is held like a job: no record claims it, and it is not noted twice', async () => {
    const store = tempStore();
    await store.put(record('k0', { state: 'retired', successorKey: 'k1' }));
    await store.put(record('other', { state: 'outcome_unknown' }));
    const late = { jobId: 'late-1', foundAt: '2026-11-22T10:01:00.000Z', canceled: true, status: 'canceled' };
    assert.deepEqual((await store.noteLateJob('k0', late))?.lateJobs, [late]);
    assert.equal(await store.noteLateJob('k0', late), undefined);
    assert.deepEqual(await store.claimJob('other', 'late-1'), { refused: 'claimed_by_other' });
  });
});
