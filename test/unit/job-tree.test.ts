import * as assert from 'node:assert/strict';
import {
  JobSchema,
  Redactor,
  buildJobTree,
  describeEntry,
  entryKey,
  escapeMarkdown,
  mergeEntries,
  needsFollow,
  presentEntry,
  statusIcon,
  type Job,
  type JobEntry,
  type JobRecord,
} from '../../src/core';
import { job as rawJob } from './builders';

const BASE = 'http://127.0.0.1:8189';
const NOW = Date.parse('2026-11-22T10:05:00Z');

function job(status: string, overrides: Record<string, unknown> = {}): Job {
  return JobSchema.parse(rawJob(status, overrides));
}

function record(overrides: Partial<JobRecord> = {}): JobRecord {
  return { idempotencyKey: `k-${Math.random().toString(36).slice(2)}`, baseUrl: BASE, state: 'created', submittedAt: '2026-11-22T10:00:00Z', ...overrides };
}

function entry(status: string, overrides: Record<string, unknown> = {}, rec: Partial<JobRecord> = {}): JobEntry {
  const j = job(status, overrides);
  return { baseUrl: BASE, jobId: j.id, job: j, record: record({ jobId: j.id, workflowFile: '/home/u/flows/invert.json', ...rec }) };
}

describe('jobs tree model (issue 9, the Jobs view)', () => {
  it('non-terminal jobs (queued, running, canceling, a pending submission) group under Running; terminal ones under Recent', () => {
    const entries: JobEntry[] = [
      entry('queued'),
      entry('running'),
      entry('canceling'),
      { baseUrl: BASE, jobId: undefined, record: record({ state: 'pending' }) },
      entry('succeeded'),
      entry('failed'),
      entry('canceled'),
      entry('expired'),
      { baseUrl: BASE, jobId: undefined, record: record({ state: 'outcome_unknown' }) },
    ];
    const tree = buildJobTree(entries, { now: NOW });
    assert.deepEqual(
      tree.running.map((i) => i.contextValue.split(':')[1]),
      ['queued', 'running', 'canceling', 'pending'],
    );
    assert.deepEqual(
      tree.recent.map((i) => i.contextValue.split(':')[1]),
      ['succeeded', 'failed', 'canceled', 'expired', 'outcome_unknown'],
    );
  });

  it('the badge counts the running jobs', () => {
    const tree = buildJobTree([entry('running'), entry('queued'), entry('succeeded')], { now: NOW });
    assert.equal(tree.badge, 2);
    assert.equal(buildJobTree([entry('failed')], { now: NOW }).badge, 0);
  });

  it('only running jobs with an id are followed; terminal jobs never are', () => {
    assert.equal(needsFollow(entry('running')), true);
    assert.equal(needsFollow(entry('queued')), true);
    for (const s of ['succeeded', 'failed', 'canceled', 'expired']) assert.equal(needsFollow(entry(s)), false, s);
    assert.equal(needsFollow({ baseUrl: BASE, jobId: undefined, record: record({ state: 'pending' }) }), false);
    // A remembered job whose last status was terminal is not followed (never polled again).
    assert.equal(needsFollow({ baseUrl: BASE, jobId: 'j1', record: record({ jobId: 'j1', lastStatus: 'succeeded' }) }), false);
  });

  it('the label is the workflow file name and the short id, else "job" and the short id', () => {
    const e = entry('running');
    assert.equal(presentEntry(e, { now: NOW }).label, `invert.json ${e.jobId!.slice(0, 8)}`);
    const listed: JobEntry = { baseUrl: BASE, jobId: 'abcdef0123456789', job: job('running', { id: 'abcdef0123456789' }) };
    assert.equal(presentEntry(listed, { now: NOW }).label, 'job abcdef01');
  });

  it('the item id is stable: base URL and job id, whatever the status', () => {
    const e = entry('running');
    const before = presentEntry(e, { now: NOW }).id;
    e.job = job('succeeded', { id: e.jobId });
    assert.equal(presentEntry(e, { now: NOW }).id, before);
    assert.equal(before, `${BASE} ${e.jobId}`);
    assert.equal(entryKey({ baseUrl: BASE, jobId: e.jobId }), before);
  });

  it('a running job is described by its progress: percent, then the server message (`42% · KSampler 21/50`)', () => {
    const e = entry('running', { progress: { value: 0.42, message: 'KSampler 21/50' } });
    assert.equal(describeEntry(e, { now: NOW }), '42% · KSampler 21/50');
    const byClass = entry('running', { progress: { value: null, nodes_done: 1, nodes_total: 4, current_node_class: 'KSampler', step: 21, steps: 50 } });
    assert.equal(describeEntry(byClass, { now: NOW }), '25% · KSampler 21/50');
  });

  it('a queued job shows its queue position; a finished job how long ago it ended', () => {
    assert.equal(describeEntry(entry('queued', { queue_position: 2 }), { now: NOW }), 'queued · position 3');
    // completed_at 10:00:02, now 10:05:00
    assert.equal(describeEntry(entry('succeeded'), { now: NOW }), '4 min ago');
  });

  it('contextValue flags: cancellable only for non-terminal jobs with an id, outputs for a succeeded job with outputs', () => {
    assert.equal(presentEntry(entry('running'), { now: NOW }).contextValue, 'job:running:cancellable:hasId');
    assert.equal(presentEntry(entry('queued'), { now: NOW }).contextValue, 'job:queued:cancellable:hasId');
    assert.equal(presentEntry(entry('canceling'), { now: NOW }).contextValue, 'job:canceling:hasId');
    assert.equal(presentEntry(entry('failed'), { now: NOW }).contextValue, 'job:failed:hasId');
    const ok = entry('succeeded', { outputs: [{ id: 'o1', name: 'out.png', content_type: 'image/png' }] });
    const model = presentEntry(ok, { now: NOW });
    assert.equal(model.contextValue, 'job:succeeded:outputs:hasId');
    assert.deepEqual(model.outputs.map((o) => o.id), ['o1']);
    // The menus' regex (package.json) matches the flag, and never a terminal job's value.
    const cancellable = /^job:.*:cancellable(:|$)/;
    assert.match(presentEntry(entry('running'), { now: NOW }).contextValue, cancellable);
    assert.doesNotMatch(model.contextValue, cancellable);
  });

  it('a status the server invents never makes a contextValue the menus would misread', () => {
    const odd = entry('running:cancellable weird');
    assert.equal(presentEntry(odd, { now: NOW }).contextValue.split(':')[1], 'unknown');
  });

  it('each status has its codicon and theme color (spinning while running)', () => {
    assert.deepEqual(statusIcon('running'), { id: 'sync~spin' });
    assert.deepEqual(statusIcon('succeeded'), { id: 'pass', color: 'testing.iconPassed' });
    assert.deepEqual(statusIcon('failed'), { id: 'error', color: 'testing.iconFailed' });
    assert.equal(statusIcon('canceled').id, 'circle-slash');
    assert.equal(statusIcon('expired').id, 'history');
    assert.equal(statusIcon('queued').id, 'clock');
    assert.equal(statusIcon('something new').id, 'question');
  });

  it('the tooltip shows times, queue position, metrics with nulls as "not yet", the error and the request id', () => {
    const e = entry('failed', { metrics: { queue_ms: 12, run_ms: null }, error: { code: 'node_error', message: 'boom', node_id: '3', class_type: 'KSampler' } });
    e.requestId = 'req-1';
    const tip = presentEntry(e, { now: NOW }).tooltip;
    assert.match(tip, /Created: 2026\\-11\\-22T10\\:00\\:00Z/);
    assert.match(tip, /queue\\_ms: 12/);
    assert.match(tip, /run\\_ms: not yet/);
    assert.match(tip, /Code: node\\_error/);
    assert.match(tip, /Message: boom/);
    assert.match(tip, /Node: 3 · KSampler/);
    assert.match(tip, /Request id: req\\-1/);
    assert.match(presentEntry(entry('queued', { queue_position: 0 }), { now: NOW }).tooltip, /Queue position: 1/);
  });

  it('a hostile server string is redacted, neutralized and Markdown-escaped in the tooltip and the description', () => {
    const secret = 'sk-live-abcdef123456';
    const redactor = new Redactor([secret]);
    const hostile = `[click](https://evil.example) ![x](http://e/i.png) <img src=x> \u202e\u001b[31m ${secret}`;
    const e = entry('failed', { error: { code: 'x', message: hostile } });
    const running = entry('running', { progress: { value: 0.5, message: `\u001b[2J${secret}\u202e` } });
    const clean = (t: string): string => redactor.clean(t);
    const tip = presentEntry(e, { now: NOW, clean }).tooltip;
    assert.ok(!tip.includes(secret), 'the key leaked');
    assert.ok(!tip.includes('](') && !tip.includes('<img'), `markdown or html survived: ${tip}`);
    assert.ok(!tip.includes('\u001b') && !tip.includes('\u202e'), 'a control character survived');
    assert.match(tip, /\\\[click\\\]\\\(https\\:\/\/evil\\\.example\\\)/);
    const desc = presentEntry(running, { now: NOW, clean }).description;
    assert.ok(!desc.includes(secret) && !desc.includes('\u001b') && !desc.includes('\u202e'), desc);
    assert.match(desc, /^50% · \\x1b\[2J«redacted»\\u202e$/);
  });

  it('escapeMarkdown makes every Markdown special character literal', () => {
    assert.equal(escapeMarkdown('*a* _b_ `c` <d> & #e'), '\\*a\\* \\_b\\_ \\`c\\` &lt;d&gt; &amp; \\#e');
  });

  it("merging keeps only the configured server's records, joins a listed job to its record, and newest first", () => {
    const mine = record({ jobId: 'j1', submittedAt: '2026-11-22T09:00:00Z' });
    const other = record({ jobId: 'j2', baseUrl: 'http://other.example' });
    const listed = [job('running', { id: 'j1', created_at: '2026-11-22T09:00:00Z' }), job('succeeded', { id: 'j3', created_at: '2026-11-22T10:00:00Z' })];
    const merged = mergeEntries(BASE, [mine, other], listed);
    assert.deepEqual(merged.map((e) => e.jobId), ['j3', 'j1']);
    assert.equal(merged[1]!.record, mine);
    assert.equal(merged[1]!.job?.status, 'running');
  });

  it('merging keeps a live snapshot over an older listing, and a job seen live before it is stored', () => {
    const live = new Map<string, JobEntry>([
      [`${BASE} j1`, { baseUrl: BASE, jobId: 'j1', job: job('running', { id: 'j1', progress: { value: 0.9 } }) }],
      [`${BASE} j9`, { baseUrl: BASE, jobId: 'j9', job: job('queued', { id: 'j9' }) }],
    ]);
    const merged = mergeEntries(BASE, [record({ jobId: 'j1' })], [job('running', { id: 'j1', progress: { value: 0.1 } })], live);
    const j1 = merged.find((e) => e.jobId === 'j1')!;
    assert.equal(j1.job?.progress?.value, 0.9);
    assert.ok(j1.record);
    assert.ok(merged.some((e) => e.jobId === 'j9'));
  });
});
