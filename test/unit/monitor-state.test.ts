import * as assert from 'node:assert/strict';
import { JobSchema } from '../../src/core/v2/schemas';
import { Redactor, untranslated } from '../../src/core/util';
import type { Job } from '../../src/core';
import type { JobRecord } from '../../src/core/state';
import { MONITOR_STRINGS, parseMonitorState } from '../../src/core/views/monitor/protocol';
import {
  monitorHtml,
  monitorJob,
  monitorPreview,
  monitorState,
  monitorStrings,
} from '../../src/core/views/monitor/monitorPage';
import { jobOf } from '../../src/core/v2/mapping';
import { job as rawJob } from './builders';
import { modelProgress } from './modelBuilders';

const SECRET = 'sk-monitor-secret-0123456789';
const redactor = new Redactor([SECRET]);
const clean = (s: string): string => redactor.clean(s);
const t = untranslated;

/** A job of the model in `status`, as a v2 server would describe it (fields of `overrides` in its wire names). */
function parsed(status: string, overrides: Record<string, unknown> = {}): Job {
  return jobOf(JobSchema.parse(rawJob(status, overrides)), undefined);
}

function record(overrides: Partial<JobRecord> = {}): JobRecord {
  return {
    idempotencyKey: 'k1',
    baseUrl: 'http://127.0.0.1:1',
    state: 'submitted',
    submittedAt: '2026-11-22T09:59:59Z',
    ...overrides,
  } as JobRecord;
}

