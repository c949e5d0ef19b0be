/**
 * A job's end is handled once per machine (core state/endClaims.ts, jobs/jobEnds.ts step 1): the first process to
 * claim it downloads and tells; another that sees the same end waits while the owner runs, then reads its files and
 * tells nothing; a claim released after a failed download, or left by a process that died, is claimed again.
 * The rules over one state folder in this process (claimers told apart by an injected pid), then two real job-end
 * owners in two forked processes (fixtures/jobEndOwner.ts) against the emulator.
 */
import * as assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EndClaims, StateStore, isClaimGone, type EndClaimRecord, type JobRecord } from '../../src/core/state';
import { JobEnds, JobService, type Clock, type HandledEnd } from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import type { Emulator } from '../../src/emulator';
import { invertWorkflow } from './builders';
import type { OwnerReport } from './fixtures/jobEndOwner';
import { TERMINAL, until, useEmulator } from './harness';
import { tempDir } from './tmp';

const OWNER = path.join(__dirname, 'fixtures', 'jobEndOwner.js');
const BASE = 'http://server.test';

/** Waits a claimer may make in a test before it is stopped (a claim that would be waited on forever fails the test). */
const MAX_WAITS = 100;

/**
 * A clock whose waits take one turn of the event loop and are counted; `onWait` runs before each (a test makes
 * something happen "while" a claimer waits). Time stands still. A wait past {@link MAX_WAITS} rejects.
 */
function turnClock(onWait: (waits: number) => void = () => undefined): Clock & { waits: number } {
  const clock = {
    waits: 0,
    now: () => Date.parse('2026-11-25T10:00:00Z'),
    sleep: async (_ms: number, signal?: AbortSignal) => {
      clock.waits++;
      if (clock.waits > MAX_WAITS) throw new Error(`still waiting on another's claim after ${MAX_WAITS} looks`);
      onWait(clock.waits);
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    },
  };
  return clock;
}

describe("end claims: one process of the machine handles a job's end (state/endClaims.ts)", () => {
  let store: StateStore;
  beforeEach(() => {
    store = new StateStore(tempDir('cc-claims-'));
  });

  /** A claimer as process `pid` of this machine (every pid alive unless `dead` names it). */
  const claimer = (pid: number, clock: Clock, dead: number[] = []): EndClaims =>
    new EndClaims(store, { pid, hostname: 'here', isAlive: (p) => !dead.includes(p), clock });

  it("the first claim is the owner's; another process waits while it runs, then reads the files it told (never claims it too)", async () => {
    const clock = turnClock((waits) => {
      // The owner finishes while the second process waits on it.
      if (waits === 3 && 'mine' in first) void first.mine.told(['/out/a.png']);
    });
    const first = await claimer(101, clock).claim(BASE, 'job-1');
    assert.ok('mine' in first, 'the first claimer does not own the end');
    const second = await claimer(202, clock).claim(BASE, 'job-1');
    assert.ok('told' in second, 'a second process claimed an end its owner was still handling');
    assert.deepEqual([second.told.pid, second.told.files], [101, ['/out/a.png']]);
    assert.ok(clock.waits >= 3, 'the second process did not wait for the owner');
    // Once told, every later look says told at once.
    const third = await claimer(303, turnClock()).claim(BASE, 'job-1');
    assert.ok('told' in third);
  });

  it('a claim given up (a failed download) is claimed by the next process that sees the end', async () => {
    const first = await claimer(101, turnClock()).claim(BASE, 'job-1');
    assert.ok('mine' in first);
    await first.mine.release();
    const second = await claimer(202, turnClock()).claim(BASE, 'job-1');
    assert.ok('mine' in second, 'a released claim still blocks the end');
    // The released owner cannot mark told what it no longer owns.
    await first.mine.told(['/out/stale.png']);
    assert.equal((await claimer(303, turnClock()).get(BASE, 'job-1'))?.state, 'claimed');
  });

  it('a claim whose owner process died (this machine, pid gone) is taken over at once, never waited on', async () => {
    const first = await claimer(101, turnClock()).claim(BASE, 'job-1');
    assert.ok('mine' in first);
    const clock = turnClock();
    const second = await claimer(202, clock, [101]).claim(BASE, 'job-1');
    assert.ok('mine' in second, "a dead owner's claim was not taken over");
    assert.equal(clock.waits, 0);
    assert.equal(second.mine.record.pid, 202);
  });

  it('ends of other jobs or servers are claimed separately', async () => {
    const clock = turnClock();
    assert.ok('mine' in (await claimer(101, clock).claim(BASE, 'job-1')));
    assert.ok('mine' in (await claimer(202, clock).claim(BASE, 'job-2')));
    assert.ok('mine' in (await claimer(202, clock).claim('http://other.test', 'job-1')));
    assert.equal(clock.waits, 0);
  });

  it("isClaimGone: this machine's dead pid, or any host's claim older than the stale bound; never a told claim", () => {
    const claim = (fields: Partial<EndClaimRecord>): EndClaimRecord => ({
      baseUrl: BASE,
      jobId: 'j',
      state: 'claimed',
      pid: 7,
      hostname: 'here',
      claimedAt: '2026-11-25T10:00:00Z',
      ...fields,
    });
    const options = {
      now: Date.parse('2026-11-25T10:05:00Z'),
      hostname: 'here',
      isAlive: (pid: number) => pid === 7,
      staleMs: 10 * 60_000,
    };
    assert.equal(isClaimGone(claim({}), options), false, 'a live owner');
    assert.equal(isClaimGone(claim({ pid: 8 }), options), true, 'a dead pid of this machine');
    assert.equal(
      isClaimGone(claim({ pid: 8, hostname: 'elsewhere' }), options),
      false,
      'a pid of another machine means nothing while recent',
    );
    assert.equal(
      isClaimGone(claim({ hostname: 'elsewhere', claimedAt: '2026-11-25T09:50:00Z' }), options),
      true,
      'older than the stale bound',
    );
    assert.equal(isClaimGone(claim({ state: 'told', pid: 8 }), options), false, 'a told end is never handled again');
  });
});

