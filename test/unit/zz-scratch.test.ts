import { V2Client, V2JobBackend, JobService, StateStore } from '../../src/core';
import { invertWorkflow } from './builders';
import { submit, useEmulator } from './harness';
import { tempDir } from './tmp';

describe('scratch: first state after reload', () => {
  const emu = useEmulator({ nodeDelayMs: 3000 });
  it('times', async () => {
    const id = (await submit(emu(), invertWorkflow({ prefix: 'scratch' }))).body.id as string;
    await new Promise((r) => setTimeout(r, 1000));
    const store = new StateStore(tempDir('cc-scratch-'));
    const service = new JobService({
      clients: { identity: async () => 'x', create: async () => ({ backend: new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl })) }) },
      store, log: { info: () => undefined, warn: () => undefined }, clientName: 'vscode',
    });
    const t0 = Date.now();
    service.onDidChangeJobState((s) => console.log('state', Date.now() - t0, s.job.status, s.job.startedAt, JSON.stringify(s.job.progress?.value)));
    const f = service.follow(id, { onUpdate: (u) => console.log('update', Date.now() - t0, u.type) });
    await f.done;
    service.dispose();
  });
});
