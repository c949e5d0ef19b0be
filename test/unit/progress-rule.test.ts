/**
 * Progress never goes backwards, held in ONE place: the job service's state of the job (core/jobs state.ts, applied
 * by the service's watch of the job). A watch maps the server's events and passes every progress on, even one behind;
 * the service keeps the farthest in the job's state and tells its followers only what that state took. Against a
 * scripted v2 server (stream frames in a set order, GET answers in turn) on a manual clock: no sleeps.
 */
import * as assert from 'node:assert/strict';
import type { JobUpdate } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import type { WatchUpdate } from '../../src/core/v2/events';
import { headlessJobService } from '../../src/core/backends';
import { job } from './builders';
import { tempDir } from './tmp';
import { scripted, sse } from './watch.fixtures';

const base = job('running');
const id = base.id as string;
const at = (status: string) => ({ ...base, status });
// The stream says 0.5, then 0.25 (a stale frame, or a node whose steps restart), then 1: the last two are a step back
// and a step forward.
const FRAMES = [
  'event: status\ndata: {"status":"running","queue_position":null}\n\n',
  'event: progress\ndata: {"value":0.5,"nodes_done":1,"nodes_total":2}\n\n',
  'event: progress\ndata: {"value":0.25,"nodes_done":0,"nodes_total":2}\n\n',
  'event: progress\ndata: {"value":1,"nodes_done":2,"nodes_total":2}\n\n',
  'event: status\ndata: {"status":"succeeded","queue_position":null}\n\n',
];

/** A server whose stream sends {@link FRAMES} and whose GETs answer running, then succeeded (the last repeats). */
const script = () => scripted({ gets: [at('running'), at('succeeded')], events: sse(FRAMES) }, false);

const values = (updates: readonly (JobUpdate | WatchUpdate)[]): (number | null | undefined)[] =>
  updates.flatMap((u) => (u.type === 'progress' ? [u.progress.value] : []));

describe('progress never goes backwards: one rule, in the job service', () => {
  it('a watch passes on every progress the stream sent, the one behind included (it only maps events)', async () => {
    const { server, client } = await script();
    const updates: WatchUpdate[] = [];
    try {
      await client.watch(id, { onUpdate: (u) => updates.push(u) });
      assert.deepEqual(values(updates), [0.5, 0.25, 1]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("the job service's state keeps the farthest progress, and its followers are told only what the state took", async () => {
    const { server, client } = await script();
    const service = headlessJobService(() => ({ backend: new V2JobBackend(client) }), {
      store: new StateStore(tempDir('cc-progress-rule-')),
    });
    const updates: JobUpdate[] = [];
    const stateValues: (number | null | undefined)[] = [];
    const sub = service.onDidChangeJobState((s) => {
      if (s.job.id === id && s.job.progress) stateValues.push(s.job.progress.value);
    });
    try {
      const final = await service.follow(id, { onUpdate: (u) => updates.push(u) }).done;
      assert.equal(final.job.status, 'succeeded');
      assert.deepEqual(values(updates), [0.5, 1], 'the step back is not passed on');
      assert.ok(!stateValues.includes(0.25), `the state never showed the step back: ${stateValues.join(', ')}`);
      assert.deepEqual(
        stateValues,
        [...stateValues].sort((a, b) => (a ?? 0) - (b ?? 0)),
        'the state only ever moves forward',
      );
    } finally {
      sub.dispose();
      service.dispose();
      await server.close();
    }
  });
});
