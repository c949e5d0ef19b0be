/**
 * The client's job model (core/jobs): the one terminal-status test, the one progress formula, the one rule that
 * progress never goes backwards, and how a server answer or a watch update changes the job the service holds.
 */
import * as assert from 'node:assert/strict';
import {
  JOB_STATUSES,
  LOST_STATUS,
  applyUpdate,
  clampFraction,
  isEndedStatus,
  isLostStatus,
  isNewerFrame,
  isTerminalStatus,
  laterProgress,
  mergeAnswer,
  mergeListed,
  progressFraction,
  shownStep,
  statusAt,
} from '../../src/core/jobs';
import { modelJob, modelOutput, modelProgress } from './modelBuilders';

describe('job model: statuses', () => {
  it('rule: succeeded, canceled, failed and expired are terminal; queued, running, canceling and any other value are in flight', () => {
    assert.deepEqual(JOB_STATUSES.filter(isTerminalStatus), ['succeeded', 'canceled', 'failed', 'expired']);
    for (const s of ['queued', 'running', 'canceling', 'weird_new_state', ''])
      assert.equal(isTerminalStatus(s), false, s);
  });
});

describe("job model: the client's lost status", () => {
  it("rule: lost is the client's own status: no API status, not terminal in the API's sense, but ended for the views", () => {
    assert.equal(LOST_STATUS, 'lost');
    assert.ok(!(JOB_STATUSES as readonly string[]).includes(LOST_STATUS));
    assert.equal(isLostStatus('lost'), true);
    assert.equal(isTerminalStatus('lost'), false);
    assert.equal(isEndedStatus('lost'), true);
    for (const s of ['succeeded', 'canceled', 'failed', 'expired']) assert.equal(isEndedStatus(s), true, s);
    for (const s of ['queued', 'running', 'canceling', 'pending', 'weird_new_state'])
      assert.equal(isEndedStatus(s), false, s);
  });

  it('rule: expires_at passed reads lost for a job not terminal; a terminal status, no expiry or a later one stay as they are', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    assert.equal(statusAt('running', '2026-11-22T09:59:59Z', now), 'lost');
    assert.equal(statusAt('queued', '2026-11-22T09:00:00Z', now), 'lost');
    assert.equal(statusAt('running', '2026-11-22T10:00:01Z', now), 'running');
    assert.equal(statusAt('running', null, now), 'running');
    assert.equal(statusAt('running', 'not a time', now), 'running');
    for (const s of ['succeeded', 'canceled', 'failed', 'expired'])
      assert.equal(statusAt(s, '2026-11-22T09:00:00Z', now), s);
  });
});

describe('job model: the progress formula', () => {
  it("rule: the fraction is the server's value, else nodes done over nodes total, else unknown", () => {
    assert.equal(progressFraction(modelProgress({ value: 0.25, nodesDone: 3, nodesTotal: 4 })), 0.25);
    assert.equal(progressFraction(modelProgress({ nodesDone: 3, nodesTotal: 4 })), 0.75);
    assert.equal(progressFraction(modelProgress({ nodesTotal: 4 })), 0);
    assert.equal(progressFraction(modelProgress({ nodesDone: 3, nodesTotal: 0 })), null);
    assert.equal(progressFraction(modelProgress({ message: 'loading' })), null);
    assert.equal(progressFraction(null), null);
  });

  it('rule: a fraction out of 0..1 is clamped, and NaN or an infinity is unknown', () => {
    assert.equal(progressFraction(modelProgress({ value: 1.7 })), 1);
    assert.equal(progressFraction(modelProgress({ value: -0.2 })), 0);
    assert.equal(progressFraction(modelProgress({ value: Number.NaN, nodesDone: 1, nodesTotal: 2 })), 0.5);
    assert.equal(progressFraction(modelProgress({ value: Number.POSITIVE_INFINITY })), null);
  });

  it("rule: one clamp for every fraction shown (the job, the monitor's bar, the graph's node bars): 0..1, and none for NaN, an infinity or nothing", () => {
    assert.equal(clampFraction(0.4), 0.4);
    assert.equal(clampFraction(1.7), 1);
    assert.equal(clampFraction(-0.2), 0);
    assert.equal(clampFraction(Number.NaN), null);
    assert.equal(clampFraction(Number.NEGATIVE_INFINITY), null);
    assert.equal(clampFraction(null), null);
    assert.equal(clampFraction(undefined), null);
  });
});

