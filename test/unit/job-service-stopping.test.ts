/**
 * The job service stopping: watches stopped when nothing follows them and dispose aborting everything; and a job its
 * server no longer knows is published as lost. Against the in-process emulator.
 */
import * as assert from 'node:assert/strict';
import { JobLostError, ManualClock } from '../../src/core';
import { startEmulator, type Emulator } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { submit, useEmulator } from './harness';
import { changeWhere, harnessService, rejectsWithAbort } from './job-service.fixtures';

describe('job service: stopping watches', () => {
  // Jobs that run long (2 s a node): they are still running when the tests stop following them.
  const emu = useEmulator({ nodeDelayMs: 2000 });

  it("rule: the watch stops when its last follower leaves: the follower's done rejects with AbortError, a new follower starts a new watch", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = (await submit(emu(), invertWorkflow({ prefix: 'js-leave' }))).body.id as string;
      const seen = changeWhere(service, (c) => c.job.id === id);
      const first = service.follow(id);
      const second = service.follow(id);
      await seen;
      second.dispose();
      await rejectsWithAbort(second.done);
      assert.ok(service.isWatched(emu().baseUrl, id), 'one follower left: the watch goes on');
      first.dispose();
      await rejectsWithAbort(first.done);
      assert.equal(service.isWatched(emu().baseUrl, id), false, 'no follower left: no watch');
      assert.equal(service.latest(emu().baseUrl, id)?.id, id, "the job's last state is kept");
      // A new follower starts a new watch: its first update (the stream's status on connect) comes to it.
      let heard!: () => void;
      const updated = new Promise<void>((resolve) => (heard = resolve));
      const third = service.follow(id, { onUpdate: () => heard() });
      await updated;
      assert.ok(service.isWatched(emu().baseUrl, id));
      third.dispose();
      await rejectsWithAbort(third.done);
    } finally {
      service.dispose();
    }
  });

  it('rule: dispose aborts every watch and request: followers and submissions reject with AbortError, no request after', async () => {
    const clock = new ManualClock(Date.now());
    const { service, sends, closed, created } = harnessService({ baseUrl: emu().baseUrl, clock });
    const running = (await submit(emu(), invertWorkflow({ prefix: 'js-dispose-a' }))).body.id as string;
    const watched = changeWhere(service, (c) => c.job.id === running);
    const follow = service.follow(running);
    await watched;
    // A second job, submitted through the service: queued behind the first, its own watch under way.
    const lease = await service.lease();
    let queuedId = '';
    const queuedWatched = changeWhere(service, (c) => c.job.id === queuedId);
    const submitted = service.submit(lease, invertWorkflow({ prefix: 'js-dispose-b' }), {
      onSubmitted: (s) => (queuedId = s.job.id),
    });
    submitted.catch(() => undefined);
    await queuedWatched;

    service.dispose();
    const before = sends.length;
    await rejectsWithAbort(follow.done);
    await rejectsWithAbort(submitted);
    await rejectsWithAbort(service.lease());
    await rejectsWithAbort(service.follow(running).done);
    // Time passes for every poll, backoff and idle timer of the watches: none may send anything.
    clock.advance(10 * 60_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(
      sends.length,
      before,
      sends
        .slice(before)
        .map((s) => s.target)
        .join('\n'),
    );
    assert.deepEqual(closed, created, 'every client closed');
    lease.release();
  });
});

describe('job service: a job its server no longer knows is lost', () => {
  const emu = useEmulator({});

  it('rule: a 404 ends the watch as lost: its state is published with status lost, every record of the job says lost, done rejects with JobLostError (one sentence, code job_lost)', async () => {
    const { service, store } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = 'no-such-job-0001';
      const base = {
        baseUrl: emu().baseUrl,
        state: 'created' as const,
        jobId: id,
        submittedAt: '2026-11-22T10:00:00.000Z',
        lastStatus: 'queued',
      };
      await store.put({ ...base, idempotencyKey: 'lost-a' });
      await store.put({ ...base, idempotencyKey: 'lost-b', lastStatus: 'running' });
      await store.put({ ...base, idempotencyKey: 'other', jobId: 'another-job' });
      const lost = changeWhere(service, (c) => c.job.id === id);
      const statuses: string[] = [];
      const follow = service.follow(id, { onUpdate: (u) => u.type === 'status' && statuses.push(u.status) });
      await assert.rejects(follow.done, (err: unknown) => {
        assert.ok(JobLostError.is(err), String(err));
        assert.equal(err.code, 'job_lost');
        assert.equal(err.jobId, id);
        assert.match(
          err.message,
          /no longer knows job no-such-job-0001: it expired, or the server was restarted without it.*Re-run it/,
        );
        return true;
      });
      const state = await lost;
      assert.equal(state.job.status, 'lost');
      assert.equal(state.baseUrl, emu().baseUrl);
      assert.deepEqual(statuses, ['lost']);
      const by = Object.fromEntries((await store.list()).map((r) => [r.idempotencyKey, r.lastStatus]));
      assert.deepEqual(by, { 'lost-a': 'lost', 'lost-b': 'lost', other: 'queued' });
    } finally {
      service.dispose();
    }
  });

  it("rule: a server restarted without the job while it ran (same port): the running job becomes lost, out of the watches, and its submission's record says lost", async () => {
    let first: Emulator | undefined = await startEmulator({ port: 0 });
    let second: Emulator | undefined;
    const { service, store } = harnessService({ baseUrl: first.baseUrl });
    try {
      first.holdNodes({});
      const submitting = service.use((lease) => service.submit(lease, invertWorkflow({ prefix: 'js-lost' })));
      submitting.catch(() => undefined);
      const held = await first.whenHeld();
      const running = await changeWhere(service, (c) => c.job.id === held.jobId && c.job.status === 'running');
      assert.equal(running.job.status, 'running');
      const lost = changeWhere(service, (c) => c.job.id === held.jobId && c.job.status === 'lost');
      const port = Number(new URL(first.baseUrl).port);
      await first.close();
      first = undefined;
      second = await startEmulator({ port });
      const state = await lost;
      // The last job known, with the client's status.
      assert.equal(state.job.id, held.jobId);
      assert.equal(state.job.queuePosition, null);
      await assert.rejects(submitting, (err: unknown) => JobLostError.is(err));
      assert.equal(service.isWatched(state.baseUrl, held.jobId), false, 'the lost job is watched no more');
      assert.equal(service.state(state.baseUrl, held.jobId)?.job.status, 'lost', 'its last state says lost');
      const records = (await store.list()).filter((r) => r.jobId === held.jobId);
      assert.equal(records.length, 1);
      assert.equal(records[0]!.lastStatus, 'lost');
    } finally {
      service.dispose();
      await first?.close();
      await second?.close();
    }
  });

  it('rule: a job terminal in its record stays so when the server no longer knows it (the store never goes back from a terminal status)', async () => {
    const { service, store } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = 'no-such-job-0002';
      await store.put({
        idempotencyKey: 'ended',
        baseUrl: emu().baseUrl,
        state: 'created',
        jobId: id,
        submittedAt: '2026-11-22T10:00:00.000Z',
        lastStatus: 'succeeded',
      });
      await assert.rejects(service.follow(id).done, (err: unknown) => JobLostError.is(err));
      assert.equal((await store.get('ended'))?.lastStatus, 'succeeded');
    } finally {
      service.dispose();
    }
  });
});
