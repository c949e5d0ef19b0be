/**
 * The job monitor's view model (core/views/monitor/viewModel.ts), continued from monitor-view.test.ts: outputs keyed
 * by id, what the aria-live region says, and the graph with its nodes' states.
 */
import * as assert from 'node:assert/strict';
import type { HostMessage } from '../../src/core/views/monitor/protocol';
import {
  announcement,
  initialView,
  present,
  previewDecoded,
  reduce,
  type MonitorView,
} from '../../src/core/views/monitor/viewModel';
import { humanSize } from '../../src/core/util/bytes';
import { monitorState, output, PNG_1X1, preview, progress } from './monitorBuilders';
import { workflowGraph } from '../../src/core/graph/model';
import { monitorNodeStates } from '../../src/core/views/monitor/monitorPage';
import { keepSeenStates, type NodeRunState } from '../../src/core/graph/runStates';
import type { Job } from '../../src/core/jobs/model';
import { invertWorkflow } from './builders';
import { modelJob, modelOutput, modelProgress } from './modelBuilders';

const apply = (view: MonitorView, ...messages: HostMessage[]): MonitorView => messages.reduce(reduce, view);

describe('job monitor view model: outputs, announcements and the graph', () => {
  describe('outputs', () => {
    it('an output message adds an output, and replaces the one with the same id in place', () => {
      let v = initialView(monitorState('running'));
      v = apply(
        v,
        { type: 'output', output: output('a', { thumbnail: null, saved: false }) },
        { type: 'output', output: output('b') },
      );
      v = apply(v, { type: 'output', output: output('a', { saved: true }) });
      assert.deepEqual(
        v.state.job.outputs.map((o) => [o.id, o.saved, o.thumbnail !== null]),
        [
          ['a', true, true],
          ['b', true, true],
        ],
      );
      assert.equal(present(v).outputs.cards[0]?.kind, 'image');
    });

    it('human sizes (the one format of the views: a .0 dropped)', () => {
      assert.deepEqual(
        [0, 512, 2048, 1536 * 1024, 20 * 1024 * 1024, 3 * 1024 ** 4].map((n) => humanSize(n)),
        ['0 B', '512 B', '2 KB', '1.5 MB', '20 MB', '3 TB'],
      );
    });
  });

  describe('aria-live announcements', () => {
    it('announces status changes and each new tenth of progress, not every event', () => {
      const v0 = initialView(monitorState('queued'));
      assert.equal(announcement(undefined, v0), 'queued');
      const v1 = apply(v0, { type: 'snapshot', state: monitorState('running', { progress: progress(0.03) }) });
      assert.equal(announcement(v0, v1), 'running, Progress 3%');
      const v2 = apply(v1, { type: 'snapshot', state: monitorState('running', { progress: progress(0.07) }) });
      assert.equal(announcement(v1, v2), null);
      const v3 = apply(v2, { type: 'snapshot', state: monitorState('running', { progress: progress(0.12) }) });
      assert.equal(announcement(v2, v3), 'Progress 10%');
      const v4 = apply(v3, { type: 'snapshot', state: monitorState('running', { progress: progress(0.19) }) });
      assert.equal(announcement(v3, v4), null);
      const v5 = apply(v4, { type: 'snapshot', state: monitorState('succeeded', { progress: progress(1) }) });
      assert.equal(announcement(v4, v5), 'succeeded');
    });
  });

  it('rule: a lost job (the server no longer knows it) shows its own badge, no Cancel even if the host offered one, and no live progress', () => {
    const v = initialView(
      monitorState('lost', {
        progress: progress(0.4),
        can: { cancel: true, rerun: true, openWorkflow: true, goToNode: false, revealOutputs: false },
      }),
    );
    const p = present(v);
    assert.equal(p.header.badge, 'lost');
    assert.equal(p.actions.cancel, false);
    assert.equal(p.actions.rerun, true);
    assert.equal(p.progress.node, null);
    assert.equal(p.preview.visible, false);
  });

  describe('the graph', () => {
    const made = workflowGraph(invertWorkflow());
    assert.ok('model' in made);
    const model = made.model;
    /** The snapshot the host posts for a job of the core model: its nodes' states by the graph's rules. */
    const snapshotOf = (job: Job, overrides: Parameters<typeof monitorState>[1] = {}): HostMessage => ({
      type: 'snapshot',
      state: monitorState(
        job.status,
        overrides,
        null,
        monitorNodeStates(job, model, (t) => t),
      ),
    });
    const statuses = (v: MonitorView) =>
      Object.fromEntries(Object.entries(present(v).graph.states).map(([id, st]) => [id, st.status]));

    it('rule: until the host has read the workflow the section says so; without one it says why; with one it draws it', () => {
      const v0 = initialView(monitorState('queued'));
      assert.deepEqual(present(v0).graph, {
        status: 'loading',
        model: null,
        text: 'Reading the workflow…',
        note: null,
        states: {},
        canReveal: false,
      });
      const none = apply(v0, {
        type: 'graph',
        graph: {
          model: null,
          unavailable: 'the server keeps no workflow per job',
          canReveal: false,
          typesUnknown: false,
        },
      });
      assert.equal(present(none).graph.status, 'unavailable');
      assert.equal(present(none).graph.text, 'No graph: the server keeps no workflow per job');
      const shown = apply(v0, {
        type: 'graph',
        graph: { model, unavailable: null, canReveal: true, typesUnknown: false },
      });
      assert.equal(present(shown).graph.model, model);
      assert.equal(present(shown).graph.text, null);
      assert.equal(present(shown).graph.canReveal, true);
      assert.equal(present(shown).graph.note, null, 'socket types known: no note');
    });

    it('rule: a graph drawn without node definitions says its socket types are unknown, and is drawn all the same', () => {
      const v = apply(initialView(monitorState('running')), {
        type: 'graph',
        graph: { model, unavailable: null, canReveal: true, typesUnknown: true },
      });
      const g = present(v).graph;
      assert.equal(g.status, 'shown');
      assert.equal(g.model, model);
      assert.equal(g.text, null);
      assert.equal(g.note, 'Socket types unknown: no node definitions for this connection');
    });

    it('a job through its life: queued (all wait) → running node 2 (1 done, 2 running at its step, 3 waits) → failed at node 3 (its error on it)', () => {
      let v = apply(initialView(monitorState('queued')), {
        type: 'graph',
        graph: { model, unavailable: null, canReveal: true, typesUnknown: false },
      });
      v = apply(v, snapshotOf(modelJob('queued')));
      assert.deepEqual(statuses(v), { '1': 'waiting', '2': 'waiting', '3': 'waiting' });

      // The job model names the running node, not the finished ones: node 1 feeds node 2, so it has run.
      const running = modelJob('running', { progress: modelProgress({ currentNode: '2', step: 3, steps: 8 }) });
      v = apply(v, snapshotOf(running));
      assert.deepEqual(statuses(v), { '1': 'done', '2': 'running', '3': 'waiting' });
      assert.deepEqual(present(v).graph.states['2']!.progress, { value: 3, max: 8 });
      assert.equal(present(v).graph.model, model, 'the model is kept across snapshots (drawn once)');

      const failed = modelJob('failed', {
        error: { code: 'execution_error', message: 'image too large', nodeId: '3', classType: 'SaveImage' },
      });
      v = apply(
        v,
        snapshotOf(failed, {
          error: {
            code: 'execution_error',
            message: 'image too large',
            nodeId: '3',
            classType: 'SaveImage',
            traceback: null,
          },
        }),
      );
      const st = present(v).graph.states;
      assert.equal(st['3']!.status, 'failed');
      assert.equal(st['3']!.error, 'image too large');
      assert.deepEqual(
        statuses(v),
        { '1': 'done', '2': 'done', '3': 'failed' },
        'the nodes feeding the failed one have run',
      );

      const early = modelJob('failed', {
        error: { code: 'execution_error', message: 'too large', nodeId: '1', classType: 'EmptyImage' },
      });
      v = apply(v, snapshotOf(early));
      assert.deepEqual(
        statuses(v),
        { '1': 'failed' },
        'nodes after the failed one are not known to have run: no state',
      );
    });

    it('rule: a node upstream of the running or failed node has run (done), a muted one passed through unmarked; an output keeps its node', () => {
      const wf = invertWorkflow();
      const m = workflowGraph({ ...wf, '4': { class_type: 'PreviewImage', inputs: { images: ['1', 0] } } });
      assert.ok('model' in m);
      const running = modelJob('running', {
        progress: modelProgress({ currentNode: '3' }),
        outputs: [modelOutput({ id: 'p', nodeId: '4' })],
      });
      const st = monitorNodeStates(running, m.model, (t) => t);
      assert.deepEqual(Object.fromEntries(Object.entries(st).map(([id, x]) => [id, x.status])), {
        '1': 'done',
        '2': 'done',
        '3': 'running',
        '4': 'done',
      });
      assert.equal(st['4']!.outputs.length, 1);
      const muted = {
        ...m.model,
        root: {
          ...m.model.root,
          nodes: m.model.root.nodes.map((n) => (n.id === '2' ? { ...n, mode: 'muted' as const } : n)),
        },
      };
      const st2 = monitorNodeStates(running, muted, (t) => t);
      assert.equal(st2['2']!.status, 'waiting', 'a muted node is not marked as run');
      assert.equal(st2['1']!.status, 'done', 'the node upstream of a muted one is');
    });

    describe('rule: what was seen of the nodes is kept (the host folds each state into the last: core/graph keepSeenStates)', () => {
      /** The states the host shows after each job in turn, as the monitor folds them; each as `{id: status}`. */
      const fold = (workflow: Record<string, unknown>, jobs: Job[]): Record<string, string>[] => {
        const m = workflowGraph(workflow);
        assert.ok('model' in m);
        let seen: Record<string, NodeRunState> = {};
        return jobs.map((job) => {
          seen = keepSeenStates(
            seen,
            monitorNodeStates(job, m.model, (t) => t),
            job,
          );
          return Object.fromEntries(Object.entries(seen).map(([id, st]) => [id, st.status]));
        });
      };
      const chain = {
        '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
        '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
        '3': { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
        '4': {
          class_type: 'ImageScale',
          inputs: { image: ['3', 0], upscale_method: 'nearest-exact', width: 99999, height: 99999, crop: 'disabled' },
        },
        '5': { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'chain' } },
      };
      const at = (node: string) => modelJob('running', { progress: modelProgress({ currentNode: node }) });
      const failedAt = (nodeId: string | null) =>
        modelJob('failed', {
          error: {
            code: 'node_execution_error',
            message: 'image too large',
            nodeId,
            classType: nodeId ? 'ImageScale' : null,
          },
        });

      it("a job failing at node 4 after 1-3 ran: 1-3 stay done, node 4 (the error's node) failed", () => {
        const [running, failed] = fold(chain, [at('4'), failedAt('4')]);
        assert.deepEqual(running, { '1': 'done', '2': 'done', '3': 'done', '4': 'running', '5': 'waiting' });
        assert.deepEqual(
          failed,
          { '1': 'done', '2': 'done', '3': 'done', '4': 'failed' },
          'node 5 never ran: no state',
        );
      });

      it("an error naming no node: the node running when the job failed is the failed one, with the error's message; the nodes done stay done", () => {
        const m = workflowGraph(chain);
        assert.ok('model' in m);
        const running = keepSeenStates(
          {},
          monitorNodeStates(at('4'), m.model, (t) => t),
          at('4'),
        );
        const failed = failedAt(null);
        const after = keepSeenStates(
          running,
          monitorNodeStates(failed, m.model, (t) => t),
          failed,
        );
        assert.deepEqual(Object.fromEntries(Object.entries(after).map(([id, st]) => [id, st.status])), {
          '1': 'done',
          '2': 'done',
          '3': 'done',
          '4': 'failed',
        });
        assert.equal(after['4']!.error, 'image too large');
      });

      it('a node done on another branch stays done while the job runs on, and after it fails there', () => {
        const branches = {
          '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
          '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
          '3': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 255 } },
          '4': { class_type: 'ImageInvert', inputs: { image: ['3', 0] } },
          '5': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'a' } },
          '6': { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'b' } },
        };
        const life = fold(branches, [at('1'), at('2'), at('3'), at('4'), failedAt('4')]);
        assert.deepEqual(
          life[3],
          { '1': 'done', '2': 'done', '3': 'done', '4': 'running', '5': 'waiting', '6': 'waiting' },
          'node 2 ran before the job moved to the other branch',
        );
        assert.deepEqual(life[4], { '1': 'done', '2': 'done', '3': 'done', '4': 'failed' });
      });

      it("a canceled job's node seen running is not said to have ended", () => {
        const [, canceled] = fold(chain, [at('4'), modelJob('canceled')]);
        assert.deepEqual(canceled, { '1': 'done', '2': 'done', '3': 'done' });
      });
    });

    it('rule: the shown preview frame is placed on the node that drew it (not the pending one), without the snapshot carrying it', () => {
      const running = modelJob('running', { progress: modelProgress({ currentNode: '2', step: 1, steps: 8 }) });
      let v = apply(
        initialView(monitorState('running')),
        { type: 'graph', graph: { model, unavailable: null, canReveal: false, typesUnknown: false } },
        snapshotOf(running),
        { type: 'preview', preview: preview(5, { nodeId: '2' }) },
      );
      assert.equal(present(v).graph.states['2']!.preview, null, 'a frame still decoding is not on the node');
      v = previewDecoded(v, 5);
      assert.deepEqual(present(v).graph.states['2']!.preview, {
        seq: 5,
        contentType: 'image/png',
        dataBase64: PNG_1X1,
      });
      assert.equal(present(v).graph.states['2']!.status, 'running');
      assert.equal(v.state.nodeStates['2']!.preview, null, 'the held states keep no frame');
    });
  });
});
