/**
 * The job service (one owner of the job state the views share): one watch per job however many follow it, recordsEnd,
 * a terminal status published only once GET confirms it, and one published state per job. Against the in-process
 * emulator (jobs kept running with `nodeDelayMs`) and, for the order of stream and GET, a scripted loopback server.
 */
import * as assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { ManualClock, isTerminalStatus, type JobState } from '../../src/core';
import { errorEnvelope, invertWorkflow, job } from './builders';
import { submit, useEmulator } from './harness';
import { startServer } from './httpServer';
import { harnessService, rejectsWithAbort, streamsOf } from './job-service.fixtures';

describe('job service: one watch per job', () => {
  const emu = useEmulator({ nodeDelayMs: 60 });

  it('rule: many followers of a job share one watch: one event stream, the same final job (from GET) for all', async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = (await submit(emu(), invertWorkflow({ prefix: 'js-shared' }))).body.id as string;
      const changes: JobState[] = [];
      service.onDidChangeJob((c) => changes.push(c));
      const follows = [service.follow(id), service.follow(id), service.follow(id)];
      const finals = await Promise.all(follows.map((f) => f.done));
      assert.equal(streamsOf(emu(), id), 1);
      for (const final of finals) assert.equal(final.job.status, 'succeeded');
      assert.equal(new Set(finals).size, 1, "every follower gets the one watch's final snapshot");
      assert.equal(changes.at(-1)?.job.status, 'succeeded');
      assert.equal(changes.at(-1)?.baseUrl, emu().baseUrl);
      assert.ok(changes.every((c) => c.job.id === id));
    } finally {
      service.dispose();
    }
  });

  it("rule: the watches of all jobs share the client's stream budget (beyond it they poll)", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl, maxStreams: 1 });
    try {
      const a = (await submit(emu(), invertWorkflow({ prefix: 'js-budget-a' }))).body.id as string;
      const b = (await submit(emu(), invertWorkflow({ prefix: 'js-budget-b' }))).body.id as string;
      const finals = await Promise.all([service.follow(a).done, service.follow(b).done]);
      assert.deepEqual(
        finals.map((f) => f.job.status),
        ['succeeded', 'succeeded'],
      );
      assert.equal(streamsOf(emu(), a) + streamsOf(emu(), b), 1);
    } finally {
      service.dispose();
    }
  });

  it("rule: a submission's own watch runs to the job's end when the submitter stops waiting, and records the final status", async () => {
    const { service, store } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const stopWaiting = new AbortController();
      let jobId = '';
      const lease = await service.lease();
      const submitted = service.submit(lease, invertWorkflow({ prefix: 'js-own' }), {
        signal: stopWaiting.signal,
        onSubmitted: (s) => {
          jobId = s.job.id;
          stopWaiting.abort();
        },
      });
      await rejectsWithAbort(submitted);
      lease.release();
      // A view following the job now joins the submission's watch, still under way.
      const final = await service.follow(jobId).done;
      assert.equal(final.job.status, 'succeeded');
      assert.equal(streamsOf(emu(), jobId), 1);
      const [record] = (await store.list()).filter((r) => r.jobId === jobId);
      assert.equal(record.lastStatus, 'succeeded');
      assert.equal(record.client, 'vscode');
      assert.equal(record.expiresAt, final.job.expiresAt ?? undefined);
    } finally {
      service.dispose();
    }
  });
});

describe('job service: recordsEnd', () => {
  const emu = useEmulator();

  it("rule: with recordsEnd false a submission's watch leaves its record as it was at the end (the job-end owner writes it after the download)", async () => {
    const { service, store } = harnessService({ baseUrl: emu().baseUrl }, { recordsEnd: false });
    try {
      const lease = await service.lease();
      const { submission, final } = await service.submit(lease, invertWorkflow({ prefix: 'js-records-end' }));
      lease.release();
      assert.equal(final.job.status, 'succeeded');
      const [record] = (await store.list()).filter((r) => r.jobId === submission.job.id);
      assert.ok(record, 'the submission is remembered');
      assert.notEqual(
        record.lastStatus,
        'succeeded',
        'the service wrote the final status although its owner writes it',
      );
    } finally {
      service.dispose();
    }
  });
});

