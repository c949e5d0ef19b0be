/**
 * The monitor's deltas (core/views/monitor/delta.ts): after a whole snapshot, each change of the job is posted as the
 * job and the nodes' states that changed; the page's reducer merges it. Checked: the merge gives what whole snapshots
 * would, a progress event of a 500-node job stays within 2 KB, and the first message after `ready` is whole.
 */
import * as assert from 'node:assert/strict';
import { workflowGraph } from '../../src/core/graph/model';
import { keepSeenStates } from '../../src/core/graph/runStates';
import type { GraphModel, NodeRunState } from '../../src/core/graph/types';
import type { Job } from '../../src/core/jobs/model';
import { applyNodeStatesDelta, MonitorPosts, nodeStatesDelta } from '../../src/core/views/monitor/delta';
import { monitorJob, monitorNodeStates, monitorState, monitorStrings } from '../../src/core/views/monitor/monitorPage';
import { parseHostMessage, type HostMessage, type MonitorState } from '../../src/core/views/monitor/protocol';
import { initialView, present, reduce, type MonitorView } from '../../src/core/views/monitor/viewModel';
import { bigApiWorkflow } from '../../bench/graphWorkflows';
import { untranslated } from '../../src/core/util/l10n';
import { invertWorkflow } from './builders';
import { preview } from './monitorBuilders';
import { modelJob, modelOutput, modelProgress } from './modelBuilders';

const clean = (s: string): string => s;
const t = untranslated;

function modelOf(workflow: unknown): GraphModel {
  const made = workflowGraph(workflow);
  assert.ok('model' in made, 'not a graph');
  return made.model;
}

/** The host's states, as MonitorPanel makes them: each job's nodes' states, keeping what was seen before. */
function hostStates(model: GraphModel, jobs: Job[], jobId = 'job-1'): MonitorState[] {
  let seen: Record<string, NodeRunState> = {};
  return jobs.map((job) => {
    seen = keepSeenStates(seen, monitorNodeStates(job, model, clean), job, { clean });
    const mj = monitorJob({ jobId, job, connection: 'Comfy Cloud' }, clean, t);
    return monitorState(mj, null, monitorStrings(t), seen);
  });
}

/** Through the wire: JSON, then the page's parser (a message that does not parse fails the test). */
function wire(message: HostMessage): HostMessage {
  const parsed = parseHostMessage(JSON.parse(JSON.stringify(message)));
  assert.ok(parsed, `${message.type} does not parse`);
  return parsed;
}

const running = (node: string, step: number, steps = 20, extra: Partial<Job> = {}): Job =>
  modelJob('running', {
    id: 'job-1',
    progress: modelProgress({ currentNode: node, step, steps, value: step / steps / 2 }),
    ...extra,
  });

