/**
 * The jobs tree model (the Jobs view), merging what the server lists with remembered records and live snapshots, and a
 * job the server no longer knows (lost): out of Running, offered Re-run and Remove from List, never Cancel.
 */
import * as assert from 'node:assert/strict';
import {
  buildJobTree,
  entryKey,
  hasWorkflowSource,
  jobChildren,
  mergeEntries,
  needsFollow,
  statusIcon,
  type JobEntry,
} from '../../src/core/views';
import { BASE, NOW, entry, job, record } from './job-tree.fixtures';

describe('jobs tree model (the Jobs view)', () => {
  it("merging keeps only the configured server's records, joins a listed job to its record, and newest first", () => {
    const mine = record({ jobId: 'j1', submittedAt: '2026-11-22T09:00:00Z' });
    const other = record({ jobId: 'j2', baseUrl: 'http://other.example' });
    const listed = [
      job('running', { id: 'j1', created_at: '2026-11-22T09:00:00Z' }),
      job('succeeded', { id: 'j3', created_at: '2026-11-22T10:00:00Z' }),
    ];
    const merged = mergeEntries(BASE, [mine, other], listed);
    assert.deepEqual(
      merged.map((e) => e.jobId),
      ['j3', 'j1'],
    );
    assert.equal(merged[1]!.record, mine);
    assert.equal(merged[1]!.job?.status, 'running');
  });

  it('merging orders newest first by created (else submitted) time; equal or unreadable times keep their order', () => {
    const records = [
      record({ jobId: 'a', submittedAt: '2026-11-22T09:00:00Z' }),
      record({ jobId: 'b', submittedAt: 'not a time' }),
      record({ jobId: 'c', submittedAt: '2026-11-22T09:00:00Z' }),
      record({ jobId: 'd', submittedAt: '2026-11-22T11:00:00Z' }),
      record({ jobId: 'e', submittedAt: '' }),
    ];
    const listed = [job('running', { id: 'f', created_at: '2026-11-22T10:00:00Z' })];
    assert.deepEqual(
      mergeEntries(BASE, records, listed).map((e) => e.jobId),
      ['d', 'f', 'a', 'c', 'b', 'e'],
    );
  });

  it('merging keeps a live snapshot over an older listing, and a job seen live before it is stored', () => {
    const live = new Map<string, JobEntry>([
      [`${BASE} j1`, { baseUrl: BASE, jobId: 'j1', job: job('running', { id: 'j1', progress: { value: 0.9 } }) }],
      [`${BASE} j9`, { baseUrl: BASE, jobId: 'j9', job: job('queued', { id: 'j9' }) }],
    ]);
    const merged = mergeEntries(
      BASE,
      [record({ jobId: 'j1' })],
      [job('running', { id: 'j1', progress: { value: 0.1 } })],
      live,
    );
    const j1 = merged.find((e) => e.jobId === 'j1')!;
    assert.equal(j1.job?.progress?.value, 0.9);
    assert.ok(j1.record);
    assert.ok(merged.some((e) => e.jobId === 'j9'));
  });

  it('merging never carries over a job seen live on another server (the connection changed meanwhile)', () => {
    const other = 'http://127.0.0.1:9/other';
    const live = new Map<string, JobEntry>([
      [`${other} j7`, { baseUrl: other, jobId: 'j7', job: job('running', { id: 'j7' }) }],
    ]);
    assert.deepEqual(mergeEntries(BASE, [], [], live), []);
  });

  it("merging keeps a finished job's GET snapshot (with its logs) over the listing's copy, which never has logs", () => {
    const live = new Map<string, JobEntry>([
      [`${BASE} j1`, { baseUrl: BASE, jobId: 'j1', job: job('succeeded', { id: 'j1', logs: 'done' }) }],
    ]);
    const merged = mergeEntries(BASE, [], [job('succeeded', { id: 'j1' })], live);
    assert.equal(merged[0]!.job?.logs, 'done');
    assert.deepEqual(
      jobChildren(merged[0]!, { now: NOW }).map((c) => c.kind),
      ['logs', 'workflow'],
    );
  });
});

