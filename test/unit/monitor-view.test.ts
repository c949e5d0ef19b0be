/**
 * The job monitor's view model (core/views/monitor/viewModel.ts): the progress shown, the preview's double buffer and
 * what a snapshot shows. Outputs, announcements and the graph: monitor-view-graph.test.ts.
 */
import * as assert from 'node:assert/strict';
import type { HostMessage } from '../../src/core/views/monitor/protocol';
import {
  initialView,
  persistedState,
  present,
  previewDecoded,
  previewFailed,
  reduce,
  type MonitorView,
} from '../../src/core/views/monitor/viewModel';
import { monitorState, output, PNG_1X1, preview, progress } from './monitorBuilders';

const apply = (view: MonitorView, ...messages: HostMessage[]): MonitorView => messages.reduce(reduce, view);

describe('job monitor view model', () => {
  describe('progress', () => {
    it("the bar shows the job service's progress as sent, holding nothing of its own (the never-backwards rule runs once, in core/jobs state.ts)", () => {
      let v = initialView(monitorState('running', { progress: progress(0.4) }));
      v = apply(v, {
        type: 'snapshot',
        state: monitorState('running', { progress: progress(0.6, { message: 'KSampler 10/50' }) }),
      });
      assert.equal(present(v).progress.value, 0.6);
      assert.equal(present(v).progress.percentText, '60%');
      assert.equal(present(v).progress.message, 'KSampler 10/50');
      v = apply(v, { type: 'snapshot', state: monitorState('running', { progress: progress(0.25) }) });
      assert.equal(present(v).progress.value, 0.25, 'a value the host sent is shown as is');
      assert.ok(!('progressValue' in v), 'the view keeps no progress value of its own');
    });

    it('a re-run (another job id) starts the bar again', () => {
      let v = initialView(monitorState('running', { progress: progress(0.9) }));
      v = apply(v, { type: 'snapshot', state: monitorState('running', { jobId: 'job-2', progress: progress(0.1) }) });
      assert.equal(present(v).progress.value, 0.1);
    });

    it('out-of-range progress values from the server are clamped, NaN dropped', () => {
      assert.equal(present(initialView(monitorState('running', { progress: progress(7) }))).progress.value, 1);
      assert.equal(
        present(initialView(monitorState('running', { progress: progress(Number.NaN) }))).progress.value,
        null,
      );
    });

    it('the step shown never exceeds the steps: a step reported past the end reads "Step 50 of 50"', () => {
      const p = present(
        initialView(monitorState('running', { progress: progress(0.42, { step: 51, steps: 50 }) })),
      ).progress;
      assert.equal(p.step, 'Step 50 of 50');
    });

    it('shows nodes done/total, the current node and class, step/steps and the server message while running', () => {
      const p = present(
        initialView(monitorState('running', { progress: progress(0.42, { nodesDone: 2, nodesTotal: 5 }) })),
      ).progress;
      assert.deepEqual(
        { visible: p.visible, nodes: p.nodes, node: p.node, step: p.step, message: p.message, queue: p.queue },
        {
          visible: true,
          nodes: 'Nodes 2 of 5',
          node: 'Node 3 (KSampler)',
          step: 'Step 21 of 50',
          message: 'KSampler 21/50',
          queue: null,
        },
      );
    });

    it('the queue position is shown 1-based while queued, with an indeterminate bar', () => {
      const p = present(initialView(monitorState('queued', { queuePosition: 2 }))).progress;
      assert.equal(p.queue, 'Position 3 in the queue');
      assert.equal(p.value, null);
      assert.equal(p.percentText, null);
    });
  });

  describe('preview double-buffering', () => {
    it('a new frame is pending, and shown only after the webview reports it decoded', () => {
      let v = initialView(monitorState('running'));
      v = apply(v, { type: 'preview', preview: preview(1) });
      assert.equal(v.preview.pending?.seq, 1);
      assert.equal(v.preview.shown, null);
      assert.equal(present(v).preview.src, null);
      v = apply(v, { type: 'preview', preview: preview(2) });
      assert.equal(v.preview.pending?.seq, 2);
      // The decode of an earlier frame reported late changes nothing.
      assert.equal(previewDecoded(v, 1), v);
      v = previewDecoded(v, 2);
      assert.equal(v.preview.shown?.seq, 2);
      assert.equal(v.preview.pending, null);
      assert.equal(present(v).preview.src, `data:image/png;base64,${PNG_1X1}`);
      assert.equal(present(v).preview.from, 'From node 3 (KSampler)');
    });

    it('a frame with an older or equal seq than the shown or pending one is ignored', () => {
      let v = previewDecoded(apply(initialView(monitorState('running')), { type: 'preview', preview: preview(5) }), 5);
      const shown = v;
      v = apply(v, { type: 'preview', preview: preview(5, { nodeId: '9' }) }, { type: 'preview', preview: preview(4) });
      assert.deepEqual(v.preview, shown.preview);
      v = apply(v, { type: 'preview', preview: preview(7) }, { type: 'preview', preview: preview(6) });
      assert.equal(v.preview.pending?.seq, 7);
      assert.equal(v.preview.shown?.seq, 5);
    });

    it('a frame that fails to decode is dropped and the shown one stays', () => {
      let v = previewDecoded(apply(initialView(monitorState('running')), { type: 'preview', preview: preview(1) }), 1);
      v = previewFailed(apply(v, { type: 'preview', preview: preview(2) }), 2);
      assert.equal(v.preview.pending, null);
      assert.equal(v.preview.shown?.seq, 1);
    });

    it("the embedded state's preview is decoded like any other frame, and a snapshot's older preview is ignored", () => {
      let v = initialView(monitorState('running', {}, preview(3)));
      assert.equal(v.preview.pending?.seq, 3);
      v = previewDecoded(v, 3);
      v = apply(v, { type: 'snapshot', state: monitorState('running', {}, preview(2)) });
      assert.equal(v.preview.pending, null);
      assert.equal(v.preview.shown?.seq, 3);
    });

    it('the last preview is kept after the job ends, until an output exists', () => {
      let v = previewDecoded(apply(initialView(monitorState('running')), { type: 'preview', preview: preview(1) }), 1);
      v = apply(v, { type: 'snapshot', state: monitorState('succeeded') });
      assert.equal(present(v).preview.visible, true);
      assert.ok(present(v).preview.src);
      v = apply(v, { type: 'output', output: output('o1') });
      assert.equal(present(v).preview.visible, false);
    });

    it('the state kept with setState carries no preview bytes', () => {
      const v = apply(initialView(monitorState('running')), { type: 'preview', preview: preview(1) });
      assert.equal(persistedState(v).preview, null);
      assert.equal(persistedState(v).job.jobId, 'job-1');
    });
  });

  describe('snapshot → what is shown', () => {
    it('queued: queue position, no preview yet, Cancel enabled, times "not yet"', () => {
      const p = present(initialView(monitorState('queued', { queuePosition: 0 })));
      assert.equal(p.header.badge, 'queued');
      assert.equal(p.progress.visible, true);
      assert.equal(p.progress.queue, 'Position 1 in the queue');
      assert.equal(p.preview.visible, true);
      assert.equal(p.preview.placeholder, 'No preview yet');
      assert.equal(p.actions.cancel, true);
      assert.deepEqual(
        p.header.times.map((t) => t.text),
        ['2026-11-23T10:00:00.000Z', 'not yet', 'not yet'],
      );
      assert.equal(p.error, null);
      assert.equal(p.outputs.empty, 'No output yet');
    });

    it('running: progress details, Cancel enabled, no error', () => {
      const p = present(initialView(monitorState('running', { progress: progress(0.5) })));
      assert.equal(p.header.badge, 'running');
      assert.equal(p.progress.queue, null);
      assert.equal(p.progress.value, 0.5);
      assert.equal(p.actions.cancel, true);
      assert.equal(p.error, null);
    });

    it('succeeded: full bar, no live details, outputs as cards (images with thumbnails, others as file cards with type and size), Cancel disabled', () => {
      const state = monitorState('succeeded', {
        progress: progress(0.9),
        outputs: [
          output('img'),
          output('vid', { name: 'clip.mp4', contentType: null, thumbnail: null, sizeBytes: 1536 * 1024 }),
        ],
      });
      const p = present(initialView(state));
      assert.equal(p.header.badge, 'succeeded');
      assert.equal(p.progress.value, 1);
      assert.equal(p.progress.node, null);
      assert.equal(p.progress.step, null);
      assert.equal(p.actions.cancel, false);
      assert.equal(p.actions.downloadAll, true);
      assert.deepEqual(
        p.outputs.cards.map((c) => [c.kind, c.name, c.typeLabel, c.sizeLabel, c.openLabel]),
        [
          ['image', 'img.png', 'image/png', '2 KB', 'Open img.png'],
          ['file', 'clip.mp4', 'MP4', '1.5 MB', 'Open clip.mp4'],
        ],
      );
      assert.equal(p.outputs.empty, null);
      assert.equal(p.header.times[2]?.text, '2026-11-23T10:00:09.000Z');
    });

    it('failed: error code, message, node and class, traceback, Go to node enabled only with a node', () => {
      const error = {
        code: 'node_error',
        message: 'boom',
        nodeId: '7',
        classType: 'VAEDecode',
        traceback: 'Traceback…',
      };
      const p = present(initialView(monitorState('failed', { error })));
      assert.equal(p.header.badge, 'failed');
      assert.deepEqual(p.error, {
        code: 'node_error',
        message: 'boom',
        node: 'Node 7 (VAEDecode)',
        traceback: 'Traceback…',
      });
      assert.equal(p.actions.goToNode, true);
      assert.equal(p.actions.cancel, false);
      const noNode = present(initialView(monitorState('failed', { error: { ...error, nodeId: null } })));
      assert.equal(noNode.error?.node, null);
      assert.equal(noNode.actions.goToNode, false);
    });

    it('canceled: no preview section without a frame, Cancel disabled, Re-run as the host allows', () => {
      const p = present(
        initialView(
          monitorState('canceled', {
            can: { cancel: true, rerun: true, openWorkflow: false, goToNode: false, revealOutputs: false },
          }),
        ),
      );
      assert.equal(p.header.badge, 'canceled');
      assert.equal(p.preview.visible, false);
      assert.equal(p.actions.cancel, false);
      assert.equal(p.actions.rerun, true);
      assert.equal(p.actions.openWorkflow, false);
      assert.equal(p.actions.revealOutputs, false);
    });

    it('an unknown status is shown as-is with a neutral badge', () => {
      const p = present(initialView(monitorState('paused')));
      assert.equal(p.header.badge, 'other');
      assert.equal(p.header.status, 'paused');
    });

    it('metrics with null values are shown as "not yet"; logs as given', () => {
      const p = present(
        initialView(
          monitorState('running', {
            metrics: [
              { name: 'gpu_seconds', value: null },
              { name: 'cost', value: '0.02' },
            ],
            logs: ['a', 'b'],
          }),
        ),
      );
      assert.deepEqual(p.metrics, [
        { name: 'gpu_seconds', text: 'not yet', notYet: true },
        { name: 'cost', text: '0.02', notYet: false },
      ]);
      assert.deepEqual(p.logs, ['a', 'b']);
    });

    it('times go through the given formatter', () => {
      const p = present(initialView(monitorState('running')), (iso) => `T(${iso.slice(11, 19)})`);
      assert.deepEqual(
        p.header.times.map((t) => [t.label, t.text]),
        [
          ['Created', 'T(10:00:00)'],
          ['Started', 'T(10:00:01)'],
          ['Finished', 'not yet'],
        ],
      );
    });
  });
});