describe('job monitor deltas: a whole snapshot first, then what changed', () => {
  describe('nodeStatesDelta and applyNodeStatesDelta', () => {
    const st = (status: NodeRunState['status'], value?: number): NodeRunState => ({
      status,
      progress: value === undefined ? null : { value, max: 8 },
      error: null,
      preview: null,
      outputs: [],
    });

    it('names the states added or changed (by value, not identity) and the ids removed; merged, it gives the new states', () => {
      const before = { a: st('done'), b: st('running', 2), c: st('waiting') };
      const after = { a: st('done'), b: st('running', 3), d: st('waiting') };
      const delta = nodeStatesDelta(before, after);
      assert.deepEqual(delta, { changed: { b: st('running', 3), d: st('waiting') }, removed: ['c'] });
      assert.deepEqual(applyNodeStatesDelta(before, delta), after);
      assert.deepEqual(
        before,
        { a: st('done'), b: st('running', 2), c: st('waiting') },
        'the old states are untouched',
      );
    });

    it('equal states give an empty delta; an output or an error added is a change', () => {
      const before = { a: st('done'), b: st('failed') };
      assert.deepEqual(nodeStatesDelta(before, { a: st('done'), b: st('failed') }), { changed: {}, removed: [] });
      const withOutput = { ...st('done'), outputs: [{ id: 'o', name: 'o.png', type: 'image' }] };
      const withError = { ...st('failed'), error: 'boom' };
      assert.deepEqual(nodeStatesDelta(before, { a: withOutput, b: withError }).changed, {
        a: withOutput,
        b: withError,
      });
    });
  });

  it('rule: a whole snapshot then deltas gives the same view as whole snapshots would, through a job’s life', () => {
    const model = modelOf(bigApiWorkflow(120));
    const ids = model.root.nodes.filter((n) => n.kind === 'node').map((n) => n.id);
    const jobs: Job[] = [modelJob('queued', { id: 'job-1' })];
    for (const id of ids.slice(0, 12)) for (const step of [1, 2]) jobs.push(running(id, step));
    jobs.push(running(ids[12]!, 5, 20, { outputs: [modelOutput({ id: 'o1', nodeId: ids[3]! })] }));
    jobs.push(modelJob('succeeded', { id: 'job-1', outputs: [modelOutput({ id: 'o1', nodeId: ids[3]! })] }));
    const states = hostStates(model, jobs);
    // Preview frames come as their own messages; the host's snapshot carries the latest one too.
    const frames = states.map((s, i) =>
      i % 5 === 2 ? preview(i, { nodeId: s.job.progress?.currentNode ?? null }) : null,
    );
    let latest: MonitorState['preview'] = null;
    const withFrames = states.map((s, i) => ({ ...s, preview: (latest = frames[i] ?? latest) }));

    const graph: HostMessage = {
      type: 'graph',
      graph: { model, unavailable: null, canReveal: true, typesUnknown: false },
    };
    const start = (): MonitorView => reduce(initialView(withFrames[0]!), wire(graph));
    let whole = start();
    let merged = start();
    const posts = new MonitorPosts();
    posts.reset();
    let deltas = 0;
    withFrames.forEach((state, i) => {
      const frame = frames[i];
      if (frame) {
        whole = reduce(whole, wire({ type: 'preview', preview: frame }));
        merged = reduce(merged, wire({ type: 'preview', preview: frame }));
      }
      whole = reduce(whole, wire({ type: 'snapshot', state }));
      const message = wire(posts.next(state, true));
      if (message.type === 'delta') deltas++;
      merged = reduce(merged, message);
      assert.deepEqual(merged, whole, `after state ${i}`);
      assert.deepEqual(present(merged), present(whole), `what the page shows after state ${i}`);
    });
    assert.equal(deltas, withFrames.length - 1, 'every message after the first is a delta');
    assert.equal(present(merged).graph.states[ids[0]!]!.status, 'done');
  });

  it('a delta with removed nodes, and one of another job (ignored: it cannot be merged into this job)', () => {
    const model = modelOf(invertWorkflow());
    const [first, second] = hostStates(model, [running('2', 1), running('2', 2)]);
    const posts = new MonitorPosts();
    let view = reduce(initialView(first!), wire(posts.next(first!, true)));
    const fewer = { ...second!, nodeStates: { '2': second!.nodeStates['2']! } };
    const delta = wire(posts.next(fewer, true));
    assert.ok(delta.type === 'delta');
    assert.deepEqual([...delta.nodeStates.removed].sort(), ['1', '3']);
    view = reduce(view, delta);
    assert.deepEqual(view.state.nodeStates, fewer.nodeStates);
    const other = reduce(view, { ...delta, job: { ...delta.job, jobId: 'job-2', status: 'succeeded' } });
    assert.equal(other, view, 'a delta of another job changes nothing');
  });

  it('number: a progress event of a 500-node job posts at most 2 048 bytes (one node’s progress changed; a whole snapshot is some 40 KB)', () => {
    const model = modelOf(bigApiWorkflow(500));
    const nodes = model.root.nodes.filter((n) => n.kind === 'node');
    assert.equal(nodes.length, 500);
    const id = nodes[250]!.id;
    const [before, after] = hostStates(model, [running(id, 7), running(id, 8)]);
    const posts = new MonitorPosts();
    posts.reset();
    const snapshot = posts.next(before!, true);
    const delta = posts.next(after!, true);
    assert.equal(snapshot.type, 'snapshot');
    assert.ok(delta.type === 'delta');
    assert.deepEqual(Object.keys(delta.nodeStates.changed), [id], 'only the running node changed');
    assert.deepEqual(delta.nodeStates.changed[id]!.progress, { value: 8, max: 20 });
    const bytes = (m: HostMessage): number => Buffer.byteLength(JSON.stringify(m), 'utf8');
    assert.ok(bytes(delta) <= 2048, `the delta is ${bytes(delta)} bytes`);
    assert.ok(bytes(snapshot) > 20 * 1024, `the whole snapshot is only ${bytes(snapshot)} bytes`);
    assert.ok(parseHostMessage(JSON.parse(JSON.stringify(delta))), 'the delta parses');
  });

  describe('MonitorPosts: which messages are whole', () => {
    const model = modelOf(invertWorkflow());
    const [s1, s2, s3, s4] = hostStates(model, [running('1', 1), running('2', 1), running('2', 2), running('3', 1)]);

    it('rule: the first message after ready is a whole snapshot; the next ones are deltas', () => {
      const posts = new MonitorPosts();
      assert.equal(posts.last, undefined);
      posts.reset(); // the page said `ready`
      const first = posts.next(s1!, true);
      assert.deepEqual(first, { type: 'snapshot', state: s1 });
      assert.equal(posts.next(s2!, true).type, 'delta');
      assert.equal(posts.next(s3!, true).type, 'delta');
      assert.equal(posts.last, s3, 'the last state posted, whole or not');
    });

    it('rule: after a reload (ready again) the first message is whole again, with every node', () => {
      const posts = new MonitorPosts();
      posts.reset();
      posts.next(s1!, true);
      posts.next(s2!, true);
      posts.reset();
      const again = posts.next(s3!, true);
      assert.ok(again.type === 'snapshot');
      assert.deepEqual(Object.keys(again.state.nodeStates).sort(), ['1', '2', '3']);
      assert.equal(posts.next(s4!, true).type, 'delta');
    });

    it('rule: a message the page does not get (not ready) is whole, and the next one it gets is whole too', () => {
      const posts = new MonitorPosts();
      posts.reset();
      posts.next(s1!, true);
      assert.equal(posts.next(s2!, false).type, 'snapshot', 'kept for tests, never delivered');
      assert.equal(posts.next(s3!, true).type, 'snapshot', 'the page missed one: a delta would not apply');
      assert.equal(posts.next(s4!, true).type, 'delta');
    });
  });
});
