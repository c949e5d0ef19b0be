import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HiddenJobs,
  RECENT_PAGE_SIZE,
  buildJobTree,
  groupAccessibilityLabel,
  hasMoreJobs,
  hasWorkflowSource,
  jobChildren,
  liveEntry,
  statusWords,
  describeEntry,
  entryKey,
  mergeEntries,
  needsFollow,
  presentEntry,
  statusIcon,
  type JobEntry,
} from '../../src/core/views';
import { JobSchema } from '../../src/core/v2/schemas';
import { Redactor, untranslated, type Translate, escapeMarkdown } from '../../src/core/util';
import { StateStore, isExpiredRecord, type JobRecord } from '../../src/core/state';
import type { Job } from '../../src/core';
import { jobOf } from '../../src/core/v2/mapping';
import { job as rawJob } from './builders';
import { tempDir } from './tmp';

const BASE = 'http://127.0.0.1:8189';
const NOW = Date.parse('2026-11-22T10:05:00Z');

/** A job of the model in `status`, as a v2 server would describe it (fields of `overrides` in its wire names). */
function job(status: string, overrides: Record<string, unknown> = {}): Job {
  return jobOf(JobSchema.parse(rawJob(status, overrides)), undefined);
}

function record(overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    idempotencyKey: `k-${Math.random().toString(36).slice(2)}`,
    baseUrl: BASE,
    state: 'created',
    submittedAt: '2026-11-22T10:00:00Z',
    ...overrides,
  };
}

function entry(status: string, overrides: Record<string, unknown> = {}, rec: Partial<JobRecord> = {}): JobEntry {
  const j = job(status, overrides);
  return {
    baseUrl: BASE,
    jobId: j.id,
    job: j,
    record: record({ jobId: j.id, workflowFile: '/home/u/flows/invert.json', ...rec }),
  };
}