describe('jobs tree model: a job the server no longer knows (lost)', () => {
  it('rule: a lost job is out of Running and out of the badge, offers Re-run and Remove from List, never Cancel', () => {
    const lost = entry('running', {}, { lastStatus: 'queued' });
    lost.job = { ...lost.job!, status: 'lost', queuePosition: null };
    const tree = buildJobTree([lost, entry('running')], { now: NOW });
    assert.equal(tree.badge, 1);
    assert.equal(tree.running.length, 1);
    assert.equal(tree.recent.length, 1);
    const item = tree.recent[0]!;
    assert.equal(item.group, 'recent');
    assert.match(item.contextValue, /^job:lost:/);
    assert.match(item.contextValue, /:rerunnable(:|$)/);
    assert.match(item.contextValue, /:removable(:|$)/);
    assert.doesNotMatch(item.contextValue, /cancellable/);
    assert.equal(needsFollow(lost), false, 'a lost job is followed no more');
    assert.match(item.description, /^lost · /);
    assert.match(item.tooltip, /no longer knows this job/);
    assert.match(item.accessibilityLabel, /lost: the server no longer knows this job/);
    assert.equal(statusIcon('lost').id, 'debug-disconnect');
  });

  it('rule: a remembered record whose last status is lost (no live job) is under Recent, removable', () => {
    const e: JobEntry = {
      baseUrl: BASE,
      jobId: 'j1',
      record: record({ jobId: 'j1', lastStatus: 'lost', workflowFile: '/home/u/flows/invert.json' }),
    };
    const tree = buildJobTree([e], { now: NOW });
    assert.equal(tree.badge, 0);
    assert.match(tree.recent[0]!.contextValue, /^job:lost:hasId:rerunnable:removable$/);
  });

  it('rule: a lost job without a remembered workflow file offers no Re-run (its server forgot the workflow too), only Remove', () => {
    const e: JobEntry = { baseUrl: BASE, jobId: 'j2', record: record({ jobId: 'j2', lastStatus: 'lost' }) };
    const item = buildJobTree([e], { now: NOW }).recent[0]!;
    assert.match(item.contextValue, /^job:lost:hasId:removable$/);
    assert.match(item.tooltip, /Remove it from the list\./);
    assert.doesNotMatch(item.tooltip, /Re-run/);
    assert.equal(
      hasWorkflowSource({ baseUrl: BASE, jobId: 'j3', job: job('succeeded', { id: 'j3' }) }),
      true,
      'a job the server knows has its workflow there',
    );
  });

  it('rule: a job not terminal past its expires_at reads lost in the merge; a terminal one stays as it ended', () => {
    const past = job('running', { id: 'past', expires_at: '2026-11-22T10:04:59Z' });
    const done = job('succeeded', { id: 'done', expires_at: '2026-11-22T10:04:59Z' });
    const later = job('running', { id: 'later', expires_at: '2026-11-22T10:05:01Z' });
    const merged = mergeEntries(BASE, [], [past, done, later], undefined, { now: NOW });
    assert.deepEqual(Object.fromEntries(merged.map((e) => [e.jobId, e.job!.status])), {
      past: 'lost',
      done: 'succeeded',
      later: 'running',
    });
  });

  it("rule: a listing that knows a lost job again is the server's word: it wins over the lost snapshot", () => {
    const lostJob = { ...job('running', { id: 'back' }), status: 'lost' };
    const previous = new Map([
      [entryKey({ baseUrl: BASE, jobId: 'back' }), { baseUrl: BASE, jobId: 'back', job: lostJob } as JobEntry],
    ]);
    const merged = mergeEntries(BASE, [], [job('running', { id: 'back' })], previous, { now: NOW });
    assert.equal(merged[0]!.job!.status, 'running');
    // Without the listing knowing it, the lost snapshot stays.
    assert.equal(mergeEntries(BASE, [], [], previous, { now: NOW })[0]!.job!.status, 'lost');
  });
});
