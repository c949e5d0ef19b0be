/**
 * The jobs tree model (the Jobs view), below and around the items: children per job state, "Load more…", records
 * past expires_at left out and pruned, removed jobs, accessibility, translation, icons, and tooltips and descriptions
 * with hostile server strings redacted and Markdown-escaped.
 */
import * as assert from 'node:assert/strict';
import {
  HiddenJobs,
  RECENT_PAGE_SIZE,
  buildJobTree,
  groupAccessibilityLabel,
  hasMoreJobs,
  jobChildren,
  mergeEntries,
  presentEntry,
  statusIcon,
  statusWords,
  type JobEntry,
  baseName,
} from '../../src/core/views';
import { Redactor, escapeMarkdown, untranslated, type Translate } from '../../src/core/util';
import { StateStore, isExpiredRecord } from '../../src/core/state';
import { BASE, NOW, entry, job, record } from './job-tree.fixtures';
import { tempDir } from './tmp';

describe('jobs tree model (the Jobs view)', () => {
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

  it("baseName is a path's last segment that is not empty, either separator; the path itself when it has none", () => {
    const cases: Array<[string, string]> = [
      ['/work/flows/flow-3.json', 'flow-3.json'],
      ['C:\\flows\\a b.json', 'a b.json'],
      ['mixed/dir\\x.json', 'x.json'],
      ['dir/sub//', 'sub'],
      ['plain.json', 'plain.json'],
      ['///', '///'],
      ['', ''],
    ];
    for (const [file, name] of cases) assert.equal(baseName(file), name, file);
  });
});
