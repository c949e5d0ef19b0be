/**
 * The job service as the one source of each job's state: kept, and fed by every read through a lease; remembered
 * submissions reconciled at start-up; one client per configured settings, rebuilt when the base URL or key changes.
 * Against the in-process emulator.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { V2Client } from '../../src/core/v2/client';
import { canonicalJson, hashBytes } from '../../src/core/util';
import { isNotFound, type JobState } from '../../src/core';
import { invertWorkflow } from './builders';
import { submit, until, useEmulator } from './harness';
import { Settings, changeWhere, harnessService, streamsOf } from './job-service.fixtures';

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
