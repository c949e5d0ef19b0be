// The emulator's `logs` (Job and Asset API v2, Job, rules for `logs`): only a serverless deployment (the emulator
// under a mount prefix) captures them; only GET /api/v2/jobs/{id} of a finished job carries them; absent, never null,
// everywhere else. And the client reads them: the core's JobSchema keeps them and logsText makes lines of them.
import * as assert from 'node:assert/strict';
import { V2Client } from '../../src/core/v2/client';
import { logsText } from '../../src/core/views/jobDocuments';
import { invertWorkflow } from './builders';
import { TERMINAL, call, submit, until, useEmulator, type Json } from './harness';

const PREFIX = '/deployment/dep-logs';

/** The emulator's own log shape: `{lines: [{time, level, message}]}`. */
function lines(job: Json): { time: string; level: string; message: string }[] {
  assert.ok(job.logs && Array.isArray(job.logs.lines), `no logs.lines in ${JSON.stringify(job.logs)}`);
  return job.logs.lines;
}

describe('emulator: job logs on a serverless deployment (mount prefix)', () => {
  const emu = useEmulator({ mountPrefix: PREFIX });

  it('GET of a finished job under a mount prefix carries logs: one line per executed node and the end, each timed', async () => {
    const created = await submit(emu(), invertWorkflow({ prefix: 'logs' }));
    assert.equal(created.status, 201);
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded');
    const got = lines(done);
    for (const node of ['1 (EmptyImage)', '2 (ImageInvert)', '3 (SaveImage)'])
      assert.ok(
        got.some((l) => l.message.includes(`executing node ${node}`)),
        node,
      );
    assert.ok(got.some((l) => l.message === 'job succeeded'));
    for (const l of got) {
      assert.ok(Number.isFinite(Date.parse(l.time)), l.time);
      assert.ok(['info', 'error'].includes(l.level), l.level);
    }
  });

  it('a failed job has logs too, with the failure as an error line', async () => {
    const workflow = invertWorkflow({ width: 16384 }) as Record<string, Json>;
    workflow['1']!.inputs.height = 16384; // beyond the emulator's pixel cap: fails while executing
    const created = await submit(emu(), workflow);
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'failed');
    assert.ok(lines(done).some((l) => l.level === 'error' && l.message === 'job failed'));
  });

  it('logs are absent (never null) from the POST answer, the cancel answer, the listing and while the job is not finished', async () => {
    const created = await submit(emu(), invertWorkflow({ prefix: 'absent' }));
    assert.equal(Object.hasOwn(created.body, 'logs'), false, 'POST answer has logs');
    const early = await call(`${emu().baseUrl}/api/v2/jobs/${created.body.id}`);
    if (!TERMINAL.includes(early.body.status))
      assert.equal(Object.hasOwn(early.body, 'logs'), false, 'an unfinished job has logs');
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.ok(lines(done).length > 0);
    const canceled = await call(`${emu().baseUrl}/api/v2/jobs/${created.body.id}/cancel`, { method: 'POST' });
    assert.equal(canceled.status, 200);
    assert.equal(Object.hasOwn(canceled.body, 'logs'), false, 'cancel answer has logs');
    const listing = await call(`${emu().baseUrl}/api/v2/jobs?limit=100`);
    assert.ok(listing.body.jobs.length > 0);
    for (const j of listing.body.jobs as Json[]) assert.equal(Object.hasOwn(j, 'logs'), false, 'a listed job has logs');
  });

  it('the client reads them: GET through V2Client keeps `logs`, and logsText makes one line per entry', async () => {
    const created = await submit(emu(), invertWorkflow({ prefix: 'client' }));
    await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    const client = new V2Client({ baseUrl: emu().baseUrl });
    try {
      const { job } = await client.getJob(created.body.id);
      const text = logsText(job.logs);
      assert.match(text, /^\S+Z INFO executing node 1 \(EmptyImage\), 1 of 3$/m);
      assert.match(text, /INFO job succeeded\n$/);
    } finally {
      await client.close();
    }
  });
});

describe('emulator: no logs without a mount prefix (self-hosted surface)', () => {
  const emu = useEmulator();

  it('GET of a finished job on the self-hosted surface has no `logs` field', async () => {
    const created = await submit(emu(), invertWorkflow({ prefix: 'nologs' }));
    const done = await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded');
    assert.equal(Object.hasOwn(done, 'logs'), false);
  });
});
