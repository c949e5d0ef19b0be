/**
 * A batch follows its jobs through the job service (core/batch/run.ts, rule 6): the runner never watches a job of its
 * own, so while a second follower (standing in for the Jobs view) follows the same jobs, the emulator serves exactly
 * one event stream per job. Real HTTP on loopback; the jobs are held at their first node until every watch of them
 * streams, so the count does not depend on how fast anything runs.
 */
import * as assert from 'node:assert/strict';
import { BatchStore, StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { recordBatch, runBatch, variationsFromSetOptions } from '../../src/core/batch';
import type { JobBackend, JobFollow } from '../../src/core';
import { headlessJobService } from '../../src/core/backends';
import { useEmulator } from './harness';
import { invertWorkflow } from './builders';
import { tempDir } from './tmp';

/**
 * `backend` with its watches counted: how many were started for each job, and how many of those stream. `streaming()`
 * resolves once every watch started for each of `jobIds` streams (each job has at least one).
 */
function countedWatches(backend: JobBackend): { backend: JobBackend; streaming(jobIds: string[]): Promise<void> } {
  const started = new Map<string, number>();
  const streams = new Map<string, number>();
  const waiters: Array<() => void> = [];
  const changed = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  const counted: JobBackend = Object.create(backend) as JobBackend;
  counted.watch = (start, options = {}) => {
    const id = typeof start === 'string' ? start : start.job.id;
    started.set(id, (started.get(id) ?? 0) + 1);
    return backend.watch(start, {
      ...options,
      onUpdate: (u) => {
        if (u.type === 'mode' && u.mode === 'stream') {
          streams.set(id, (streams.get(id) ?? 0) + 1);
          changed();
        }
        options.onUpdate?.(u);
      },
    });
  };
  counted.close = () => backend.close();
  const streaming = async (jobIds: string[]): Promise<void> => {
    while (!jobIds.every((id) => (started.get(id) ?? 0) > 0 && streams.get(id) === started.get(id)))
      await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { backend: counted, streaming };
}

describe('batch: its jobs are followed through the job service (core/batch/run.ts, rule 6)', function () {
  this.timeout(60_000);
  const emu = useEmulator({ tokens: ['batch-service'], concurrency: 4 });

  it('rule 6: a batch of 3 jobs followed by the runner and by a second follower: exactly one event stream per job', async () => {
    const dir = tempDir('cc-batch-service-');
    const store = new StateStore(dir);
    const batches = new BatchStore(dir);
    // Streams enough for two watches of every job: a second watch would stream too, never poll, and be counted.
    const raw = new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl, apiKey: 'batch-service', maxStreams: 16 }));
    const { backend, streaming } = countedWatches(raw);
    const service = headlessJobService(() => ({ backend }), { store });
    const workflow = invertWorkflow({ prefix: 'batch-service' });
    const variations = await variationsFromSetOptions(workflow as never, ['1.color=1..3'], 'grid', dir);
    const batch = await recordBatch(batches, workflow as never, variations, {
      baseUrl: emu().baseUrl,
      concurrency: 3,
      nowMs: Date.now(),
    });
    emu().holdNodes({});
    try {
      const lease = await service.lease();
      const jobIds: string[] = [];
      const viewFollows: JobFollow[] = [];
      let allSubmitted!: () => void;
      const submitted = new Promise<void>((resolve) => (allSubmitted = resolve));
      const run = runBatch(lease, batch.batchId, {
        store,
        batches,
        onEvent: (e) => {
          if (e.type !== 'submitted') return;
          jobIds.push(e.jobId);
          // The Jobs view follows the same job, through the same service.
          viewFollows.push(service.follow(e.jobId));
          if (jobIds.length === 3) allSubmitted();
        },
      });
      await submitted;
      // Every watch of every job streams (a second watch would have opened its own stream by now); then they end.
      await streaming(jobIds);
      emu().holdNodes(null);
      const result = await run;
      const viewed = await Promise.all(viewFollows.map((f) => f.done));
      assert.deepEqual(
        result.outcomes.map((o) => o.state),
        ['succeeded', 'succeeded', 'succeeded'],
      );
      assert.deepEqual(
        viewed.map((v) => v.job.status),
        ['succeeded', 'succeeded', 'succeeded'],
      );
      const served = jobIds.map(
        (id) => emu().requests.filter((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${id}/events`).length,
      );
      assert.deepEqual(served, [1, 1, 1], 'event streams served per job');
    } finally {
      emu().holdNodes(null);
      service.dispose();
    }
  });
});
