/**
 * The v1 mapping into the client's job model (src/core/v1/mapping.ts): Cloud API v1 (deprecated), "States and
 * transitions" and "Resources" (and the local engine's `completed`), onto the model's statuses, outputs and errors.
 */
import * as assert from 'node:assert/strict';
import { isTerminalStatus } from '../../src/core';
import {
  V1_TERMINAL_STATUSES,
  answerOfV1,
  filesOfOutputs,
  isV1TerminalStatus,
  jobErrorOf,
  jobOfV1,
  jobOutputOf,
  jobStatusOf,
} from '../../src/core/v1';

describe("v1 statuses in the model's vocabulary (mapping.ts)", () => {
  it('terminal: success, completed, error, non_retryable_error, lost, cancelled, and nothing else', () => {
    assert.deepEqual([...V1_TERMINAL_STATUSES].sort(), [
      'cancelled',
      'completed',
      'error',
      'lost',
      'non_retryable_error',
      'success',
    ]);
    for (const s of V1_TERMINAL_STATUSES) assert.ok(isV1TerminalStatus(s), s);
    for (const s of [
      'submitted',
      'queued_waiting',
      'preparing',
      'executing',
      'cancel_requested',
      'pending',
      'in_progress',
      'waiting_to_dispatch',
      'weird_new_state',
      '',
    ]) {
      assert.ok(!isV1TerminalStatus(s), s);
    }
  });

  it('success and completed are succeeded; error and non_retryable_error failed; cancelled canceled; lost failed', () => {
    assert.equal(jobStatusOf('success'), 'succeeded');
    assert.equal(jobStatusOf('completed'), 'succeeded');
    assert.equal(jobStatusOf('error'), 'failed');
    assert.equal(jobStatusOf('non_retryable_error'), 'failed');
    assert.equal(jobStatusOf('cancelled'), 'canceled');
    assert.equal(jobStatusOf('lost'), 'failed');
  });

  it('every terminal v1 status maps to a terminal status of the model, and every in-flight one to a non-terminal one', () => {
    for (const s of V1_TERMINAL_STATUSES) assert.ok(isTerminalStatus(jobStatusOf(s)), s);
    for (const s of ['submitted', 'queued_waiting', 'preparing', 'executing', 'cancel_requested', 'weird_new_state']) {
      assert.ok(!isTerminalStatus(jobStatusOf(s)), s);
      assert.ok(!isTerminalStatus(jobStatusOf(s, true)), s);
    }
  });

  it('in flight: submitted/queued_waiting queued, preparing/executing running, cancel_requested canceling, an unknown value queued until execution is seen', () => {
    assert.equal(jobStatusOf('submitted'), 'queued');
    assert.equal(jobStatusOf('queued_waiting'), 'queued');
    assert.equal(jobStatusOf('preparing'), 'running');
    assert.equal(jobStatusOf('executing'), 'running');
    assert.equal(jobStatusOf('cancel_requested'), 'canceling');
    assert.equal(jobStatusOf('weird_new_state'), 'queued');
    assert.equal(jobStatusOf('weird_new_state', true), 'running');
  });

  it('lost is failed with an error that says the job disappeared', () => {
    const error = jobErrorOf('lost');
    assert.equal(error?.code, 'lost');
    assert.match(String(error?.message), /disappeared/);
  });

  it("a failed job carries the engine exception (execution_error) as the model's error fields", () => {
    const error = jobErrorOf('error', {
      exception_type: 'ValueError',
      exception_message: 'bad width',
      node_id: '3',
      node_type: 'EmptyImage',
    });
    assert.deepEqual(
      { code: error?.code, message: error?.message, node: error?.nodeId, cls: error?.classType },
      { code: 'error', message: 'ValueError: bad width', node: '3', cls: 'EmptyImage' },
    );
    assert.equal(jobErrorOf('success'), null);
  });
});

describe("v1 history and status → the model's job (mapping.ts)", () => {
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

  it("an output is the model's JobOutput whose url is its /api/view URL, with a content type from its extension", () => {
    const [file] = filesOfOutputs({
      '3': { images: [{ filename: 'fixture_00001_.png', subfolder: '', type: 'output' }] },
    });
    const out = jobOutputOf(file!, new URL('http://h/api/view?filename=fixture_00001_.png&subfolder=&type=output'));
    assert.deepEqual(out, {
      id: 'output/fixture_00001_.png',
      nodeId: '3',
      name: 'fixture_00001_.png',
      type: 'image',
      contentType: 'image/png',
      sizeBytes: null,
      hash: null,
      url: 'http://h/api/view?filename=fixture_00001_.png&subfolder=&type=output',
    });
  });

  it("rule: a v1 job is a job of the model: status mapped, outputs kept, says it is v1's, and carries nothing made up (no links, queue position, expiry, metrics)", () => {
    const { job, requestId } = answerOfV1({ promptId: 'p-9', v1Status: 'completed', outputs: [], requestId: 'r' });
    assert.equal(requestId, 'r');
    assert.deepEqual(job, {
      id: 'p-9',
      api: 'v1',
      status: 'succeeded',
      createdAt: null,
      startedAt: null,
      completedAt: null,
      expiresAt: null,
      queuePosition: null,
      progress: null,
      outputs: [],
      error: null,
      metrics: {},
    });
  });

  it('times: created_at from the status endpoint, started_at from the socket, completed_at = updated_at only once terminal', () => {
    const times = {
      createdAt: '2026-11-23T10:00:00.000Z',
      startedAt: '2026-11-23T10:00:01.000Z',
      updatedAt: '2026-11-23T10:00:05.000Z',
    };
    const done = jobOfV1({ ...times, promptId: 'p', v1Status: 'success', outputs: [] });
    assert.deepEqual(
      [done.createdAt, done.startedAt, done.completedAt],
      [times.createdAt, times.startedAt, times.updatedAt],
    );
    // In flight, the last update is not an end.
    const running = jobOfV1({ ...times, promptId: 'p', v1Status: 'executing', started: true, outputs: [] });
    assert.deepEqual(
      [running.createdAt, running.startedAt, running.completedAt],
      [times.createdAt, times.startedAt, null],
    );
    // Unknown: null (shown as "not yet"), never invented.
    const bare = jobOfV1({ promptId: 'p', v1Status: 'success', outputs: [] });
    assert.deepEqual([bare.createdAt, bare.startedAt, bare.completedAt], [null, null, null]);
  });

  it("a failed v1 job from the history carries its outputs and the engine's error in the model", () => {
    const files = filesOfOutputs({
      '3': {
        images: [
          { filename: 'a.png', subfolder: '', type: 'output' },
          { filename: 'p.png', subfolder: '', type: 'temp' },
        ],
      },
    });
    const outputs = files
      .filter((f) => f.ref.type === 'output')
      .map((f) => jobOutputOf(f, new URL(`http://h/api/view?filename=${f.ref.filename}`)));
    const job = jobOfV1({
      promptId: 'p',
      v1Status: 'error',
      outputs,
      failure: { exception_type: 'RuntimeError', exception_message: 'oom', node_id: '3', node_type: 'SaveImage' },
    });
    assert.equal(job.status, 'failed');
    assert.deepEqual(
      job.outputs.map((o) => o.name),
      ['a.png'],
    );
    assert.deepEqual(job.error, { code: 'error', message: 'RuntimeError: oom', nodeId: '3', classType: 'SaveImage' });
  });
});
