/**
 * The jobs tree model (the Jobs view), its items: Running and Recent groups and the badge, which jobs are followed,
 * labels, descriptions (progress, outage, queue position), item ids, and the contextValue flags the menus of
 * package.json match (cancel, outputs, Re-run, Remove from List, PNG outputs).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  buildJobTree,
  describeEntry,
  entryKey,
  jobChildren,
  liveEntry,
  needsFollow,
  presentEntry,
  statusIcon,
  type JobEntry,
} from '../../src/core/views';
import { escapeMarkdown } from '../../src/core/util';
import { BASE, NOW, entry, job, record } from './job-tree.fixtures';

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
});
