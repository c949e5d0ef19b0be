/**
 * Cached nodes in the graph of a run (core/graph runStates.ts, rules 8 and keepSeenStates 4): a node a ComfyUI server
 * answered from its cache (`execution_cached`, carried as `progress.cachedNodes`) is shown cached, not run, while the
 * job runs and once it succeeded, even when the finished job read again no longer names it.
 */
import * as assert from 'node:assert/strict';
import { keepSeenStates, nodeRunStates } from '../../src/core/graph/runStates';
import { modelJob, modelProgress } from './modelBuilders';

const NODES = ['1', '2', '3', '4'];
const statuses = (states: Record<string, { status: string }>) =>
  Object.fromEntries(Object.entries(states).map(([id, s]) => [id, s.status]));

describe('graph run states: nodes answered from the cache', () => {
  it('a running job: the cached nodes are cached, the running one runs, the rest wait', () => {
    const job = modelJob('running', { progress: modelProgress({ currentNode: '3', cachedNodes: ['1', '2'] }) });
    assert.deepEqual(statuses(nodeRunStates(job, NODES)), { 1: 'cached', 2: 'cached', 3: 'running', 4: 'waiting' });
  });

  it('a succeeded job: cached nodes stay cached, the others done; read again without its progress, what was seen cached is kept', () => {
    const running = nodeRunStates(
      modelJob('running', { progress: modelProgress({ currentNode: '4', cachedNodes: ['1', '2', '3'] }) }),
      NODES,
    );
    const done = modelJob('succeeded');
    const next = nodeRunStates(done, NODES);
    assert.deepEqual(statuses(next), { 1: 'done', 2: 'done', 3: 'done', 4: 'done' });
    assert.deepEqual(statuses(keepSeenStates(running, next, done)), {
      1: 'cached',
      2: 'cached',
      3: 'cached',
      4: 'done',
    });
  });

  it('a failed job: a cached node is not said cached by the failed read (no rule 8), but stays cached as seen', () => {
    const running = nodeRunStates(
      modelJob('running', { progress: modelProgress({ currentNode: '2', cachedNodes: ['1'] }) }),
      NODES,
    );
    const failed = modelJob('failed', {
      error: { code: 'x', message: 'boom', nodeId: '2', classType: null },
    });
    const kept = statuses(keepSeenStates(running, nodeRunStates(failed, NODES), failed));
    assert.equal(kept['1'], 'cached');
    assert.equal(kept['2'], 'failed');
  });
});