describe('jobs tree model (the Jobs view)', () => {
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
    assert.equal(
      needsFollow({ baseUrl: BASE, jobId: 'j1', record: record({ jobId: 'j1', lastStatus: 'succeeded' }) }),
      false,
    );
  });

  it('the label is the workflow file name and the short id, else "job" and the short id', () => {
    const e = entry('running');
    assert.equal(presentEntry(e, { now: NOW }).label, `invert.json ${e.jobId!.slice(0, 8)}`);
    const listed: JobEntry = {
      baseUrl: BASE,
      jobId: 'abcdef0123456789',
      job: job('running', { id: 'abcdef0123456789' }),
    };
    assert.equal(presentEntry(listed, { now: NOW }).label, 'job abcdef01');
  });

  it('without a workflow file the label is the SaveImage prefix: remembered at submission, else read from an output name', () => {
    const untitled = entry('running', {}, { workflowFile: undefined, savePrefix: 'portrait' });
    assert.equal(presentEntry(untitled, { now: NOW }).label, `portrait ${untitled.jobId!.slice(0, 8)}`);
    const outputs = [
      { id: 'o1', name: 'landscape_00003_.png', content_type: 'image/png', size_bytes: 10, hash: null, url: '/x' },
    ];
    const listed: JobEntry = {
      baseUrl: BASE,
      jobId: 'abcdef0123456789',
      job: job('succeeded', { id: 'abcdef0123456789', outputs }),
    };
    assert.equal(presentEntry(listed, { now: NOW }).label, 'landscape abcdef01');
    // A prefix is the server's or the workflow's text: cleaned like any other.
    const hostile = entry('running', {}, { workflowFile: undefined, savePrefix: 'evil\u202e\u001b[31m' });
    const label = presentEntry(hostile, { now: NOW }).label;
    assert.ok(!label.includes('\u202e') && !label.includes('\u001b'), label);
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
    const byClass = entry('running', {
      progress: { value: null, nodes_done: 1, nodes_total: 4, current_node_class: 'KSampler', step: 21, steps: 50 },
    });
    assert.equal(describeEntry(byClass, { now: NOW }), '25% · KSampler 21/50');
  });

  it("a running job's step is never shown above its steps (`51/50` reads `50/50`)", () => {
    const past = entry('running', {
      progress: { value: null, nodes_done: 1, nodes_total: 4, current_node_class: 'KSampler', step: 51, steps: 50 },
    });
    assert.equal(describeEntry(past, { now: NOW }), '25% · KSampler 50/50');
  });

  it('a job whose watch rides out an outage says the server is unreachable and when it retries (as the monitor), then what was last read', () => {
    const e = {
      ...entry('running', { progress: { value: 0.25 } }),
      outage: { reason: 'connection_failed: ECONNREFUSED', failingSinceMs: NOW - 4000, retryInMs: 4200 },
    };
    assert.equal(describeEntry(e, { now: NOW }), 'server unreachable, retrying in 5 s · 25%');
    const item = presentEntry(e, { now: NOW });
    assert.deepEqual(
      item.icon,
      { id: 'debug-disconnect', color: 'list.warningForeground' },
      'the row still spins as if all were well',
    );
    assert.ok(
      item.tooltip.includes(
        `⚠ ${escapeMarkdown('server unreachable (connection_failed: ECONNREFUSED), retrying in 5 s')}`,
      ),
      item.tooltip,
    );
    assert.match(item.accessibilityLabel, /running, server unreachable, retrying in 5 s/);
    // Read again (the outage over): the row is as before.
    const back = { ...e, outage: null };
    assert.equal(describeEntry(back, { now: NOW }), '25%');
    assert.deepEqual(presentEntry(back, { now: NOW }).icon, statusIcon('running'));
    // A job that ended has nothing more to read: no outage said.
    assert.doesNotMatch(describeEntry({ ...entry('succeeded'), outage: e.outage }, { now: NOW }), /unreachable/);
  });

  it("a job's entry as it stands now is what the view keeps (id, record) with the job service's state: job, request id, outage; past expires_at a job in flight reads lost", () => {
    const kept = { baseUrl: BASE, jobId: 'j1', record: record({ jobId: 'j1' }) };
    assert.deepEqual(liveEntry(kept, undefined, NOW), kept);
    const j = job('running', { id: 'j1', expires_at: '2026-11-23T10:00:00Z' });
    const outage = { reason: 'x', failingSinceMs: 0, retryInMs: 1000 };
    const state = {
      baseUrl: BASE,
      job: j,
      capabilities: { list: true, cancelRunning: true, assets: true, storedWorkflow: true, idempotentSubmit: true },
      requestId: 'r-1',
      preview: null,
      outage,
    };
    assert.deepEqual(liveEntry(kept, state, NOW), { ...kept, job: j, requestId: 'r-1', outage });
    const expired = liveEntry(kept, { ...state, job: { ...j, expiresAt: '2026-11-22T10:00:00Z' } }, NOW);
    assert.equal(expired.job?.status, 'lost');
  });

  it('a queued job shows its queue position; a finished job how long ago it ended', () => {
    assert.equal(describeEntry(entry('queued', { queue_position: 2 }), { now: NOW }), 'queued · position 3');
    // completed_at 10:00:02, now 10:05:00
    assert.equal(describeEntry(entry('succeeded'), { now: NOW }), '4 min ago');
  });

  it('contextValue flags: cancellable only for non-terminal jobs with an id, outputs for a succeeded job with outputs', () => {
    assert.equal(presentEntry(entry('running'), { now: NOW }).contextValue, 'job:running:cancellable:hasId:rerunnable');
    assert.equal(presentEntry(entry('queued'), { now: NOW }).contextValue, 'job:queued:cancellable:hasId:rerunnable');
    assert.equal(presentEntry(entry('canceling'), { now: NOW }).contextValue, 'job:canceling:hasId:rerunnable');
    assert.equal(presentEntry(entry('failed'), { now: NOW }).contextValue, 'job:failed:hasId:rerunnable:removable');
    const ok = entry('succeeded', { outputs: [{ id: 'o1', name: 'out.png', content_type: 'image/png' }] });
    const model = presentEntry(ok, { now: NOW });
    assert.equal(model.contextValue, 'job:succeeded:outputs:hasId:rerunnable:removable');
    assert.deepEqual(
      model.outputs.map((o) => o.id),
      ['o1'],
    );
    // The menus' regex (package.json) matches the flag, and never a terminal job's value.
    const cancellable = /^job:.*:cancellable(:|$)/;
    assert.match(presentEntry(entry('running'), { now: NOW }).contextValue, cancellable);
    assert.doesNotMatch(model.contextValue, cancellable);
  });

  it('Re-run is offered (rerunnable) for any job whose workflow can be had: a job id (the server keeps it) or a remembered file', () => {
    const rerunnable = /^job:.*:rerunnable(:|$)/;
    for (const s of ['queued', 'running', 'succeeded', 'failed', 'canceled', 'expired'])
      assert.match(presentEntry(entry(s), { now: NOW }).contextValue, rerunnable, s);
    const listedOnly: JobEntry = { baseUrl: BASE, jobId: 'j1', job: job('succeeded', { id: 'j1' }) };
    assert.match(presentEntry(listedOnly, { now: NOW }).contextValue, rerunnable);
    const unknownWithFile: JobEntry = {
      baseUrl: BASE,
      jobId: undefined,
      record: record({ state: 'outcome_unknown', workflowFile: '/w/a.json' }),
    };
    assert.equal(presentEntry(unknownWithFile, { now: NOW }).contextValue, 'job:outcome_unknown:rerunnable:removable');
    // Nothing to submit again: no id and no file.
    const bare: JobEntry = { baseUrl: BASE, jobId: undefined, record: record({ state: 'outcome_unknown' }) };
    assert.doesNotMatch(presentEntry(bare, { now: NOW }).contextValue, rerunnable);
  });

  it("package.json's menus show Re-run and Remove from List by these flags (their `when` regexes match the model)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: Record<string, { command: string; when?: string }[]> };
    };
    const whenOf = (command: string): RegExp => {
      const item = pkg.contributes.menus['view/item/context']!.find((m) => m.command === command);
      assert.ok(item?.when, `no context menu entry for ${command}`);
      const m = /viewItem =~ \/(.+)\/$/.exec(item.when);
      assert.ok(m, item.when);
      return new RegExp(m[1]!);
    };
    const done = presentEntry(entry('succeeded'), { now: NOW }).contextValue;
    const running = presentEntry(entry('running'), { now: NOW }).contextValue;
    assert.match(done, whenOf('comfyCloud.rerunJob'));
    assert.match(running, whenOf('comfyCloud.rerunJob'));
    assert.match(done, whenOf('comfyCloud.removeJob'));
    assert.doesNotMatch(running, whenOf('comfyCloud.removeJob'));
  });

  it('Remove from List is offered (removable) only for jobs under Recent, never for a running job or a pending submission', () => {
    const removable = /^job:.*:removable(:|$)/;
    for (const s of ['succeeded', 'failed', 'canceled', 'expired'])
      assert.match(presentEntry(entry(s), { now: NOW }).contextValue, removable, s);
    for (const s of ['queued', 'running', 'canceling'])
      assert.doesNotMatch(presentEntry(entry(s), { now: NOW }).contextValue, removable, s);
    const pending: JobEntry = {
      baseUrl: BASE,
      jobId: undefined,
      record: record({ state: 'pending', workflowFile: '/w/a.json' }),
    };
    assert.equal(presentEntry(pending, { now: NOW }).contextValue, 'job:pending:rerunnable');
  });

  it("a PNG output is flagged `output:png` (its workflow can be opened) and the image commands' menus match only it", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: Record<string, { command: string; when?: string }[]> };
    };
    const whens = (command: string, view: string): RegExp[] =>
      pkg.contributes.menus['view/item/context']!.filter(
        (m) => m.command === command && m.when?.includes(`view == ${view}`),
      ).map((m) => new RegExp(/viewItem =~ \/(.+)\/$/.exec(m.when!)![1]!));
    const outputs = entry('succeeded', {
      outputs: [
        { id: 'o1', name: 'out.png', content_type: 'image/png', size_bytes: 10 },
        { id: 'o2', name: 'clip.mp4', content_type: 'video/mp4', size_bytes: 10 },
        { id: 'o3', name: 'untyped.PNG', size_bytes: 10 },
      ],
    });
    const [png, video, untyped] = jobChildren(outputs, { now: NOW });
    assert.deepEqual(
      [png!.contextValue, video!.contextValue, untyped!.contextValue],
      ['output:png', 'output', 'output:png'],
    );
    for (const command of ['comfyCloud.openWorkflowFromImage', 'comfyCloud.runAgainFromImage']) {
      const [when] = whens(command, 'comfyCloud.jobs');
      assert.ok(when, `no Jobs view menu entry for ${command}`);
      assert.match(png!.contextValue, when);
      assert.doesNotMatch(video!.contextValue, when);
    }
    // The output's other actions still show on every output.
    for (const when of whens('comfyCloud.saveOutputAs', 'comfyCloud.jobs')) {
      assert.match(png!.contextValue, when);
      assert.match(video!.contextValue, when);
    }
  });

  it('children per job state: a succeeded job has its outputs then the workflow; a failed one its error then the workflow', () => {
    const ok = entry('succeeded', {
      outputs: [{ id: 'o1', name: 'out.png', content_type: 'image/png', size_bytes: 10 }],
    });
    const kids = jobChildren(ok, { now: NOW });
    assert.deepEqual(
      kids.map((c) => c.kind),
      ['output', 'workflow'],
    );
    assert.equal(kids[0]!.label, 'out.png');
    assert.equal(kids[0]!.description, 'image/png · 10 bytes');
    assert.equal(kids[0]!.contextValue, 'output:png');
    assert.equal(kids[1]!.contextValue, 'jobChild:workflow');
    assert.equal(kids[1]!.id, `${BASE} ${ok.jobId} workflow`);
    const failed = entry('failed', {
      error: {
        code: 'node_execution_error',
        message: 'boom',
        node_id: '3',
        class_type: 'KSampler',
        traceback: 'Traceback…',
      },
    });
    const fk = jobChildren(failed, { now: NOW });
    assert.deepEqual(
      fk.map((c) => c.kind),
      ['error', 'workflow'],
    );
    assert.equal(fk[0]!.label, 'node_execution_error: boom');
    assert.equal(fk[0]!.description, 'node 3 · KSampler');
    assert.equal(fk[0]!.contextValue, 'jobChild:error');
    // Outputs of a job that did not succeed are not offered.
    assert.deepEqual(
      jobChildren(entry('canceled', { outputs: [{ id: 'o1' }] }), { now: NOW }).map((c) => c.kind),
      ['workflow'],
    );
  });

  it('children per job state: logs only where the job carries them (absent, empty: no child); running jobs have only the workflow', () => {
    const withLogs = entry('succeeded', { logs: { lines: [{ level: 'info', message: 'hi' }] } });
    assert.deepEqual(
      jobChildren(withLogs, { now: NOW }).map((c) => c.kind),
      ['logs', 'workflow'],
    );
    assert.equal(jobChildren(withLogs, { now: NOW })[0]!.contextValue, 'jobChild:logs');
    for (const logs of [undefined, null, '', [], {}])
      assert.ok(
        !jobChildren(entry('succeeded', { logs }), { now: NOW }).some((c) => c.kind === 'logs'),
        JSON.stringify(logs),
      );
    assert.deepEqual(
      jobChildren(entry('running'), { now: NOW }).map((c) => c.kind),
      ['workflow'],
    );
    // A job item with children is expandable; one without (no id, no file) has none.
    assert.deepEqual(
      jobChildren({ baseUrl: BASE, jobId: undefined, record: record({ state: 'outcome_unknown' }) }, { now: NOW }),
      [],
    );
    assert.deepEqual(
      jobChildren(
        { baseUrl: BASE, jobId: undefined, record: record({ state: 'pending', workflowFile: '/w/a.json' }) },
        { now: NOW },
      ).map((c) => c.kind),
      ['workflow'],
    );
  });

  it('a hostile error code or node class in a child label is cleaned (redacted, control and bidi characters escaped)', () => {
    const secret = 'sk-live-abcdef123456';
    const redactor = new Redactor([secret]);
    const e = entry('failed', {
      error: { code: `x\u001b[2J`, message: `m ${secret}`, node_id: '1\u202e', class_type: 'K' },
    });
    const [err] = jobChildren(e, { now: NOW, clean: (t) => redactor.clean(t) });
    assert.ok(!err!.label.includes(secret) && !err!.label.includes('\u001b'), err!.label);
    assert.ok(!err!.description.includes('\u202e'), err!.description);
  });

  it('"Load more…" follows when Recent has more jobs than shown, or the listing was truncated at the limit asked', () => {
    const entries = ['succeeded', 'failed', 'canceled', 'expired', 'succeeded'].map((s) => entry(s));
    const tree = buildJobTree([entry('running'), ...entries], { now: NOW, recentLimit: 2 });
    assert.equal(tree.recent.length, 2);
    assert.equal(tree.recentTotal, 5);
    assert.equal(tree.running.length, 1, 'running jobs are never paged');
    assert.equal(hasMoreJobs(tree), true);
    const all = buildJobTree(entries, { now: NOW, recentLimit: 50 });
    assert.equal(hasMoreJobs(all), false);
    assert.equal(hasMoreJobs(all, { limit: 50, returned: 50, truncated: true }), true);
    // The server capped the page below what was asked: a longer page brings nothing new.
    assert.equal(hasMoreJobs(all, { limit: 100, returned: 60, truncated: true }), false);
    assert.equal(hasMoreJobs(all, { limit: 50, returned: 12, truncated: false }), false);
    assert.equal(RECENT_PAGE_SIZE, 50);
  });

  it('records past expires_at (or 24 h old when it is unknown) are left out of the tree', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    const expired = record({ jobId: 'old', expiresAt: '2026-11-23T11:59:59Z', submittedAt: '2026-11-23T11:00:00Z' });
    const live = record({ jobId: 'new', expiresAt: '2026-11-23T12:00:01Z', submittedAt: '2026-11-22T00:00:00Z' });
    const stale = record({ jobId: 'noexp', submittedAt: '2026-11-22T11:59:00Z' });
    const merged = mergeEntries(BASE, [expired, live, stale], [], undefined, { now });
    assert.deepEqual(
      merged.map((e) => e.jobId),
      ['new'],
    );
    assert.equal(isExpiredRecord(expired, now), true);
    assert.equal(isExpiredRecord(live, now), false);
    assert.equal(isExpiredRecord(stale, now), true);
    assert.equal(isExpiredRecord(record({ submittedAt: 'garbage' }), now), false, 'unreadable times are kept');
  });

  it('the state store prunes records past expires_at and keeps the others', async () => {
    const dir = tempDir('job-tree-prune-');
    const now = Date.parse('2026-11-23T12:00:00Z');
    const store = new StateStore(dir, { now: () => now });
    await store.put(
      record({
        idempotencyKey: 'gone',
        jobId: 'a',
        expiresAt: '2026-11-23T11:00:00Z',
        submittedAt: '2026-11-23T10:00:00Z',
      }),
    );
    await store.put(
      record({
        idempotencyKey: 'kept',
        jobId: 'b',
        expiresAt: '2026-11-23T13:00:00Z',
        submittedAt: '2026-11-23T10:00:00Z',
      }),
    );
    assert.equal(await store.prune(), 1);
    assert.deepEqual(
      (await store.list()).map((r) => r.idempotencyKey),
      ['kept'],
    );
  });

  it('a job removed from the list stays out of the merge until it changes (status, end or outputs)', () => {
    const hidden = new HiddenJobs();
    const listed = job('succeeded', { id: 'j1' });
    hidden.hide(`${BASE} j1`, listed);
    assert.deepEqual(
      mergeEntries(BASE, [], [listed], undefined, { hidden }).map((e) => e.jobId),
      [],
    );
    // A live snapshot of the same job, unchanged, stays hidden too.
    const live = new Map<string, JobEntry>([[`${BASE} j1`, { baseUrl: BASE, jobId: 'j1', job: listed }]]);
    assert.deepEqual(
      mergeEntries(BASE, [], [], live, { hidden }).map((e) => e.jobId),
      [],
    );
    const changed = job('succeeded', { id: 'j1', outputs: [{ id: 'o9' }] });
    assert.deepEqual(
      mergeEntries(BASE, [], [changed], undefined, { hidden }).map((e) => e.jobId),
      ['j1'],
    );
    assert.equal(hidden.size, 0, 'a changed job is no longer hidden');
  });

  it('accessibility: a job item says its label, its status spelled out and its description; a group its name and count', () => {
    const e = entry('succeeded');
    const model = presentEntry(e, { now: NOW });
    assert.equal(model.accessibilityLabel, `invert.json ${e.jobId!.slice(0, 8)}, succeeded, 4 min ago`);
    const pending: JobEntry = {
      baseUrl: BASE,
      jobId: undefined,
      record: record({ state: 'pending', workflowFile: '/w/a.json' }),
    };
    assert.match(presentEntry(pending, { now: NOW }).accessibilityLabel, /^a\.json, being submitted/);
    const unknown: JobEntry = { baseUrl: BASE, jobId: undefined, record: record({ state: 'outcome_unknown' }) };
    assert.match(presentEntry(unknown, { now: NOW }).accessibilityLabel, /outcome unknown/);
    assert.equal(groupAccessibilityLabel('running', 2), 'Running, 2 jobs');
    assert.equal(groupAccessibilityLabel('recent', 1), 'Recent, 1 job');
    assert.equal(statusWords('weird'), 'status weird');
  });

  it('every word of the model goes through the injected translation', () => {
    const upper: Translate = (m, ...args) => untranslated(m, ...args).toUpperCase();
    const e = entry('failed', { error: { code: 'c', message: 'm' } });
    const model = presentEntry(e, { now: NOW, t: upper });
    assert.match(model.tooltip, /JOB ID/);
    assert.equal(model.children.at(-1)!.label, 'WORKFLOW');
    assert.match(model.accessibilityLabel, /FAILED/);
    assert.equal(groupAccessibilityLabel('running', 3, upper), 'RUNNING, 3 JOBS');
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
    const e = entry('failed', {
      metrics: { queue_ms: 12, run_ms: null },
      error: { code: 'node_error', message: 'boom', node_id: '3', class_type: 'KSampler' },
    });
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