describe('job service: a terminal status is published only once GET confirms it', () => {
  it("rule: a terminal status seen on the stream is held back until a GET answers it; the published final is the GET's", async () => {
    const base = job('running');
    const id = base.id as string;
    let confirmed = false;
    let getsAfterStream = 0;
    let gotGetAfterStream!: () => void;
    const getAfterStream = new Promise<void>((resolve) => (gotGetAfterStream = resolve));
    let streamed = false;
    const server = await startServer((req, res: ServerResponse) => {
      if (req.url?.endsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: status\ndata: {"status":"running","queue_position":null}\n\n');
        res.end('event: status\ndata: {"status":"succeeded","queue_position":null}\n\n');
        streamed = true;
        return;
      }
      const body = confirmed ? { ...base, status: 'succeeded', completed_at: '2026-11-22T10:00:09Z' } : base;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
      if (streamed && ++getsAfterStream === 1) gotGetAfterStream();
    });
    const clock = new ManualClock(Date.now());
    const { service } = harnessService({ baseUrl: server.origin, clock });
    try {
      const early: string[] = [];
      const statuses: string[] = [];
      service.onDidChangeJob((c) => {
        if (isTerminalStatus(c.job.status) && !confirmed) early.push(c.job.status);
      });
      const follow = service.follow(id, { onUpdate: (u) => u.type === 'status' && statuses.push(u.status) });
      // The stream said succeeded and ended; the GET it woke said running: nothing terminal may be out yet.
      await getAfterStream;
      assert.deepEqual(early, []);
      assert.deepEqual(statuses, ['running']);
      confirmed = true;
      // Time passes until the next poll has run (the poll's sleep may not be registered yet: keep moving time on).
      let settled = false;
      void follow.done.finally(() => (settled = true));
      while (!settled) {
        clock.advance(60_000);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const final = await follow.done;
      assert.equal(final.job.status, 'succeeded');
      assert.equal(final.job.completedAt, '2026-11-22T10:00:09Z');
      assert.deepEqual(early, []);
      assert.deepEqual(statuses, ['running', 'succeeded']);
    } finally {
      service.dispose();
      await server.close();
    }
  });
});

describe('job service: one state per job, published', () => {
  it("rule: a preview frame and an outage change a job's state (onDidChangeJobState) but not its job (onDidChangeJob); the service holds the state, and a server answer ends the outage", async () => {
    const base = job('running', { progress: { value: 0.4, nodes_done: 2, nodes_total: 5 } });
    const id = base.id as string;
    let gets = 0;
    let finished = false;
    const server = await startServer((req, res: ServerResponse) => {
      if (req.url?.endsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: preview\ndata: {"node_id":"2","content_type":"image/png","data_base64":"AAAA"}\n\n');
        return; // kept open: the stream stays healthy
      }
      gets++;
      if (gets === 2) {
        // One transient failure of a poll: the watch rides it out.
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(errorEnvelope('upstream_error'));
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(finished ? { ...base, status: 'succeeded', completed_at: '2026-11-22T10:00:09Z' } : base));
    });
    const clock = new ManualClock(Date.now());
    const { service } = harnessService({ baseUrl: server.origin, clock });
    const jobs: JobState[] = [];
    const states: JobState[] = [];
    service.onDidChangeJob((s) => jobs.push(s));
    service.onDidChangeJobState((s) => states.push(s));
    /** Moves time on (the watch's polls and retry waits) until `done` holds. */
    const advanceUntil = async (done: () => boolean): Promise<void> => {
      while (!done()) {
        clock.advance(1_000);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    try {
      const follow = service.follow(id);
      await advanceUntil(() => states.some((s) => s.preview !== null));
      const withPreview = states.find((s) => s.preview !== null)!;
      assert.deepEqual(
        { ...withPreview.preview },
        { nodeId: '2', contentType: 'image/png', dataBase64: 'AAAA', seq: 1 },
      );
      assert.equal(withPreview.capabilities.assets, true);
      assert.equal(
        jobs.filter((s) => s.preview !== null && s.job === withPreview.job).length,
        0,
        'a preview alone was published as a change of the job',
      );
      assert.equal(
        service.state(server.origin, id)?.preview?.seq,
        1,
        'the service does not hold the state it published',
      );
      await advanceUntil(() => states.some((s) => s.outage !== null));
      const outage = states.find((s) => s.outage !== null)!.outage!;
      assert.match(outage.reason, /upstream_error/);
      assert.ok(outage.retryInMs > 0);
      await advanceUntil(() => gets >= 3 && states.at(-1)?.outage === null);
      assert.equal(
        jobs.filter((s) => s.outage !== null).length,
        0,
        'an outage alone was published as a change of the job',
      );
      finished = true;
      let settled = false;
      void follow.done.finally(() => (settled = true));
      await advanceUntil(() => settled);
      assert.equal((await follow.done).job.status, 'succeeded');
      assert.equal(jobs.at(-1)?.job.status, 'succeeded');
      assert.equal(jobs.at(-1)?.job.completedAt, '2026-11-22T10:00:09Z');
    } finally {
      service.dispose();
      await server.close();
    }
  });
});
