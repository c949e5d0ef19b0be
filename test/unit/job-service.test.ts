/**
 * The job service (one owner of the job state the views share): one client per configured settings, rebuilt when the
 * base URL or key changes; one watch per job however many follow it; a terminal status published only once GET
 * confirms it; remembered submissions reconciled at start-up; dispose aborts everything. Against the in-process
 * emulator (jobs kept running with `nodeDelayMs`) and, for the order of stream and GET, a scripted loopback server.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import type { ServerResponse } from 'node:http';
import {
  AbortError,
  InputError,
  JobLostError,
  JobService,
  ManualClock,
  isNotFound,
  isTerminalStatus,
  type Clock,
  type JobServiceOptions,
  type JobState,
} from '../../src/core';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { StateStore } from '../../src/core/state';
import { canonicalJson, hashBytes } from '../../src/core/util';
import { startEmulator, type Emulator } from '../../src/emulator';
import { errorEnvelope, invertWorkflow, job } from './builders';
import { submit, until, useEmulator } from './harness';
import { startServer } from './httpServer';
import { tempDir } from './tmp';

/** What a test changes to reconfigure the service: the settings that make a client. */
interface Settings {
  baseUrl: string;
  apiKey?: string;
  clock?: Clock;
  maxStreams?: number;
}

/** A connection of the harness: a v2 job backend, and its client (to count its requests and closes). */
interface HarnessConnection {
  backend: V2JobBackend;
  client: V2Client;
}

/** A service whose connections follow `settings`, with every client, close and request (`http.send`) recorded. */
function harnessService(settings: Settings, options: Partial<JobServiceOptions<HarnessConnection>> = {}) {
  const created: V2Client[] = [];
  const closed: V2Client[] = [];
  const sends: { client: V2Client; target: string }[] = [];
  const lines: string[] = [];
  const store = options.store ?? new StateStore(tempDir('cc-jobservice-'));
  const service = new JobService<HarnessConnection>({
    clients: {
      identity: async () => {
        if (settings.baseUrl === 'not a url')
          throw new InputError('bad_base_url', 'Setting comfyCloud.baseUrl: not a URL');
        return JSON.stringify([settings.baseUrl, settings.apiKey]);
      },
      create: async () => {
        const client = new V2Client({
          baseUrl: settings.baseUrl,
          apiKey: settings.apiKey,
          clock: settings.clock,
          maxStreams: settings.maxStreams,
        });
        const send = client.http.send.bind(client.http);
        client.http.send = (method, target, opts) => {
          sends.push({ client, target: String(target) });
          return send(method, target, opts);
        };
        const close = client.close.bind(client);
        client.close = () => {
          closed.push(client);
          return close();
        };
        created.push(client);
        return { backend: new V2JobBackend(client), client };
      },
    },
    store,
    log: { info: (c, m) => lines.push(`info [${c}] ${m}`), warn: (c, m) => lines.push(`warn [${c}] ${m}`) },
    clientName: 'vscode',
    ...options,
  });
  return { service, store, created, closed, sends, lines };
}