describe('job model: only a newer preview frame replaces the one shown', () => {
  it("rule: a frame is newer only when its seq is above every other frame's; a missing frame is older than any", () => {
    assert.equal(isNewerFrame(3, 2), true);
    assert.equal(isNewerFrame(3, 3), false, 'the same frame again is not newer');
    assert.equal(isNewerFrame(3, 4), false);
    assert.equal(isNewerFrame(3, 1, 4), false, 'behind the pending frame, though ahead of the shown one');
    assert.equal(isNewerFrame(5, 1, 4), true);
    assert.equal(isNewerFrame(0, null, undefined), true);
  });
});

describe('job model: the step of a node shown', () => {
  it('rule: the step shown never exceeds the steps, nor goes below 0; without both (or with steps 0) there is none', () => {
    assert.deepEqual(shownStep(modelProgress({ step: 21, steps: 50 })), { step: 21, steps: 50 });
    assert.deepEqual(shownStep(modelProgress({ step: 51, steps: 50 })), { step: 50, steps: 50 });
    assert.deepEqual(shownStep(modelProgress({ step: -1, steps: 50 })), { step: 0, steps: 50 });
    assert.equal(shownStep(modelProgress({ step: 3, steps: 0 })), null);
    assert.equal(shownStep(modelProgress({ step: 3 })), null);
    assert.equal(shownStep(modelProgress({ step: Number.NaN, steps: 5 })), null);
    assert.equal(shownStep(null), null);
  });
});

describe('job model: progress never goes backwards', () => {
  it('rule: a progress behind the last one is dropped (the last one kept); one as far or farther replaces it', () => {
    const half = modelProgress({ value: 0.5, message: 'KSampler 10/20' });
    const less = modelProgress({ value: 0.3, message: 'KSampler 6/20' });
    const same = modelProgress({ value: 0.5, message: 'KSampler 10/20 again' });
    const more = modelProgress({ nodesDone: 3, nodesTotal: 4 });
    assert.equal(laterProgress(half, less), half);
    assert.equal(laterProgress(half, same), same);
    assert.equal(laterProgress(half, more), more);
  });

  it('rule: any progress beats none, a missing one keeps the last, and one of unknown fraction ranks as 0', () => {
    const words = modelProgress({ message: 'loading models' });
    assert.equal(laterProgress(null, words), words);
    assert.equal(laterProgress(words, null), words);
    assert.equal(laterProgress(undefined, undefined), null);
    const started = modelProgress({ value: 0.1 });
    assert.equal(laterProgress(started, words), started);
    assert.equal(laterProgress(modelProgress({ value: 0 }), words), words);
  });
});