/** Resolves with the first message of `child` that `pick` accepts; rejects when it exits first. */
function message<T>(child: ChildProcess, pick: (m: Record<string, unknown>) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown): void => {
      if (m && typeof m === 'object' && pick(m as Record<string, unknown>)) {
        child.off('message', onMessage);
        resolve(m as T);
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before its message`)));
  });
}

/** Submits the sample workflow as VS Code does (remembered, client `vscode`) and waits until the job succeeded. */
async function rememberedJob(
  emu: Emulator,
  store: StateStore,
  color: number,
): Promise<{ jobId: string; record: JobRecord }> {
  const submission = await new V2Client({ baseUrl: emu.baseUrl }).submit(invertWorkflow({ color, prefix: 'ends' }), {
    store,
    clientName: 'vscode',
  });
  const jobId = submission.job.id;
  const done = await until(emu, jobId, (j) => TERMINAL.includes(j.status));
  assert.equal(done.status, 'succeeded');
  const record = (await store.list()).find((r) => r.jobId === jobId)!;
  assert.ok(
    record.lastStatus === undefined || !TERMINAL.includes(record.lastStatus),
    'the record is terminal before any owner read it',
  );
  return { jobId, record };
}

/** How many output contents the emulator served (each download is one GET of `…/content`). */
const contentGets = (emu: Emulator): number =>
  emu.requests.filter((r) => r.method === 'GET' && /\/content$/.test(r.path)).length;

describe('end claims: two job-end owners in two processes on one state folder (against the emulator)', () => {
  const emu = useEmulator();
  const children: ChildProcess[] = [];
  /** A forked job-end owner (fixtures/jobEndOwner.ts); killed after the test if it is still running. */
  const forkOwner = (args: string[]): ChildProcess => {
    const child = fork(OWNER, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    return child;
  };
  afterEach(() => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('three jobs that ended while no window watched, read at start-up by two windows at once: each output downloaded once, each job told once', async function () {
    this.timeout(60_000);
    const stateDir = tempDir('cc-two-owners-');
    const store = new StateStore(stateDir);
    const root = tempDir('cc-two-owners-out-');
    const jobs = [];
    for (const color of [0x112233, 0x445566, 0x778899]) jobs.push((await rememberedJob(emu(), store, color)).jobId);
    const before = contentGets(emu());
    const owners = [0, 1].map(() => forkOwner(['owner', stateDir, emu().baseUrl, root]));
    await Promise.all(owners.map((o) => message(o, (m) => m.ready === true)));
    // Both windows start up at the same moment.
    const reports = owners.map((o) => message<OwnerReport>(o, (m) => Array.isArray(m.ends)));
    for (const o of owners) o.send('resume');
    const [a, b] = await Promise.all(reports);

    assert.equal(contentGets(emu()) - before, jobs.length, 'not exactly one download per output on the machine');
    assert.deepEqual(
      [...a!.told, ...b!.told].sort(),
      [...jobs].sort(),
      'not exactly one telling per job on the machine',
    );
    for (const jobId of jobs) {
      const files = fs.readdirSync(path.join(root, jobId)).filter((f) => !f.startsWith('.'));
      assert.equal(files.length, 1, `job ${jobId}: ${files.join(', ')}`);
      // Each window shows the job ended with its output on disk: the owner's file, read by the other from the claim.
      const [ownEnd, otherEnd] = [a!, b!].map((r) => r.ends.find((e) => e.jobId === jobId));
      assert.ok(ownEnd && otherEnd, `job ${jobId} was not handled by both windows`);
      assert.deepEqual(ownEnd.files, otherEnd.files);
      assert.deepEqual(ownEnd.files, [path.join(root, jobId, files[0]!)]);
      assert.equal([ownEnd, otherEnd].filter((e) => e.toldElsewhere).length, 1);
    }
    for (const r of await store.list()) assert.equal(r.lastStatus, 'succeeded');
  });

  it("a window killed while it owned a job's end does not block it: the next start-up takes the end over, downloads once and tells once", async function () {
    this.timeout(30_000);
    const stateDir = tempDir('cc-dead-owner-');
    const store = new StateStore(stateDir);
    const { jobId } = await rememberedJob(emu(), store, 0x224466);
    const dying = forkOwner(['claim', stateDir, emu().baseUrl, jobId]);
    await message(dying, (m) => m.claimed === true);
    const exited = new Promise((resolve) => dying.once('exit', resolve));
    dying.kill('SIGKILL');
    await exited;

    const before = contentGets(emu());
    const service = new JobService<{ backend: V2JobBackend }>({
      clients: {
        identity: async () => emu().baseUrl,
        create: async () => ({ backend: new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl })) }),
      },
      store,
      log: { info: () => undefined, warn: () => undefined },
      clientName: 'vscode',
    });
    const told: HandledEnd[][] = [];
    const root = tempDir('cc-dead-owner-out-');
    // A wait on the dead owner would poll forever: the test clock gives up after MAX_WAITS looks (a failure, not a hang).
    const clock = turnClock();
    const ends = new JobEnds<{ backend: V2JobBackend }>({
      jobs: service,
      store,
      log: { info: () => undefined, warn: () => undefined },
      outputDir: async (id) => {
        const dir = path.join(root, id);
        await fs.promises.mkdir(dir, { recursive: true });
        return dir;
      },
      tell: (e) => told.push(e),
      claims: { clock },
    });
    const found = await ends.resume();
    assert.deepEqual(
      found.map((e) => [e.job.id, e.downloadError, e.toldElsewhere]),
      [[jobId, undefined, undefined]],
      'the end was not taken over from the dead owner',
    );
    assert.equal(clock.waits, 0, 'the dead owner was waited on');
    assert.equal(contentGets(emu()) - before, 1);
    assert.deepEqual(
      told.map((t) => t.map((e) => e.job.id)),
      [[jobId]],
    );
    const claim = await new EndClaims(store).get(emu().baseUrl, jobId);
    assert.deepEqual(
      [claim?.state, claim?.pid, claim?.hostname],
      ['told', process.pid, os.hostname()],
      'the end is not told by the process that took it over',
    );
    ends.dispose();
    service.dispose();
  });
});
