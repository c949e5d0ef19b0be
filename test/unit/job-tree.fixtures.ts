/**
 * Shared by the job-tree-*.test.ts suites (the Jobs view's tree model): a job of the model in a status, a remembered
 * record, and an entry joining them, all on one base URL at a fixed time.
 */
import { JobSchema } from '../../src/core/v2/schemas';
import { type Job } from '../../src/core';
import { type JobEntry } from '../../src/core/views';
import { type JobRecord } from '../../src/core/state';
import { jobOf } from '../../src/core/v2/mapping';
import { job as rawJob } from './builders';

export const BASE = 'http://127.0.0.1:8189';
export const NOW = Date.parse('2026-11-22T10:05:00Z');

/** A job of the model in `status`, as a v2 server would describe it (fields of `overrides` in its wire names). */
export function job(status: string, overrides: Record<string, unknown> = {}): Job {
  return jobOf(JobSchema.parse(rawJob(status, overrides)), undefined);
}

export function record(overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    idempotencyKey: `k-${Math.random().toString(36).slice(2)}`,
    baseUrl: BASE,
    state: 'created',
    submittedAt: '2026-11-22T10:00:00Z',
    ...overrides,
  };
}

export function entry(status: string, overrides: Record<string, unknown> = {}, rec: Partial<JobRecord> = {}): JobEntry {
  const j = job(status, overrides);
  return {
    baseUrl: BASE,
    jobId: j.id,
    job: j,
    record: record({ jobId: j.id, workflowFile: '/home/u/flows/invert.json', ...rec }),
  };
}
