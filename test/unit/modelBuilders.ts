/** Builders for the client's job model (core/jobs): a job in each status, a progress, an output. */
import { randomUUID } from 'node:crypto';
import { isTerminalStatus, type Job, type JobOutput, type Progress } from '../../src/core/jobs';

/** A progress with only the given fields known (the rest null). */
export function modelProgress(fields: Partial<Progress> = {}): Progress {
  return {
    value: null,
    nodesDone: null,
    nodesTotal: null,
    currentNode: null,
    currentNodeClass: null,
    step: null,
    steps: null,
    message: null,
    ...fields,
  };
}

/** An output named `name` (an image), with a fresh id unless given. */
export function modelOutput(fields: Partial<JobOutput> = {}): JobOutput {
  return {
    id: randomUUID(),
    nodeId: '3',
    name: 'out_00001_.png',
    type: 'image',
    contentType: 'image/png',
    sizeBytes: 10,
    hash: null,
    url: null,
    ...fields,
  };
}

/** A job of the model in `status` (times as a server would give them), described by API `api` (default `v2`). */
export function modelJob(status: string, overrides: Partial<Job> = {}): Job {
  return {
    id: randomUUID(),
    api: 'v2',
    status,
    createdAt: '2026-11-22T10:00:00Z',
    startedAt: status === 'queued' ? null : '2026-11-22T10:00:01Z',
    completedAt: isTerminalStatus(status) ? '2026-11-22T10:00:02Z' : null,
    expiresAt: '2026-11-23T10:00:00Z',
    queuePosition: status === 'queued' ? 0 : null,
    progress: null,
    outputs: [],
    error: null,
    metrics: {},
    ...overrides,
  };
}
