/**
 * The job service on a connection that speaks the deprecated v1 API (submit, the Jobs tree, notifications and the job
 * monitor work on it: progress and previews from the WebSocket's frames, outputs through `/api/view`), against the
 * in-process emulator's v1 surface: the same service, views and events as on v2 through the v1 job backend, every
 * request a v1 one.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { JobService, type JobState, type JobUpdate } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V1Client, V1JobBackend } from '../../src/core/v1';
import type { Emulator } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { useEmulator } from './harness';
import { tempDir } from './tmp';

const KEY = 'v1-service-key';

/** A service whose one connection is the v1 job backend of `emu`. */
function v1Service(emu: Emulator) {
  const store = new StateStore(tempDir('cc-jobservice-v1-'));
  const changes: JobState[] = [];
  const service = new JobService({
    clients: {
      identity: async () => `${emu.baseUrl} v1`,
      create: async () => ({ backend: new V1JobBackend(new V1Client({ baseUrl: emu.baseUrl, apiKey: KEY })) }),
    },
    store,
    log: { info: () => undefined, warn: () => undefined },
    clientName: 'vscode',
  });
  service.onDidChangeJob((c) => changes.push(c));
  return { service, store, changes };
}

describe('job service on a v1 connection (submit, Jobs tree, notifications and monitor work on v1)', () => {
  const emu = useEmulator({ tokens: [KEY], nodeDelayMs: 30 });

  it('a submission opens the WebSocket before POST /api/prompt, follows it to succeeded with progress and a preview, and makes no v2 request', async () => {
    const { service, store, changes } = v1Service(emu());
    const before = emu().requests.length;
    const updates: JobUpdate[] = [];
    try {
      const { submission, final } = await service.use((lease) =>
        service.submit(
          lease,
          { $schema: 'comfy-workflow-schema://schemas/api-format.json', ...invertWorkflow({ prefix: 'svc-v1' }) },
          { workflowFile: '/tmp/w.json', onUpdate: (u) => updates.push(u) },
        ),
      );
      assert.equal(final.job.status, 'succeeded');
      assert.equal(final.job.id, submission.job.id);
      const mine = emu().requests.slice(before);
      const ws = mine.findIndex((r) => r.path.startsWith('/ws'));
      const post = mine.findIndex((r) => r.method === 'POST' && r.path === '/api/prompt');
      assert.ok(
        ws >= 0 && post > ws,
        `the socket (${ws}) is opened before the prompt is posted (${post}): ${mine.map((r) => `${r.method} ${r.path}`).join(', ')}`,
      );
      assert.deepEqual(
        mine.filter((r) => r.path.startsWith('/api/v2/')),
        [],
        'no v2 request on a v1 connection',
      );
      assert.equal(
        mine.filter((r) => r.method === 'POST' && r.path === '/api/prompt').length,
        1,
        'the prompt is posted once',
      );
      assert.ok(
        updates.some((u) => u.type === 'progress'),
        `progress from the socket: ${updates.map((u) => u.type).join(', ')}`,
      );
      assert.ok(
        updates.some((u) => u.type === 'preview'),
        'a preview from a binary frame',
      );
      // onDidChangeJob: the job of this server, ending succeeded with its /api/view output.
      const last = changes.filter((c) => c.job.id === final.job.id).at(-1);
      assert.equal(last?.baseUrl, emu().baseUrl);
      assert.equal(last?.job.status, 'succeeded');
      assert.equal(final.job.outputs.length, 1);
      // Its times: created and finished from the status endpoint, started from the socket's execution_start.
      const [created, started, completed] = [final.job.createdAt, final.job.startedAt, final.job.completedAt].map((t) =>
        Date.parse(t ?? ''),
      );
      assert.ok(
        created! <= started! && started! <= completed!,
        `times: ${final.job.createdAt} ${final.job.startedAt} ${final.job.completedAt}`,
      );
      assert.equal(final.job.api, 'v1');
      assert.match(final.job.outputs[0]!.url ?? '', new RegExp(`^${emu().baseUrl}/api/view\\?filename=`));
      // Remembered like a v2 job: created with the prompt id, its final status, under a local key never sent.
      const record = (await store.list()).find((r) => r.jobId === final.job.id);
      assert.ok(record, 'the job is remembered');
      assert.equal(record.state, 'created');
      assert.equal(record.lastStatus, 'succeeded');
      assert.equal(record.workflowFile, '/tmp/w.json');
      assert.equal(record.savePrefix, 'svc-v1');
      assert.match(record.idempotencyKey, /^v1-/);
      assert.ok(
        !mine.some((r) => JSON.stringify(r.headers).includes(record.idempotencyKey)),
        'the local key is never sent',
      );
    } finally {
      service.dispose();
    }
  });

  it("the lease's backend downloads an output through /api/view (its 302 followed with no key) and reads the job through the status endpoint", async () => {
    const { service } = v1Service(emu());
    const dir = tempDir('cc-jobservice-v1-out-');
    try {
      const { final } = await service.use((lease) => service.submit(lease, invertWorkflow({ prefix: 'svc-dl' })));
      const signedBefore = emu().signedRequests.length;
      const files = await service.use((lease) =>
        lease.backend.downloadOutputs(final.job, dir, { signal: lease.signal }),
      );
      assert.equal(files.length, 1);
      assert.ok(fs.statSync(files[0]!.path).size > 0);
      const signed = emu().signedRequests.slice(signedBefore);
      assert.ok(
        signed.length > 0 &&
          signed.every((r) => r.headers['x-api-key'] === undefined && r.headers.authorization === undefined),
        'no credential to the signed URL',
      );
      const again = await service.use((lease) => lease.backend.get(final.job.id, lease.signal));
      assert.equal(again.job.status, 'succeeded');
      assert.equal(again.job.outputs.length, 1);
    } finally {
      service.dispose();
    }
  });

  it('a remembered v1 job is followed by id (one watch), and ends with its final status', async () => {
    const { service } = v1Service(emu());
    const other = new V1Client({ baseUrl: emu().baseUrl, apiKey: KEY });
    try {
      const { promptId } = await other.submit(invertWorkflow({ prefix: 'svc-follow' }));
      const a = service.follow(promptId);
      const b = service.follow(promptId);
      const [fa, fb] = await Promise.all([a.done, b.done]);
      assert.equal(fa.job.status, 'succeeded');
      assert.equal(fb.job.status, 'succeeded');
    } finally {
      await other.close();
      service.dispose();
    }
  });
});

describe('job service on a v1 connection: cancel', () => {
  // Each node waits a minute: the first job runs while the second waits in the queue.
  const emu = useEmulator({ tokens: [KEY], nodeDelayMs: 60_000 });

  it('Cancel of a queued v1 job deletes it from the queue (POST /api/queue) and the job ends canceled', async () => {
    const { service } = v1Service(emu());
    const other = new V1Client({ baseUrl: emu().baseUrl, apiKey: KEY });
    try {
      const running = await other.submit(invertWorkflow({ prefix: 'svc-running' }));
      const queued = await other.submit(invertWorkflow({ prefix: 'svc-queued' }));
      const follow = service.follow(queued.promptId);
      const now = await service.use((lease) => lease.backend.cancel(queued.promptId, lease.signal));
      assert.equal(now.job.status, 'canceled');
      assert.ok(emu().requests.some((r) => r.method === 'POST' && r.path === '/api/queue'));
      assert.equal((await follow.done).job.status, 'canceled');
      await other.interrupt(running.promptId);
    } finally {
      await other.close();
      service.dispose();
    }
  });
});