/** The GET requests of job `id`'s event stream that the emulator received. */
function streamsOf(emu: Emulator, id: string): number {
  return emu.requests.filter((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${id}/events`).length;
}

/** Resolves with the first change that `predicate` accepts. */
function changeWhere(service: JobService<HarnessConnection>, predicate: (c: JobState) => boolean): Promise<JobState> {
  return new Promise((resolve) => {
    const sub = service.onDidChangeJob((c) => {
      if (!predicate(c)) return;
      sub.dispose();
      resolve(c);
    });
  });
}

async function rejectsWithAbort(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (err: unknown) => AbortError.is(err));
}

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

describe("job service: the one source of each job's state (kept, fed by every read through a lease)", () => {
  const emu = useEmulator({ nodeDelayMs: 20 });

  it("rule: a job's state is kept after its watch ends: the final job, not watched any more", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = (await submit(emu(), invertWorkflow({ prefix: 'js-kept' }))).body.id as string;
      const final = await service.follow(id).done;
      assert.equal(service.isWatched(emu().baseUrl, id), false);
      assert.deepEqual(service.state(emu().baseUrl, id)?.job, final.job);
      assert.equal(service.state(emu().baseUrl, id)?.requestId, final.requestId);
    } finally {
      service.dispose();
    }
  });

  it("rule: a watch through a lease's backend (a batch runner's, the job-end owner's) follows the service's one watch of the job: one event stream, one final job", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    emu().holdNodes({});
    try {
      const id = (await submit(emu(), invertWorkflow({ prefix: 'js-shared-backend' }))).body.id as string;
      await emu().whenHeld((n) => n.jobId === id);
      const follow = service.follow(id);
      await changeWhere(service, (c) => c.job.id === id && c.job.status === 'running');
      const lease = await service.lease();
      const updates: string[] = [];
      const viaBackend = lease.backend.watch(id, { onUpdate: (u) => updates.push(u.type) });
      emu().holdNodes(null);
      const [followed, watched] = await Promise.all([follow.done, viaBackend]);
      lease.release();
      assert.equal(streamsOf(emu(), id), 1, "the backend's watch opened a stream of its own");
      assert.equal(watched, followed, "both get the one watch's final job");
      assert.equal(watched.job.status, 'succeeded');
      assert.ok(
        updates.includes('progress'),
        `the backend's watcher was told the job's updates: ${updates.join(', ')}`,
      );
    } finally {
      emu().holdNodes(null);
      service.dispose();
    }
  });

  it("rule: a watch through a lease's backend of a job the server does not know rejects with its 404, as a backend's watch does", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    try {
      await assert.rejects(
        service.use((lease) => lease.backend.watch('00000000-0000-4000-8000-000000000000', { signal: lease.signal })),
        (err: unknown) => isNotFound(err),
      );
    } finally {
      service.dispose();
    }
  });

  it("rule: a GET through a lease's backend is the server's word: the job's state is published and kept, no watch needed", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = (await submit(emu(), invertWorkflow({ prefix: 'js-get' }))).body.id as string;
      await until(emu(), id, (j) => j.status === 'succeeded');
      const published = changeWhere(service, (c) => c.job.id === id);
      const answer = await service.use((lease) => lease.backend.get(id, lease.signal));
      const state = await published;
      assert.deepEqual(state.job, answer.job);
      assert.equal(service.state(emu().baseUrl, id)?.job.status, 'succeeded');
      assert.equal(service.isWatched(emu().baseUrl, id), false);
    } finally {
      service.dispose();
    }
  });

  it("rule: a page of the listing through a lease's backend gives each listed job its state; a job already ended keeps its own", async () => {
    const { service } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const id = (await submit(emu(), invertWorkflow({ prefix: 'js-listed' }))).body.id as string;
      await until(emu(), id, (j) => j.status === 'succeeded');
      const page = await service.use((lease) => lease.backend.list({ limit: 50, signal: lease.signal }));
      assert.ok(page.jobs.some((j) => j.id === id));
      for (const listed of page.jobs) assert.equal(service.state(emu().baseUrl, listed.id)?.job.status, listed.status);
      // Read again: nothing new, nothing published.
      const changes: JobState[] = [];
      const sub = service.onDidChangeJobState((c) => changes.push(c));
      await service.use((lease) => lease.backend.list({ limit: 50, signal: lease.signal }));
      sub.dispose();
      assert.deepEqual(
        changes.map((c) => c.job.id),
        [],
      );
    } finally {
      service.dispose();
    }
  });
});

describe('job service: reconciling at start-up', () => {
  const emu = useEmulator();

  it('rule: start() adopts an orphaned pending record (a submitter that died before hearing back) and logs it', async () => {
    const dead = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      child.once('exit', () => resolve(child.pid!));
    });
    const { service, store, lines } = harnessService({ baseUrl: emu().baseUrl });
    try {
      const workflow = invertWorkflow({ prefix: 'js-reconcile' });
      const direct = new V2Client({ baseUrl: emu().baseUrl });
      const sub = await direct.jobs.submit(workflow);
      await direct.close();
      await store.put({
        idempotencyKey: 'k-orphan',
        baseUrl: direct.http.baseUrl,
        state: 'pending',
        submittedAt: sub.job.created_at!,
        workflowHash: await hashBytes(canonicalJson(workflow)),
        pid: dead,
        hostname: os.hostname(),
        client: 'vscode',
      });
      await service.start();
      const record = await store.get('k-orphan');
      assert.equal(record?.state, 'created');
      assert.equal(record?.jobId, sub.job.id);
      assert.ok(
        lines.some((l) => l.startsWith('info [jobs] Idempotency-Key k-orphan: adopted')),
        lines.join('\n'),
      );
    } finally {
      service.dispose();
    }
  });

  it('rule: start() never rejects: a failure (a bad base URL) is logged as a warning', async () => {
    const { service, lines } = harnessService({ baseUrl: 'not a url' });
    try {
      await service.start();
      assert.ok(
        lines.some((l) => l.startsWith('warn [jobs]') && l.includes('bad_base_url')),
        lines.join('\n'),
      );
    } finally {
      service.dispose();
    }
  });
});

describe('job service: one client per configured settings', () => {
  const a = useEmulator({ tokens: ['key-1', 'key-2'] });
  const b = useEmulator();

  it('rule: leases share one client; a new API key or base URL rebuilds it, and the old one is closed once unused', async () => {
    const settings: Settings = { baseUrl: a().baseUrl, apiKey: 'key-1' };
    const { service, created, closed } = harnessService(settings);
    try {
      const [one, two] = await Promise.all([service.lease(), service.lease()]);
      assert.equal(one.connection.client, two.connection.client);
      assert.equal(created.length, 1);

      settings.apiKey = 'key-2';
      const three = await service.lease();
      assert.notEqual(three.connection.client, one.connection.client);
      assert.deepEqual(closed, [], 'still leased: not closed');
      one.release();
      two.release();
      two.release(); // idempotent
      assert.deepEqual(closed, [one.connection.client]);
      await three.connection.client.jobs.list();
      assert.equal(a().requests.at(-1)?.headers.authorization, 'Bearer key-2');

      settings.baseUrl = b().baseUrl;
      settings.apiKey = undefined;
      const four = await service.lease();
      assert.equal(four.backend.baseUrl, b().baseUrl);
      three.release();
      assert.deepEqual(closed, [one.connection.client, three.connection.client]);
      four.release();
      assert.equal(closed.length, 2, 'the current client stays open between uses');
      assert.equal((await service.lease()).connection.client, four.connection.client);
    } finally {
      service.dispose();
    }
  });

  it('rule: refresh() after a settings change closes an idle client at once; the next lease builds the new one', async () => {
    const settings: Settings = { baseUrl: a().baseUrl, apiKey: 'key-1' };
    const { service, created, closed } = harnessService(settings);
    try {
      (await service.lease()).release();
      await service.refresh();
      assert.deepEqual(closed, [], 'unchanged settings: kept');
      settings.apiKey = 'key-2';
      await service.refresh();
      assert.deepEqual(closed, [created[0]]);
      (await service.lease()).release();
      assert.equal(created.length, 2);
    } finally {
      service.dispose();
    }
  });
});

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
