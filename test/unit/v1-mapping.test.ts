/**
 * The v1 → v2 mapping (mapping.ts): Cloud API v1 (deprecated), States and transitions, and Resources and their
 * fields, plus the public OpenAPI's `completed`, onto Job and Asset API v2's statuses and output items.
 */
import * as assert from 'node:assert/strict';
import { JobSchema, isTerminalStatus } from '../../src/core';
import { V1_TERMINAL_STATUSES, filesOfOutputs, isV1TerminalStatus, jobErrorOf, jobOutputOf, toJobSnapshot, v2StatusOf } from '../../src/core/v1';

describe('v1 statuses in v2 vocabulary (mapping.ts)', () => {
  it('terminal: success, completed, error, non_retryable_error, lost, cancelled, and nothing else', () => {
    assert.deepEqual([...V1_TERMINAL_STATUSES].sort(), ['cancelled', 'completed', 'error', 'lost', 'non_retryable_error', 'success']);
    for (const s of V1_TERMINAL_STATUSES) assert.ok(isV1TerminalStatus(s), s);
    for (const s of ['submitted', 'queued_waiting', 'preparing', 'executing', 'cancel_requested', 'pending', 'in_progress', 'waiting_to_dispatch', 'weird_new_state', '']) {
      assert.ok(!isV1TerminalStatus(s), s);
    }
  });

  it('success and completed are succeeded; error and non_retryable_error failed; cancelled canceled; lost failed', () => {
    assert.equal(v2StatusOf('success'), 'succeeded');
    assert.equal(v2StatusOf('completed'), 'succeeded');
    assert.equal(v2StatusOf('error'), 'failed');
    assert.equal(v2StatusOf('non_retryable_error'), 'failed');
    assert.equal(v2StatusOf('cancelled'), 'canceled');
    assert.equal(v2StatusOf('lost'), 'failed');
  });

  it('every terminal v1 status maps to a terminal v2 status, and every in-flight one to a non-terminal one', () => {
    for (const s of V1_TERMINAL_STATUSES) assert.ok(isTerminalStatus(v2StatusOf(s)), s);
    for (const s of ['submitted', 'queued_waiting', 'preparing', 'executing', 'cancel_requested', 'weird_new_state']) {
      assert.ok(!isTerminalStatus(v2StatusOf(s)), s);
      assert.ok(!isTerminalStatus(v2StatusOf(s, true)), s);
    }
  });

  it('in flight: submitted/queued_waiting queued, preparing/executing running, cancel_requested canceling, an unknown value queued until execution is seen', () => {
    assert.equal(v2StatusOf('submitted'), 'queued');
    assert.equal(v2StatusOf('queued_waiting'), 'queued');
    assert.equal(v2StatusOf('preparing'), 'running');
    assert.equal(v2StatusOf('executing'), 'running');
    assert.equal(v2StatusOf('cancel_requested'), 'canceling');
    assert.equal(v2StatusOf('weird_new_state'), 'queued');
    assert.equal(v2StatusOf('weird_new_state', true), 'running');
  });

  it('lost is failed with an error that says the job disappeared', () => {
    const error = jobErrorOf('lost');
    assert.equal(error?.code, 'lost');
    assert.match(String(error?.message), /disappeared/);
  });

  it('a failed job carries the engine exception (execution_error) as v2 error fields', () => {
    const error = jobErrorOf('error', { exception_type: 'ValueError', exception_message: 'bad width', node_id: '3', node_type: 'EmptyImage' });
    assert.deepEqual({ code: error?.code, message: error?.message, node: error?.node_id, cls: error?.class_type }, { code: 'error', message: 'ValueError: bad width', node: '3', cls: 'EmptyImage' });
    assert.equal(jobErrorOf('success'), null);
  });
});

describe('v1 outputs as v2 output items (mapping.ts)', () => {
  it('node outputs are read by kind (images, video, audio): every file reference, with its node and kind', () => {
    const files = filesOfOutputs({
      '3': { images: [{ filename: 'a.png', subfolder: '', type: 'output' }, { nope: 1 }], text: ['hello'] },
      '7': { video: [{ filename: 'v.mp4', subfolder: 'x', type: 'output' }], audio: [{ filename: 's.wav' }] },
      '8': 'odd',
    });
    assert.deepEqual(
      files.map((f) => [f.nodeId, f.kind, f.ref.filename, f.ref.subfolder, f.ref.type]),
      [
        ['3', 'images', 'a.png', '', 'output'],
        ['7', 'video', 'v.mp4', 'x', 'output'],
        ['7', 'audio', 's.wav', '', 'output'],
      ],
    );
  });

  it('an output item is a v2 JobOutput whose url is its /api/view URL, with a content type from its extension', () => {
    const [file] = filesOfOutputs({ '3': { images: [{ filename: 'fixture_00001_.png', subfolder: '', type: 'output' }] } });
    const out = jobOutputOf(file, new URL('http://h/api/view?filename=fixture_00001_.png&subfolder=&type=output'), 'p-1');
    assert.deepEqual(
      { id: out.id, node: out.node_id, name: out.name, type: out.type, ct: out.content_type, url: out.url, job: out.job_id },
      { id: 'output/fixture_00001_.png', node: '3', name: 'fixture_00001_.png', type: 'image', ct: 'image/png', url: 'http://h/api/view?filename=fixture_00001_.png&subfolder=&type=output', job: 'p-1' },
    );
    assert.ok(JobSchema.safeParse({ id: 'p-1', status: 'succeeded', outputs: [out] }).success);
  });

  it('a v1 job is a v2 JobSnapshot: status mapped, outputs kept, no links to follow, the v1 status kept', () => {
    const snap = toJobSnapshot({ promptId: 'p-9', v1Status: 'completed', outputs: [], source: new URL('http://h/api/job/p-9/status'), requestId: 'r' });
    assert.equal(snap.job.id, 'p-9');
    assert.equal(snap.job.status, 'succeeded');
    assert.deepEqual(snap.job.urls, {});
    assert.equal((snap.job as Record<string, unknown>).v1_status, 'completed');
    assert.equal(snap.job.error, null);
  });

  it('times: created_at from the status endpoint, started_at from the socket, completed_at = updated_at only once terminal', () => {
    const times = { createdAt: '2026-11-23T10:00:00.000Z', startedAt: '2026-11-23T10:00:01.000Z', updatedAt: '2026-11-23T10:00:05.000Z' };
    const source = new URL('http://h/api/job/p/status');
    const done = toJobSnapshot({ ...times, promptId: 'p', v1Status: 'success', outputs: [], source, requestId: undefined }).job;
    assert.deepEqual([done.created_at, done.started_at, done.completed_at], [times.createdAt, times.startedAt, times.updatedAt]);
    // In flight, the last update is not an end.
    const running = toJobSnapshot({ ...times, promptId: 'p', v1Status: 'executing', started: true, outputs: [], source, requestId: undefined }).job;
    assert.deepEqual([running.created_at, running.started_at, running.completed_at], [times.createdAt, times.startedAt, null]);
    // Unknown: null (shown as "not yet"), never invented.
    const bare = toJobSnapshot({ promptId: 'p', v1Status: 'success', outputs: [], source, requestId: undefined }).job;
    assert.deepEqual([bare.created_at, bare.started_at, bare.completed_at], [null, null, null]);
  });
});
