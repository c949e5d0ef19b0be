/**
 * The one list of jobs (core views/jobList.ts, no vscode): the Jobs tree, its badge and the status bar's count all
 * render it. Each case drives it with a job service whose states the test sets and fires, and checks what the list
 * publishes: an entry's change, the list's shape, and the running count, in the tick the job's state changed.
 */
import * as assert from 'node:assert/strict';
import { ListenerSet, type JobService } from '../../src/core/jobs/jobService';
import type { JobState } from '../../src/core/jobs/state';
import { jobOf } from '../../src/core/v2/mapping';
import type { JobRecord } from '../../src/core/state';
import { LOST_STATUS } from '../../src/core/jobs/model';
import { JobList } from '../../src/core/views/jobList';
import { job as rawJob } from './builders';

const BASE = 'http://127.0.0.1:1';

/** The state of job `id` in `status`, as the job service would publish it. */
function stateOf(id: string, status: string): JobState {
  // Expiring far ahead: a job past its expires_at reads lost (not running).
  const job = jobOf(rawJob(status, { id, expires_at: '2999-01-01T00:00:00Z' }) as never, undefined);
  return {
    baseUrl: BASE,
    job,
    capabilities: {} as JobState['capabilities'],
    requestId: undefined,
    preview: null,
    outage: null,
  };
}

/** A list over a job service that lists `listed` and whose states are `states` (the test changes and fires them). */
function listOver(listed: JobState[], records: () => JobRecord[] = () => []) {
  let storeReads = 0;
  const states = new Map(listed.map((s) => [s.job.id, s]));
  const jobChanged = new ListenerSet<JobState>();
  const stateChanged = new ListenerSet<JobState>();
  const backend = {
    baseUrl: BASE,
    capabilities: { list: true },
    list: async () => ({ jobs: listed.map((s) => s.job), truncated: false }),
  };
  const service = {
    state: (_base: string, id: string) => states.get(id),
    use: (fn: (lease: unknown) => Promise<unknown>) => fn({ backend, signal: new AbortController().signal }),
    follow: () => ({ done: new Promise(() => undefined), dispose: () => undefined }),
  } as unknown as Pick<JobService, 'state' | 'use' | 'follow'>;
  const list = new JobList({
    service,
    onDidChangeJob: jobChanged.event,
    onDidChangeJobState: stateChanged.event,
    store: {
      prune: async () => 0,
      list: async () => {
        storeReads++;
        return records();
      },
      forget: async () => undefined,
    },
    activeBaseUrl: () => BASE,
    clean: (t) => t,
    log: { info: () => undefined, warn: () => undefined },
  });
  /** Sets a job's state and publishes it, as the job service does. */
  const change = (state: JobState): void => {
    states.set(state.job.id, state);
    jobChanged.fire(state);
    stateChanged.fire(state);
  };
  return { list, change, storeReads: () => storeReads };
}

describe('job list (core views/jobList.ts): one list the tree, the badge and the status bar render', () => {
  it('the running count is published in the tick a job starts or ends, once per new count', async () => {
    const { list, change } = listOver([stateOf('a', 'running'), stateOf('b', 'succeeded')]);
    const counts: number[] = [];
    list.onDidChangeRunning((n) => counts.push(n));
    await list.load();
    assert.equal(list.runningCount, 1);
    change(stateOf('c', 'queued'));
    assert.deepEqual(counts, [1, 2], 'a new running job is counted at once');
    change(stateOf('a', 'succeeded'));
    change(stateOf('c', 'running'));
    assert.deepEqual(
      counts,
      [1, 2, 1],
      'an ended job leaves the count at once; a change that keeps the count is not told',
    );
    list.dispose();
  });

  it("a known job's change publishes its key; a new job changes the list's shape (undefined)", async () => {
    const { list, change } = listOver([stateOf('a', 'running')]);
    await list.load();
    const told: (string | undefined)[] = [];
    list.onDidChange((key) => told.push(key));
    change(stateOf('a', 'running'));
    change(stateOf('new', 'queued'));
    assert.deepEqual(told, [`${BASE} a`, undefined]);
    assert.deepEqual(
      list.entries().map((e) => e.jobId),
      ['new', 'a'],
      'the new job is first',
    );
    list.dispose();
  });

  it('a job shown before its record had its id is looked up again once when it ends or is lost (Re-run reads its workflow file)', async () => {
    const stored: JobRecord[] = [];
    const { list, change, storeReads } = listOver([], () => stored);
    await list.load();
    // Shown (a listing read between the pending record and the job id written into it): the store has no id yet.
    change(stateOf('j', 'running'));
    assert.equal(storeReads(), 2, 'a job first shown is looked up in the store');
    stored.push({
      idempotencyKey: 'k',
      baseUrl: BASE,
      state: 'created',
      jobId: 'j',
      submittedAt: '2026-11-27T10:00:00Z',
      workflowFile: '/w/invert.json',
      client: 'vscode',
    });
    change(stateOf('j', 'running'));
    assert.equal(storeReads(), 2, 'a running job without a record reads the store at each change');
    const attached = until(list, () => list.entryOfJob('j')?.record?.workflowFile === '/w/invert.json');
    change(stateOf('j', LOST_STATUS));
    await attached;
    assert.equal(storeReads(), 3);
    change(stateOf('j', LOST_STATUS));
    assert.equal(storeReads(), 3, 'the end is looked up once');
    list.dispose();
  });
});

/** Resolves when `check()` holds, checked now and at each change the list publishes. */
function until(list: JobList, check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (check()) return resolve();
    const sub = list.onDidChange(() => {
      if (check()) {
        sub.dispose();
        resolve();
      }
    });
  });
}