describe('job model: what a server answer and a watch update do to the job', () => {
  it('rule: a server answer replaces the job, but while the status stays the same non-terminal one its progress never goes backwards and streamed outputs are kept', () => {
    const streamed = modelOutput({ id: 'out-1' });
    const known = modelJob('running', { progress: modelProgress({ value: 0.6 }), outputs: [streamed] });
    const lagging = { ...known, progress: modelProgress({ value: 0.4 }), outputs: [] };
    const merged = mergeAnswer(known, lagging);
    assert.equal(merged.progress?.value, 0.6);
    assert.deepEqual(merged.outputs, [streamed]);
  });

  it("rule: a terminal answer, or one with another status, is taken whole (the final state is the server's own)", () => {
    const known = modelJob('running', { progress: modelProgress({ value: 0.9 }), outputs: [modelOutput()] });
    const done = modelJob('succeeded', { id: known.id, progress: modelProgress({ value: 1 }), outputs: [] });
    assert.equal(mergeAnswer(known, done), done);
    const queued = modelJob('queued', { id: known.id });
    assert.equal(mergeAnswer(known, queued), queued);
  });

  it('rule: a terminal answer without progress keeps the progress reached (an ended bar is never emptied), and nothing else of before', () => {
    const known = modelJob('running', { progress: modelProgress({ value: 0.9 }), outputs: [modelOutput()] });
    const failed = modelJob('failed', { id: known.id, progress: null, outputs: [] });
    assert.deepEqual(mergeAnswer(known, failed), { ...failed, progress: known.progress });
    const listed = mergeListed(known, failed, true);
    assert.deepEqual(listed, { ...failed, progress: known.progress }, 'a listing saying ended is taken the same way');
  });

  it("rule: an answer without logs (a cancel's answer, a listing) never takes away the logs of the same ended job read before", () => {
    const read = modelJob('failed', { logs: { stderr: 'Traceback' } });
    const cancelAnswer = { ...read, logs: undefined };
    delete cancelAnswer.logs;
    assert.deepEqual(mergeAnswer(read, cancelAnswer).logs, { stderr: 'Traceback' });
    const withOthers = { ...read, logs: { stderr: 'again' } };
    assert.deepEqual(mergeAnswer(read, withOthers).logs, { stderr: 'again' }, 'a GET with logs is taken whole');
  });

  it("rule: a listing: a new or lost job takes it; an ended job keeps its state; a listing saying ended is taken; a watched job in flight keeps the watch's state", () => {
    const listedRunning = modelJob('running', { progress: modelProgress({ value: 0.3 }) });
    assert.equal(mergeListed(undefined, listedRunning, false), listedRunning);
    const lost = { ...listedRunning, status: 'lost' };
    assert.equal(mergeListed(lost, listedRunning, false), listedRunning, 'the server knows the lost job again');
    const ended = { ...listedRunning, status: 'succeeded', logs: 'done' };
    assert.equal(mergeListed(ended, listedRunning, false), ended, 'a lagging listing never moves an ended job back');
    const live = { ...listedRunning, progress: modelProgress({ value: 0.8 }) };
    const listedEnded = { ...listedRunning, status: 'succeeded' };
    assert.equal(mergeListed(live, listedEnded, true), listedEnded);
    assert.equal(mergeListed(live, listedRunning, true), live, 'the watch is fresher than a listing read before it');
    assert.equal(
      mergeListed(live, listedRunning, false).progress?.value,
      0.8,
      'not watched: an answer like any other, progress never backwards',
    );
  });

  it('rule: an update never makes a job terminal (only a server answer confirms that), nor moves a terminal job', () => {
    const running = modelJob('running');
    assert.equal(applyUpdate(running, { type: 'status', status: 'succeeded', queuePosition: null }), running);
    const done = modelJob('failed');
    assert.equal(applyUpdate(done, { type: 'status', status: 'running', queuePosition: null }), done);
    const queued = applyUpdate(modelJob('queued', { queuePosition: 3 }), {
      type: 'status',
      status: 'queued',
      queuePosition: 1,
    });
    assert.equal(queued.queuePosition, 1);
  });

  it("rule: an update's progress is taken only when not behind; an output only once; previews, modes and retries leave the job as it is", () => {
    const job = modelJob('running', { progress: modelProgress({ value: 0.5 }) });
    assert.equal(applyUpdate(job, { type: 'progress', progress: modelProgress({ value: 0.2 }) }), job);
    assert.equal(applyUpdate(job, { type: 'progress', progress: modelProgress({ value: 0.7 }) }).progress?.value, 0.7);
    const output = modelOutput();
    const once = applyUpdate(job, { type: 'output', output });
    assert.deepEqual(once.outputs, [output]);
    assert.equal(applyUpdate(once, { type: 'output', output }), once);
    assert.equal(
      applyUpdate(job, { type: 'preview', preview: { nodeId: '2', contentType: 'image/png', dataBase64: 'AA==' } }),
      job,
    );
    assert.equal(applyUpdate(job, { type: 'retrying', delayMs: 1000, reason: 'x', failingSinceMs: 0 }), job);
  });
});
