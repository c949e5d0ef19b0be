/**
 * What each API's job backend can do (core/jobs `JobCapabilities`), and that the shared code honours it: an operation
 * an API does not offer is refused by code with no request; a job's workflow is asked of the server only where its API
 * keeps one; a job's state carries its backend's capabilities (a view records outputs as assets only where they are).
 * Against the in-process emulator, which serves both the v2 and the deprecated v1 surface.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InputError, JobService, type JobBackend, type JobState } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend, V2_CAPABILITIES } from '../../src/core/v2/jobBackend';
import { canonicalJson, hashBytes } from '../../src/core/util';
import { loadJobWorkflow } from '../../src/core/views/jobDocuments';
import { V1Client, V1JobBackend, V1_CAPABILITIES } from '../../src/core/v1';
import { invertWorkflow } from './builders';
import { useEmulator } from './harness';
import { tempDir } from './tmp';

const KEY = 'capabilities-key';

describe('job backends: capabilities', () => {
  const emu = useEmulator({ tokens: [KEY], nodeDelayMs: 10 });
  const v1 = (): V1JobBackend =>
    new V1JobBackend(new V1Client({ baseUrl: emu().baseUrl, apiKey: KEY }), { useSocket: false });
  const v2 = (): V2JobBackend => new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl, apiKey: KEY }));

  it('rule: v2 lists jobs, cancels running ones, has assets and stored workflows, and submits with an Idempotency-Key; v1 has none of these', () => {
    assert.deepEqual(V2_CAPABILITIES, {
      list: true,
      cancelRunning: true,
      assets: true,
      storedWorkflow: true,
      idempotentSubmit: true,
    });
    assert.deepEqual(V1_CAPABILITIES, {
      list: false,
      cancelRunning: false,
      assets: false,
      storedWorkflow: false,
      idempotentSubmit: false,
    });
    assert.equal(v2().capabilities, V2_CAPABILITIES);
    assert.equal(v1().capabilities, V1_CAPABILITIES);
  });

  it("rule: an operation the API does not offer (v1: listing jobs, a job's stored workflow) is refused by code not_supported, with no request; reconciling finds nothing to look up", async () => {
    const backend = v1();
    const store = new StateStore(tempDir('cc-capabilities-'));
    try {
      const before = emu().requests.length;
      await assert.rejects(
        backend.list({ limit: 10 }),
        (err: unknown) => InputError.is(err) && err.code === 'not_supported',
      );
      await assert.rejects(
        backend.workflow('any'),
        (err: unknown) => InputError.is(err) && err.code === 'not_supported',
      );
      assert.deepEqual(await backend.reconcile(store), []);
      assert.equal(emu().requests.length, before, 'a request was sent');
    } finally {
      await backend.close();
    }
  });

  it("rule: where the API lists jobs (v2), the listing is the server's jobs in the model", async () => {
    const backend = v2();
    try {
      const accepted = await backend.submit(invertWorkflow({ prefix: 'capabilities-list' }));
      const page = await backend.list({ limit: 50 });
      const listed = page.jobs.find((j) => j.id === accepted.job.id);
      assert.ok(listed, 'the job is not listed');
      assert.equal(listed.api, 'v2');
    } finally {
      await backend.close();
    }
  });

  it("rule: a job's workflow is asked of the server only where its API keeps one (capabilities.storedWorkflow): on v1 the remembered file, and no request", async () => {
    const workflow = invertWorkflow({ prefix: 'capabilities-workflow' });
    const file = path.join(tempDir('cc-capabilities-wf-'), 'flow.json');
    fs.writeFileSync(file, JSON.stringify(workflow));
    const record = {
      idempotencyKey: 'v1-local',
      baseUrl: emu().baseUrl,
      state: 'created' as const,
      jobId: 'p-1',
      workflowFile: file,
      workflowHash: await hashBytes(canonicalJson(workflow)),
      submittedAt: '2026-11-22T10:00:00Z',
    };
    const backend: JobBackend = v1();
    try {
      const before = emu().requests.length;
      const asked: string[] = [];
      const got = await loadJobWorkflow(
        backend,
        { baseUrl: emu().baseUrl, jobId: 'p-1', record },
        { onServerMiss: (why) => asked.push(why) },
      );
      assert.equal(got.source, 'file');
      assert.deepEqual(got.workflow, workflow);
      assert.deepEqual(asked, [], 'the backend was asked for a workflow its API does not keep');
      assert.equal(emu().requests.length, before, 'a request was sent');
    } finally {
      await backend.close();
    }
  });

  it("rule: a job's state carries the capabilities of the backend that watches it (v1: its outputs are not assets; v2: they are)", async () => {
    for (const [make, assets] of [
      [v1, false],
      [v2, true],
    ] as const) {
      const states: JobState[] = [];
      const service = new JobService({
        clients: { identity: async () => 'one', create: async () => ({ backend: make() }) },
        store: new StateStore(tempDir('cc-capabilities-svc-')),
        log: { info: () => undefined, warn: () => undefined },
      });
      service.onDidChangeJob((s) => states.push(s));
      try {
        const { final } = await service.use((lease) =>
          service.submit(lease, invertWorkflow({ prefix: `capabilities-${String(assets)}` })),
        );
        assert.equal(final.job.status, 'succeeded');
        const last = states.filter((s) => s.job.id === final.job.id).at(-1);
        assert.equal(last?.capabilities.assets, assets);
        assert.equal(last?.baseUrl, emu().baseUrl);
      } finally {
        service.dispose();
      }
    }
  });
});