describe('monitor state: what the job monitor shows', () => {
  it('every server string is cleaned: secrets redacted, control and bidi characters escaped', () => {
    const hostile = `evil\u202E${SECRET}\u0007\nforged`;
    const job = parsed('failed', {
      progress: {
        value: 0.5,
        nodes_done: 1,
        nodes_total: 2,
        current_node: hostile,
        current_node_class: hostile,
        message: hostile,
      },
      error: {
        code: hostile,
        message: hostile,
        node_id: hostile,
        class_type: hostile,
        traceback: [`line1 ${SECRET}\n`, `line2\u202E\n`],
      },
      outputs: [{ id: 'o1', name: hostile, content_type: hostile, size_bytes: 3 }],
      metrics: { [hostile]: 1 },
      logs: [hostile],
    });
    const m = monitorJob({ jobId: job.id, job, connection: hostile }, clean, t);
    const strings = [
      m.connection,
      m.progress!.currentNode,
      m.progress!.currentNodeClass,
      m.progress!.message,
      m.error!.code,
      m.error!.message,
      m.error!.nodeId,
      m.error!.classType,
      m.outputs[0]!.name,
      m.outputs[0]!.contentType,
      m.metrics[0]!.name,
      ...m.logs!,
    ];
    for (const s of strings) {
      assert.ok(s !== null);
      // eslint-disable-next-line no-control-regex -- the characters a hostile server sends
      assert.doesNotMatch(s, /[\u202E\u0007\n]/, `not neutralized: ${JSON.stringify(s)}`);
      assert.ok(!s.includes(SECRET), `not redacted: ${s}`);
    }
    // The traceback keeps its lines, each cleaned.
    const tb = m.error!.traceback!.split('\n');
    assert.equal(tb.length, 2);
    assert.ok(!tb.join('').includes(SECRET));
    assert.doesNotMatch(tb.join(''), /\u202E/);
  });

  it('metrics keep null as null ("not yet") and numbers as text', () => {
    const job = parsed('running', { metrics: { queue_ms: 120, gpu_ms: null } });
    const m = monitorJob({ jobId: job.id, job, connection: 'c' }, clean, t);
    assert.deepEqual(m.metrics, [
      { name: 'queue_ms', value: '120' },
      { name: 'gpu_ms', value: null },
    ]);
  });

  it('logs are the job logs read as the Jobs view reads them (strings and {time, level, message} items); none without logs', () => {
    const job = parsed('running', { logs: ['first', { time: '10:00', level: 'info', message: 'second\nthird' }] });
    assert.deepEqual(monitorJob({ jobId: job.id, job, connection: 'c' }, clean, t).logs, [
      'first',
      '10:00 INFO second',
      'third',
    ]);
    const none = parsed('running');
    assert.equal(monitorJob({ jobId: none.id, job: none, connection: 'c' }, clean, t).logs, null);
  });

  it('cancel is offered only for a non-terminal job that is not already canceling', () => {
    for (const [status, can] of [
      ['queued', true],
      ['running', true],
      ['canceling', false],
      ['succeeded', false],
      ['failed', false],
      ['canceled', false],
      ['expired', false],
    ] as const) {
      const job = parsed(status);
      assert.equal(monitorJob({ jobId: job.id, job, connection: 'c' }, clean, t).can.cancel, can, status);
    }
  });

  it('rule: a job the server no longer knows (lost) has no Cancel, and the page says plainly that the server no longer knows it and to Re-run it', () => {
    const job = { ...parsed('running'), status: 'lost' };
    const shown = monitorJob(
      {
        jobId: job.id,
        job,
        record: record({ jobId: job.id, lastStatus: 'lost', workflowFile: '/w/slow.json' }),
        connection: 'c',
        retrying: 'server unreachable',
      },
      clean,
      t,
    );
    assert.equal(shown.status, 'lost');
    assert.equal(shown.can.cancel, false);
    assert.equal(shown.can.rerun, true);
    assert.match(
      shown.retrying ?? '',
      /^The server no longer knows this job: it expired, or the server was restarted without it\..*Re-run it/,
    );
    // Without a remembered file its workflow is gone with it: no Re-run, no Open Workflow, and the page does not offer it.
    const noFile = monitorJob(
      { jobId: job.id, job, record: record({ jobId: job.id, lastStatus: 'lost' }), connection: 'c' },
      clean,
      t,
    );
    assert.equal(noFile.can.rerun, false);
    assert.equal(noFile.can.openWorkflow, false);
    assert.doesNotMatch(noFile.retrying ?? '', /Re-run/);
    // A remembered record saying lost, before any answer: the same.
    const remembered = monitorJob(
      { jobId: 'j', record: record({ jobId: 'j', lastStatus: 'lost' }), connection: 'c' },
      clean,
      t,
    );
    assert.equal(remembered.can.cancel, false);
    assert.match(remembered.retrying ?? '', /no longer knows this job/);
  });

  it('go to node only for a failed job naming a node whose workflow file is remembered and exists', () => {
    const failed = parsed('failed', {
      error: { code: 'node_execution_error', message: 'boom', node_id: '5', class_type: 'EmptyImage' },
    });
    const file = record({ workflowFile: '/w/slow.json' });
    assert.equal(
      monitorJob({ jobId: failed.id, job: failed, record: file, connection: 'c' }, clean, t).can.goToNode,
      true,
    );
    assert.equal(
      monitorJob({ jobId: failed.id, job: failed, record: file, connection: 'c', workflowFileExists: false }, clean, t)
        .can.goToNode,
      false,
    );
    assert.equal(monitorJob({ jobId: failed.id, job: failed, connection: 'c' }, clean, t).can.goToNode, false);
    const noNode = parsed('failed', { error: { code: 'x', message: 'boom' } });
    assert.equal(
      monitorJob({ jobId: noNode.id, job: noNode, record: file, connection: 'c' }, clean, t).can.goToNode,
      false,
    );
    // Re-run and Open Workflow: the job has an id, so the server's workflow can be had.
    const m = monitorJob({ jobId: failed.id, job: failed, connection: 'c' }, clean, t);
    assert.equal(m.can.rerun, true);
    assert.equal(m.can.openWorkflow, true);
  });

  it('the header names the workflow file, else the SaveImage prefix, else "job"', () => {
    const job = parsed('succeeded', { outputs: [{ id: 'o1', name: 'ComfyUI_00001_.png' }] });
    assert.equal(
      monitorJob(
        { jobId: job.id, job, record: record({ workflowFile: '/a/b/invert.json' }), connection: 'c' },
        clean,
        t,
      ).workflowName,
      'invert.json',
    );
    assert.equal(monitorJob({ jobId: job.id, job, connection: 'c' }, clean, t).workflowName, 'ComfyUI');
    const bare = parsed('running');
    assert.equal(monitorJob({ jobId: bare.id, job: bare, connection: 'c' }, clean, t).workflowName, 'job');
  });

  it("progress and queue position are the job service's (its progress never goes backwards); the queue position shows only while queued", () => {
    const job = parsed('running', { progress: { value: 0.25, nodes_done: 1, nodes_total: 4 }, queue_position: 3 });
    const running = monitorJob({ jobId: job.id, job, connection: 'c' }, clean, t);
    assert.equal(running.progress!.value, 0.25);
    assert.equal(running.queuePosition, null);
    const queued = parsed('queued', { queue_position: 2 });
    assert.equal(monitorJob({ jobId: queued.id, job: queued, connection: 'c' }, clean, t).queuePosition, 2);
  });

  it("rule: the progress value is the client's one formula (the server's value, else nodes done over total), as the Jobs view shows it", () => {
    const byNodes = parsed('running', { progress: { nodes_done: 1, nodes_total: 4 } });
    assert.equal(monitorJob({ jobId: byNodes.id, job: byNodes, connection: 'c' }, clean, t).progress!.value, 0.25);
    const beyond = parsed('running', { progress: { value: 3 } });
    assert.equal(monitorJob({ jobId: beyond.id, job: beyond, connection: 'c' }, clean, t).progress!.value, 1);
  });

  it('outputs saved here carry their thumbnail and are marked saved; others are not', () => {
    const job = parsed('succeeded', {
      outputs: [
        { id: 'o1', name: 'a.png', content_type: 'image/png', size_bytes: 10 },
        { id: 'o2', name: 'b.bin' },
      ],
    });
    const m = monitorJob(
      {
        jobId: job.id,
        job,
        connection: 'c',
        saved: new Map([['o1', { thumbnail: 'https://file+.vscode-resource/a.png' }]]),
      },
      clean,
      t,
    );
    assert.deepEqual(m.outputs, [
      {
        id: 'o1',
        name: 'a.png',
        contentType: 'image/png',
        sizeBytes: 10,
        thumbnail: 'https://file+.vscode-resource/a.png',
        saved: true,
      },
      { id: 'o2', name: 'b.bin', contentType: null, sizeBytes: null, thumbnail: null, saved: false },
    ]);
    assert.equal(m.can.revealOutputs, true);
  });

  it('a preview is sent as base64 data of an image type, with its node class when the progress names the node; anything else is dropped', () => {
    const p = monitorPreview(
      { nodeId: '3', contentType: 'image/png', dataBase64: 'iVBORw0K' },
      1,
      modelProgress({ currentNode: '3', currentNodeClass: 'ImageInvert' }),
      clean,
    );
    assert.deepEqual(p, {
      seq: 1,
      nodeId: '3',
      nodeClass: 'ImageInvert',
      contentType: 'image/png',
      dataBase64: 'iVBORw0K',
    });
    assert.equal(
      monitorPreview({ nodeId: '3', contentType: 'text/html', dataBase64: 'AAAA' }, 2, null, clean),
      undefined,
    );
    assert.equal(
      monitorPreview({ nodeId: '3', contentType: 'image/png', dataBase64: '"><script>' }, 3, null, clean),
      undefined,
    );
  });

  it("the page words are the protocol's MONITOR_STRINGS, each through the translation", () => {
    assert.deepEqual(monitorStrings(t), MONITOR_STRINGS);
    const upper = monitorStrings((m) => m.toUpperCase());
    for (const [k, v] of Object.entries(MONITOR_STRINGS))
      assert.equal(upper[k as keyof typeof MONITOR_STRINGS], v.toUpperCase());
  });

  it('the state validates against the protocol, and the page embeds it with every < escaped under a nonce-only CSP', () => {
    const job = parsed('failed', { error: { code: 'x', message: '</script><script>alert(1)</script>' } });
    const state = monitorState(monitorJob({ jobId: job.id, job, connection: 'c' }, clean, t), null, monitorStrings(t));
    assert.ok(parseMonitorState(JSON.parse(JSON.stringify(state))), 'the state does not pass the protocol validation');
    const html = monitorHtml({
      lang: 'en',
      cspSource: 'https://x.vscode-cdn.net',
      nonce: 'abc+/=',
      codiconCss: 'c.css',
      graphCss: 'g.css',
      monitorCss: 'm.css',
      monitorJs: 'm.js',
      state,
    });
    const json = /<script type="application\/json" id="monitor-state">([^]*?)<\/script>/.exec(html)![1]!;
    assert.doesNotMatch(json, /</);
    assert.deepEqual(JSON.parse(json), state);
    const csp = /content="([^"]*)"/.exec(html)![1]!;
    assert.match(csp, /^default-src 'none'; /);
    assert.match(csp, /script-src 'nonce-abc\+\/=';/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal((html.match(/<script nonce="abc\+\/=" src="m\.js">/g) ?? []).length, 1);
    // The embedded graph's stylesheet is linked before the monitor's (whose page rules win), under the same CSP.
    assert.ok(html.indexOf('href="g.css"') > 0 && html.indexOf('href="g.css"') < html.indexOf('href="m.css"'));
  });
});
