/**
 * A batch's jobs are its runner's: the job-end owner (core jobs/jobEnds.ts), which at start-up reads the remembered
 * jobs again, downloads each single job's outputs into the job's own folder and tells its end, leaves a batch's
 * variations to the batch (their outputs in the batch's folders, one notice for the batch).
 */
import * as assert from 'node:assert/strict';
import { recordsToResume } from '../../src/core';
import type { JobRecord } from '../../src/core/state';

function record(overrides: Partial<JobRecord>): JobRecord {
  return {
    idempotencyKey: `k-${Math.random().toString(36).slice(2)}`,
    baseUrl: 'http://a',
    state: 'created',
    submittedAt: '2026-11-25T10:00:00Z',
    client: 'vscode',
    ...overrides,
  };
}

describe('batch jobs and the job-end owner', () => {
  it('rule: a variation of a batch is never read again as a single job at start-up (recordsToResume skips it)', () => {
    const single = record({ jobId: 'single', lastStatus: 'running' });
    const variation = record({ jobId: 'variation', lastStatus: 'running', batchId: 'b-1' });
    const unheard = record({ jobId: 'variation-unheard', batchId: 'b-1' });
    assert.deepEqual(
      recordsToResume([single, variation, unheard], 'http://a').map((r) => r.jobId),
      ['single'],
    );
  });
});
